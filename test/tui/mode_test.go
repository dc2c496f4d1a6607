package tui

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"brig/test/fakeprovider"
)

// TestModeChangesAreAudited: a /mode before anything was said (the run is
// reopened on a new session, the unused one is not kept) is in the audit
// log, under the session the conversation then happens in, as a /mode
// after a message is.
func TestModeChangesAreAudited(t *testing.T) {
	tm := newTerm(t, fakeprovider.Turn{Text: "Hello there."})
	tm.launch()
	tm.waitFor(10*time.Second, "› Ask brig", " · mode ask · ")
	tm.typeLine("/mode edit")
	tm.waitFor(10*time.Second, " · mode edit · ")
	tm.typeLine("hi")
	tm.waitFor(15*time.Second, "Hello there.")
	tm.typeLine("/mode plan")
	tm.waitFor(10*time.Second, " · mode plan · ")
	tm.quit()

	c := exec.Command(brig, "log", "--json", "--kind", "mode")
	c.Dir, c.Env = tm.ws, []string{"PATH=/usr/bin:/bin", "HOME=" + tm.home}
	out, err := c.Output()
	if err != nil {
		t.Fatalf("brig log: %v\n%s", err, out)
	}
	var changes []string
	sessions := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		var r struct {
			Session string
			Mode    struct{ From, To string }
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		changes = append(changes, r.Mode.From+"→"+r.Mode.To)
		sessions[r.Session] = true
	}
	if strings.Join(changes, " ") != "ask→edit edit→plan" {
		t.Fatalf("audited mode changes %q, want ask→edit then edit→plan:\n%s", changes, out)
	}
	if len(sessions) != 1 || tm.sessions() != 1 {
		t.Fatalf("the changes name %d sessions, %d kept; want the one kept:\n%s", len(sessions), tm.sessions(), out)
	}
}
