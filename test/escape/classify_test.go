package escape

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"brig/jail"
)

// What makes a case not applicable: a foreign ABI the kernel lacks, or a
// pass the kernel cannot run. Anything else is judged as usual.
func TestNotApplicableReasons(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sub, stderr string
		na          bool
	}{
		{"int80", "NOIA32: int 0x80 faulted (SIGSEGV): this kernel has no IA32 emulation\n", true},
		{"int80", "", false},
		{"int80", "int 0x80 write: Bad address\n", false},
		{"x32", "x32 write: Function not implemented\n", true},
		{"x32", "x32 write: Operation not permitted\n", false},
		{"keyctl", "NOIA32 Function not implemented", false},
	} {
		if got := foreignABIAbsent(tc.sub, tc.stderr); (got != "") != tc.na {
			t.Errorf("foreignABIAbsent(%q, %q) = %q, want not applicable: %v", tc.sub, tc.stderr, got, tc.na)
		}
	}

	refused := fmt.Errorf("%w: containing the call's processes needs either unprivileged user namespaces or Landlock ABI 6", jail.ErrUnenforceable)
	for _, p := range passes[1:] {
		if why := unenforceable(p, refused); !strings.Contains(why, "cannot run the "+p.name+" pass") {
			t.Errorf("a refused %s pass: %q", p.name, why)
		}
	}
	if !doctorOK() {
		t.Skip("brig doctor is not OK on this kernel: the full pass is expected to be refused here")
	}
	// On a kernel where brig doctor is OK, the full jail refusing a call is
	// a bug to report, never "not applicable".
	if why := unenforceable(passes[0], refused); why != "" {
		t.Errorf("the full pass refused on a kernel whose doctor is OK was excused: %q", why)
	}
	if why := unenforceable(passes[1], errors.New("jail exec: permission denied")); why != "" {
		t.Errorf("an ordinary error was excused: %q", why)
	}
}
