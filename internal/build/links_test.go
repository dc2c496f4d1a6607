package build

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// linked lists the packages pkg links (go test puts its own go command
// first on PATH).
func linked(t *testing.T, pkg string, tags ...string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-tags", strings.Join(tags, ","), "-deps", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

// TestLinksOnlyWhatItRuns: Go initialises every package a program links
// before main, so each of brig's programs must not link what it never
// runs. Every call starts the worker and init: neither links the policy's
// rule tables (a fifth of the worker's package initialisation), the
// supervisor, the provider clients or the terminal UI, and init not even
// the tools. brig itself does not link the renderers (chroma parses
// hundreds of lexers and styles before main: most of brig's start-up,
// --help included); the renderer program does, and nothing that holds
// brig's keys or runs calls, since what it renders is untrusted. No jail
// program links libseccomp: brig compiles the filters.
func TestLinksOnlyWhatItRuns(t *testing.T) {
	renderers := []string{
		"charm.land/glamour/v2", "github.com/alecthomas/chroma/v2", "github.com/alecthomas/chroma/v2/lexers",
		"github.com/yuin/goldmark", "github.com/microcosm-cc/bluemonday", "brig/internal/render/engine",
	}
	never := append([]string{
		"brig/policy", "brig/supervisor", "brig/agent", "brig/agent/provider", "brig/internal/audit",
		"brig/internal/egress", "brig/internal/tui", "github.com/BurntSushi/toml",
		"charm.land/bubbletea/v2", "github.com/spf13/cobra",
		// brig compiles the seccomp programs; the jail loads their bytes.
		"brig/jail/filter", "github.com/seccomp/libseccomp-golang",
	}, renderers...)
	for _, tc := range []struct {
		pkg   string
		tags  []string
		needs []string // the control: what it does link
		never []string
	}{
		{"brig/cmd/brig-jail", nil, []string{"brig/jail", "brig/tools", "brig/internal/audit/collect", "brig/policy/toolcall", "net/http", "image"}, never},
		// The light worker (jailtools.FullOnly's tools left out) links
		// none of their libraries.
		{"brig/cmd/brig-jail", []string{"brig_light_worker"}, []string{"brig/jail", "brig/tools", "brig/internal/audit/collect"}, append([]string{
			"net/http", "crypto/tls", "golang.org/x/net/html", "golang.org/x/net/html/charset",
			"github.com/JohannesKaufmann/html-to-markdown/v2/converter", "image", "image/png", "golang.org/x/image/webp",
		}, never...)},
		{"brig/cmd/brig-jail-init", nil, []string{"brig/jail"}, append([]string{"brig/tools", "brig/internal/audit/collect", "golang.org/x/net/html"}, never...)},
		{"brig/cmd/brig", nil, []string{"brig/internal/tui", "brig/internal/render", "brig/supervisor", "charm.land/bubbletea/v2"}, renderers},
		// brig as build.sh builds it (the brig_carrier tag) runs web_fetch
		// in the full worker it carries: it links neither the fetch's HTML
		// converter nor the character sets (their set-up cost every start
		// of brig 2.5–4 ms here).
		{"brig/cmd/brig", []string{"netgo", "osusergo", "brig_carrier"}, []string{"brig/tools", "brig/supervisor", "net/http"}, append([]string{
			"golang.org/x/net/html", "golang.org/x/net/html/charset", "github.com/JohannesKaufmann/html-to-markdown/v2/converter",
			"golang.org/x/text/encoding/japanese", "golang.org/x/text/encoding/htmlindex",
		}, renderers...)},
		{"brig/cmd/brig-render", nil, []string{"brig/internal/render/engine", "charm.land/glamour/v2", "github.com/alecthomas/chroma/v2"}, []string{
			"brig/supervisor", "brig/jail", "brig/agent", "brig/agent/provider", "brig/internal/credentials",
			"brig/internal/tui", "brig/tools", "net/http",
		}},
	} {
		deps := linked(t, tc.pkg, tc.tags...)
		for _, p := range tc.needs {
			if !slices.Contains(deps, p) {
				t.Errorf("%s (tags %v) does not link %s (the list is wrong, not the program)", tc.pkg, tc.tags, p)
			}
		}
		for _, p := range tc.never {
			if slices.Contains(deps, p) {
				t.Errorf("%s (tags %v) links %s, which it never runs: each start would initialise it", tc.pkg, tc.tags, p)
			}
		}
	}
}

// TestPureGoPrograms: the renderer builds without cgo, as build.sh builds
// it, and so does init (build.sh builds it with cgo, for the commands it
// starts itself; one built without refuses them, closed:
// jail/spawn_nocgo.go), and they link no cgo then; the worker always
// needs it.
func TestPureGoPrograms(t *testing.T) {
	for _, pkg := range []string{"brig/cmd/brig-jail-init", "brig/cmd/brig-render"} {
		cmd := exec.Command("go", "build", "-o", os.DevNull, pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s does not build without cgo: %v\n%s", pkg, err, out)
		}
		cmd = exec.Command("go", "list", "-deps", pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		if slices.Contains(strings.Fields(string(out)), "runtime/cgo") {
			t.Errorf("%s links runtime/cgo even without cgo", pkg)
		}
	}
	if !slices.Contains(linked(t, "brig/cmd/brig-jail"), "runtime/cgo") {
		t.Error("the worker links no cgo: jail/spawn.go's C clone is gone, and this test with it")
	}
}
