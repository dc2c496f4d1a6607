package tools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"brig/policy/toolcall"
)

func TestSchemasAreWellFormed(t *testing.T) {
	for _, d := range NewRegistry().Definitions() {
		var s struct {
			Type                 string                     `json:"type"`
			Properties           map[string]json.RawMessage `json:"properties"`
			Required             []string                   `json:"required"`
			AdditionalProperties *bool                      `json:"additionalProperties"`
		}
		if err := json.Unmarshal(d.Schema, &s); err != nil {
			t.Errorf("%s: schema is not JSON: %v", d.Name, err)
			continue
		}
		if s.Type != "object" || s.AdditionalProperties == nil || *s.AdditionalProperties {
			t.Errorf("%s: schema must be a closed object", d.Name)
		}
		for _, r := range s.Required {
			if _, ok := s.Properties[r]; !ok {
				t.Errorf("%s: required %q is not a property", d.Name, r)
			}
		}
		if d.Description == "" {
			t.Errorf("%s: no description", d.Name)
		}
		// Every property the schema offers is accepted by the decoder
		// (a schema and struct that drift apart fail here).
		args := map[string]any{}
		for p := range s.Properties {
			args[p] = nil
		}
		raw, _ := json.Marshal(args)
		if _, err := d.Call(raw); err != nil && strings.Contains(err.Error(), "unknown field") {
			t.Errorf("%s: schema property not accepted: %v", d.Name, err)
		}
	}
}

func TestPlanModeHidesAndRefusesWrites(t *testing.T) {
	r := NewRegistry()
	var planNames []Name
	for _, d := range r.Advertised(toolcall.ModePlan) {
		planNames = append(planNames, d.Name)
		if d.Effect == toolcall.EffectWrite {
			t.Errorf("%s advertised in plan mode", d.Name)
		}
	}
	for _, want := range []Name{ReadFile, SearchCode, Glob, ListDirectory, ViewImage, Bash, UpdatePlan} {
		if !slices.Contains(planNames, want) {
			t.Errorf("%s missing from plan mode", want)
		}
	}
	if got := len(r.Advertised(toolcall.ModeAuto)); got != len(r.Definitions()) {
		t.Errorf("auto mode advertises %d of %d tools", got, len(r.Definitions()))
	}
	// The run-time half: a write tool called anyway is refused with a
	// result, not an error.
	_, res := r.Prepare(toolcall.ModePlan, "write_file", json.RawMessage(`{"path":"a","content":"x"}`))
	if res == nil || !res.IsError || !strings.Contains(res.Text, "plan mode") {
		t.Fatalf("write_file in plan mode: %+v", res)
	}
	if _, res := r.Prepare(toolcall.ModeEdit, "write_file", json.RawMessage(`{"path":"a","content":"x"}`)); res != nil {
		t.Fatalf("write_file in edit mode refused: %s", res.Text)
	}
}

func TestPrepare(t *testing.T) {
	r := NewRegistry()
	tests := []struct {
		name    string
		tool    string
		args    string
		wantErr string
		call    toolcall.Call
		argv    []string
	}{
		{name: "unknown tool", tool: "rm_rf", args: `{}`, wantErr: "unknown tool"},
		{name: "unknown field", tool: "read_file", args: `{"path":"a","bogus":1}`, wantErr: "unknown field"},
		{name: "wrong type", tool: "read_file", args: `{"path":3}`, wantErr: "invalid arguments: path must be a string, not number"},
		{name: "wrong type in a list", tool: "multi_edit", args: `{"path":"a","edits":[{"old_string":1,"new_string":"b"}]}`, wantErr: "invalid arguments: edits.old_string must be a string, not number"},
		{name: "wrong number", tool: "read_file", args: `{"path":"a","offset":"ten"}`, wantErr: "invalid arguments: offset must be a whole number, not string"},
		{name: "missing path", tool: "read_file", args: `{}`, wantErr: "path is required"},
		{name: "trailing data", tool: "read_file", args: `{"path":"a"} {}`, wantErr: "trailing"},
		{name: "bad regexp", tool: "search_code", args: `{"pattern":"a("}`, wantErr: "not a valid regular expression"},
		{name: "same old and new", tool: "edit_file", args: `{"path":"a","old_string":"x","new_string":"x"}`, wantErr: "the same"},
		{name: "two in progress", tool: "update_plan", args: `{"plan":[{"step":"a","status":"in_progress"},{"step":"b","status":"in_progress"}]}`, wantErr: "at most one"},
		{name: "bash timeout too long", tool: "bash", args: `{"command":"true","timeout_seconds":99999}`, wantErr: "at most"},
		{name: "read", tool: "read_file", args: `{"path":"a.go"}`, call: toolcall.Call{Tool: "read_file", Effect: toolcall.EffectRead, Read: []string{"a.go"}}},
		{name: "edit reads and writes", tool: "edit_file", args: `{"path":"a.go","old_string":"x","new_string":"y"}`,
			call: toolcall.Call{Tool: "edit_file", Effect: toolcall.EffectWrite, Read: []string{"a.go"}, Write: []string{"a.go"}}},
		{name: "copy", tool: "copy_path", args: `{"source":"a","destination":"b"}`,
			call: toolcall.Call{Tool: "copy_path", Effect: toolcall.EffectWrite, Read: []string{"a"}, Write: []string{"b"}}},
		{name: "move writes both", tool: "move_path", args: `{"source":"a","destination":"b"}`,
			call: toolcall.Call{Tool: "move_path", Effect: toolcall.EffectWrite, Write: []string{"a", "b"}}},
		{name: "delete confirms", tool: "delete_path", args: `{"path":"a"}`,
			call: toolcall.Call{Tool: "delete_path", Effect: toolcall.EffectWrite, Write: []string{"a"}, Confirm: true}},
		{name: "search default path", tool: "search_code", args: `{"pattern":"x"}`,
			call: toolcall.Call{Tool: "search_code", Effect: toolcall.EffectRead, Read: []string{"."}, Programs: true}},
		{name: "glob reads its literal base", tool: "glob", args: `{"pattern":"src/**/*.go"}`,
			call: toolcall.Call{Tool: "glob", Effect: toolcall.EffectRead, Read: []string{"src"}}},
		{name: "bash", tool: "bash", args: `{"command":"go test ./..."}`,
			call: toolcall.Call{Tool: "bash", Effect: toolcall.EffectExec, Command: "go test ./..."},
			argv: []string{"/bin/bash", "-c", "go test ./..."}},
		{name: "plan", tool: "update_plan", args: `{"plan":[{"step":"a","status":"pending"}]}`,
			call: toolcall.Call{Tool: "update_plan", Effect: toolcall.EffectNone}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, res := r.Prepare(toolcall.ModeAuto, tt.tool, json.RawMessage(tt.args))
			if tt.wantErr != "" {
				if res == nil || !res.IsError || !strings.Contains(res.Text, tt.wantErr) {
					t.Fatalf("want an error result containing %q, got %+v", tt.wantErr, res)
				}
				return
			}
			if res != nil {
				t.Fatalf("refused: %s", res.Text)
			}
			gotCall, _ := json.Marshal(p.Call)
			wantCall, _ := json.Marshal(tt.call)
			if string(gotCall) != string(wantCall) {
				t.Errorf("call = %s, want %s", gotCall, wantCall)
			}
			switch p.Def.Runs {
			case InJail:
				if p.Invocation.Tool != tt.tool || len(p.Invocation.Argv) != 0 {
					t.Errorf("invocation = %+v", p.Invocation)
				}
			case JailCommand:
				if !slices.Equal(p.Invocation.Argv, tt.argv) {
					t.Errorf("argv = %q, want %q", p.Invocation.Argv, tt.argv)
				}
			case InSupervisor:
				if p.Invocation.Tool != "" || p.Invocation.Argv != nil {
					t.Errorf("a supervisor tool got an invocation: %+v", p.Invocation)
				}
			}
		})
	}
}

func TestInvocationExpandsHome(t *testing.T) {
	t.Setenv("HOME", "/home/someone")
	d, _ := NewRegistry().Lookup("read_file")
	inv, err := d.Invocation(json.RawMessage(`{"path":"~/notes/a.md","limit":3}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(inv.Args); got != `{"path":"/home/someone/notes/a.md","limit":3}` {
		t.Fatalf("args = %s", got)
	}
}

func TestJailToolsServeEveryGoTool(t *testing.T) {
	r := NewRegistry()
	jt := r.JailTools()
	for _, d := range r.Definitions() {
		_, ok := jt[string(d.Name)]
		if ok != (d.Runs == InJail) {
			t.Errorf("%s (runs %d) in JailTools: %v", d.Name, d.Runs, ok)
		}
	}
	// A bad argument inside the jail is an error result, not a Go error.
	out, err := jt["read_file"](t.Context(), json.RawMessage(`{"nope":1}`))
	if err != nil {
		t.Fatal(err)
	}
	var res Result
	if err := json.Unmarshal(out, &res); err != nil || !res.IsError {
		t.Fatalf("result %s (%v)", out, err)
	}
}

// TestInvocationNamesTheFileToOpen: read_file's invocation names its file
// (Open, after "~" is expanded), so that an init serving calls can open it
// under the call's layers; no other tool's names one.
func TestInvocationNamesTheFileToOpen(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory")
	}
	r := NewRegistry()
	for _, c := range []struct {
		tool Name
		args string
		want string
	}{
		{ReadFile, `{"path":"a.go","offset":2}`, "a.go"},
		{ReadFile, `{"path":"~/notes.txt"}`, filepath.Join(home, "notes.txt")},
		{ListDirectory, `{"path":"src"}`, ""},
		{WriteFile, `{"path":"a.go","content":"x"}`, ""},
	} {
		d, ok := r.Lookup(string(c.tool))
		if !ok {
			t.Fatalf("no %s", c.tool)
		}
		inv, err := d.Invocation(json.RawMessage(c.args))
		if err != nil {
			t.Fatalf("%s %s: %v", c.tool, c.args, err)
		}
		if inv.Open != c.want {
			t.Errorf("%s %s: Open %q, want %q", c.tool, c.args, inv.Open, c.want)
		}
	}
}
