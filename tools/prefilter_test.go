package tools

import "testing"

func TestPrefilter(t *testing.T) {
	tests := []struct {
		pattern string
		lit     string // "" = no prefilter
		fold    bool
	}{
		{`(?m)func \(s \*State\)`, `func (s *State)`, false},
		{`(?m)^// Deprecated:`, `// Deprecated:`, false},
		{`(?mi)goroutine leak`, `goroutine lea`, true}, // k also folds to the Kelvin sign
		{`(?mi)sass`, ``, true},
		{`(?m)foo|barbaz`, ``, false},
		{`(?m)ab(cdef)+x?`, `cdef`, false},
		{`(?m)x*`, ``, false},
		{`(?m)errors\.New\("[a-z]+ [a-z]+"\)`, `errors.New("`, false},
	}
	for _, tt := range tests {
		pf := newPrefilter(tt.pattern)
		got := ""
		if pf != nil {
			got = string(pf.lit)
			if pf.fold != tt.fold {
				t.Errorf("%s: fold = %v", tt.pattern, pf.fold)
			}
		}
		if got != tt.lit {
			t.Errorf("%s: prefilter %q, want %q", tt.pattern, got, tt.lit)
		}
	}
}
