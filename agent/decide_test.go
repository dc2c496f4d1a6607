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

// TestNamespacesAnsweredByTheProbe: the executor asks the policy whether
// calls get namespaces, and so the supervisor's probe when the policy's
// Machine answers by a function (brig -p's, built while the probe runs),
// not the Machine's bool: a call gets a per-call TMPDIR exactly when the
// answer is no (the bool says the opposite here).
func TestNamespacesAnsweredByTheProbe(t *testing.T) {
	for _, ns := range []bool{true, false} {
		e := newExecEnv(t, policy.ModeAsk)
		if ns && !e.ex.Policy.Machine.Namespaces {
			t.Skip("no user namespaces here")
		}
		e.ex.Policy.Machine.Namespaces = !ns
		e.ex.Policy.Machine.NamespacesFrom = func() bool { return ns }
		tmp := ""
		e.ex.Approver = ApproverFunc(func(ctx context.Context, req ApprovalRequest) (Approval, error) {
			for _, kv := range req.Grant.Env {
				if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok {
					tmp = v
				}
			}
			return Approval{Answer: AnswerDeny}, nil
		})
		o := e.ex.Execute(context.Background(), "t1", "bash", args(t, map[string]any{"command": "echo x > out.txt"}), nil)
		if o.Approval == nil {
			t.Fatalf("the call was not asked about: %+v", o)
		}
		if perCall := strings.Contains(tmp, "brig-call-"); perCall == ns {
			t.Errorf("namespaces %v: the call's TMPDIR is %q (a per-call one: %v)", ns, tmp, perCall)
		}
	}
}
