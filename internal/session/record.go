// Package session owns brig's saved conversations: one append-only file of
// JSON records per session under the XDG state directory (outside every
// jail), the rebuild of a session's state from its records, and an index
// that makes listing fast.
//
// A session file is durable record by record: Session.Append returns only
// after its records are written and fsynced, so the turn loop calls it
// before the next request leaves. Writers in different processes are
// serialised by a lock on the file itself. The files are the truth; the
// index is a cache checked against them on every listing.
//
// It must not build provider requests, execute tools, price usage or decide
// what the model sees beyond replaying the records it was given: the agent
// owns compaction and truncation and records their outcome here.
package session

import (
	"time"

	"brig/agent/provider"
	"brig/jail"
	"brig/policy"
)

// Version is the format of the session files this package writes. Files
// without a version field are version 1; missing fields load as zero values
// or the defaults documented on State.
const Version = 1

// Kind is the type of one record.
type Kind string

// Record kinds. A file starts with exactly one KindHeader record.
const (
	KindHeader     Kind = "header"     // who, where and with what the session began
	KindMessage    Kind = "message"    // a provider-facing message, as sent or received
	KindDisplay    Kind = "display"    // what the user saw (never sent to a model)
	KindUsage      Kind = "usage"      // one model call's token usage and cost
	KindMode       Kind = "mode"       // the safety mode changed
	KindModel      Kind = "model"      // the model (and maybe provider) changed
	KindSystem     Kind = "system"     // the system prompt changed
	KindCompaction Kind = "compaction" // a prefix of the provider-facing messages was replaced
	KindCall       Kind = "call"       // a tool call's change set and its audit record
	KindUndo       Kind = "undo"       // calls undone; the model is told at its next turn
	// KindBatch holds the records of one Append of more than one record, on
	// one line, so that a crash mid-write loses the whole batch or nothing.
	KindBatch Kind = "batch"
)

// Record is one line of a session file. Kind says which one of the other
// fields is set. Time is stamped by Append when zero.
type Record struct {
	Kind       Kind              `json:"kind"`
	Time       time.Time         `json:"time"`
	Header     *Header           `json:"header,omitempty"`
	Message    *provider.Message `json:"message,omitempty"`
	Display    *Display          `json:"display,omitempty"`
	Usage      *TurnUsage        `json:"usage,omitempty"`
	Mode       policy.Mode       `json:"mode,omitempty"`
	Model      *ModelChange      `json:"model,omitempty"`
	System     *string           `json:"system,omitempty"`
	Compaction *Compaction       `json:"compaction,omitempty"`
	Call       *CallRecord       `json:"call,omitempty"`
	Undo       *UndoRecord       `json:"undo,omitempty"`
	Batch      []Record          `json:"batch,omitempty"`
}

// AuditRef names a record of the audit log: its number and hash. The
// last one a session recorded is the chain head the session index keeps,
// which `brig log verify` checks the log against.
type AuditRef struct {
	Seq  uint64 `json:"seq"`
	Hash string `json:"hash"`
}

// CallRecord is what a tool call changed, the connections it made, and
// where the audit log has it.
type CallRecord struct {
	ID   string `json:"id"`
	Tool string `json:"tool"`
	// Changes sums up what it changed ("3 files changed, 1 deleted");
	// empty when it could write nothing.
	Changes string    `json:"changes,omitempty"`
	Audit   *AuditRef `json:"audit,omitempty"`
	// Net are the connections it asked brig's egress proxy for: host,
	// port, what decided, bytes each way, duration.
	Net []jail.Connection `json:"net,omitempty"`
}

// UndoRecord is an undo of calls of this session.
type UndoRecord struct {
	Calls []string `json:"calls"`
	// Note is what the model is told at its next turn.
	Note  string    `json:"note"`
	Audit *AuditRef `json:"audit,omitempty"`
}

// Header is the first record of every session file.
type Header struct {
	Version   int           `json:"v"`
	ID        string        `json:"id"`
	Workspace string        `json:"workspace"`
	Created   time.Time     `json:"created"`
	Provider  provider.Name `json:"provider"`
	Model     string        `json:"model"`
	Mode      policy.Mode   `json:"mode,omitempty"`
	System    string        `json:"system,omitempty"` // the system prompt the session started with
}

// DisplayKind is what a display record shows.
type DisplayKind string

// Display kinds.
const (
	DisplayUser       DisplayKind = "user"        // the user's prompt as typed
	DisplayAssistant  DisplayKind = "assistant"   // the model's text as rendered
	DisplayThinking   DisplayKind = "thinking"    // reasoning shown to the user
	DisplayToolCall   DisplayKind = "tool_call"   // a one-line summary of a tool call
	DisplayToolResult DisplayKind = "tool_result" // a short summary of its result
	DisplayNotice     DisplayKind = "notice"      // brig's own messages (mode change, compaction, denial)
	DisplayError      DisplayKind = "error"       // an error the user saw
)

// Display is one item of the history as the user saw it. It is kept apart
// from the provider-facing messages: compaction and truncation never touch
// it.
type Display struct {
	Kind      DisplayKind `json:"kind"`
	Text      string      `json:"text,omitempty"`
	Tool      string      `json:"tool,omitempty"`        // the tool's name (tool_call, tool_result)
	ToolUseID string      `json:"tool_use_id,omitempty"` // pairs a call with its result
	IsError   bool        `json:"is_error,omitempty"`
	// Parent is set on a subagent's records: the id of the task call that
	// started it (its transcript shows under that call).
	Parent string `json:"parent,omitempty"`
}

// TurnUsage is what one model call used and cost. The caller prices it from
// the model registry; the session only adds the figures up.
type TurnUsage struct {
	Model string         `json:"model,omitempty"`
	Usage provider.Usage `json:"usage"`
	Cost  float64        `json:"cost"` // US dollars; 0 when the model has no price
	// Parent is set for a subagent's call: the id of the task call that
	// started it. It counts in the session's total, not in the context
	// the main conversation last used.
	Parent string `json:"parent,omitempty"`
}

// ModelChange is a switch of model, and of provider when it differs.
type ModelChange struct {
	Provider provider.Name `json:"provider,omitempty"` // empty: unchanged
	Model    string        `json:"model"`
}

// Compaction replaces the first Replaced provider-facing messages (as they
// stand when the record is replayed) with Summary. The display history is
// not affected. The agent uses it for summaries and also for model-facing
// truncation of old tool results (Summary then holds the truncated
// messages).
type Compaction struct {
	Replaced int                `json:"replaced"`
	Summary  []provider.Message `json:"summary"`
	Reason   string             `json:"reason,omitempty"` // "auto", "manual", "truncate" …
}

// MessageRecord records a provider-facing message.
func MessageRecord(m provider.Message) Record { return Record{Kind: KindMessage, Message: &m} }

// DisplayRecord records what the user saw.
func DisplayRecord(d Display) Record { return Record{Kind: KindDisplay, Display: &d} }

// UsageRecord records one model call's usage and its cost in US dollars.
func UsageRecord(model string, u provider.Usage, cost float64) Record {
	return Record{Kind: KindUsage, Usage: &TurnUsage{Model: model, Usage: u, Cost: cost}}
}

// ModeRecord records a change of safety mode.
func ModeRecord(m policy.Mode) Record { return Record{Kind: KindMode, Mode: m} }

// ModelRecord records a change of model; p is empty when the provider stays.
func ModelRecord(p provider.Name, model string) Record {
	return Record{Kind: KindModel, Model: &ModelChange{Provider: p, Model: model}}
}

// SystemRecord records a new system prompt.
func SystemRecord(system string) Record { return Record{Kind: KindSystem, System: &system} }

// CallRecordOf records a call's change set and audit reference.
func CallRecordOf(c CallRecord) Record { return Record{Kind: KindCall, Call: &c} }

// UndoRecordOf records an undo.
func UndoRecordOf(u UndoRecord) Record { return Record{Kind: KindUndo, Undo: &u} }

// CompactionRecord records that the first replaced provider-facing messages
// were replaced by summary.
func CompactionRecord(replaced int, summary []provider.Message, reason string) Record {
	return Record{Kind: KindCompaction, Compaction: &Compaction{Replaced: replaced, Summary: summary, Reason: reason}}
}
