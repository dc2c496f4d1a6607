package checkpoint

import (
	"encoding/binary"
	"fmt"
	"sync"

	"golang.org/x/sys/unix"
)

// watcher keeps inotify watches on the directories full walks have seen,
// so that the snapshot before a call re-reads only the directories in
// which something happened since the last snapshot of the same root
// instead of stat-ing every file. The kernel reports every change made
// through the file system calls (by the jailed call, the user's editor,
// anything); it does not report writes through a shared memory mapping,
// which is why the snapshot after a call is always a full walk.
type watcher struct {
	mu   sync.Mutex
	fd   int
	seq  uint64 // events numbered as they are read
	wds  map[int32]statKey
	keys map[statKey]int32
	// dirty is, per directory, the number of the last event about an
	// entry in it or about itself; content is, per directory and name,
	// the last write to that file (its stat data alone may not show it).
	dirty    map[statKey]uint64
	content  map[statKey]map[string]uint64
	overflow uint64 // the last time events were lost
	buf      []byte
}

const watchMask = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_CREATE | unix.IN_DELETE | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR

// newWatcher starts an inotify instance; nil when the kernel or the
// user's limits do not allow one (every snapshot is then a full walk).
func newWatcher() *watcher {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil
	}
	return &watcher{fd: fd, wds: map[int32]statKey{}, keys: map[statKey]int32{}, dirty: map[statKey]uint64{},
		content: map[statKey]map[string]uint64{}, buf: make([]byte, 64<<10)}
}

func (w *watcher) close() {
	if w != nil {
		unix.Close(w.fd)
	}
}

// add watches the directory open at fd (found without following links:
// its /proc/self/fd link names that very directory). It reports whether
// the directory is watched.
func (w *watcher) add(fd int, key statKey) bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.keys[key]; ok {
		return true // a watch follows its directory (removed with it: IN_IGNORED)
	}
	wd, err := unix.InotifyAddWatch(w.fd, fmt.Sprintf("/proc/self/fd/%d", fd), watchMask)
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

// drain reads every event queued so far and returns the number of the
// last one: a snapshot that starts now has seen everything up to it.
func (w *watcher) drain() uint64 {
	if w == nil {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		n, err := unix.Read(w.fd, w.buf)
		if err == unix.EINTR {
			continue
		}
		if n <= 0 || err != nil {
			return w.seq
		}
		w.seq++
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			wd := int32(binary.NativeEndian.Uint32(w.buf[off:]))
			mask := binary.NativeEndian.Uint32(w.buf[off+4:])
			nameLen := int(binary.NativeEndian.Uint32(w.buf[off+12:]))
			name := w.buf[off+unix.SizeofInotifyEvent : min(off+unix.SizeofInotifyEvent+nameLen, n)]
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
			if mask&unix.IN_IGNORED != 0 {
				delete(w.wds, wd)
				delete(w.keys, key)
			}
			w.dirty[key] = w.seq
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
}

// since is what a fast snapshot asks about one directory: whether it is
// watched, and whether anything happened in it after event number seq.
func (w *watcher) since(key statKey, seq uint64) (watched, dirty bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, watched = w.keys[key]
	return watched, w.dirty[key] > seq
}

// written reports whether the file name in the directory key was written
// after event number seq.
func (w *watcher) written(key statKey, name string, seq uint64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.content[key][name] > seq
}

// lost reports whether events were lost after event number seq.
func (w *watcher) lost(seq uint64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.overflow > seq
}
