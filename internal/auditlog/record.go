// Package auditlog owns brig's audit log: one line per tool call and per
// change to what governs brig (trust, mode, saved rules, undo), each line
// holding the hash of the line before it, appended under brig's state
// directory (which no jail is ever granted); and the verification that
// finds where that chain was broken — a record edited, inserted, reordered
// or deleted.
//
// The chain alone cannot tell a log cut short from one that ended there,
// nor a log rewritten whole from the original: brig also keeps the head
// (the last record's number and hash) in a head file and in each session's
// records, and verification checks the log against every head it knows.
//
// It must not decide anything or run anything: callers describe what
// happened. It redacts what looks like a secret in a call's arguments
// before it is written.
package auditlog

import (
	"encoding/json"
	"time"
)

// Version is the format of the records this package writes.
const Version = 1

// Kind is what a record is about.
type Kind string

// Record kinds.
const (
	KindCall  Kind = "call"  // a tool call, however it ended (denied ones too)
	KindUndo  Kind = "undo"  // calls undone
	KindTrust Kind = "trust" // a repository config or .mcp.json trusted or revoked
	KindMode  Kind = "mode"  // a session's mode changed
	KindRule  Kind = "rule"  // an approval saved as a rule (for the session or always)
)

// Record is one line of the log. Seq, Prev and Hash are set by Append.
type Record struct {
	V         int       `json:"v"`
	Seq       uint64    `json:"seq"`
	Time      time.Time `json:"time"`
	Kind      Kind      `json:"kind"`
	Session   string    `json:"session,omitempty"`
	Workspace string    `json:"workspace,omitempty"`

	Call  *Call       `json:"call,omitempty"`
	Undo  *Undo       `json:"undo,omitempty"`
	Trust *Trust      `json:"trust,omitempty"`
	Mode  *ModeChange `json:"mode,omitempty"`
	Rule  *RuleSave   `json:"rule,omitempty"`

	// Prev is the hash of the record before (empty for the first).
	Prev string `json:"prev"`
	// Hash is SHA-256 of the record's line without its hash field; it is
	// written as the line's last field.
	Hash string `json:"-"`
}

// Call is one tool call.
type Call struct {
	ID   string `json:"id"`
	Tool string `json:"tool"`
	// Args are the call's arguments with secrets redacted and long
	// values (file contents) replaced by their size and hash.
	Args     json.RawMessage `json:"args,omitempty"`
	Decision Decision        `json:"decision"`
	// Grant is what the jail let the call do (nil: it ran in no jail, or
	// not at all).
	Grant *Grant `json:"grant,omitempty"`
	// How it ended.
	ExitCode   *int    `json:"exit_code,omitempty"`
	Signal     string  `json:"signal,omitempty"`
	TimedOut   bool    `json:"timed_out,omitempty"`
	IsError    bool    `json:"is_error,omitempty"`
	Error      string  `json:"error,omitempty"` // brig could not run it
	DurationMS float64 `json:"duration_ms"`
	// Changes is what it changed in the paths it could write (nil: it
	// could write nothing, or was not run).
	Changes *Changes `json:"changes,omitempty"`
	// Denials are what the jail refused it, as brig explained them to the
	// model; Violations the protected paths it created or changed (undone
	// after the call).
	Denials    []string `json:"denials,omitempty"`
	Violations []string `json:"violations,omitempty"`
	// Connections are the connections it asked brig's egress proxy for,
	// allowed and refused (at most MaxConnections; ConnectionsMore counts
	// the rest).
	Connections     []Connection `json:"connections,omitempty"`
	ConnectionsMore int          `json:"connections_more,omitempty"`
	// Late says why the record was written after later ones were tried
	// (its first write failed: a full disk).
	Late string `json:"late,omitempty"`
}

// Connection is one connection a call asked the egress proxy for.
type Connection struct {
	Host string `json:"host"`
	Port int    `json:"port"`
	// Addr is the address connected to (absent when refused).
	Addr string `json:"addr,omitempty"`
	// Rule is what decided: a rule and its file:line, a preset, an answer.
	Rule    string `json:"rule,omitempty"`
	Refused string `json:"refused,omitempty"`
	// Up and Down are the bytes to the host and back.
	Up         int64   `json:"up"`
	Down       int64   `json:"down"`
	DurationMS float64 `json:"duration_ms"`
}

// MaxConnections bounds the connections a record lists.
const MaxConnections = 100

// Decision is how the policy decided a call and who answered.
type Decision struct {
	// Tier is allow, ask or deny; empty when the call was refused before
	// the policy (an unknown tool, bad arguments, a tool the mode hides),
	// with Refused saying why.
	Tier    string `json:"tier,omitempty"`
	Refused string `json:"refused,omitempty"`
	// Reason is why, naming the rule and its file:line, or the built-in
	// entry.
	Reason string `json:"reason,omitempty"`
	Mode   string `json:"mode,omitempty"`
	// Commands are the simple commands of a bash call, each with its tier
	// and reason.
	Commands []Command `json:"commands,omitempty"`
	// Answer is how an Ask was answered (once, session, always, deny) and
	// AnsweredBy who answered: "user", "--yes", "no one" (a
	// non-interactive run denies). Empty when no one was asked.
	Answer     string `json:"answer,omitempty"`
	AnsweredBy string `json:"answered_by,omitempty"`
	Message    string `json:"message,omitempty"`
}

// Command is one simple command of a bash call.
type Command struct {
	Words  string `json:"words"`
	Tier   string `json:"tier"`
	Reason string `json:"reason,omitempty"`
}

// Grant is the jail a call ran under.
type Grant struct {
	Write       []string `json:"write,omitempty"`
	Read        []string `json:"read,omitempty"` // read, or read and execute
	Network     bool     `json:"network,omitempty"`
	UnixSockets bool     `json:"unix_sockets,omitempty"`
	PrivateTmp  bool     `json:"private_tmp,omitempty"`
	Protected   int      `json:"protected,omitempty"` // paths kept read-only inside the grant
	Hidden      int      `json:"hidden,omitempty"`    // paths masked inside the grant
}

// Changes is a call's change set.
type Changes struct {
	Summary  string   `json:"summary"`
	Created  int      `json:"created,omitempty"`
	Modified int      `json:"modified,omitempty"`
	Deleted  int      `json:"deleted,omitempty"`
	Dirs     int      `json:"dirs,omitempty"`
	Paths    []string `json:"paths,omitempty"` // at most MaxPaths
	More     int      `json:"more,omitempty"`
	// Excluded are changed trees undo does not cover.
	Excluded []string `json:"excluded,omitempty"`
}

// MaxPaths bounds the paths a record lists.
const MaxPaths = 50

// Undo is an undo: which calls, and what it did.
type Undo struct {
	Calls       []string `json:"calls"`
	Forced      bool     `json:"forced,omitempty"`
	Restored    int      `json:"restored"`
	Removed     int      `json:"removed"`
	Overwritten []string `json:"overwritten,omitempty"` // changed outside brig, overwritten by --force
	By          string   `json:"by"`                    // "/undo" or "brig undo"
}

// Trust is a trust decision on a repository file.
type Trust struct {
	File   string `json:"file"`
	SHA256 string `json:"sha256,omitempty"`
	Action string `json:"action"` // "trust" or "revoke"
	What   string `json:"what"`   // "config", "mcp" or "instructions"
}

// ModeChange is a session's mode changing.
type ModeChange struct {
	From string `json:"from,omitempty"`
	To   string `json:"to"`
}

// RuleSave is approval answers kept as rules.
type RuleSave struct {
	Rules []string `json:"rules"`
	// File is where they were saved ("always"); empty for the session only.
	File string `json:"file,omitempty"`
	Call string `json:"call,omitempty"` // the call whose answer it was
}
