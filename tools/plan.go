package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"brig/policy/toolcall"
)

// StepStatus is the state of one plan step.
type StepStatus string

// The step states.
const (
	StepPending    StepStatus = "pending"
	StepInProgress StepStatus = "in_progress"
	StepCompleted  StepStatus = "completed"
)

// Step is one checklist item.
type Step struct {
	Step   string     `json:"step"`
	Status StepStatus `json:"status"`
}

// Plan is the model's checklist. It lives with the caller (the session);
// update_plan replaces it whole.
type Plan struct {
	Explanation string `json:"explanation,omitempty"`
	Steps       []Step `json:"plan"`
}

const maxPlanSteps = 50

func (p *Plan) validate() error {
	if len(p.Steps) == 0 {
		return errors.New("plan must hold at least one step")
	}
	if len(p.Steps) > maxPlanSteps {
		return fmt.Errorf("plan holds at most %d steps", maxPlanSteps)
	}
	inProgress := 0
	for i, s := range p.Steps {
		if strings.TrimSpace(s.Step) == "" {
			return fmt.Errorf("step %d is empty", i+1)
		}
		switch s.Status {
		case StepPending, StepCompleted:
		case StepInProgress:
			inProgress++
		default:
			return fmt.Errorf("step %d has status %q; want pending, in_progress or completed", i+1, s.Status)
		}
	}
	if inProgress > 1 {
		return fmt.Errorf("%d steps are in_progress; at most one may be", inProgress)
	}
	return nil
}

// ParsePlan decodes and checks an update_plan call.
func ParsePlan(raw json.RawMessage) (Plan, error) { return decodeArgs[Plan](raw) }

// Update replaces the plan with the one in an update_plan call and returns
// the model's short acknowledgement (never the plan itself, which the model
// already has). A bad update leaves the plan as it was.
func (p *Plan) Update(raw json.RawMessage) Result {
	next, err := ParsePlan(raw)
	if err != nil {
		return errorf("update_plan: %v", err)
	}
	*p = next
	done := 0
	current := ""
	for _, s := range p.Steps {
		switch s.Status {
		case StepCompleted:
			done++
		case StepInProgress:
			current = s.Step
		}
	}
	ack := fmt.Sprintf("Plan updated: %d of %d steps completed", done, len(p.Steps))
	if current != "" {
		ack += "; in progress: " + capText(current, 80)
	}
	return Result{Text: ack}
}

// Checklist renders the plan as plain text for a front end.
func (p Plan) Checklist() string {
	var b strings.Builder
	for _, s := range p.Steps {
		mark := "[ ]"
		switch s.Status {
		case StepInProgress:
			mark = "[~]"
		case StepCompleted:
			mark = "[x]"
		}
		fmt.Fprintf(&b, "%s %s\n", mark, s.Step)
	}
	return b.String()
}

func updatePlanDef() Definition {
	d := define(UpdatePlan, toolcall.EffectNone,
		"Keep a checklist of the steps of the current task. Send the whole plan each time; at most one step may be in_progress. The reply is a short acknowledgement.",
		`{"type":"object","properties":{`+
			`"explanation":{"type":"string","description":"Optional note on why the plan changed"},`+
			`"plan":{"type":"array","minItems":1,"maxItems":`+fmt.Sprint(maxPlanSteps)+`,"items":{"type":"object","properties":{`+
			`"step":{"type":"string"},"status":{"type":"string","enum":["pending","in_progress","completed"]}`+
			`},"required":["step","status"],"additionalProperties":false}}`+
			`},"required":["plan"],"additionalProperties":false}`,
		func(Plan) toolcall.Call { return toolcall.Call{} },
		nil)
	d.Runs = InSupervisor
	return d
}
