package supervisor

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"brig/internal/gitobj"
	"brig/internal/safefs"
	"brig/jail"
)

// sweepForeign takes out of a git directory, and of each linked
// worktree's git directory in its worktrees/, every entry at the top
// that is not git's own (jail.GitOwnEntry) and that the call created or
// changed: other programs read their settings from a repository's git
// directory (lazygit runs the pager its lazygit.yml names when it shows a
// diff, outside any jail), and nothing there is the project's code. An
// entry that was there before and that the call did not change — a
// program's own, the user's — stays.
func (s *Supervisor) sweepForeign(dir *safefs.Dir, start unix.Timespec) []string {
	found := s.sweepForeignIn(dir, start)
	wt, err := dir.Sub("worktrees")
	if err != nil {
		return found // none, or a link: sweepGitDir's
	}
	defer wt.Close()
	ents, err := wt.Dirents()
	if err != nil {
		return found
	}
	for _, e := range ents {
		if e.Type != unix.DT_DIR && e.Type != unix.DT_UNKNOWN {
			continue
		}
		sub, err := wt.Sub(e.Name)
		if err != nil {
			continue
		}
		found = append(found, s.sweepForeignIn(sub, start)...)
		sub.Close()
	}
	return found
}

// sweepForeignIn is sweepForeign for one git directory.
func (s *Supervisor) sweepForeignIn(dir *safefs.Dir, start unix.Timespec) []string {
	return s.takeChanged(dir, start, jail.GitOwnEntry, "another program's file in a git directory")
}

// takeChanged takes out of d each entry that changed at or after start
// (entryChanged) and that skip does not spare, and returns their paths;
// what names them in the log should one not move.
func (s *Supervisor) takeChanged(d *safefs.Dir, start unix.Timespec, skip func(name string) bool, what string) []string {
	ents, err := d.Dirents()
	if err != nil {
		s.log.Warn("could not list a directory of a git directory after a call", "path", d.Path(), "err", err)
		return nil
	}
	var found []string
	for _, e := range ents {
		if skip != nil && skip(e.Name) || !entryChanged(d, e.Name, start) {
			continue
		}
		found = append(found, s.takeEntry(d, e.Name, what))
	}
	return found
}

// takeEntry quarantines d's entry name and returns its path; what names
// it in the log should it not move.
func (s *Supervisor) takeEntry(d *safefs.Dir, name, what string) string {
	p := filepath.Join(d.Path(), name)
	if err := s.quarantine(d, name); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.log.Error("could not take out "+what, "path", p, "err", err)
	}
	return p
}

// entryChanged reports whether dir's entry name, or anything below it,
// changed at or after start. What cannot be looked at counts as changed.
func entryChanged(dir *safefs.Dir, name string, start unix.Timespec) bool {
	st, err := dir.Stat(name)
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	if timeAtOrAfter(st.Ctim, start) {
		return true
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return false
	}
	sub, err := dir.Sub(name)
	if err != nil {
		return true
	}
	defer sub.Close()
	ents, err := sub.Dirents()
	if err != nil {
		return true
	}
	for _, e := range ents {
		if entryChanged(sub, e.Name, start) {
			return true
		}
	}
	return false
}

// sweepResolutions takes out of a git directory's rr-cache the recorded
// conflict resolutions the call made or changed. git's rerere applies one
// to the next conflict with the same text, in the user's own merge
// outside the jail — and rr-cache existing is enough to turn rerere on
// (red team, 2026-12-02: a planted resolution rewrote the Makefile of the
// user's next merge). Resolutions the user recorded before the call stay.
func (s *Supervisor) sweepResolutions(dir *safefs.Dir, start unix.Timespec) []string {
	rr, err := dir.Sub("rr-cache")
	if err != nil {
		return nil // none, or a link: sweepGitDir's
	}
	defer rr.Close()
	// git turns rerere on where rr-cache exists: one the call made goes
	// whole (new user, 2026-12-03: its entries went and the empty
	// directory stayed, rerere on).
	var stx unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, filepath.Join(dir.Path(), "rr-cache"), unix.AT_SYMLINK_NOFOLLOW, unix.STATX_BTIME, &stx); err == nil &&
		stx.Mask&unix.STATX_BTIME != 0 && timeAtOrAfter(unix.Timespec{Sec: stx.Btime.Sec, Nsec: int64(stx.Btime.Nsec)}, start) {
		return []string{s.takeEntry(dir, "rr-cache", "the rr-cache the call made")}
	}
	return s.takeChanged(rr, start, nil, "a conflict resolution the call recorded")
}

// replaceRefs is where git keeps replacements: a ref refs/replace/<id>
// makes every git command show the object it names wherever <id> is
// asked for.
const replaceRefs = "refs/replace/"

// sweepReplacements takes out of a git directory the replacements the
// call made: the entries of refs/replace it created or changed, the
// refs/replace lines of a packed-refs it rewrote (the rest of the file
// stays), and info/grafts (which gives commits other parents) when it
// changed. A replacement changes what the user's own commits hold without
// changing their ids: git log shows the user's branch as it was, and
// checking it out writes the call's files — a hook directory's or
// .envrc included — into the worktree, outside any jail (red team,
// 2026-12-02). The packed-refs that held them is kept in the quarantine.
// A repository whose refs are in a reftable (git 2.45+, not the default)
// is not looked at.
func (s *Supervisor) sweepReplacements(dir *safefs.Dir, start unix.Timespec) []string {
	var found []string
	if refs, err := dir.Sub(filepath.Clean(replaceRefs)); err == nil {
		found = append(found, s.takeChanged(refs, start, nil, "a replacement the call made")...)
		refs.Close()
	}
	if p, ok := s.unpackReplacements(dir, start); ok {
		found = append(found, p)
	}
	if info, err := dir.Sub("info"); err == nil {
		if entryChanged(info, "grafts", start) {
			if _, err := info.Stat("grafts"); err == nil {
				found = append(found, s.takeEntry(info, "grafts", "the grafts the call wrote"))
			}
		}
		info.Close()
	}
	return found
}

// packedRefsLimit bounds the packed-refs read after a call (a repository
// with a hundred thousand tags has a few MiB).
const packedRefsLimit = 256 << 20

// unpackReplacements drops the refs/replace lines (and the peeled line
// after each) from a packed-refs the call changed. The new file takes the
// old one's place in one step; the old one goes to the quarantine. It
// reports the path when it changed the file.
func (s *Supervisor) unpackReplacements(dir *safefs.Dir, start unix.Timespec) (string, bool) {
	const name, tmp = "packed-refs", "packed-refs.brig-new"
	st, err := dir.Stat(name)
	if err != nil || !timeAtOrAfter(st.Ctim, start) {
		return "", false
	}
	p := filepath.Join(dir.Path(), name)
	data, st, err := dir.ReadFile(name, packedRefsLimit)
	if errors.Is(err, os.ErrNotExist) {
		return "", false
	}
	if err != nil {
		// One it cannot read (larger than the limit — a sparse file is
		// enough —, unreadable) cannot be checked: it is taken out
		// whole, kept in the quarantine (red team, 2026-12-02: a 300 MB
		// one was left with its replacement).
		s.log.Warn("could not read a packed-refs the call changed; taking it out", "path", p, "err", err)
		if err := s.quarantine(dir, name); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.log.Error("could not take out a packed-refs the call changed", "path", p, "err", err)
		}
		return p + " (whole: it could not be read to check it)", true
	}
	kept, dropped := withoutReplacements(data)
	if !dropped {
		return "", false
	}
	if err := dir.RemoveAll(tmp); err != nil {
		s.log.Error("could not take out the replacements the call packed", "path", p, "err", err)
		return "", false
	}
	err = dir.CreateFile(tmp, kept, safefs.AttrsOf(&st))
	if err == nil {
		err = dir.Exchange(tmp, name)
	}
	if err != nil {
		_ = dir.RemoveAll(tmp)
		s.log.Error("could not take out the replacements the call packed", "path", p, "err", err)
		return "", false
	}
	if err := s.quarantine(dir, tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.log.Warn("could not keep the packed-refs the call wrote", "path", p, "err", err)
	}
	return p + " (its refs/replace lines)", true
}

// withoutReplacements is packed-refs data without its records of
// refs/replace refs (and the peeled "^<id>" lines that follow them);
// dropped says whether there were any. Records are read as git reads
// them (refs/packed-backend.c): an object id in hex, one whitespace
// byte of any kind — a tab or a newline as much as a space (red team,
// 2026-12-02: a tab-separated line stayed) —, then the ref's name up to
// the end of the line. Whatever does not parse so is kept as it is: git
// refuses such a file whole, and runs nothing from it.
func withoutReplacements(data []byte) (kept []byte, dropped bool) {
	if !bytes.Contains(data, []byte(replaceRefs)) {
		return data, false
	}
	kept = make([]byte, 0, len(data))
	skipping := false
	for p := data; len(p) > 0; {
		end := len(p)
		if i := bytes.IndexByte(p, '\n'); i >= 0 {
			end = i + 1
		}
		rec := p[:end]
		if n := hexPrefix(p); n >= 40 && n < len(p) && isGitSpace(p[n]) {
			// The name starts after the separator, which may itself be
			// the line's newline: the record then ends a line later.
			name := p[n+1:]
			end = n + 1 + len(name)
			if i := bytes.IndexByte(name, '\n'); i >= 0 {
				end = n + 1 + i + 1
			}
			rec = p[:end]
			skipping = bytes.HasPrefix(bytes.TrimLeft(p[n+1:end], " \t\n\r\v\f"), []byte(replaceRefs))
			dropped = dropped || skipping
		} else if !bytes.HasPrefix(rec, []byte("^")) {
			skipping = false // a header or a line git refuses: kept
		}
		if !skipping {
			kept = append(kept, rec...)
		}
		p = p[end:]
	}
	return kept, dropped
}

// hexPrefix is the number of hexadecimal digits p starts with.
func hexPrefix(p []byte) int {
	n := 0
	for n < len(p) && (p[n] >= '0' && p[n] <= '9' || p[n] >= 'a' && p[n] <= 'f' || p[n] >= 'A' && p[n] <= 'F') {
		n++
	}
	return n
}

// isGitSpace reports whether c is a byte git's isspace takes (and \v, \f).
func isGitSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f':
		return true
	}
	return false
}

// objectCaches are files of an object store that say where objects are,
// or what a commit holds, apart from the objects themselves: a
// multi-pack-index (an id's pack and offset: an old pack's other blob
// under its id), a commit-graph (a commit's tree and parents: another
// tree under an unchanged commit id), alternates (other stores, which a
// call can fill). git works without them — the first two are caches — so
// the ones a call created or changed are taken out rather than checked.
var objectCaches = []string{"pack/multi-pack-index", "pack/multi-pack-index.d", "info/commit-graph", "info/commit-graphs", "info/alternates", "info/http-alternates"}

// sweepObjects checks what the call wrote into a git directory's object
// store: each loose object it created or changed and each pack (index and
// pack file) it created or changed must hold what its ids name
// (internal/gitobj), and is taken out otherwise, as are the objectCaches
// it changed. git hashes a commit or a tree it reads, but writes a blob
// out at checkout as the store holds it: a blob forged in a pack or a
// loose file made the user's own branch check out the call's Makefile
// under an unchanged commit id (red team, 2026-12-02). Every loose object
// is looked at (a file rewritten in place leaves its directory's time
// alone); only those that changed are read.
func (s *Supervisor) sweepObjects(dir *safefs.Dir, start unix.Timespec) []string {
	objs, err := dir.Sub("objects")
	if err != nil {
		return nil // none, or a link: sweepGitDir's
	}
	defer objs.Close()
	var found []string
	take := func(d *safefs.Dir, name, why string) {
		found = append(found, s.takeEntry(d, name, "an object the call wrote")+" ("+why+")")
	}
	for _, rel := range objectCaches {
		d, name := filepath.Split(rel)
		parent, err := objs.Sub(filepath.Clean(d))
		if err != nil {
			continue
		}
		if _, err := parent.Stat(name); err == nil && entryChanged(parent, name, start) {
			take(parent, name, "an index or a cache of objects brig does not check")
		}
		parent.Close()
	}
	ents, err := objs.Dirents()
	if err != nil {
		return found
	}
	budget := int64(objectSweepBudget)
	for _, e := range ents {
		if !fanOut(e.Name) {
			continue
		}
		fan, err := objs.Sub(e.Name)
		if err != nil {
			continue
		}
		loose, err := fan.Dirents()
		if err != nil {
			loose = nil
		}
		for _, o := range loose {
			st, err := fan.Stat(o.Name)
			if err != nil || !timeAtOrAfter(st.Ctim, start) {
				continue
			}
			if why := s.checkLoose(fan, e.Name, o.Name, st.Size, &budget); why != "" {
				take(fan, o.Name, why)
			}
		}
		fan.Close()
	}
	if pack, err := objs.Sub("pack"); err == nil {
		s.checkPacks(pack, start, take, &budget)
		pack.Close()
	}
	return found
}

// objectSweepBudget bounds the bytes one sweep of a git directory
// inflates and rebuilds checking the loose objects and packs a call
// wrote: past it, the rest are taken out unchecked (many small objects,
// or one costly pack linked under many names, each inflating to
// gigabytes, held the sweep, and every later start, for hours: red team,
// 2026-12-03).
const objectSweepBudget = 8 << 30

// checkLoose says why the loose object fan/name (size bytes on disk) is
// not what its id names, or "" when it is (or is not an object: git's
// temporary files). budget is what the sweep may still inflate; the
// object's check spends from it.
func (s *Supervisor) checkLoose(fan *safefs.Dir, prefix, name string, size int64, budget *int64) string {
	id := prefix + name
	if len(id) != 40 && len(id) != 64 || hexPrefix([]byte(id)) != len(id) {
		return "" // tmp_obj_…: git ignores it
	}
	if *budget <= 0 {
		return "not checked: the sweep had inflated as much as it checks"
	}
	f, _, err := fan.OpenFile(name)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	defer f.Close()
	n, err := gitobj.VerifyLoose(f, strings.ToLower(id), min(gitobj.CheckBudget(size), *budget))
	*budget -= n
	if errors.Is(err, gitobj.ErrTooCostly) {
		return "it inflates to more than brig checks"
	}
	if err != nil {
		s.log.Warn("a loose object the call wrote does not hold what its id names; it is taken out to the quarantine", "path", filepath.Join(fan.Path(), name), "why", err)
		return "its content is not what its id names"
	}
	return ""
}

// packIndexLimit bounds a pack index read whole (some 28 bytes an object).
const packIndexLimit = 1 << 30

// checkPacks checks each pack of pack/ whose index or pack file the call
// created or changed, and takes out (with take) the files of one that
// fails: pack-X.pack, .idx and the files beside them (.rev, .bitmap,
// .keep, .mtimes, .promisor).
func (s *Supervisor) checkPacks(pack *safefs.Dir, start unix.Timespec, take func(*safefs.Dir, string, string), budget *int64) {
	ents, err := pack.Dirents()
	if err != nil {
		return
	}
	// A pack and index linked under another name are the same check:
	// its answer is kept for their inodes.
	type inodes struct{ pack, idx [2]uint64 }
	checked := map[inodes]string{}
	names := map[string]bool{}
	for _, e := range ents {
		names[e.Name] = true
	}
	for _, e := range ents {
		base, ok := strings.CutSuffix(e.Name, ".idx")
		if !ok || !strings.HasPrefix(base, "pack-") {
			continue
		}
		changed := false
		for _, n := range []string{base + ".idx", base + ".pack"} {
			if st, err := pack.Stat(n); err == nil && timeAtOrAfter(st.Ctim, start) {
				changed = true
			}
		}
		if !changed {
			continue
		}
		var key inodes
		if st, err := pack.Stat(base + ".pack"); err == nil {
			key.pack = [2]uint64{st.Dev, st.Ino}
		}
		if st, err := pack.Stat(base + ".idx"); err == nil {
			key.idx = [2]uint64{st.Dev, st.Ino}
		}
		why, seen := checked[key]
		if !seen {
			why = s.checkPack(pack, base, budget)
			checked[key] = why
		}
		if why == "" {
			continue
		}
		for _, ext := range []string{".pack", ".idx", ".rev", ".bitmap", ".keep", ".mtimes", ".promisor"} {
			if names[base+ext] {
				take(pack, base+ext, why)
			}
		}
	}
}

// checkPack says why pack/base.{idx,pack} do not hold what the index's ids
// name, or "".
func (s *Supervisor) checkPack(pack *safefs.Dir, base string, budget *int64) string {
	if *budget <= 0 {
		return "not checked: the sweep had inflated as much as it checks"
	}
	// A sparse index costs the call nothing on disk and the supervisor
	// its whole size in memory (1 GiB of holes: 2.1 GB of RSS; red team,
	// 2026-12-03): git writes none.
	if st, err := pack.Stat(base + ".idx"); err == nil && sparse(&st) {
		return fmt.Sprintf("a sparse file (%d MiB, %d KiB of it on disk), which git does not write", st.Size>>20, st.Blocks*512>>10)
	}
	idx, _, err := pack.ReadFile(base+".idx", packIndexLimit)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	f, st, err := pack.OpenFile(base + ".pack")
	if errors.Is(err, os.ErrNotExist) {
		return "" // an index alone names nothing git can read
	}
	if err != nil {
		return "unreadable: " + err.Error()
	}
	defer f.Close()
	idLen := 20
	if len(strings.TrimPrefix(base, "pack-")) == 64 {
		idLen = 32
	}
	if sparse(&st) {
		return fmt.Sprintf("a sparse file (%d MiB, %d KiB of it on disk), which git does not write", st.Size>>20, st.Blocks*512>>10)
	}
	spent, err := gitobj.VerifyPackWithin(f, st.Size, idx, idLen, *budget)
	*budget -= spent
	if err != nil {
		s.log.Warn("a pack the call wrote does not hold what its index names; it is taken out to the quarantine", "path", filepath.Join(pack.Path(), base+".pack"), "why", err)
		if errors.Is(err, gitobj.ErrTooCostly) {
			return "checking it would inflate and rebuild far more than the pack's size (made to be costly to check)"
		}
		return "its objects are not what their ids name"
	}
	return ""
}

// sparse reports whether a file of more than 1 MiB has fewer than an
// eighth of its bytes on disk: holes, which git and git-lfs never leave
// in what they write, and which a call makes for the price of a few KiB.
// (A compressing file system may show few blocks too: such a file is
// taken out and fetched again, as an object that fails its check is.)
func sparse(st *unix.Stat_t) bool {
	return st.Size > 1<<20 && st.Blocks*512 < st.Size/8
}

// sweepLFS checks the Git LFS objects the call wrote into a git
// directory's lfs/objects (<id[0:2]>/<id[2:4]>/<id>, the id the SHA-256 of
// the content): git-lfs writes a tracked file out at checkout from the
// object its pointer names, read from there as it is (only its size is
// compared), so an object rewritten with other bytes of the same size
// made the user's next checkout, outside any jail, write the call's
// content under an unchanged commit — git status clean (red team,
// 2026-12-02). Each object the call created or changed is hashed and
// taken out when the hash is not its name (git-lfs then fetches it again,
// or says it is missing); so is a link or another file the call put in
// place of a fan-out directory (git-lfs follows a link there). Every
// object's status is looked at, as with git's loose objects
// (sweepObjects); only the changed ones are read. Names that are not an
// object id are git-lfs's to ignore, and left.
func (s *Supervisor) sweepLFS(dir *safefs.Dir, start unix.Timespec) []string {
	objs, err := dir.Sub("lfs/objects")
	if err != nil {
		return nil // none, or a link: sweepGitDir's
	}
	defer objs.Close()
	ents, err := objs.Dirents()
	if err != nil {
		return nil
	}
	var (
		mu    sync.Mutex
		found []string
	)
	take := func(d *safefs.Dir, name, why string) {
		p := s.takeEntry(d, name, "a Git LFS object the call wrote") + " (" + why + ")"
		mu.Lock()
		found = append(found, p)
		mu.Unlock()
	}
	// notDir takes out e, an entry of d where git-lfs wants a fan-out
	// directory, when it is something else the call made.
	notDir := func(d *safefs.Dir, e safefs.Dirent) bool {
		if e.Type == unix.DT_DIR {
			return false
		}
		if st, err := d.Stat(e.Name); err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
			return false
		}
		if entryChanged(d, e.Name, start) {
			take(d, e.Name, "not a directory: git-lfs would follow it")
		}
		return true
	}
	// The bytes hashed after one call are bounded: past the budget an
	// object is taken out unchecked (git-lfs fetches it again).
	var budget atomic.Int64
	budget.Store(lfsCheckBudget)
	// The fan-out directories are split among a few goroutines: a store
	// of 20,000 objects has as many directories, each opened on its own.
	work := make(chan string)
	var wg sync.WaitGroup
	for range max(runtime.GOMAXPROCS(0), 1) {
		wg.Go(func() {
			for e1 := range work {
				d1, ents2, err := objs.ListSub(e1)
				if err != nil {
					continue
				}
				for _, e2 := range ents2 {
					if !fanOut(e2.Name) || notDir(d1, e2) {
						continue
					}
					d2, files, err := d1.ListSub(e2.Name)
					if err != nil {
						continue
					}
					for _, f := range files {
						n := f.Name
						if len(n) != 64 || n[:2] != e1 || n[2:4] != e2.Name || hexPrefix([]byte(n)) != 64 {
							continue
						}
						if st, err := d2.Stat(n); err != nil || !timeAtOrAfter(st.Ctim, start) {
							continue
						}
						if why := s.checkLFS(d2, n, &budget); why != "" {
							take(d2, n, why)
						}
					}
					d2.Close()
				}
				d1.Close()
			}
		})
	}
	for _, e1 := range ents {
		if fanOut(e1.Name) && !notDir(objs, e1) {
			work <- e1.Name
		}
	}
	close(work)
	wg.Wait()
	slices.Sort(found)
	return found
}

// lfsCheckBudget is how many bytes of Git LFS objects one sweep hashes.
const lfsCheckBudget = 8 << 30

// checkLFS says why the Git LFS object d/id does not hold what id names,
// or "" when it does; budget is what is left of the bytes the sweep may
// hash, which the object's size is taken from.
func (s *Supervisor) checkLFS(d *safefs.Dir, id string, budget *atomic.Int64) string {
	f, st, err := d.OpenFile(id)
	if err != nil {
		return "not a file brig could read: " + err.Error()
	}
	defer f.Close()
	switch {
	case sparse(&st):
		// Forty sparse 4 GB objects took the sweep six minutes of
		// hashing for 16 KB of disk (red team, 2026-12-03).
		return fmt.Sprintf("a sparse file (%d MiB, %d KiB of it on disk), which git-lfs does not write", st.Size>>20, st.Blocks*512>>10)
	case budget.Add(-st.Size) < 0:
		return fmt.Sprintf("not checked: the call wrote more Git LFS objects than brig hashes after one call (%d GiB)", lfsCheckBudget>>30)
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unreadable: " + err.Error()
	}
	if hex.EncodeToString(h.Sum(nil)) != strings.ToLower(id) {
		s.log.Warn("a Git LFS object the call wrote does not hold what its id names; it is taken out to the quarantine", "path", filepath.Join(d.Path(), id))
		return "its content is not what its id names"
	}
	return ""
}
