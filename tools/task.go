package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"brig/policy/toolcall"
)

// Task is the tool that starts a read-only subagent.
const Task Name = "task"

// TaskKind is what a subagent is asked to do.
type TaskKind string

// The kinds of subagent.
const (
	TaskExplore TaskKind = "explore" // find and explain: where things are, how they work
	TaskReview  TaskKind = "review"  // look for bugs and risks in code or a change
)

// TaskArgs are task's arguments.
type TaskArgs struct {
	// Description is a few words the user sees while it runs.
	Description string   `json:"description"`
	Prompt      string   `json:"prompt"`
	Kind        TaskKind `json:"kind,omitempty"`
}

// maxTaskPrompt bounds a subagent's prompt.
const maxTaskPrompt = 32 << 10

func (a *TaskArgs) validate() error {
	if strings.TrimSpace(a.Prompt) == "" {
		return errors.New("prompt is empty: say what the subagent should find out")
	}
	if len(a.Prompt) > maxTaskPrompt {
		return fmt.Errorf("prompt is %d bytes; at most %d", len(a.Prompt), maxTaskPrompt)
	}
	if len(a.Description) > 200 {
		return errors.New("description is longer than 200 bytes; a few words are enough")
	}
	switch a.Kind {
	case "":
		a.Kind = TaskExplore
	case TaskExplore, TaskReview:
	default:
		return fmt.Errorf("kind %q: want explore or review", a.Kind)
	}
	return nil
}

// ParseTaskArgs decodes and checks task's arguments.
func ParseTaskArgs(raw json.RawMessage) (TaskArgs, error) {
	return decodeArgs[TaskArgs](raw)
}

// TaskDefinition describes task. It runs in the supervisor through the
// agent's subagent hook (Runs Delegated): the subagent gets its own
// context, the plan-mode tools (read, list, glob, search, read-only bash
// in a read-only jail) and no task tool of its own.
func TaskDefinition() Definition {
	d := define(Task, toolcall.EffectNone,
		"Start a read-only subagent with its own context to explore the repository or review code, and get its summary back. It can read, list, glob, search and run read-only commands (the workspace is read-only for it); it cannot write files or start subagents. Several task calls in one message run in parallel: use them for independent questions. Give it a complete, self-contained prompt: it sees nothing of this conversation.",
		`{"type":"object","properties":{`+
			`"description":{"type":"string","description":"A few words on what it does, shown to the user"},`+
			`"prompt":{"type":"string","description":"The task, self-contained: what to find out or review, where to look, and what the summary should contain"},`+
			`"kind":{"type":"string","enum":["explore","review"],"description":"explore (default): find and explain; review: look for bugs and risks"}`+
			`},"required":["prompt"],"additionalProperties":false}`,
		func(TaskArgs) toolcall.Call { return toolcall.Call{} },
		nil)
	d.Runs = Delegated
	return d
}
