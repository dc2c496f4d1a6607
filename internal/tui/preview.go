package tui

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"brig/agent"
	"brig/jail"
	"brig/tools"
)

// previewMaxBytes is the largest current file an approval prompt reads to
// show the diff a call would make.
const previewMaxBytes = 1 << 20

// preview is what an approval prompt shows of a call beyond its arguments,
// computed once when the request arrives (off the UI goroutine when it
// comes from the agent): the target as the policy resolved it, and the diff
// an edit or an overwrite would make to the file as it is now.
type preview struct {
	given, target string // the path as the model gave it, and where it leads
	exists        bool
	diff          *tools.Preview
	// note says why there is no diff (a new file, a file that could not be
	// read safely, an edit that would fail as it stands).
	note string
	// what a deletion would remove: "a file", "a directory of 12 entries" …
	deletes string
}

// buildPreview computes the preview of a request.
func buildPreview(req agent.ApprovalRequest) *preview {
	a := parseArgs(req.Args)
	p := &preview{given: a.Path}
	name := tools.Name(req.Tool)
	switch name {
	case tools.EditFile, tools.MultiEdit, tools.WriteFile, tools.DeletePath:
	default:
		return p
	}
	p.target = targetPath(req, a.Path)
	if p.target == "" {
		p.note = "the target could not be placed"
		return p
	}
	if name == tools.DeletePath {
		p.deletes, p.exists = describeDeletion(p.target)
		return p
	}
	cur, exists, err := readForPreview(p.target, req.Grant)
	p.exists = exists
	switch {
	case err != nil:
		p.note = fmt.Sprintf("the current content is not shown: %v", err)
		return p
	case !exists && name == tools.WriteFile:
		p.note = "a new file"
		return p
	case !exists:
		p.note = "the file does not exist: the edit will fail"
		return p
	}
	var d tools.Preview
	if name == tools.WriteFile {
		d, err = tools.PreviewWrite(req.Args, cur)
	} else {
		d, err = tools.PreviewEdits(name, req.Args, cur)
	}
	if err != nil {
		p.note = "as the file is now, the call will fail: " + err.Error()
		return p
	}
	p.diff = &d
	return p
}

// targetPath is where the call's file really is: the path the policy
// resolved (symlinks followed, as the grant names it), or, for a request
// without one, the given path placed in the workspace.
func targetPath(req agent.ApprovalRequest, given string) string {
	for _, pv := range req.Verdict.Paths {
		if pv.Write && pv.Resolved != "" {
			return pv.Resolved
		}
	}
	if given == "" {
		return ""
	}
	if filepath.IsAbs(given) {
		return filepath.Clean(given)
	}
	if req.Grant != nil && req.Grant.Workspace != "" {
		return filepath.Join(req.Grant.Workspace, given)
	}
	return ""
}

// readForPreview reads the file a call would change, for the prompt only.
// It reads only a path the call's grant may write, and follows no symbolic
// link anywhere on the way (the path is already resolved; a link planted
// since is refused, not followed), nor opens anything but a regular file
// (a FIFO would block). exists is false when the file is not there.
func readForPreview(path string, grant *jail.Spec) (data []byte, exists bool, err error) {
	if grant == nil || !grantWrites(grant, path) {
		return nil, false, errors.New("it is outside what the call may write")
	}
	fd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{
		Flags:   uint64(unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_NOFOLLOW),
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil, false, nil
	case errors.Is(err, unix.ELOOP):
		return nil, true, errors.New("a symbolic link is on its path, and brig does not follow it")
	case err != nil:
		return nil, true, err
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, true, err
	case !fi.Mode().IsRegular():
		return nil, true, fmt.Errorf("it is not a regular file (%s)", fi.Mode().Type())
	case fi.Size() > previewMaxBytes:
		return nil, true, fmt.Errorf("it is larger than %d KiB", previewMaxBytes>>10)
	}
	data, err = io.ReadAll(io.LimitReader(f, previewMaxBytes+1))
	if err != nil {
		return nil, true, err
	}
	if len(data) > previewMaxBytes {
		return nil, true, fmt.Errorf("it is larger than %d KiB", previewMaxBytes>>10)
	}
	return data, true, nil
}

// grantWrites reports whether the grant lets the call write path.
func grantWrites(g *jail.Spec, path string) bool {
	for _, r := range g.Paths {
		if r.Access == jail.Write && (path == r.Path || strings.HasPrefix(path, strings.TrimSuffix(r.Path, "/")+"/")) {
			return true
		}
	}
	return false
}

// describeDeletion says what a deletion would remove, without following a
// link: a file, a symbolic link (itself, not what it points to), or a
// directory with how many entries it holds (counted up to a bound).
func describeDeletion(path string) (string, bool) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "nothing: it does not exist", false
	}
	if err != nil {
		return fmt.Sprintf("unknown (%v)", err), true
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		to, _ := os.Readlink(path)
		return "a symbolic link (the link itself, not " + to + ")", true
	case fi.IsDir():
		n, more := 0, false
		_ = filepath.WalkDir(path, func(_ string, _ fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			n++
			if n > 10000 {
				more = true
				return fs.SkipAll
			}
			return nil
		})
		n-- // the directory itself
		switch {
		case more:
			return "a directory with more than 10,000 entries, and everything in it", true
		case n == 0:
			return "an empty directory", true
		}
		return fmt.Sprintf("a directory with %d entries, and everything in it", n), true
	}
	return fmt.Sprintf("a file of %d bytes", fi.Size()), true
}
