package tools

import (
	"strings"
	"testing"
	"time"

	"brig/jail"
)

func chunk(stderr bool, s string) jail.Chunk { return jail.Chunk{Stderr: stderr, Data: []byte(s)} }

func TestCommandResult(t *testing.T) {
	long := strings.Repeat("x\n", MaxCommandOutputBytes) + "THE END"
	tests := []struct {
		name    string
		res     jail.Result
		asked   time.Duration
		by      string // who stopped a cancelled command ("": the user)
		isError bool
		want    string // the whole text, when set
		has     []string
		hasNot  []string
	}{
		{name: "stdout only", res: jail.Result{Transcript: jail.Transcript{Head: []jail.Chunk{chunk(false, "hi\n")}, Stdout: 3}},
			want: "hi\n[exit code 0]"},
		{name: "stderr only, failing", res: jail.Result{ExitCode: 1, Transcript: jail.Transcript{Head: []jail.Chunk{chunk(true, "main.c:1: error: x")}, Stderr: 18}},
			isError: true, want: "main.c:1: error: x\n[exit code 1]"},
		{name: "interleaved streams are labelled", res: jail.Result{ExitCode: 2, Transcript: jail.Transcript{
			Head:   []jail.Chunk{chunk(false, "building\n"), chunk(true, "warning: w\n"), chunk(false, "linking")},
			Stdout: 16, Stderr: 11}},
			isError: true, want: "[stdout]\nbuilding\n[stderr]\nwarning: w\n[stdout]\nlinking\n[exit code 2]"},
		{name: "a line split by the other stream stays whole", res: jail.Result{ExitCode: 7, Transcript: jail.Transcript{
			Head: []jail.Chunk{chunk(true, "curl: (7) Failed to connect"), chunk(false, "000\n"), chunk(true, " to 127.0.0.1 port 80\nsecond"),
				chunk(false, "done\n"), chunk(true, " line\n")},
			Stdout: 9, Stderr: 62}},
			isError: true, want: "[stderr]\ncurl: (7) Failed to connect to 127.0.0.1 port 80\n[stdout]\n000\n[stderr]\nsecond line\n[stdout]\ndone\n[exit code 7]"},
		{name: "no output", res: jail.Result{}, want: "(no output)\n[exit code 0]"},
		{name: "separately captured streams", res: jail.Result{ExitCode: 2, Stdout: []byte("out"), Stderr: []byte("err\n")},
			isError: true, want: "[stdout]\nout\n[stderr]\nerr\n[exit code 2]"},
		{name: "long output keeps head and tail and says how to see the rest", res: jail.Result{Stdout: []byte("START" + long)},
			has: []string{"START", "THE END", "left out here", "lines) left out", "| tail -n 100", "read_file"}},
		{name: "omitted middle", res: jail.Result{Transcript: jail.Transcript{
			Head: []jail.Chunk{chunk(false, "head\n")}, Tail: []jail.Chunk{chunk(false, "tail\n")}, Omitted: 3 << 20, OmittedLines: 1000, Stdout: 3<<20 + 10}},
			has: []string{"head\n[… 3.0 MiB (1000 lines) left out here; the whole output was 3.0 MiB", "…]\ntail\n[exit code 0]"}},
		{name: "a tail cut inside a line starts at the next line", res: jail.Result{ExitCode: 1, Transcript: jail.Transcript{
			Head: []jail.Chunk{chunk(false, "1\n")}, Tail: []jail.Chunk{chunk(false, "82"), chunk(true, "warn\n"), chunk(false, "\n196783\n")},
			Omitted: 100, OmittedLines: 10, MidLine: [2]bool{true, false}, Stdout: 110, Stderr: 5}},
			isError: true, want: "[stdout]\n1\n[… 103 B (11 lines) left out here; the whole output was 115 B. To see a part, rerun with `| tail -n 100`, `| head -n 100` or `| grep PATTERN`, or redirect it (`> out.log 2>&1`) and read_file out.log with an offset …]\n[stderr]\nwarn\n[stdout]\n196783\n[exit code 1]"},
		{name: "a tail that is one cut line is kept", res: jail.Result{Transcript: jail.Transcript{
			Head: []jail.Chunk{chunk(false, "1\n")}, Tail: []jail.Chunk{chunk(false, "xyz")}, Omitted: 100, MidLine: [2]bool{true, false}, Stdout: 105}},
			has: []string{"[… 100 B (0 lines) left out here", "…]\nxyz\n[exit code 0]"}},
		{name: "a head cut inside a line ends at the line before", res: jail.Result{Transcript: jail.Transcript{
			Head: []jail.Chunk{chunk(false, "line 1\nline 2\nli")}, Tail: []jail.Chunk{chunk(false, "line 99\n")},
			Omitted: 100, OmittedLines: 10, Stdout: 116}},
			has: []string{"line 1\nline 2\n[… 102 B (10 lines) left out here"}, hasNot: []string{"li\n", "li["}},
		{name: "a head that is one cut line is kept", res: jail.Result{Transcript: jail.Transcript{
			Head: []jail.Chunk{chunk(false, "xyz")}, Tail: []jail.Chunk{chunk(false, "end\n")}, Omitted: 100, Stdout: 107}},
			has: []string{"xyz\n[… 100 B (0 lines) left out here"}},
		{name: "a stream the head holds whole keeps its last line", res: jail.Result{Transcript: jail.Transcript{
			Head: []jail.Chunk{chunk(true, "warn"), chunk(false, "a\nb")}, Tail: []jail.Chunk{chunk(false, "end\n")},
			Omitted: 100, OmittedLines: 3, Stdout: 107, Stderr: 4}},
			has: []string{"[stderr]\nwarn\n[stdout]\na\n[… 101 B (3 lines) left out here"}},
		{name: "timeout", res: jail.Result{TimedOut: true, ExitCode: 137, Duration: 5 * time.Second}, isError: true,
			has: []string{"timed out after 5s", "everything it started were killed", "timeout_seconds"}},
		{name: "timeout capped by the user's limit", res: jail.Result{TimedOut: true, ExitCode: 137, Duration: 2 * time.Second}, asked: 6 * time.Second, isError: true,
			has: []string{"timed out after 2s", "[limits] timeout in brig's configuration", "asked for 6s", "will not help"}, hasNot: []string{"set timeout_seconds"}},
		{name: "interrupted", res: jail.Result{Canceled: true, ExitCode: 137}, isError: true, has: []string{"interrupted by the user"}},
		// A SIGTERM is not said to be the user's (a timeout wrapper or a
		// service manager sends it).
		{name: "stopped by SIGTERM", res: jail.Result{Canceled: true, ExitCode: 137}, by: "SIGTERM", isError: true,
			has: []string{"[interrupted by SIGTERM: the command and everything it started were killed]"}, hasNot: []string{"the user"}},
		{name: "signal", res: jail.Result{Signal: "SIGSEGV", ExitCode: 139}, isError: true, has: []string{"killed by SIGSEGV (exit code 139)"}},
		{name: "limit", res: jail.Result{ExitCode: 137, Signal: "SIGKILL", Limit: jail.LimitMemory, LimitDetail: "the call used more than its memory limit of 1.0 GiB"}, isError: true,
			has: []string{"killed by SIGKILL", "[brig's memory limit: the call used more than its memory limit of 1.0 GiB]"}},
		{name: "violations", res: jail.Result{Violations: []string{"/ws/.git/hooks/pre-commit"}}, has: []string{"protected paths", "pre-commit"}},
	}
	for _, tt := range tests {
		r := CommandResult(tt.res, nil, tt.asked, tt.by)
		if r.IsError != tt.isError {
			t.Errorf("%s: IsError = %v", tt.name, r.IsError)
		}
		if tt.want != "" && r.Text != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, r.Text, tt.want)
		}
		for _, h := range tt.has {
			if !strings.Contains(r.Text, h) {
				t.Errorf("%s: %q lacks %q", tt.name, tail(r.Text), h)
			}
		}
		for _, h := range tt.hasNot {
			if strings.Contains(r.Text, h) {
				t.Errorf("%s: %q has %q", tt.name, tail(r.Text), h)
			}
		}
		if len(r.Text) > MaxCommandOutputBytes+1024 {
			t.Errorf("%s: %d bytes", tt.name, len(r.Text))
		}
	}
}

func TestDenialNotes(t *testing.T) {
	grant := &jail.Spec{
		Dir: "/ws",
		Paths: []jail.PathRule{
			{Path: "/ws", Access: jail.Write}, {Path: "/usr", Access: jail.Exec}, {Path: "/etc", Access: jail.Read},
			{Path: "/tmp", Access: jail.Write}, {Path: "/proc", Access: jail.Read},
		},
		Protected: []string{"/ws/.git/hooks", "/ws/.git/config"},
		Hidden:    []string{"/etc/shadow"},
		Env:       []string{"HOME=/home/u"},
	}
	tests := []struct {
		name, output string
		want         []string // substrings, one per expected note; none: no note
	}{
		{"read outside", "cat: /home/u/.ssh/id_rsa: Permission denied", []string{"/home/u/.ssh/id_rsa is outside what this call may read"}},
		{"tilde", "cat: ~/notes.txt: Permission denied", []string{"/home/u/notes.txt is outside what this call may read"}},
		{"python quoted", "PermissionError: [Errno 13] Permission denied: '/var/lib/x'", []string{"/var/lib/x is outside"}},
		{"node", "Error: EACCES: permission denied, open '/opt/data/f.json'", []string{"/opt/data/f.json is outside"}},
		{"go", "open /srv/app/cfg: permission denied", []string{"/srv/app/cfg is outside"}},
		{"write to a read-only grant", "touch: cannot touch '/usr/local/bin/x': Permission denied", []string{"/usr/local/bin/x may be read but not written"}},
		{"gnu quotes", "mkdir: cannot create directory ‘/etc/new’: Permission denied", []string{"/etc/new may be read but not written"}},
		{"protected", "error: could not lock config file .git/config: Read-only file system", []string{".git/config is protected"}},
		{"protected dir entry", "cp: cannot create regular file '.git/hooks/pre-commit': Read-only file system", []string{"/ws/.git/hooks/pre-commit is protected"}},
		{"hidden", "cat: /etc/shadow: Permission denied", []string{"/etc/shadow is hidden"}},
		{"another process", "cat: /proc/1/environ: Permission denied", []string{"/proc/1/environ belongs to a process this call may not inspect"}},
		{"proc, not a process", "sh: 1: cannot create /proc/sys/vm/swappiness: Permission denied", []string{"/proc/sys/vm/swappiness may be read but not written"}},
		{"granted: not the jail", "cat: secret.txt: Permission denied\ncat: /tmp/x: Permission denied", nil},
		{"missing: not a denial", "cat: /home/u/nothing: No such file or directory", nil},
		{"network off", "curl: (6) Could not resolve host: example.com", []string{"this call had no network"}},
		{"go proxy", "dial tcp: lookup proxy.golang.org: no such host", []string{"no network"}},
		{"loopback", "curl: (7) Failed to connect to localhost port 8080: Connection refused", []string{"private loopback"}},
		{"seccomp", "strace: test_ptrace_get_syscall_info: PTRACE_TRACEME: Operation not permitted", []string{"refuses this kind of system call"}},
		{"plain EPERM is not claimed", "kill: (1) - Operation not permitted", nil},
		{"one note per path", "cat: /x/a: Permission denied\ncat: /x/a: Permission denied", []string{"/x/a is outside"}},
		{"the shell reporting is not the path", "/bin/sh: 1: cannot create .git/config: Read-only file system", []string{"/ws/.git/config is protected"}},
		{"a program named by its path", "/usr/bin/cat: /home/u/.ssh/id_rsa: Permission denied", []string{"/home/u/.ssh/id_rsa is outside"}},
		{"a path alone before its error", "/srv/run.sh: Permission denied", []string{"/srv/run.sh is outside"}},
	}
	for _, tt := range tests {
		got := denialNotes(tt.output, grant)
		if len(got) != len(tt.want) {
			t.Errorf("%s: %d notes, want %d: %q", tt.name, len(got), len(tt.want), got)
			continue
		}
		for i, w := range tt.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s: note %q lacks %q", tt.name, got[i], w)
			}
		}
	}
	// A directory under a private /tmp granted read-only is carried over
	// as a read-only mount: the tmpfs's write grant does not reach it (new
	// user: --yes approved a write into --add-dir …:ro and the result said
	// only "Read-only file system"). Control: a writable carried grant,
	// and the tmpfs itself, get no note.
	carried := &jail.Spec{Dir: "/ws", PrivateTmp: true, Paths: []jail.PathRule{{Path: "/ws", Access: jail.Write}, {Path: "/tmp", Access: jail.Write},
		{Path: "/tmp/ro", Access: jail.Read}, {Path: "/tmp/ro/rw", Access: jail.Write}}}
	for out, want := range map[string]string{
		"/bin/bash: line 1: /tmp/ro/f.txt: Read-only file system":    "/tmp/ro/f.txt was granted to this call read-only",
		"/bin/bash: line 1: /tmp/ro/rw/f.txt: Read-only file system": "",
		"/bin/bash: line 1: /tmp/f.txt: Read-only file system":       "",
	} {
		n := denialNotes(out, carried)
		if want == "" && len(n) != 0 || want != "" && (len(n) != 1 || !strings.Contains(n[0], want)) {
			t.Errorf("%s: notes %q, want %q", out, n, want)
		}
	}
	// Go's own words for a download that brig's GOPROXY turned off name a
	// setting, not the jail. Control: a GOPROXY of the user's that allows
	// downloads (the failure is elsewhere) gets no note.
	const goOff = "go: finding module for package example.com/x\ngo: m imports\n\texample.com/x: cannot find module providing package example.com/x: module lookup disabled by GOPROXY=off"
	for _, proxy := range []string{"off", "file:///home/u/go/pkg/mod/cache/download,off"} {
		if n := denialNotes(goOff, &jail.Spec{Env: []string{"GOPROXY=" + proxy}}); len(n) != 1 || !strings.Contains(n[0], `net_presets = ["go"]`) {
			t.Errorf("GOPROXY=%s: notes %q, want the one on Go downloads", proxy, n)
		}
	}
	if n := denialNotes(goOff, &jail.Spec{Env: []string{"GOPROXY=file:///m,https://proxy.golang.org,direct"}}); len(n) != 0 {
		t.Errorf("downloads allowed: notes %q, want none", n)
	}
	// curl's own words for a refused loopback port, in a call with brig's
	// proxy: the note says how to reach an allowed server of the user's
	// (new user: --allow-host 127.0.0.1, and curl failed with no word).
	if n := denialNotes("curl: (7) Failed to connect to 127.0.0.1 port 18367 after 0 ms: Couldn't connect to server", &jail.Spec{Network: true}); len(n) != 1 || !strings.Contains(n[0], "curl --noproxy ''") {
		t.Errorf("curl to loopback with the proxy: %q", n)
	}
	// With network (brig's proxy), a name that does not resolve means a
	// program that ignored the proxy: the note says how to reach hosts.
	if n := denialNotes("curl: (6) Could not resolve host: x", &jail.Spec{Network: true}); len(n) != 1 || !strings.Contains(n[0], "only through brig's proxy") {
		t.Errorf("a call with network: %q; want the note on the proxy", n)
	}
}

// TestTimeoutNamesTheLimit: a call killed at its 1m limit whose kill took
// another 1.4 s under load is said to have timed out after 1m0s — the
// limit that fired, which the model can act on — not after 1m1s. Control:
// without the grant at hand, the wall time is all there is to say.
func TestTimeoutNamesTheLimit(t *testing.T) {
	res := jail.Result{TimedOut: true, ExitCode: 137, Duration: 61400 * time.Millisecond}
	grant := &jail.Spec{Limits: jail.Limits{Timeout: time.Minute}}
	if r := CommandResult(res, grant, 2*time.Minute, ""); !strings.Contains(r.Text, "[timed out after 1m0s: ") {
		t.Errorf("the limit is not named: %q", r.Text)
	}
	if r := CommandResult(res, nil, 0, ""); !strings.Contains(r.Text, "[timed out after 1m1s: ") {
		t.Errorf("without a grant: %q", r.Text)
	}
}

// TestDenialNoteForTheCallsOwnTmp (new user, 2026-12-02): cat of a file in
// the machine's /tmp from a call whose /tmp is its own said only "No such
// file or directory". Controls: a missing file in the workspace, or in a
// /tmp that is the machine's, gets no note.
func TestDenialNoteForTheCallsOwnTmp(t *testing.T) {
	shared := &jail.Spec{Dir: "/ws", Paths: []jail.PathRule{{Path: "/ws", Access: jail.Write}, {Path: "/tmp", Access: jail.Write}}}
	private := *shared
	private.PrivateTmp = true
	for _, tt := range []struct {
		name, output string
		grant        *jail.Spec
		want         string
	}{
		{"private /tmp", "cat: /tmp/nu1/other/o.txt: No such file or directory", &private, "a /tmp and /dev/shm of its own"},
		{"python, /dev/shm", "FileNotFoundError: [Errno 2] No such file or directory: '/dev/shm/x'", &private, "of its own"},
		{"the workspace", "cat: /ws/missing.txt: No such file or directory", &private, ""},
		{"the machine's /tmp", "cat: /tmp/x: No such file or directory", shared, ""},
	} {
		got := denialNotes(tt.output, tt.grant)
		switch {
		case tt.want == "" && len(got) != 0:
			t.Errorf("%s: notes %q, want none", tt.name, got)
		case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0], tt.want)):
			t.Errorf("%s: notes %q, want one holding %q", tt.name, got, tt.want)
		}
	}
}
