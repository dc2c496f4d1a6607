package tools

import (
	"fmt"
	"path/filepath"
	"strings"

	"brig/internal/lazyre"
	"brig/jail"
)

// maxDenialNotes bounds the notes added to one result.
const maxDenialNotes = 5

// Error texts, as commands print them, of the failures a jail causes.
var (
	reAccess  = lazyre.New(`(?i)permission denied|\bEACCES\b|operation not permitted|\bEPERM\b`)
	reROFS    = lazyre.New(`(?i)read-only file system|\bEROFS\b`)
	reNetwork = lazyre.New(`(?i)network is unreachable|temporary failure in name resolution|could not resolve host|name or service not known|no such host|\bENOTFOUND\b|\bEAI_AGAIN\b|getaddrinfo|failed to resolve|could not resolve|\bENETUNREACH\b|unable to access '[a-z]+://`)
	reRefused = lazyre.New(`(?i)connection refused|\bECONNREFUSED\b|couldn't connect to server`)
	reLocal   = lazyre.New(`127\.0\.0\.1|localhost|\[::1\]`)
	reMissing = lazyre.New(`(?i)no such file or directory|\bENOENT\b`)
	// System calls the seccomp filter refuses, as their users name them.
	reSyscall = lazyre.New(`(?i)ptrace|unshare|setns|\bmount\b|chroot|pivot_root|\bbpf\b|perf_event|keyctl|io_uring`)
	// Quoted path-like strings: '…', ‘…’, "…", `…'.
	reQuoted = lazyre.New("'([^'\\n]+)'|‘([^’\\n]+)’|\"([^\"\\n]+)\"|`([^'`\\n]+)'")
)

// errorAnchors are substrings, in lower case, one of which every line that
// reAccess, reROFS, reNetwork or reRefused matches holds: a first look at
// a whole output (most hold none) costs microseconds, where matching each
// line costs milliseconds for the 30 KiB a model is shown. None holds an
// s or a k: (?i) matches their non-ASCII case twins (ſ, K), which
// strings.ToLower keeps. TestErrorAnchors checks both against the
// patterns.
var errorAnchors = []string{
	"denied", "eacce", "permitted", "eperm", // reAccess
	"read-only", "erof", // reROFS
	"unreach", "temporary failure", "could not re", "name or ", "uch ho", "enotfound", "eai_again", "getaddrinfo", "failed to re", "unable to acce", // reNetwork
	"refu", "t connect to", // reRefused (curl: "Couldn't connect to server")
	"uch file", "enoent", // reMissing
}

// mayReportDenial reports whether output (a whole output, or a line)
// holds one of errorAnchors.
func mayReportDenial(output string) bool {
	lower := strings.ToLower(output)
	for _, a := range errorAnchors {
		if strings.Contains(lower, a) {
			return true
		}
	}
	return false
}

// denialNotes explains, in words a model can act on, failures in a
// command's output that the call's jail caused: a path outside its grant
// (or protected, or hidden), the network it does not have, a system call
// it may not make. A note is given only when the output reports the
// failure AND the grant shows the jail is the reason, so a file that is
// merely missing, or unreadable for another reason, gets none.
func denialNotes(output string, grant *jail.Spec) []string {
	if grant == nil || output == "" {
		return nil
	}
	var notes []string
	if n := goOfflineNote(output, grant); n != "" {
		notes = append(notes, n)
	}
	if !mayReportDenial(output) {
		return notes
	}
	seen := map[string]bool{}
	add := func(key, note string) {
		if !seen[key] && len(notes) < maxDenialNotes {
			seen[key] = true
			notes = append(notes, note)
		}
	}
	home := envValue(grant.Env, "HOME")
	for _, line := range strings.Split(output, "\n") {
		if !mayReportDenial(line) {
			continue // no pattern below can match it
		}
		rofs := reROFS().MatchString(line)
		if rofs || reAccess().MatchString(line) {
			pathNoted := false
			for _, p := range pathsIn(line, grant.Dir, home) {
				key, note := pathNote(p, rofs, grant)
				if note != "" {
					add(key, note)
					pathNoted = true
				}
			}
			if !pathNoted && !rofs && reSyscall().MatchString(line) && strings.Contains(strings.ToLower(line), "not permitted") {
				add("syscall", "[brig: the jail refuses this kind of system call to every command (ptrace, mount, namespaces, bpf, keyrings, io_uring …); no approval changes that, so do it another way]")
			}
		}
		if grant.PrivateTmp && reMissing().MatchString(line) {
			for _, p := range pathsIn(line, grant.Dir, home) {
				if within(p, "/tmp") || within(p, "/dev/shm") {
					// ENOENT, not EACCES: the jail's /tmp is a fresh one
					// (a new user's cat of a file in the machine's /tmp
					// got "No such file" and no word why).
					add("tmp", "[brig: each bash call has a /tmp and /dev/shm of its own, empty when it starts: files an earlier call or the user's machine put there are not in it. Keep files a later call needs in the workspace; if the task needs a file from the user's /tmp, ask the user to grant it (--add-dir for brig -p, or a Read rule)]")
				}
			}
		}
		switch {
		case reNetwork().MatchString(line) && !grant.Network:
			add("network", "[brig: this call had no network: the jail gives commands no network access unless the user grants it. Work offline (vendored or cached dependencies), or tell the user what must be downloaded and from where]")
		case reNetwork().MatchString(line):
			add("network", "[brig: commands resolve no names and reach hosts only through brig's proxy, named in HTTP_PROXY, HTTPS_PROXY and ALL_PROXY; a program that ignores those (ping, nc, dig, a raw socket) reaches nothing. Use one that honours them (curl, wget, git over https, npm, pip, go, cargo)]")
		case reRefused().MatchString(line) && reLocal().MatchString(line) && grant.Network:
			// NO_PROXY keeps the call's own loopback direct, for test
			// servers it starts; a server of the user's that they
			// allowed (--allow-host 127.0.0.1) is reached through the
			// proxy (new user: curl failed with no word why).
			add("loopback", "[brig: the call runs with its own private loopback: servers on the user's machine (localhost) are not reachable from it directly. A server the call needs can be started within the same command; one on the user's machine that the user allowed (--allow-host 127.0.0.1, a Net rule) is reached through brig's proxy, which NO_PROXY skips for loopback: curl --noproxy '' URL, or NO_PROXY= before the command]")
		case reRefused().MatchString(line) && reLocal().MatchString(line):
			add("loopback", "[brig: the call runs with its own private loopback: servers on the user's machine (localhost) are not reachable from it directly, and a server it needs must be started within the same command]")
		}
	}
	return notes
}

// goOfflineNote explains Go's "module lookup disabled by GOPROXY=off"
// in a call whose GOPROXY ends in off (brig sets it so when calls may not
// download modules): the words name a setting, not the jail, and a new
// user's model retried go get with other flags (2026-12-02). "" when the
// output does not say so or the call's GOPROXY allows downloads.
func goOfflineNote(output string, grant *jail.Spec) string {
	if !strings.Contains(output, "disabled by GOPROXY=off") {
		return ""
	}
	proxy := envValue(grant.Env, "GOPROXY")
	if proxy != "off" && !strings.HasSuffix(proxy, ",off") && !strings.HasSuffix(proxy, "|off") {
		return ""
	}
	return `[brig: this call may not download Go modules (its GOPROXY ends in "off"): only modules already in the module cache can be used. Do not retry with other flags: use a module that is already there, or tell the user the task needs downloads; they can allow them with net_presets = ["go"] under [sandbox] in their brig config, or --allow-host proxy.golang.org for brig -p]`
}

// Refusal is a path an error line of a command's output names that the
// call's jail kept from it, and why (one of the Refused… kinds).
type Refusal struct {
	Path string
	Why  string
}

// The kinds of Refusal.
const (
	RefusedHidden   = "hidden"    // never readable: it holds secrets
	RefusedRead     = "read"      // outside what the call may read
	RefusedProcess  = "process"   // another process's /proc entry
	RefusedProtect  = "protected" // never writable: run or obeyed later outside the jail
	RefusedReadOnly = "read-only" // granted read-only (--add-dir …:ro, --read)
	RefusedWrite    = "write"     // readable but not writable
)

// Refusals lists the paths in a command's output (its error lines) that
// the jail refused it, by the rules denialNotes follows, for a person
// (brig sandbox) rather than the model.
func Refusals(output string, grant *jail.Spec) []Refusal {
	if grant == nil || !mayReportDenial(output) {
		return nil
	}
	var out []Refusal
	seen := map[string]bool{}
	home := envValue(grant.Env, "HOME")
	for _, line := range strings.Split(output, "\n") {
		rofs := reROFS().MatchString(line)
		if !rofs && !reAccess().MatchString(line) {
			continue
		}
		for _, p := range pathsIn(line, grant.Dir, home) {
			if r, ok := refusal(p, rofs, grant); ok && !seen[r.Path] && len(out) < maxDenialNotes {
				seen[r.Path] = true
				out = append(out, r)
			}
		}
	}
	return out
}

// refusal says whether the jail is why p, named by an error line (rofs:
// the line says read-only file system), failed, and how.
func refusal(p string, rofs bool, grant *jail.Spec) (Refusal, bool) {
	if ok, why := grant.Allows(p, jail.Read); !ok {
		if why == "hidden" {
			return Refusal{p, RefusedHidden}, true
		}
		return Refusal{p, RefusedRead}, true
	}
	if otherProcessEntry(p) {
		return Refusal{p, RefusedProcess}, true
	}
	ok, why := grant.Allows(p, jail.Write)
	switch {
	case ok && rofs:
		// Writable: if the kernel still refused, the parent directory
		// may be the protected one (creating an entry in it).
		if dok, dwhy := grant.Allows(filepath.Dir(p), jail.Write); !dok && dwhy == "protected" {
			return Refusal{filepath.Dir(p), RefusedProtect}, true
		}
		return Refusal{}, false
	case ok:
		return Refusal{}, false
	case why == "protected":
		return Refusal{p, RefusedProtect}, true
	case why == "read-only mount":
		return Refusal{p, RefusedReadOnly}, true
	}
	return Refusal{p, RefusedWrite}, true
}

// pathNote is the note for a path that an error line names, or "" when
// the grant allows what failed; its key is the path.
func pathNote(p string, rofs bool, grant *jail.Spec) (string, string) {
	r, ok := refusal(p, rofs, grant)
	if !ok {
		return "", ""
	}
	p = r.Path
	switch r.Why {
	case RefusedHidden:
		return p, fmt.Sprintf("[brig: %s is hidden from every call (it holds secrets); it cannot be read, whatever is approved]", p)
	case RefusedRead:
		return p, fmt.Sprintf("[brig: %s is outside what this call may read, so the jail refused it. Do not retry as is: if the task needs it, ask the user to grant it (a Read rule in their brig config, --add-dir for brig -p, or approving a call that names it)]", p)
	case RefusedProcess:
		return p, fmt.Sprintf("[brig: %s belongs to a process this call may not inspect (in the call's own /proc that is brig's jail init, pid 1): the kernel refuses it whatever is approved, so do it another way]", p)
	case RefusedProtect:
		return p, protectedNote(p)
	case RefusedReadOnly:
		return p, fmt.Sprintf("[brig: %s was granted to this call read-only (the user's --add-dir …:ro or a read grant), so the jail refused the write even though the call was approved. Do not retry as is: write inside the workspace, or ask the user to grant it writable]", p)
	}
	return p, fmt.Sprintf("[brig: %s may be read but not written by this call; if writing it is what failed, the jail refused it. Do not retry as is: write inside the workspace, or ask the user to grant it (a Write rule, --add-dir for brig -p, or approving a call that names it)]", p)
}

// otherProcessEntry reports whether p is in a numbered process's /proc
// directory (/proc/PID/…): reading one the grant allows fails only when
// the kernel keeps the process from this call (ptrace access), which no
// grant changes.
func otherProcessEntry(p string) bool {
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok {
		return false
	}
	pid, _, _ := strings.Cut(rest, "/")
	return pid != "" && strings.Trim(pid, "0123456789") == ""
}

func protectedNote(p string) string {
	return fmt.Sprintf("[brig: %s is protected: no call may change it in any mode, because a program outside the jail runs or obeys it later (git hooks and config, editor tasks, a directory on your PATH, brig's own config). Leave it to the user]", p)
}

// pathsIn finds the paths an error line names: quoted strings, and words
// that look like paths, made absolute against dir (and ~ against home).
func pathsIn(line, dir, home string) []string {
	var cands []string
	for _, m := range reQuoted().FindAllStringSubmatch(line, -1) {
		for _, g := range m[1:] {
			if g != "" {
				cands = append(cands, g)
			}
		}
	}
	// A first word that ends in a colon names the program reporting
	// ("/bin/sh: 1: cannot create x", "/usr/bin/cat: y: Permission
	// denied"): it is not what failed, unless it is the only path.
	prog := ""
	for i, f := range strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' }) {
		first := i == 0 && strings.HasSuffix(f, ":")
		f = strings.TrimRight(strings.Trim(f, "'\"‘’`()[]:;"), ".")
		if !strings.Contains(f, "/") || strings.Contains(f, "://") {
			continue
		}
		if first {
			prog = f
			continue
		}
		cands = append(cands, f)
	}
	if prog != "" && len(cands) == 0 {
		cands = append(cands, prog)
	}
	var out []string
	for _, c := range cands {
		c = strings.TrimSpace(c)
		if c == "" || strings.ContainsAny(c, " \t") && !strings.HasPrefix(c, "/") {
			continue // a quoted phrase, not a path
		}
		switch {
		case strings.HasPrefix(c, "~/") && home != "":
			c = filepath.Join(home, c[2:])
		case !filepath.IsAbs(c):
			if dir == "" {
				continue
			}
			c = filepath.Join(dir, c)
		}
		out = append(out, filepath.Clean(c))
	}
	return out
}

func envValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}
