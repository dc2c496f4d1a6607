package tools

import (
	"encoding/json"
	"strings"
)

// describeArgs is the union of the argument fields a one-line description
// of a call shows.
type describeArgs struct {
	Path        string `json:"path"`
	Command     string `json:"command"`
	Pattern     string `json:"pattern"`
	Source      string `json:"source"`
	Destination string `json:"destination"`
	URL         string `json:"url"`
}

// Describe is what a call will touch, on one line, for people: the
// command of a bash call ("$ go test ./..."), the paths of a file tool,
// the URL of a fetch. Malformed arguments show as they came. The text is
// the model's: a front end makes it inert before it reaches a terminal.
func Describe(name string, raw json.RawMessage) string {
	d := describe(name, raw)
	if strings.ContainsAny(d, "\n\r") {
		// On one line: a line break in a path or a URL would let the text
		// after it pass for a line of brig's own (a forged tool call).
		d = strings.NewReplacer("\r\n", "␍␊", "\n", "␊", "\r", "␍").Replace(d)
	}
	return d
}

func describe(name string, raw json.RawMessage) string {
	var a describeArgs
	_ = json.Unmarshal(raw, &a) // a malformed call shows what it can
	switch {
	case name == string(Task):
		var t TaskArgs
		_ = json.Unmarshal(raw, &t)
		what := t.Description
		if what == "" {
			what, _, _ = strings.Cut(strings.TrimSpace(t.Prompt), "\n")
		}
		kind := t.Kind
		if kind == "" {
			kind = TaskExplore
		}
		return string(kind) + ": " + what
	case name == string(Bash):
		return "$ " + strings.ReplaceAll(a.Command, "\n", " ⏎ ")
	case a.Source != "" || a.Destination != "":
		return a.Source + " → " + a.Destination
	case a.URL != "":
		return a.URL
	case a.Pattern != "" && a.Path != "":
		return a.Pattern + " in " + a.Path
	case a.Pattern != "":
		return a.Pattern
	case a.Path != "":
		return a.Path
	case name == string(UpdatePlan):
		return "the plan"
	}
	return string(raw)
}
