package jail

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// TestSpawnCommand starts commands the way the worker does (but as children
// of the test, which has no init to reap them) and checks what they start
// with: the Landlock domain, the seccomp filter, a clean signal state, and
// typed errors when a step fails.
func TestSpawnCommand(t *testing.T) {
	abi := LandlockABI()
	if abi < 1 {
		t.Skip("no Landlock")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	// A filter of this test's own (the jail's is compiled by package
	// jail/filter, which imports this one): unshare(2) fails with EPERM,
	// everything else is allowed.
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0}, // seccomp_data.nr
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: unix.SYS_UNSHARE, Jt: 0, Jf: 1},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
	}
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("canary\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The system, readable and executable; not the secret's directory.
	var system []grant
	for _, d := range []string{"/usr", "/bin", "/lib", "/lib64", "/etc", "/proc", "/dev/null"} {
		fi, err := os.Stat(d)
		if err != nil {
			continue
		}
		acc := fsExec
		if d == "/dev/null" {
			acc = fsWrite
		}
		system = append(system, fitted(d, fi, acc))
	}

	tests := []struct {
		name      string
		path      string
		script    string // run by sh -c
		landlock  bool
		seccomp   bool
		wantExit  int
		wantStage Stage
		wantErrno unix.Errno
	}{
		{name: "runs", path: sh, script: "exit 7", wantExit: 7},
		{name: "control: the secret is readable without Landlock", path: sh, script: `read x < "$SECRET" && [ "$x" = canary ]`},
		{name: "Landlock keeps the secret out", path: sh, script: `! { read x < "$SECRET"; } 2>/dev/null`, landlock: true},
		{name: "Landlock domain is the command's", path: sh, script: `! ls /tmp >/dev/null 2>&1`, landlock: true},
		{name: "seccomp filter and no_new_privs", path: sh, seccomp: true,
			script: `grep -q '^Seccomp:[[:space:]]*2' /proc/self/status && grep -q '^NoNewPrivs:[[:space:]]*1' /proc/self/status`},
		{name: "seccomp refuses unshare", path: sh, seccomp: true, landlock: true,
			script: `! unshare -U true 2>/dev/null`},
		{name: "no signal blocked, none ignored that was handled", path: sh,
			script: `grep -q '^SigBlk:[[:space:]]*0*$' /proc/self/status`},
		{name: "missing command", path: "/nonexistent/brig-cmd", wantStage: StageExec, wantErrno: unix.ENOENT},
		{name: "not executable", path: secret, wantStage: StageExec, wantErrno: unix.EACCES},
		{name: "Landlock refuses the exec", path: filepath.Join(filepath.Dir(secret), "sh"), landlock: true, wantStage: StageExec, wantErrno: unix.EACCES},
	}
	// The copy of sh outside the grant, for the last case.
	if data, err := os.ReadFile(sh); err == nil {
		_ = os.WriteFile(filepath.Join(filepath.Dir(secret), "sh"), data, 0o755)
	}

	// no_new_privs (needed for seccomp and Landlock) is per thread and
	// permanent: set it on a thread that dies with this goroutine.
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread is discarded
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			t.Errorf("no_new_privs: %v", err)
			return
		}
		for _, tc := range tests {
			rs := -1
			if tc.landlock {
				r, err := newRuleset(ll.RulesetAttr{HandledAccessFS: uint64(handledFS(abi))}, abi)
				if err != nil {
					t.Errorf("%s: %v", tc.name, err)
					continue
				}
				if err := r.add(system); err != nil {
					t.Errorf("%s: %v", tc.name, err)
				}
				defer r.close()
				rs = r.fd
			}
			var p []unix.SockFilter
			if tc.seccomp {
				p = prog
			}
			pid, se := spawn(tc.path, []string{"sh", "-c", tc.script}, []string{"SECRET=" + secret, "PATH=/usr/bin:/bin"}, rs, p, false, nil)
			if tc.wantStage != "" {
				if se == nil {
					t.Errorf("%s: started (pid %d), want a %s error", tc.name, pid, tc.wantStage)
					var ws unix.WaitStatus
					_, _ = unix.Wait4(pid, &ws, 0, nil)
					continue
				}
				if se.Stage != tc.wantStage || unix.Errno(se.Errno) != tc.wantErrno {
					t.Errorf("%s: error %v (stage %s, errno %d), want stage %s errno %v", tc.name, se, se.Stage, se.Errno, tc.wantStage, tc.wantErrno)
				}
				// The failed copy exited on its own; collect it.
				var ws unix.WaitStatus
				_, _ = unix.Wait4(-1, &ws, unix.WNOHANG, nil)
				continue
			}
			if se != nil {
				t.Errorf("%s: %v", tc.name, se)
				continue
			}
			var ws unix.WaitStatus
			if _, err := unix.Wait4(pid, &ws, 0, nil); err != nil {
				t.Errorf("%s: wait: %v", tc.name, err)
				continue
			}
			if !ws.Exited() || ws.ExitStatus() != tc.wantExit {
				t.Errorf("%s: status %v (exit %d), want exit %d", tc.name, ws, ws.ExitStatus(), tc.wantExit)
			}
		}
	}()
	<-done
}
