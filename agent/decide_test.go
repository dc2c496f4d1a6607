package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"brig/policy"
)

// TestNothingIsWrittenWhileDeciding: while the user is asked about a bash
// call, neither its toolchain cache nor its temporary directory exists yet
// (a refused call leaves nothing behind); once approved, the call runs with
// both, and the temporary directory is gone afterwards.
func TestNothingIsWrittenWhileDeciding(t *testing.T) {
	e := newExecEnv(t, policy.ModeAsk)
	e.ex.Policy.Machine.Namespaces = false // a per-call TMPDIR, as without namespaces
	cacheRoot := e.ex.Policy.Machine.CacheRoot
	var tmp string
	var seen []string
	answer := AnswerDeny
	e.ex.Approver = ApproverFunc(func(ctx context.Context, req ApprovalRequest) (Approval, error) {
		for _, kv := range req.Grant.Env {
			if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok {
				tmp = v
			}
		}
		for _, p := range []string{cacheRoot, tmp, req.Grant.Cache.Dir()} {
			if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
				seen = append(seen, p)
			}
		}
		return Approval{Answer: answer}, nil
	})
	call := args(t, map[string]any{"command": `echo made > out.txt; test -d "$TMPDIR" && test -d "$GOCACHE" && echo READY`})
	o := e.ex.Execute(context.Background(), "t1", "bash", call, nil)
	if !o.Result.IsError || o.Approval == nil {
		t.Fatalf("the call was not asked about and refused: %+v", o)
	}
	if tmp == "" || !filepath.IsAbs(tmp) {
		t.Fatalf("the grant names no per-call TMPDIR: %q", tmp)
	}
	if len(seen) > 0 {
		t.Fatalf("written while the call was being decided: %v", seen)
	}
	if _, err := os.Lstat(cacheRoot); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused call left its cache behind: %v", err)
	}

	answer = AnswerOnce
	o = e.ex.Execute(context.Background(), "t2", "bash", call, nil)
	if o.Err != nil || o.Result.IsError || !strings.Contains(o.Result.Text, "READY") {
		t.Fatalf("the approved call failed or lacked its TMPDIR or cache: %+v", o)
	}
	if b, _ := os.ReadFile(filepath.Join(e.ws, "out.txt")); string(b) != "made\n" {
		t.Fatalf("the approved call did not run: %q", b)
	}
	if len(seen) > 0 {
		t.Fatalf("written while the call was being decided: %v", seen)
	}
	if _, err := os.Lstat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the call's temporary directory %s was left behind: %v", tmp, err)
	}
	if _, err := os.Stat(cacheRoot); err != nil {
		t.Fatalf("the approved call had no cache: %v", err)
	}
}
