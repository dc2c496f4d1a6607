package tools

import (
	"context"
	"encoding/json"
	"fmt"

	"brig/jail"
)

// BatchTool is the jail tool that runs several Go tool calls in one jail
// child, one after the other: the read-only calls of one answer, which the
// agent gathers so that they pay for one view and one worker instead of
// one each (agent's batch). It is no tool of the registry: the model cannot
// name it, only the executor builds its invocation.
const BatchTool = "__batch"

// BatchEntry is one call of a batch: a tool and its arguments.
type BatchEntry struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args,omitempty"`
}

// BatchOutput is one call's outcome in a batch, in the entries' order:
// its tool's output, or the error the tool returned, or Skipped when the
// results before it used up what one jail message may carry (the caller
// runs that call again on its own).
type BatchOutput struct {
	Data    json.RawMessage `json:"data,omitempty"`
	Error   string          `json:"error,omitempty"`
	Skipped bool            `json:"skipped,omitempty"`
}

// batchFunc runs a batch with the jail's tools.
func batchFunc(tools map[string]jail.ToolFunc) jail.ToolFunc {
	return func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		var entries []BatchEntry
		if err := json.Unmarshal(args, &entries); err != nil {
			return nil, fmt.Errorf("decode the batch: %w", err)
		}
		out := make([]BatchOutput, len(entries))
		total := 0
		for i, en := range entries {
			fn, ok := tools[en.Tool]
			if !ok || en.Tool == BatchTool {
				out[i].Error = fmt.Sprintf("unknown tool %q", en.Tool)
				continue
			}
			if total >= MaxResultJSONBytes {
				out[i].Skipped = true
				continue
			}
			data, err := fn(ctx, en.Args)
			switch {
			case err != nil:
				out[i].Error = err.Error()
			case total+len(data) > MaxResultJSONBytes:
				out[i].Skipped = true
				total = MaxResultJSONBytes // nothing after it fits either
			default:
				out[i].Data = data
				total += len(data)
			}
		}
		return json.Marshal(out)
	}
}
