package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"brig/jail"
)

// TestBatchFunc: a batch runs its entries in order; a tool's error is its
// entry's alone; once the outputs would pass what one jail message may
// carry, the rest are skipped (the executor runs them on their own); a
// batch cannot name itself.
func TestBatchFunc(t *testing.T) {
	big := json.RawMessage(`"` + strings.Repeat("x", MaxResultJSONBytes/2) + `"`)
	var ran []string
	fn := batchFunc(map[string]jail.ToolFunc{
		"echo": func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
			ran = append(ran, string(args))
			return args, nil
		},
		"fail": func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, errors.New("boom") },
		"big": func(context.Context, json.RawMessage) (json.RawMessage, error) {
			ran = append(ran, "big")
			return big, nil
		},
	})
	entries := []BatchEntry{
		{Tool: "echo", Args: json.RawMessage(`1`)}, {Tool: "fail"}, {Tool: BatchTool, Args: json.RawMessage(`[]`)},
		{Tool: "big"}, {Tool: "big"}, {Tool: "echo", Args: json.RawMessage(`2`)},
	}
	args, _ := json.Marshal(entries)
	raw, err := fn(context.Background(), args)
	if err != nil {
		t.Fatal(err)
	}
	var outs []BatchOutput
	if err := json.Unmarshal(raw, &outs); err != nil || len(outs) != len(entries) {
		t.Fatalf("%v: %d outputs for %d entries", err, len(outs), len(entries))
	}
	if string(outs[0].Data) != "1" || outs[1].Error != "boom" || outs[2].Error == "" {
		t.Errorf("the first three: %+v", outs[:3])
	}
	if len(outs[3].Data) != len(big) || !outs[4].Skipped || !outs[5].Skipped || outs[5].Data != nil {
		t.Errorf("past the message's bound: %v, %v, %v (%d bytes first)", outs[3].Skipped, outs[4].Skipped, outs[5].Skipped, len(outs[3].Data))
	}
	if want := []string{"1", "big", "big"}; strings.Join(ran, ",") != strings.Join(want, ",") {
		t.Errorf("ran %q, want %q (nothing after the bound is run)", ran, want)
	}
	if len(raw) > MaxResultJSONBytes+4096 {
		t.Errorf("the batch's output is %d bytes, past the bound", len(raw))
	}
}
