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
}
