// Package dirwatch tells a walk of a directory tree which directories
// changed since it last looked: an inotify watch on each directory the walk
// listed, and the events numbered as they are read.
//
// It owns the inotify descriptor and the reading of its events. It does not
// decide what a walk may skip: it reports what it saw (Since, Written) and
// that it may have missed something (Lost: the kernel's queue overflowed).
// Its callers are the undo snapshots (internal/checkpoint) and the
// repository search (jail.RepoCache).
//
// A walk that trusts it must add the watch on a directory before it lists
// the directory: a change after the watch is added is reported, a change
// before it is in the listing. The kernel queues an event while the system
// call that made the change runs, so once a process has exited, everything
// it did to a watched directory's entries is in the queue. Writes through a
// shared memory mapping are not reported.
//
//	w := dirwatch.New(dirwatch.Entries, 0)
//	seq := w.Drain()
//	// ... open dir, w.Add(fd, key), list it ...
//	// later:
//	now := w.Drain()
//	if watched, dirty := w.Since(key, seq); watched && !dirty && !w.Lost(seq) {
//		// nothing in dir changed between seq and now
//	}
package dirwatch

import (
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Key identifies a directory (its device and inode).
type Key struct{ Dev, Ino uint64 }

// Masks for New.
const (
	// Entries reports a directory's entries made, removed or renamed, and
	// its own attributes, removal and renaming.
	Entries = unix.IN_ATTRIB | unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_CREATE | unix.IN_DELETE |
		unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR
	// Contents adds the writes to the files in it (Written).
	Contents = Entries | unix.IN_MODIFY | unix.IN_CLOSE_WRITE
)

// Watcher keeps inotify watches on directories. It is safe for concurrent
// use; a nil *Watcher watches nothing (every directory is unwatched).
type Watcher struct {
	mu     sync.Mutex
	fd     int
	mask   uint32
	budget int    // at most this many watches (0: no bound of its own)
	seq    uint64 // the number of the last drain, which its events carry
	wds    map[int32]Key
	keys   map[Key]int32
	// dirty is, per directory, the number of the last event about an
	// entry in it or about itself; content is, per directory and name,
	// the last write to that file (its stat data alone may not show it).
	dirty    map[Key]uint64
	content  map[Key]map[string]uint64
	overflow uint64 // the last time events were lost
	buf      []byte
}

// New starts an inotify instance reporting mask (Entries or Contents) on
// the directories added. budget bounds the watches it adds (0: only the
// kernel's limit); see Budget. It returns nil when the kernel or the
// user's limits allow no instance.
func New(mask uint32, budget int) *Watcher {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil
	}
	return &Watcher{fd: fd, mask: mask, budget: budget, wds: map[int32]Key{}, keys: map[Key]int32{}, dirty: map[Key]uint64{},
		content: map[Key]map[string]uint64{}, buf: make([]byte, 64<<10)}
}

// Budget is a share of the user's inotify watches (fs.inotify.max_user_watches,
// shared by every program of the user: editors and file watchers need
// theirs): one part in div, at least min.
func Budget(div, min int) int {
	b, err := os.ReadFile("/proc/sys/fs/inotify/max_user_watches")
	if err != nil {
		return min
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return min
	}
	return max(n/div, min)
}

// Close releases the instance and its watches.
func (w *Watcher) Close() {
	if w != nil {
		unix.Close(w.fd)
	}
}

// Add watches the directory open at fd (found without following links: its
// /proc/self/fd link names that very directory), whose identity is key. It
// reports whether the directory is watched.
func (w *Watcher) Add(fd int, key Key) bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.keys[key]; ok {
		return true // a watch follows its directory (removed with it: IN_IGNORED)
	}
	if w.budget > 0 && len(w.keys) >= w.budget {
		return false
	}
	wd, err := unix.InotifyAddWatch(w.fd, fmt.Sprintf("/proc/self/fd/%d", fd), w.mask)
	if err != nil {
		return false
	}
	if old, ok := w.wds[int32(wd)]; ok && old != key {
		delete(w.keys, old)
	}
	w.wds[int32(wd)] = key
	w.keys[key] = int32(wd)
	return true
}

// Drain reads every event queued so far and returns the drain's number,
// which those events carry: a walk that starts now has seen everything up
// to it, and anything later carries a greater number. Every drain has a
// number of its own.
func (w *Watcher) Drain() uint64 { return w.DrainFunc(nil) }

// DrainFunc is Drain, calling changed (when not nil) with the directory of
// each event read, and gone set when its watch went with it (the
// directory was removed, or its file system unmounted).
func (w *Watcher) DrainFunc(changed func(key Key, gone bool)) uint64 {
	if w == nil {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seq++
	for {
		n, err := unix.Read(w.fd, w.buf)
		if err == unix.EINTR {
			continue
		}
		if n <= 0 || err != nil {
			return w.seq
		}
		w.record(w.buf[:n], changed)
	}
}

// record notes the events of one read (numbered w.seq, the drain's).
func (w *Watcher) record(buf []byte, changed func(Key, bool)) {
	for off := 0; off+unix.SizeofInotifyEvent <= len(buf); {
		wd := int32(binary.NativeEndian.Uint32(buf[off:]))
		mask := binary.NativeEndian.Uint32(buf[off+4:])
		nameLen := int(binary.NativeEndian.Uint32(buf[off+12:]))
		name := buf[off+unix.SizeofInotifyEvent : min(off+unix.SizeofInotifyEvent+nameLen, len(buf))]
		for i, c := range name {
			if c == 0 {
				name = name[:i]
				break
			}
		}
		off += unix.SizeofInotifyEvent + nameLen
		if mask&unix.IN_Q_OVERFLOW != 0 {
			w.overflow = w.seq
			continue
		}
		key, ok := w.wds[wd]
		if !ok {
			continue
		}
		gone := mask&unix.IN_IGNORED != 0
		if gone {
			delete(w.wds, wd)
			delete(w.keys, key)
		}
		w.dirty[key] = w.seq
		if changed != nil {
			changed(key, gone)
		}
		if len(name) > 0 && mask&(unix.IN_MODIFY|unix.IN_CLOSE_WRITE) != 0 {
			m := w.content[key]
			if m == nil {
				m = map[string]uint64{}
				w.content[key] = m
			}
			m[string(name)] = w.seq
		}
	}
}

// Since reports whether the directory key is watched, and whether anything
// happened in it after event number seq.
func (w *Watcher) Since(key Key, seq uint64) (watched, dirty bool) {
	if w == nil {
		return false, true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, watched = w.keys[key]
	return watched, w.dirty[key] > seq
}

// Written reports whether the file name in the directory key was written
// after event number seq (Contents only).
func (w *Watcher) Written(key Key, name string, seq uint64) bool {
	if w == nil {
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.content[key][name] > seq
}

// Lost reports whether events were lost after event number seq.
func (w *Watcher) Lost(seq uint64) bool {
	if w == nil {
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.overflow > seq
}
