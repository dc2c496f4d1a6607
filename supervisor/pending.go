package supervisor

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"brig/jail"
)

// A call that may write leaves a record in PendingDir (brig's state) from
// before its tool starts until its sweep is done: the protected paths as
// they were, the call's write grants and its start. If brig is killed in
// between (kill -9, a crash, the OOM killer), nothing takes out what the
// call planted — an .envrc, a hook, a link in .git — so the next session
// in that workspace does it from the record (RecoverSweeps). The record
// is written without a sync: it must outlive the process, not the
// machine.

// pendingSweep is one call's record.
type pendingSweep struct {
	PID       int                     `json:"pid"`
	PIDStart  uint64                  `json:"pid_start"` // the process's start time (/proc/PID/stat), against PID reuse
	Start     int64                   `json:"start"`     // the call's start (callClock), nanoseconds
	Workspace string                  `json:"workspace"`
	Paths     []jail.PathRule         `json:"paths"` // the write grants
	Protected []string                `json:"protected"`
	Before    map[string]pendingState `json:"before"`
	// CacheRoot is brig's toolchain cache root when the call had one:
	// the links a call made into it are taken out (sweepNewRepositories).
	CacheRoot string `json:"cache_root,omitempty"`
}

type pendingState struct {
	Missing bool   `json:"missing,omitempty"`
	Link    string `json:"link,omitempty"`
}

var pendingSeq atomic.Int64

// notePending writes the record of a call that may write; it returns the
// record's path ("" when there is none to write, or it could not be:
// the call goes on, with a warning in the log).
func (s *Supervisor) notePending(spec jail.Spec, before map[string]protectedState, start unix.Timespec) string {
	if s.pendingDir == "" || len(writtenRoots(spec)) == 0 {
		return ""
	}
	rec := pendingSweep{PID: os.Getpid(), PIDStart: procStart(os.Getpid()), Start: start.Nano(), Workspace: spec.Workspace, Protected: spec.Protected, Before: map[string]pendingState{}}
	for _, r := range spec.Paths {
		if r.Access == jail.Write {
			rec.Paths = append(rec.Paths, jail.PathRule{Path: r.Path, Access: jail.Write})
		}
	}
	if spec.Cache != nil {
		rec.CacheRoot = spec.Cache.Root
	}
	for p, st := range before {
		rec.Before[p] = pendingState{Missing: st.missing, Link: st.link}
	}
	b, err := json.Marshal(rec)
	if err == nil && !s.pendingMade.Load() {
		if err = os.MkdirAll(s.pendingDir, 0o700); err == nil {
			s.pendingMade.Store(true)
		}
	}
	// Written in place: a brig killed while it writes has not started
	// the tool, and RecoverSweeps removes a record it cannot read.
	name := filepath.Join(s.pendingDir, fmt.Sprintf("%d-%d.json", rec.PID, pendingSeq.Add(1)))
	if err == nil {
		var f *os.File
		if f, err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
			_, err = f.Write(b)
			err = errors.Join(err, f.Close())
		}
	}
	if err != nil {
		s.log.Warn("could not record a call's protected paths for a sweep after a crash", "err", err)
		return ""
	}
	return name
}

// RecoverSweeps sweeps workspace for the calls a brig process that is
// gone left unswept (see notePending) and returns the protected paths it
// took out or put back, for the user to be told.
func (s *Supervisor) RecoverSweeps(workspace string) ([]string, error) {
	if s.pendingDir == "" {
		return nil, nil
	}
	ents, err := os.ReadDir(s.pendingDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("look for calls a killed brig left unswept: %w", err)
	}
	var undone []string
	for _, e := range ents {
		name := filepath.Join(s.pendingDir, e.Name())
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(name)
		var rec pendingSweep
		if err == nil {
			err = json.Unmarshal(b, &rec)
		}
		if err != nil {
			s.log.Warn("an unreadable record of a call's protected paths is removed", "file", name, "err", err)
			os.Remove(name)
			continue
		}
		if rec.Workspace != workspace || alive(rec.PID, rec.PIDStart) {
			continue // another workspace's, or a running brig's call
		}
		before := map[string]protectedState{}
		for p, st := range rec.Before {
			before[p] = protectedState{missing: st.Missing, link: st.Link}
		}
		spec := jail.Spec{Workspace: rec.Workspace, Paths: rec.Paths, Protected: rec.Protected}
		if rec.CacheRoot != "" {
			spec.Cache = &jail.Cache{Root: rec.CacheRoot}
		}
		undone = append(undone, s.sweepAll(spec, before, unix.NsecToTimespec(rec.Start))...)
		os.Remove(name)
	}
	return undone, nil
}

// donePending removes a call's record once its sweep is done.
func donePending(name string) {
	if name != "" {
		os.Remove(name)
	}
}

// alive reports whether the process pid that started at start (procStart)
// still runs.
func alive(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	if err := unix.Kill(pid, 0); err != nil && err != unix.EPERM {
		return false
	}
	return procStart(pid) == start
}

// procStart is the start time of process pid (field 22 of
// /proc/PID/stat, in clock ticks since boot); 0 when unknown.
func procStart(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces: count after its ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0
	}
	n, _ := strconv.ParseUint(f[19], 10, 64)
	return n
}
