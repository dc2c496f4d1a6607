package auditlog

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"brig/internal/fsutil"
)

// The files of the log, in its directory (brig's state directory/audit).
const (
	LogName  = "audit.jsonl"
	HeadName = "head.json"
	tornExt  = ".torn"
)

// hashSuffix is how every line ends: `,"hash":"<64 hex digits>"}`.
const (
	hashPrefix = `,"hash":"`
	suffixLen  = len(hashPrefix) + 64 + len(`"}`)
)

// Ref names one record: its number and hash (a chain head).
type Ref struct {
	Seq  uint64 `json:"seq"`
	Hash string `json:"hash"`
}

// Log is the audit log in one directory. It is safe for concurrent use;
// processes appending to it are serialised by a lock on the file.
type Log struct {
	dir string
	now func() time.Time

	mu sync.Mutex
	// f and head stay open between appends; f is opened again when the
	// file it names was removed or replaced.
	f, head *os.File
	// last is the chain head as this process last wrote or read it, at
	// file size end (another process's append changes the size).
	last Ref
	end  int64
}

// Open returns the log in dir (created on the first append).
func Open(dir string) *Log { return &Log{dir: dir, now: time.Now, end: -1} }

// Dir is the log's directory.
func (l *Log) Dir() string { return l.dir }

// Path is the log file.
func (l *Log) Path() string { return filepath.Join(l.dir, LogName) }

// Close releases the log's files (a later Append opens them again).
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, f := range []*os.File{l.f, l.head} {
		if f != nil {
			f.Close()
		}
	}
	l.f, l.head, l.end = nil, nil, -1
	return nil
}

// file returns the open log file, opening it when needed. Called with mu.
func (l *Log) file() (*os.File, error) {
	if l.f != nil {
		var st unix.Stat_t
		if err := unix.Fstat(int(l.f.Fd()), &st); err == nil && st.Nlink > 0 {
			return l.f, nil
		}
		l.f.Close()
		l.f, l.end = nil, -1
	}
	if err := os.MkdirAll(l.dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(l.Path(), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	l.f = f
	return f, nil
}

// Append adds rec to the end of the chain and returns its reference once
// it is on disk. Time is stamped when zero; Seq, Prev and Hash are set.
// A torn last line (a crash mid-append) is moved to a .torn file first.
func (l *Log) Append(ctx context.Context, rec Record) (Ref, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f, err := l.file()
	if err != nil {
		return Ref{}, fmt.Errorf("audit log: %w", err)
	}
	var ref Ref
	err = fsutil.WithFileLock(ctx, f, func() error {
		end, last, err := l.tail(f)
		if err != nil {
			return err
		}
		rec.V, rec.Seq, rec.Prev = Version, last.Seq+1, last.Hash
		if rec.Time.IsZero() {
			rec.Time = l.now().UTC()
		}
		line, hash, err := encode(rec)
		if err != nil {
			return err
		}
		if _, err := f.WriteAt(line, end); err != nil {
			_ = f.Truncate(end)
			return err
		}
		if err := unix.Fdatasync(int(f.Fd())); err != nil {
			_ = f.Truncate(end)
			return fmt.Errorf("sync: %w", err)
		}
		ref = Ref{Seq: rec.Seq, Hash: hash}
		l.last, l.end = ref, end+int64(len(line))
		// Under the lock, so heads are written in chain order.
		l.writeHead(ref)
		return nil
	})
	if err != nil {
		return Ref{}, fmt.Errorf("audit log %s: %w", l.Path(), err)
	}
	return ref, nil
}

// encode is a record's line: its JSON with the hash of that JSON as the
// last field.
func encode(rec Record) (line []byte, hash string, err error) {
	body, err := marshal(rec)
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(body)
	hash = hex.EncodeToString(sum[:])
	line = make([]byte, 0, len(body)+suffixLen+1)
	line = append(line, body[:len(body)-1]...)
	line = append(line, hashPrefix...)
	line = append(line, hash...)
	line = append(line, `"}`...)
	line = append(line, '\n')
	return line, hash, nil
}

// decodeLine splits a line (without its newline) into the record and the
// hash it claims, and checks that hash against its content.
func decodeLine(line []byte) (rec Record, claimed string, ok bool, err error) {
	if len(line) < suffixLen+2 || !bytes.HasPrefix(line[len(line)-suffixLen:], []byte(hashPrefix)) || !bytes.HasSuffix(line, []byte(`"}`)) {
		return rec, "", false, errors.New("not an audit record (no hash at its end)")
	}
	claimed = string(line[len(line)-suffixLen+len(hashPrefix) : len(line)-2])
	body := make([]byte, 0, len(line)-suffixLen+1)
	body = append(body, line[:len(line)-suffixLen]...)
	body = append(body, '}')
	if err := json.Unmarshal(body, &rec); err != nil {
		return rec, claimed, false, fmt.Errorf("not an audit record: %w", err)
	}
	sum := sha256.Sum256(body)
	rec.Hash = claimed
	return rec, claimed, hex.EncodeToString(sum[:]) == claimed, nil
}

// tail returns where the next record goes and the chain head, cutting a
// torn last line off first. Called with the file locked.
func (l *Log) tail(f *os.File) (int64, Ref, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, Ref{}, err
	}
	size := st.Size()
	if size == l.end && l.end >= 0 {
		return size, l.last, nil
	}
	if size == 0 {
		return 0, Ref{}, nil
	}
	end, err := fsutil.LastNewline(f, size)
	if err != nil {
		return 0, Ref{}, err
	}
	if end < size {
		torn := make([]byte, size-end)
		if _, err := f.ReadAt(torn, end); err != nil {
			return 0, Ref{}, err
		}
		if err := fsutil.AppendSync(l.Path()+tornExt, torn); err != nil {
			return 0, Ref{}, fmt.Errorf("keep the torn last line before cutting it: %w", err)
		}
		if err := f.Truncate(end); err != nil {
			return 0, Ref{}, err
		}
	}
	if end == 0 {
		return 0, Ref{}, nil
	}
	start, err := fsutil.LastNewline(f, end-1)
	if err != nil {
		return 0, Ref{}, err
	}
	line := make([]byte, end-1-start)
	if _, err := f.ReadAt(line, start); err != nil {
		return 0, Ref{}, err
	}
	rec, claimed, _, err := decodeLine(line)
	if err != nil {
		return 0, Ref{}, fmt.Errorf("its last record is damaged (%v); see brig log verify", err)
	}
	return end, Ref{Seq: rec.Seq, Hash: claimed}, nil
}

// headSize is the head file's fixed length: the head is rewritten in
// place, one small write, padded with spaces.
const headSize = 128

// writeHead records the chain head beside the log, rewritten in place and
// not synced: a head lost in a crash is an older head, which the log still
// matches. Called with the log locked.
func (l *Log) writeHead(ref Ref) {
	if l.head == nil {
		f, err := os.OpenFile(filepath.Join(l.dir, HeadName), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return
		}
		l.head = f
	}
	b, _ := json.Marshal(ref)
	line := make([]byte, headSize)
	copy(line, b)
	for i := len(b); i < headSize-1; i++ {
		line[i] = ' '
	}
	line[headSize-1] = '\n'
	_, _ = l.head.WriteAt(line, 0)
}

// Head reads the head file (ok false when there is none).
func (l *Log) Head() (Ref, bool, error) {
	b, err := os.ReadFile(filepath.Join(l.dir, HeadName))
	if errors.Is(err, os.ErrNotExist) {
		return Ref{}, false, nil
	}
	if err != nil {
		return Ref{}, false, err
	}
	var r Ref
	if err := json.Unmarshal(bytes.TrimSpace(b), &r); err != nil {
		return Ref{}, false, fmt.Errorf("audit head %s is damaged (%v); the log itself can still be verified", filepath.Join(l.dir, HeadName), err)
	}
	return r, true, nil
}

// Records calls fn with each record of the log in order (whole lines only;
// a line that is not a record is an error naming it).
func (l *Log) Records(fn func(Record) error) error {
	f, err := os.OpenFile(l.Path(), os.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return nil // a torn tail is not a record
		}
		if err != nil {
			return fmt.Errorf("audit log: %w", err)
		}
		rec, _, _, derr := decodeLine(bytes.TrimSuffix(line, []byte("\n")))
		if derr != nil {
			return fmt.Errorf("audit log %s line %d: %w (see brig log verify)", l.Path(), n, derr)
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
}

// marshal is json.Marshal without HTML escaping (a command's && stays
// readable in the log).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
