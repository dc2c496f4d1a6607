package tui

import (
	"strings"
	"testing"
	"time"

	"brig/test/fakeprovider"
)

// TestPromptGoesOverTheConnectionOpenedAhead: once its banner is up, brig
// has opened the provider's connection (a HEAD for the API's path, without
// the key), and the prompt's request goes over that connection — the
// first answer does not wait for the handshakes. Typing the prompt right
// after opens nothing more (the connection is fresh).
func TestPromptGoesOverTheConnectionOpenedAhead(t *testing.T) {
	tm := newTerm(t, fakeprovider.Turn{Text: "answered over the connection opened ahead"})
	tm.launch()
	tm.waitFor(10*time.Second, "sandbox", "› Ask brig")
	tm.waitServer(10*time.Second, func() bool { return len(tm.srv.Openings()) > 0 },
		func() string { return "no connection opened once the banner was up" })
	if n := len(tm.srv.Requests()); n != 0 {
		t.Fatalf("%d requests before the prompt", n)
	}
	open := tm.srv.Openings()[0]
	if open.Path != "/v1/messages" || open.Header.Get("X-Api-Key") != "" || open.Header.Get("Authorization") != "" {
		t.Errorf("the opening: %s %v, want the API's path and no credential", open.Path, open.Header)
	}
	tm.typeLine("hello")
	tm.waitFor(10*time.Second, "answered over the connection opened ahead")
	reqs, openings := tm.srv.Requests(), tm.srv.Openings()
	if len(reqs) != 1 || reqs[0].Remote != open.Remote {
		var remotes []string
		for _, r := range reqs {
			remotes = append(remotes, r.Remote)
		}
		t.Errorf("the prompt's request came from %s, the connection opened ahead is %s", strings.Join(remotes, ", "), open.Remote)
	}
	if len(openings) != 1 {
		t.Errorf("%d openings, want the one: typing right after it opened another", len(openings))
	}
	tm.quit()
}
