package jailtools

import (
	"encoding/json"
	"testing"

	"brig/jail"
	"brig/tools"
)

// TestWorkerTools: the full build runs every Go tool of the registry; the
// light build runs every one but FullOnly's. So a call NeedsFullWorker
// sends to the light worker always finds its tool there.
func TestWorkerTools(t *testing.T) {
	all := All()
	n := 0
	for _, d := range tools.NewRegistry().Definitions() {
		if d.Runs != tools.InJail {
			continue
		}
		n++
		_, has := all[string(d.Name)]
		switch {
		case fullOnly(string(d.Name)) && lightBuild && has:
			t.Errorf("the light build runs %s, which FullOnly names", d.Name)
		case fullOnly(string(d.Name)) && !lightBuild && !has:
			t.Errorf("the full build lacks %s", d.Name)
		case !fullOnly(string(d.Name)) && !has:
			t.Errorf("this build (light: %v) lacks %s, which NeedsFullWorker sends to the light worker", lightBuild, d.Name)
		}
	}
	for _, name := range FullOnly {
		if _, ok := tools.NewRegistry().Lookup(string(name)); !ok {
			t.Errorf("FullOnly names %s, which is no tool", name)
		}
	}
	if n < 10 || all[tools.BatchTool] == nil {
		t.Fatalf("the registry has %d jail tools and a batch %v: the check above checked nothing", n, all[tools.BatchTool] != nil)
	}
}

func TestNeedsFullWorker(t *testing.T) {
	batch := func(names ...string) json.RawMessage {
		var es []tools.BatchEntry
		for _, n := range names {
			es = append(es, tools.BatchEntry{Tool: n, Args: json.RawMessage(`{}`)})
		}
		b, err := json.Marshal(es)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tt := range []struct {
		name string
		inv  jail.Invocation
		want bool
	}{
		{"a command", jail.Invocation{Argv: []string{"sh", "-c", "view_image"}}, false},
		{"read_file", jail.Invocation{Tool: "read_file"}, false},
		{"view_image", jail.Invocation{Tool: "view_image"}, true},
		{"web_fetch", jail.Invocation{Tool: "web_fetch"}, true},
		{"a batch of reads", jail.Invocation{Tool: tools.BatchTool, Args: batch("read_file", "glob", "search_code")}, false},
		{"a batch with an image", jail.Invocation{Tool: tools.BatchTool, Args: batch("read_file", "view_image")}, true},
		{"a batch that does not decode", jail.Invocation{Tool: tools.BatchTool, Args: json.RawMessage(`{"tool":`)}, true},
	} {
		if got := NeedsFullWorker(tt.inv); got != tt.want {
			t.Errorf("%s: NeedsFullWorker = %v, want %v", tt.name, got, tt.want)
		}
	}
}
