package policy

import (
	"os"
	"testing"
)

// BenchmarkCompileBash is the grant of a bash call, which every one
// compiles on its critical path: the default grant checked against this
// machine's PATH (each entry's links resolved, none a secret), the masks,
// the protected paths of the workspace's repositories.
func BenchmarkCompileBash(b *testing.B) {
	p, _, _, _ := testPolicy(b, ModeAuto, "")
	p.Machine.Env = os.Environ()
	v := p.Decide(Call{Tool: "bash", Effect: EffectExec, Command: "echo hi"})
	if v.Tier != Allow {
		b.Fatalf("the call is not allowed: %+v", v)
	}
	for b.Loop() {
		if _, err := p.Compile(v, ""); err != nil {
			b.Fatal(err)
		}
	}
}
