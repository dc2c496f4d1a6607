//go:build brig_carrier && !brig_light_worker

package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestWebFetchInBrigItself: brig's own binary (the brig_carrier tag) runs
// web_fetch only in the worker it carries; should a call ever reach brig
// run as its own worker, it gets an error that says so, and nothing is
// fetched (the URL is never requested: nothing listens on it).
func TestWebFetchInBrigItself(t *testing.T) {
	run, ok := JailTools()[string(WebFetch)]
	if !ok {
		t.Fatal("web_fetch is missing from brig's own tools: the registry's definitions must stay whole")
	}
	out, err := run(context.Background(), json.RawMessage(`{"url":"http://127.0.0.1:9/never"}`))
	if err != nil {
		t.Fatal(err)
	}
	var res Result
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(res.Text, "jail worker program it carries") {
		t.Errorf("web_fetch in brig itself: %+v, want an error naming the carried worker", res)
	}
	d, _ := NewRegistry().Lookup(string(WebFetch))
	if d.Description == "" || len(d.Schema) == 0 {
		t.Errorf("web_fetch's definition lost its description or schema in brig's own build: %+v", d)
	}
}
