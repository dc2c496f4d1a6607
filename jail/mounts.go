package jail

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// setupView builds the call's view inside its fresh mount namespace (run by
// init, which holds capabilities only over namespaces it owns):
//   - /tmp and /dev/shm become fresh tmpfs, with granted paths under them
//     (a workspace in /tmp, say) carried over as bind mounts;
//   - each hidden path is masked (with the masks sealNamespace made);
//   - each directory on the way to a protected or hidden path becomes a
//     mount point (so it cannot be renamed away and replaced, or moved out
//     from under its mask), and each existing protected path is bound
//     read-only over itself.
func setupView(spec Spec, m *masks) error {
	if err := restoreWrites(spec); err != nil {
		return err
	}
	if spec.PrivateTmp {
		if err := privateTmp(spec); err != nil {
			return err
		}
	}
	for _, o := range spec.Overlays {
		mountOverlay(o)
	}
	if err := hide(spec.Hidden, m); err != nil {
		return err
	}
	return protect(spec)
}

// mountOverlay mounts o over its directory, on the writable mount
// restoreWrites gave it. Every layer is opened without following a
// symbolic link (another call of the same workspace may have put one
// where the directory was, after the supervisor prepared it), and the
// overlay is made of those open directories and attached to the opened
// one: through the mount API's descriptors (Linux 6.13 and later), else
// by mount(2) with each named /proc/self/fd/N, which leads to the same
// open directory. It is only a saving of build time: a missing layer, or
// a kernel without overlayfs in a user namespace (before Linux 5.11),
// leaves the directory as it is.
func mountOverlay(o Overlay) {
	var fds []int
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	for _, p := range []string{o.Lower, o.Dir, o.Work} {
		// Opened for reading: overlayfs takes no O_PATH descriptor.
		fd, err := unix.Openat2(unix.AT_FDCWD, p, &unix.OpenHow{
			Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		})
		if err != nil {
			return
		}
		fds = append(fds, fd)
	}
	lower, upper, work := fds[0], fds[1], fds[2]
	// userxattr: the overlay keeps its own records in user.* attributes,
	// as it must in a user namespace; a file system without them gets the
	// plain mount, which works without them.
	for _, userxattr := range []bool{true, false} {
		if attachOverlay(lower, upper, work, userxattr) == nil || mountOverlayByPath(lower, upper, work, userxattr) == nil {
			return
		}
	}
}

// mountOverlayByPath is attachOverlay for kernels whose overlayfs takes no
// layer by descriptor: mount(2) with every directory named through
// /proc/self/fd.
func mountOverlayByPath(lower, upper, work int, userxattr bool) error {
	fd := func(n int) string { return fmt.Sprintf("/proc/self/fd/%d", n) }
	opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", fd(lower), fd(upper), fd(work))
	if userxattr {
		opts += ",userxattr"
	}
	return unix.Mount("overlay", fd(upper), "overlay", unix.MS_NOSUID|unix.MS_NODEV, opts)
}

// attachOverlay makes an overlay of the open directories and attaches it
// over upper.
func attachOverlay(lower, upper, work int, userxattr bool) error {
	fs, err := unix.Fsopen("overlay", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return err
	}
	defer unix.Close(fs)
	for _, l := range []struct {
		key string
		fd  int
	}{{"lowerdir+", lower}, {"upperdir", upper}, {"workdir", work}} {
		if err := unix.FsconfigSetFd(fs, l.key, l.fd); err != nil {
			return err
		}
	}
	if userxattr {
		if err := unix.FsconfigSetFlag(fs, "userxattr"); err != nil {
			return err
		}
	}
	if err := unix.FsconfigCreate(fs); err != nil {
		return err
	}
	mnt, err := unix.Fsmount(fs, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
	if err != nil {
		return err
	}
	defer unix.Close(mnt)
	return unix.MoveMount(mnt, "", upper, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
}

// hide masks each existing hidden path with one of the masks: a directory
// by the empty directory, anything else by the empty file, both read-only
// and of mode 000. With every capability dropped in the worker, neither can
// be read, listed or reopened with chmod.
func hide(paths []string, m *masks) error {
	// A detached mount can be attached once: each mask goes over the first
	// path of its kind, and the others are bound from there.
	var firstDir, firstFile string
	place := func(mask int, first *string, p string) error {
		var err error
		if *first == "" {
			// Like mount(2), follow a symlink to what it names.
			err = unix.MoveMount(mask, "", unix.AT_FDCWD, p, unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_SYMLINKS)
			*first = p
			m.attached = true
		} else {
			err = unix.Mount(*first, p, "", unix.MS_BIND, "")
		}
		if err != nil {
			return fmt.Errorf("mask %s: %w", p, err)
		}
		return nil
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			continue // nothing there to read (a dangling link included)
		case fi.IsDir():
			err = place(m.dir, &firstDir, p)
		default:
			err = place(m.file, &firstFile, p)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// scratchHold, set only by this package's tests, says how long makeMasks
// keeps its scratch over /tmp: the window in which nothing else in the
// namespace may look under /tmp.
var scratchHold func() time.Duration

// masks are detached read-only mounts of an empty directory and an empty
// file, both of mode 000, that hide puts over hidden paths. A detached
// mount can be attached once: attached says hide has attached one (a
// serving init makes new ones for its next call).
type masks struct {
	dir, file int
	attached  bool
}

func (m masks) close() {
	unix.Close(m.dir)
	unix.Close(m.file)
}

// makeMasks makes the masks on a scratch tmpfs over /tmp (any directory
// would do, and /tmp exists everywhere; an ordinary user's namespace cannot
// create directories in /dev) that is detached at once. Detaching a mount
// waits for an RCU grace period, a few hundred microseconds, and making a
// tmpfs per hidden directory costs a superblock each: both happen here,
// before the call is known. Read-only, so that not even their owner can
// chmod them and write into them.
func makeMasks() (masks, error) {
	m := masks{dir: -1, file: -1}
	const scratch = "/tmp"
	var hold time.Duration
	if scratchHold != nil {
		hold = scratchHold() // asked before the scratch hides what it looks at
	}
	if err := unix.Mount("tmpfs", scratch, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=700,size=4k"); err != nil {
		return m, fmt.Errorf("mask scratch tmpfs: %w", err)
	}
	defer unix.Unmount(scratch, unix.MNT_DETACH)
	if hold > 0 {
		time.Sleep(hold)
	}
	dir, file := filepath.Join(scratch, "dir"), filepath.Join(scratch, "file")
	if err := os.Mkdir(dir, 0); err != nil {
		return m, fmt.Errorf("mask directory: %w", err)
	}
	if err := os.WriteFile(file, nil, 0); err != nil {
		return m, fmt.Errorf("mask file: %w", err)
	}
	for _, t := range []struct {
		fd   *int
		path string
	}{{&m.dir, dir}, {&m.file, file}} {
		fd, err := unix.OpenTree(unix.AT_FDCWD, t.path, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
		if err != nil {
			m.close()
			return masks{dir: -1, file: -1}, fmt.Errorf("detach the mask %s: %w", t.path, err)
		}
		*t.fd = fd
		attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
		if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH, &attr); err != nil {
			m.close()
			return masks{dir: -1, file: -1}, fmt.Errorf("make the mask %s read-only: %w", t.path, err)
		}
	}
	return m, nil
}

// prepareNamespace runs first in an init that is PID 1 of fresh namespaces,
// before any call is known (a prewarmed child does it while it waits): mount
// events stay inside the namespace, and /proc shows only this PID namespace
// (psx, which applies Landlock to every thread, lists threads through
// /proc/<pid>/task).
func prepareNamespace() error {
	if err := unix.Mount("none", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc for the PID namespace: %w", err)
	}
	return nil
}

// sealNamespace makes the masks for hidden paths (makeMasks), then seals
// the namespace (sealMounts): what a direct init, which starts no worker,
// does before any call is known. An init that starts a worker makes the
// masks before the worker exists and seals once it does.
func sealNamespace() (masks, error) {
	m, err := makeMasks()
	if err != nil {
		return m, err
	}
	if err := sealMounts(); err != nil {
		m.close()
		return masks{dir: -1, file: -1}, err
	}
	return m, nil
}

// sealMounts runs once the worker, if any, exists and has joined its
// cgroup (a file open for writing would keep its mount from turning
// read-only), still before any call is known:
//   - every mount becomes read-only (restoreWrites puts the call's write
//     grants back);
//   - loopback comes up when the network namespace is private (on the
//     host's network it is up already and nothing changes).
func sealMounts() error {
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &attr); err != nil {
		return fmt.Errorf("make the filesystem read-only: %w", err)
	}
	return loopbackUp()
}

// restoreWrites puts the write grants back writable on top of the
// read-only filesystem (prepareNamespace made every mount read-only: Landlock
// up to ABI 7 does not govern chmod, chown, utimes or extended attributes,
// so without that a call could change the mode or timestamps of any file it
// can name; on a read-only mount the kernel refuses with EROFS). Device
// nodes (/dev/null) keep working: writing to a device is not writing to the
// filesystem. Grants under /tmp and /dev/shm are handled by privateTmp when
// the call has a private /tmp; without one they are restored here.
func restoreWrites(spec Spec) error {
	var keep []clonedMount
	defer func() { closeClones(keep) }() // the clones made, not the nil slice of this line
	for _, r := range spec.Paths {
		if r.Access != Write || (spec.PrivateTmp && within(r.Path, "/tmp")) || within(r.Path, "/dev") {
			continue
		}
		if _, err := os.Stat(r.Path); err != nil {
			if r.Optional {
				continue
			}
			return fmt.Errorf("granted path %s: %w", r.Path, err)
		}
		c, err := cloneGrant(r.Path, writable, r.Exact || exactIn(r.Path, spec))
		if err != nil {
			return err
		}
		keep = append(keep, c)
	}
	return placeClones(keep, false)
}

// clonedMount is a detached copy of the mount tree at path, to be attached
// there again (over something else) with placeClones.
type clonedMount struct {
	path string
	fd   int
	dir  bool
}

// Access of a cloned mount.
type mountAccess int

const (
	keepAccess mountAccess = iota // as the original
	writable
	readOnly
)

// cloneMount copies the mount tree at path and sets the copy's access.
func cloneMount(path string, access mountAccess) (clonedMount, error) {
	return cloneGrant(path, access, false)
}

// cloneGrant is cloneMount for a grant's path: exact refuses a symbolic
// link on the way (see grant.exact), where cloneMount follows it.
func cloneGrant(path string, access mountAccess, exact bool) (clonedMount, error) {
	at, err := openGrant(path, exact)
	if err != nil {
		return clonedMount{}, fmt.Errorf("clone mount of %s: %w", path, err)
	}
	defer unix.Close(at)
	var st unix.Stat_t
	if err := unix.Fstat(at, &st); err != nil {
		return clonedMount{}, fmt.Errorf("clone mount of %s: %w", path, err)
	}
	fd, err := unix.OpenTree(at, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE|unix.AT_EMPTY_PATH)
	if err != nil {
		return clonedMount{}, fmt.Errorf("clone mount of %s: %w", path, err)
	}
	var attr unix.MountAttr
	switch access {
	case writable:
		attr.Attr_clr = unix.MOUNT_ATTR_RDONLY
	case readOnly:
		attr.Attr_set = unix.MOUNT_ATTR_RDONLY
	}
	if access != keepAccess {
		err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr)
		if errors.Is(err, unix.EPERM) && access == writable {
			err = lockedReadOnly(fd, &attr)
		}
		if err != nil {
			unix.Close(fd)
			return clonedMount{}, fmt.Errorf("set the access of %s: %w", path, err)
		}
	}
	return clonedMount{path: path, fd: fd, dir: st.Mode&unix.S_IFMT == unix.S_IFDIR}, nil
}

// lockedReadOnly handles a write grant whose mount tree holds a mount that
// was read-only where brig started (a workspace on a read-only bind
// mount or file system): the kernel locks that flag in the jail's user
// namespace (MNT_LOCK_READONLY), so the recursive clear of RDONLY fails
// with EPERM for the whole tree. The top mount alone is made writable
// when it can be; what is locked stays read-only, and a write there meets
// EROFS as it would outside brig. Nothing becomes more writable than it
// was outside the jail; mounts below the top that were writable stay
// read-only (sealMounts made them so), which refuses more, not less.
func lockedReadOnly(fd int, attr *unix.MountAttr) error {
	err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH, attr)
	if errors.Is(err, unix.EPERM) {
		return nil // the top is locked read-only: it stays so
	}
	return err
}

// placeClones attaches each clone at its path, shallowest first so nested
// ones land inside their parents; with makePoints it first creates the
// directory or empty file to mount over (in a fresh tmpfs).
func placeClones(clones []clonedMount, makePoints bool) error {
	slices.SortFunc(clones, func(a, b clonedMount) int { return len(a.path) - len(b.path) })
	for _, c := range clones {
		if makePoints {
			if err := mkMountPoint(c.path, c.dir); err != nil {
				return err
			}
		}
		if err := unix.MoveMount(c.fd, "", unix.AT_FDCWD, c.path, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return fmt.Errorf("mount %s: %w", c.path, err)
		}
	}
	return nil
}

func closeClones(clones []clonedMount) {
	for _, c := range clones {
		unix.Close(c.fd)
	}
}

// privateTmp replaces /tmp and /dev/shm by fresh tmpfs, keeping granted paths
// that live there.
func privateTmp(spec Spec) error {
	for _, dir := range []string{"/tmp", "/dev/shm"} {
		// The carried copy is writable or read-only as granted: the tmpfs
		// root is granted write, and Landlock's walk up the tree crosses
		// mount points, so a carried read-only grant would inherit that
		// write right. A read-only mount refuses writes whatever Landlock
		// allows.
		var keep []clonedMount
		for _, r := range spec.Paths {
			if r.Path == dir || !within(r.Path, dir) {
				continue
			}
			access := readOnly
			if r.Access == Write {
				access = writable
			}
			c, err := cloneGrant(r.Path, access, r.Exact || exactIn(r.Path, spec))
			if err != nil {
				if r.Optional {
					continue
				}
				closeClones(keep)
				return fmt.Errorf("granted path %s: %w", r.Path, err)
			}
			keep = append(keep, c)
		}
		size := spec.Limits.TmpBytes
		opts := "mode=1777"
		if size > 0 {
			opts += fmt.Sprintf(",size=%d", size)
		}
		err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts)
		if err == nil {
			err = placeClones(keep, true)
		} else {
			err = fmt.Errorf("private tmpfs on %s: %w", dir, err)
		}
		closeClones(keep)
		if err != nil {
			return err
		}
	}
	return nil
}

// mkMountPoint creates an empty directory or file to mount over.
func mkMountPoint(path string, dir bool) error {
	if dir {
		return os.MkdirAll(path, 0o755)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// protect pins and read-only-binds the protected paths.
//
// What is bound is what the path reaches: the path itself, or, through a
// symlink (the path, or a directory on its way), what the link names —
// what a later git would run. A mount cannot sit on a symlink; the link
// itself is checked and restored by the supervisor after the call. Each
// is judged by where it lies: a link outside every write grant (the
// workspace of a line that only reads) can still lead into one (the
// toolchain cache, an added directory), where what it names is bound and
// the directories on the way to it pinned, so that the call can neither
// write it nor move it aside and make another where the link leads.
func protect(spec Spec) error {
	var pins, ro []string
	pin := func(p, root string) {
		if root == "/" {
			return
		}
		for d := filepath.Dir(p); d != root && within(d, root); d = filepath.Dir(d) {
			// A link on the way cannot be pinned (the supervisor records
			// it and puts it back after the call); the directories are.
			if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
				pins = append(pins, d)
			}
		}
	}
	absent := ReadAbsence(spec.Protected)
	for _, p := range spec.Protected {
		if absent.Absent(p) {
			continue
		}
		fi, err := os.Lstat(p)
		if err != nil {
			continue // missing: the supervisor checks after the call
		}
		target, err := filepath.EvalSymlinks(p)
		switch {
		case err != nil && fi.Mode()&os.ModeSymlink != 0:
			continue // dangling: its target counts as missing
		case err != nil:
			target = p
		}
		root, troot := protectionRoot(p, spec), protectionRoot(target, spec)
		if troot == "/" && target != p && isWriteGrant(target, spec) {
			troot = target // a link to a write grant itself (.husky -> the cache): all of it
		}
		if root == "/" && troot == "/" {
			continue // outside every write grant, and so is what it reaches: read-only like the rest
		}
		ro = append(ro, target)
		pin(p, root)
		pin(target, troot)
	}
	// The directories on the way to a hidden place are pinned too: the
	// mask is a mount on the place itself, which cannot be renamed, but a
	// directory above it could be (mv config cfg2), taking the place out
	// from under the name the next call's mask is looked up by.
	for _, p := range spec.Hidden {
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		pin(p, protectionRoot(p, spec))
		if target, err := filepath.EvalSymlinks(p); err == nil && target != p {
			pin(target, protectionRoot(target, spec))
		}
	}
	slices.Sort(pins)
	pins = slices.Compact(pins)
	slices.SortFunc(pins, func(a, b string) int { return len(a) - len(b) })
	for _, d := range pins {
		if err := rebind(d, keepAccess); err != nil {
			return err
		}
	}
	slices.SortFunc(ro, func(a, b string) int { return len(a) - len(b) })
	for _, p := range ro {
		if err := rebind(p, readOnly); err != nil {
			return err
		}
	}
	return ownCacheWritable(spec, ro)
}

// ownCacheWritable binds the call's own toolchain cache writable again
// when a read-only path above it covered it (brig's cache, protected as a
// whole under a grant of ~/.cache): the call writes its own cache and no
// other. Not when a protected path lies in the cache itself (a link in
// the workspace that leads to it): that stays read-only.
func ownCacheWritable(spec Spec, ro []string) error {
	dir := spec.OwnCache
	if dir == "" || !isWriteGrant(dir, spec) {
		return nil
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	above := slices.ContainsFunc(ro, func(p string) bool { return p != dir && within(dir, p) })
	inside := slices.ContainsFunc(ro, func(p string) bool { return within(p, dir) })
	if !above || inside {
		return nil
	}
	return rebind(dir, writable)
}

// protectionRoot is the granted tree a protected path sits in (the deepest
// write grant containing it), or "/" when none does.
func protectionRoot(p string, spec Spec) string {
	root := "/"
	for _, r := range spec.Paths {
		if r.Access == Write && within(p, r.Path) && p != r.Path && len(r.Path) > len(root) {
			root = r.Path
		}
	}
	return root
}

// isWriteGrant reports whether p is itself one of the spec's write grants.
func isWriteGrant(p string, spec Spec) bool {
	return slices.ContainsFunc(spec.Paths, func(r PathRule) bool { return r.Access == Write && r.Path == p })
}

// rebind mounts path over itself with the given access. A mount point cannot
// be renamed, unlinked or replaced; a read-only one cannot be written.
func rebind(path string, access mountAccess) error {
	c, err := cloneMount(path, access)
	if err != nil {
		return err
	}
	defer closeClones([]clonedMount{c})
	return placeClones([]clonedMount{c}, false)
}

// loopbackUp brings up lo in the call's private network namespace, so tests
// that listen on 127.0.0.1 work while nothing outside is reachable.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket for ioctl: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("read lo flags: %w", err)
	}
	if ifr.Uint16()&unix.IFF_UP != 0 {
		return nil // the host's network, or already up
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring lo up: %w", err)
	}
	return nil
}
