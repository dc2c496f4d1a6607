package credentials

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"brig/internal/xdg"
)

const key = "sk-ant-api03-SUPERSECRETVALUE"

func TestSecretNeverPrints(t *testing.T) {
	s := NewSecret(key)
	type holder struct {
		Name string
		Key  Secret
	}
	h := holder{"x", s}
	var logged bytes.Buffer
	slog.New(slog.NewTextHandler(&logged, nil)).Info("msg", "key", s, "holder", h)
	js, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	outputs := map[string]string{
		"%s":    fmt.Sprintf("%s", s),
		"%v":    fmt.Sprintf("%v", s),
		"%+v":   fmt.Sprintf("%+v", h),
		"%#v":   fmt.Sprintf("%#v", h),
		"%q":    fmt.Sprintf("%q", s),
		"%x":    fmt.Sprintf("%x", s),
		"json":  string(js),
		"slog":  logged.String(),
		"Error": fmt.Errorf("wrapped: %v", s).Error(),
	}
	for name, out := range outputs {
		if strings.Contains(out, "SUPERSECRET") {
			t.Errorf("%s leaks the key: %s", name, out)
		}
		if !strings.Contains(out, redacted) {
			t.Errorf("%s does not show the placeholder: %s", name, out)
		}
	}
	if s.Reveal() != key {
		t.Fatal("Reveal lost the value")
	}
}

func dirs(t *testing.T) xdg.Dirs {
	home := t.TempDir()
	return xdg.Resolve(nil, home)
}

func writeCreds(t *testing.T, d xdg.Dirs, mode os.FileMode, content string) string {
	t.Helper()
	if err := os.MkdirAll(d.Config, 0o700); err != nil {
		t.Fatal(err)
	}
	p := Path(d)
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoad(t *testing.T) {
	const file = "[anthropic]\napi_key = \"from-file-a\"\n[openai]\napi_key = \"from-file-o\"\n"
	tests := []struct {
		name    string
		env     []string
		mode    os.FileMode
		content string // "" means no file
		want    map[string]string
		wantErr string
	}{
		{name: "env only", env: []string{"ANTHROPIC_API_KEY=env-a"}, want: map[string]string{Anthropic: "env-a"}},
		{name: "file only", mode: 0o600, content: file, want: map[string]string{Anthropic: "from-file-a", OpenAI: "from-file-o"}},
		{name: "env wins", env: []string{"OPENAI_API_KEY=env-o"}, mode: 0o400, content: file, want: map[string]string{Anthropic: "from-file-a", OpenAI: "env-o"}},
		{name: "group readable refused", mode: 0o640, content: file, wantErr: "chmod 600"},
		{name: "world readable refused even with env", env: []string{"ANTHROPIC_API_KEY=env-a"}, mode: 0o644, content: file, wantErr: "chmod 600"},
		{name: "unknown provider", mode: 0o600, content: "[gemini]\napi_key = \"x\"\n", wantErr: "unknown provider [gemini]"},
		{name: "unknown key", mode: 0o600, content: "[openai]\nkey = \"x\"\n", wantErr: "unknown key openai.key"},
		{name: "syntax error does not quote the line", mode: 0o600, content: "[openai]\napi_key = \"from-file-o\n", wantErr: "syntax error on line 2"},
		{name: "nothing", want: map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := dirs(t)
			if tt.content != "" {
				writeCreds(t, d, tt.mode, tt.content)
			}
			set, err := Load(tt.env, d)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "from-file") {
					t.Fatalf("error leaks a key: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{Anthropic, OpenAI} {
				c, ok := set.Lookup(p)
				if want, wantOK := tt.want[p]; ok != wantOK || c.Key.Reveal() != want {
					t.Errorf("%s: got %q (%v), want %q (%v)", p, c.Key.Reveal(), ok, want, wantOK)
				}
			}
			if set.Empty() != (len(tt.want) == 0) {
				t.Errorf("Empty() = %v", set.Empty())
			}
		})
	}
}

func TestMissingErrorListsWhatWorks(t *testing.T) {
	d := dirs(t)
	set, err := Load(nil, d)
	if err != nil {
		t.Fatal(err)
	}
	got := None(d, nil).Error()
	if !strings.HasPrefix(got, "no model provider is configured") {
		t.Errorf("None: %s", got)
	}
	// ANTHROPIC_BASE_URL set without its key: only that key is named.
	if got := None(d, []string{"ANTHROPIC_BASE_URL=http://127.0.0.1:9"}).Error(); !strings.HasPrefix(got, "no API key for anthropic") || !strings.Contains(got, "export ANTHROPIC_API_KEY=") || strings.Contains(got, "OPENAI_API_KEY") {
		t.Errorf("None with ANTHROPIC_BASE_URL: %s", got)
	}
	// OPENAI_BASE_URL set, no key and no model: the model's name is what
	// is missing (a local server needs no key).
	if got := None(d, []string{"OPENAI_BASE_URL=http://127.0.0.1:9/v1"}).Error(); !strings.Contains(got, "OPENAI_BASE_URL is set (http://127.0.0.1:9/v1)") || !strings.Contains(got, "--model NAME") || strings.Contains(got, "no model provider is configured") {
		t.Errorf("None with OPENAI_BASE_URL: %s", got)
	}
	for _, want := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", Path(d), "chmod 600 " + Path(d), "--base-url", "Ollama", "llama.cpp"} {
		if !strings.Contains(got, want) {
			t.Errorf("message lacks %q:\n%s", want, got)
		}
	}
	// A model of one provider was chosen: only what gives that
	// provider a key is listed (the other provider's key does not help).
	for p, other := range map[string]string{OpenAI: "ANTHROPIC_API_KEY", Anthropic: "OPENAI_API_KEY"} {
		_, err = set.Get(p)
		if err == nil {
			t.Fatal("no error without a key")
		}
		msg := err.Error()
		for _, want := range []string{"no API key for " + p, "export " + EnvVar(p) + "=", Path(d), "chmod 600 " + Path(d), "[" + p + "]"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: message lacks %q:\n%s", p, want, msg)
			}
		}
		if strings.Contains(msg, other) || strings.Contains(msg, "--base-url") {
			t.Errorf("%s: message lists what would not work:\n%s", p, msg)
		}
	}
}

func TestSourceNamesWhereTheKeyCameFrom(t *testing.T) {
	d := dirs(t)
	p := writeCreds(t, d, 0o600, "[openai]\napi_key = \"k\"\n")
	set, err := Load([]string{"ANTHROPIC_API_KEY=a"}, d)
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := set.Lookup(OpenAI); c.Source != p {
		t.Errorf("openai source %q, want %q", c.Source, p)
	}
	if c, _ := set.Lookup(Anthropic); c.Source != "environment variable ANTHROPIC_API_KEY" {
		t.Errorf("anthropic source %q", c.Source)
	}
	if filepath.Base(p) != FileName {
		t.Fatal(p)
	}
}
