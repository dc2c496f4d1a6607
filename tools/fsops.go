package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"brig/policy/toolcall"
)

type pathArg struct {
	Path string `json:"path"`
}

func (a *pathArg) pathFields() []*string { return []*string{&a.Path} }

type listArgs struct {
	Path string `json:"path,omitempty"`
}

func (a *listArgs) validate() error {
	if a.Path == "" {
		a.Path = "."
	}
	return nil
}

func (a *listArgs) pathFields() []*string { return []*string{&a.Path} }

func listDirectoryDef() Definition {
	return define(ListDirectory, toolcall.EffectRead,
		fmt.Sprintf("List one directory (not recursive): subdirectories end with /, symlinks show their target, files their size. At most %d entries; use glob for recursive listings.", MaxListEntries),
		`{"type":"object","properties":{"path":{"type":"string","description":"Directory to list; default the workspace root"}},"additionalProperties":false}`,
		func(a listArgs) toolcall.Call { return toolcall.Call{Read: []string{a.Path}} },
		runListDirectory)
}

func runListDirectory(_ context.Context, a listArgs) Result {
	entries, err := os.ReadDir(a.Path)
	if err != nil {
		return fsError("list", a.Path, err)
	}
	var b strings.Builder
	for i, e := range entries {
		if i == MaxListEntries {
			fmt.Fprintf(&b, "[… %d more entries not shown (%d in all); use glob with a pattern to find the ones you need]\n", len(entries)-i, len(entries))
			break
		}
		name := e.Name()
		switch {
		case e.IsDir():
			b.WriteString(name + "/\n")
		case e.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(filepath.Join(a.Path, name))
			fmt.Fprintf(&b, "%s -> %s\n", name, target)
		default:
			size := ""
			if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
				size = " (" + humanBytes(fi.Size()) + ")"
			}
			b.WriteString(name + size + "\n")
		}
	}
	if len(entries) == 0 {
		b.WriteString("(empty directory)\n")
	}
	return Result{Text: strings.TrimSuffix(b.String(), "\n"), Meta: Meta{Path: a.Path, Matches: len(entries), Truncated: len(entries) > MaxListEntries}}
}

func humanBytes(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}

type mkdirArgs struct{ pathArg }

func (a *mkdirArgs) validate() error {
	if a.Path == "" {
		return errors.New("path is required")
	}
	return nil
}

func createDirectoryDef() Definition {
	return define(CreateDirectory, toolcall.EffectWrite,
		"Create a directory and any missing parents. Succeeds if it already exists.",
		`{"type":"object","properties":{"path":{"type":"string","description":"Directory to create"}},"required":["path"],"additionalProperties":false}`,
		func(a mkdirArgs) toolcall.Call { return toolcall.Call{Write: []string{a.Path}} },
		func(_ context.Context, a mkdirArgs) Result {
			if err := os.MkdirAll(a.Path, 0o755); err != nil {
				return fsError("create directory", a.Path, err)
			}
			return Result{Text: "Created directory " + a.Path, Meta: Meta{Path: a.Path}}
		})
}

type twoPathArgs struct {
	Source      string `json:"source"`
	Destination string `json:"destination"`
	Overwrite   bool   `json:"overwrite,omitempty"`
}

func (a *twoPathArgs) validate() error {
	if a.Source == "" || a.Destination == "" {
		return errors.New("source and destination are required")
	}
	if filepath.Clean(a.Source) == filepath.Clean(a.Destination) {
		return errors.New("source and destination are the same path")
	}
	return nil
}

func (a *twoPathArgs) pathFields() []*string { return []*string{&a.Source, &a.Destination} }

const twoPathSchema = `{"type":"object","properties":{` +
	`"source":{"type":"string","description":"Existing file or directory"},` +
	`"destination":{"type":"string","description":"New path (not an existing directory to put it into)"},` +
	`"overwrite":{"type":"boolean","description":"Replace an existing destination file"}` +
	`},"required":["source","destination"],"additionalProperties":false}`

func movePathDef() Definition {
	return define(MovePath, toolcall.EffectWrite,
		"Move or rename a file or directory. Refuses to replace an existing destination unless overwrite is set (directories are never replaced).",
		twoPathSchema,
		func(a twoPathArgs) toolcall.Call { return toolcall.Call{Write: []string{a.Source, a.Destination}} },
		runMove)
}

// checkDestination refuses to replace what must not be replaced.
func checkDestination(a twoPathArgs) *Result {
	fi, err := os.Lstat(a.Destination)
	if err != nil {
		return nil
	}
	var r Result
	switch {
	case fi.IsDir():
		r = errorf("%s already exists and is a directory; give the full new path", a.Destination)
	case !a.Overwrite:
		r = errorf("%s already exists; set overwrite to replace it", a.Destination)
	default:
		return nil
	}
	return &r
}

func runMove(_ context.Context, a twoPathArgs) Result {
	if _, err := os.Lstat(a.Source); err != nil {
		return fsError("move", a.Source, err)
	}
	if r := checkDestination(a); r != nil {
		return *r
	}
	if err := os.MkdirAll(filepath.Dir(a.Destination), 0o755); err != nil {
		return fsError("create the parent directory of", a.Destination, err)
	}
	err := os.Rename(a.Source, a.Destination)
	if errors.Is(err, syscall.EXDEV) {
		// Different filesystems (or mounts): copy, then remove the source.
		if err = copyTree(a.Source, a.Destination); err == nil {
			err = os.RemoveAll(a.Source)
		}
	}
	if err != nil {
		return fsError("move", a.Source+" to "+a.Destination, err)
	}
	return Result{Text: fmt.Sprintf("Moved %s to %s", a.Source, a.Destination), Meta: Meta{Path: a.Destination}}
}

func copyPathDef() Definition {
	return define(CopyPath, toolcall.EffectWrite,
		"Copy a file or a directory tree. Permissions are kept; symlinks are copied as links, not followed. Refuses to replace an existing destination unless overwrite is set.",
		twoPathSchema,
		func(a twoPathArgs) toolcall.Call {
			return toolcall.Call{Read: []string{a.Source}, Write: []string{a.Destination}}
		},
		func(_ context.Context, a twoPathArgs) Result {
			if _, err := os.Lstat(a.Source); err != nil {
				return fsError("copy", a.Source, err)
			}
			if r := checkDestination(a); r != nil {
				return *r
			}
			if err := os.MkdirAll(filepath.Dir(a.Destination), 0o755); err != nil {
				return fsError("create the parent directory of", a.Destination, err)
			}
			if err := copyTree(a.Source, a.Destination); err != nil {
				return fsError("copy", a.Source+" to "+a.Destination, err)
			}
			return Result{Text: fmt.Sprintf("Copied %s to %s", a.Source, a.Destination), Meta: Meta{Path: a.Destination}}
		})
}

// copyTree copies src to dst without following symlinks.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, fi.Mode().Perm()|0o700)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			os.Remove(target)
			return os.Symlink(link, target)
		case fi.Mode().IsRegular():
			return copyFile(p, target, fi.Mode().Perm())
		}
		return nil // sockets, devices, fifos: skipped
	})
}

func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	// O_NOFOLLOW: never write through a symlink planted at the destination.
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Chmod(mode); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

type deleteArgs struct {
	Path      string `json:"path"`
	Recursive bool   `json:"recursive,omitempty"`
}

func (a *deleteArgs) validate() error {
	if a.Path == "" {
		return errors.New("path is required")
	}
	return nil
}

func (a *deleteArgs) pathFields() []*string { return []*string{&a.Path} }

func deletePathDef() Definition {
	return define(DeletePath, toolcall.EffectWrite,
		"Delete a file, a symlink (not its target) or a directory. A non-empty directory needs recursive. The user is always asked to confirm.",
		`{"type":"object","properties":{`+
			`"path":{"type":"string","description":"Path to delete"},`+
			`"recursive":{"type":"boolean","description":"Delete a directory with everything in it"}`+
			`},"required":["path"],"additionalProperties":false}`,
		func(a deleteArgs) toolcall.Call { return toolcall.Call{Write: []string{a.Path}, Confirm: true} },
		runDelete)
}

func runDelete(_ context.Context, a deleteArgs) Result {
	abs, err := filepath.Abs(a.Path)
	if err != nil {
		return errorf("delete %s: %v", a.Path, err)
	}
	if wd, err := os.Getwd(); err == nil && within(wd, abs) {
		return errorf("delete %s: refusing to delete the working directory or one of its parents", a.Path)
	}
	fi, err := os.Lstat(a.Path)
	if err != nil {
		return fsError("delete", a.Path, err)
	}
	what := "file"
	switch {
	case fi.IsDir() && a.Recursive:
		what = "directory"
		err = os.RemoveAll(a.Path)
	case fi.IsDir():
		what = "directory"
		err = os.Remove(a.Path)
		if errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) {
			return errorf("delete %s: the directory is not empty; set recursive to delete it with its contents", a.Path)
		}
	default:
		if fi.Mode()&fs.ModeSymlink != 0 {
			what = "symlink"
		}
		err = os.Remove(a.Path)
	}
	if err != nil {
		return fsError("delete", a.Path, err)
	}
	return Result{Text: fmt.Sprintf("Deleted %s %s", what, a.Path), Meta: Meta{Path: a.Path}}
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}
