package suggest

import "testing"

func TestClosest(t *testing.T) {
	known := []string{"permissions", "sandbox", "claude-sonnet-4-5", "claude-opus-4-5"}
	for _, tc := range []struct {
		got  string
		max  int
		want string
	}{
		{"permisions", 2, "permissions"},
		{"sandbx", 2, "sandbox"},
		{"claud-sonet-4-5", 3, "claude-sonnet-4-5"},
		{"colours", 2, ""},          // nothing near
		{"claude-haiku-4-5", 3, ""}, // 4+ edits from every listed id
	} {
		if got := Closest(tc.got, known, tc.max); got != tc.want {
			t.Errorf("Closest(%q, %d) = %q, want %q", tc.got, tc.max, got, tc.want)
		}
	}
	if d := Distance("kitten", "sitting"); d != 3 {
		t.Errorf("Distance(kitten, sitting) = %d, want 3", d)
	}
	// A swap of neighbours is one edit (new user, 2026-12-03: modle was
	// offered mode, not model); the control, a letter dropped, is one too.
	for _, c := range []struct {
		a, b string
		want int
	}{{"modle", "model", 1}, {"modle", "mode", 1}, {"claude-sonent-4-5", "claude-sonnet-4-5", 1}, {"ab", "ba", 1}, {"abc", "ca", 3}} {
		if d := Distance(c.a, c.b); d != c.want {
			t.Errorf("Distance(%s, %s) = %d, want %d", c.a, c.b, d, c.want)
		}
	}
}
