package credentials

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"brig/internal/userfile"
	"brig/internal/xdg"

	"github.com/BurntSushi/toml"
)

// Provider names the services a key is for. They match the provider names of
// agent/provider (the OpenAI-compatible Chat Completions client uses the
// OpenAI key when it has one).
const (
	Anthropic = "anthropic"
	OpenAI    = "openai"
)

// EnvVar is the environment variable holding each provider's key.
var envVars = map[string]string{
	Anthropic: "ANTHROPIC_API_KEY",
	OpenAI:    "OPENAI_API_KEY",
}

// EnvVar returns the environment variable that holds provider's key.
func EnvVar(provider string) string { return envVars[provider] }

// FileName is the credentials file's name inside brig's config directory.
const FileName = "credentials.toml"

// Path returns the credentials file for dirs.
func Path(dirs xdg.Dirs) string { return filepath.Join(dirs.Config, FileName) }

// Credential is one provider's key and where it was found.
type Credential struct {
	Provider string
	Key      Secret
	// Source says where the key came from, for messages and `brig doctor`:
	// "environment variable ANTHROPIC_API_KEY" or the file's path.
	Source string
}

// Set is every credential found, by provider.
type Set struct {
	byProvider map[string]Credential
	file       string // the credentials file consulted (present or not)
}

// maxFileSize bounds what is read from the credentials file.
const maxFileSize = 64 << 10

// fileFormat is the credentials file:
//
//	[anthropic]
//	api_key = "sk-ant-…"
//
//	[openai]
//	api_key = "sk-…"
type fileFormat map[string]struct {
	APIKey string `toml:"api_key"`
}

// Load finds the credentials in env (NAME=value pairs, as os.Environ) and in
// the credentials file under dirs.Config. The environment wins over the file.
// A credentials file that anyone but its owner can read or write, or that
// another user owns, is an error (fail closed: the key may already have
// leaked, and silently ignoring it would hide that).
func Load(env []string, dirs xdg.Dirs) (Set, error) {
	s := Set{byProvider: map[string]Credential{}, file: Path(dirs)}
	fromFile, err := readFile(s.file)
	if err != nil {
		return Set{}, err
	}
	for provider, key := range fromFile {
		s.byProvider[provider] = Credential{Provider: provider, Key: NewSecret(key), Source: s.file}
	}
	for provider, name := range envVars {
		if v := lookup(env, name); v != "" {
			s.byProvider[provider] = Credential{Provider: provider, Key: NewSecret(v), Source: "environment variable " + name}
		}
	}
	return s, nil
}

// Get returns provider's credential, or a *MissingError listing every way to
// configure one.
func (s Set) Get(provider string) (Credential, error) {
	if c, ok := s.byProvider[provider]; ok {
		return c, nil
	}
	return Credential{}, &MissingError{Provider: provider, File: s.file}
}

// Lookup returns provider's credential and whether there is one.
func (s Set) Lookup(provider string) (Credential, bool) {
	c, ok := s.byProvider[provider]
	return c, ok
}

// Empty reports whether no credential at all was found.
func (s Set) Empty() bool { return len(s.byProvider) == 0 }

// MissingError says that no key was found, and how to give one.
type MissingError struct {
	Provider string // "" when no provider at all is configured
	File     string
	// Keyless says that a server of the chosen API that needs no key
	// (a local OpenAI-compatible one on --base-url) would do as well.
	Keyless bool
	// OpenAIBase is OPENAI_BASE_URL when it is set and no model is
	// chosen: a local server was meant, and only the model's name is
	// missing.
	OpenAIBase string
}

func (e *MissingError) Error() string {
	var b strings.Builder
	if env := envVars[e.Provider]; env != "" {
		// A model of this provider was chosen: only its key helps (a key
		// of the other provider may well be set already).
		fmt.Fprintf(&b, "no API key for %s. Either of these works:\n", e.Provider)
		fmt.Fprintf(&b, "  - export %s=…\n", env)
		fmt.Fprintf(&b, "  - put the key in %s and run chmod 600 %s:\n", e.File, e.File)
		fmt.Fprintf(&b, "        [%s]\n        api_key = \"…\"", e.Provider)
		if e.Keyless {
			b.WriteString("\n" + keylessServer)
		}
		return b.String()
	}
	if e.OpenAIBase != "" {
		fmt.Fprintf(&b, "OPENAI_BASE_URL is set (%s) but no model is named: give the name that server knows the model by, with --model NAME (e.g. --model qwen3-coder), /model NAME in the terminal UI, or model = \"NAME\" under [agent] in the config", e.OpenAIBase)
		return b.String()
	}
	b.WriteString("no model provider is configured. Any one of these works:\n")
	fmt.Fprintf(&b, "  - export ANTHROPIC_API_KEY=… (Anthropic models, e.g. --model claude-sonnet-4-5)\n")
	fmt.Fprintf(&b, "  - export OPENAI_API_KEY=… (OpenAI models, e.g. --model gpt-5)\n")
	fmt.Fprintf(&b, "  - put the key in %s and run chmod 600 %s:\n", e.File, e.File)
	fmt.Fprintf(&b, "        [anthropic]\n        api_key = \"…\"\n        [openai]\n        api_key = \"…\"\n")
	b.WriteString(keylessServer)
	return b.String()
}

const keylessServer = "  - use a local OpenAI-compatible server, which needs no key:\n" +
	"        --base-url http://127.0.0.1:11434/v1 --model <model> (Ollama; llama.cpp's server is usually http://127.0.0.1:8080/v1)"

// None returns the error for "nothing configured at all", naming the
// credentials file that was looked for. When env sets ANTHROPIC_BASE_URL
// (an Anthropic endpoint was meant), only an Anthropic key helps, and the
// error says so.
func None(dirs xdg.Dirs, env []string) error {
	if lookup(env, "ANTHROPIC_BASE_URL") != "" {
		return &MissingError{Provider: Anthropic, File: Path(dirs)}
	}
	return &MissingError{File: Path(dirs), OpenAIBase: lookup(env, "OPENAI_BASE_URL")}
}

func readFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	defer f.Close()
	// Check the file we opened, not the path, so a swap between the check and
	// the read cannot slip a different file in.
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("credentials: %s is not a regular file", path)
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("credentials: %s has mode %04o, readable or writable by others; refusing it. Run: chmod 600 %s", path, perm, path)
	}
	if uid, ok := ownerOf(info); ok && uid != os.Getuid() {
		return nil, fmt.Errorf("credentials: %s is owned by uid %d, not by you (uid %d); refusing it", path, uid, os.Getuid())
	}
	// Whoever can write a directory on the way can replace the file.
	if err := userfile.Me().CheckDirs(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("credentials: %s is larger than %d bytes", path, maxFileSize)
	}
	var parsed fileFormat
	md, err := toml.Decode(string(data), &parsed)
	if err != nil {
		// The TOML error may quote the line, which may hold a key: say where,
		// not what.
		var perr toml.ParseError
		if errors.As(err, &perr) {
			return nil, fmt.Errorf("credentials: %s: syntax error on line %d", path, perr.Position.Line)
		}
		return nil, fmt.Errorf("credentials: %s: not valid (expected [anthropic] / [openai] tables with api_key)", path)
	}
	if undec := md.Undecoded(); len(undec) > 0 {
		return nil, fmt.Errorf("credentials: %s: unknown key %s (expected [anthropic] / [openai] tables with api_key)", path, undec[0])
	}
	out := map[string]string{}
	for provider, t := range parsed {
		if _, ok := envVars[provider]; !ok {
			return nil, fmt.Errorf("credentials: %s: unknown provider [%s] (known: anthropic, openai)", path, provider)
		}
		if t.APIKey != "" {
			out[provider] = strings.TrimSpace(t.APIKey)
		}
	}
	return out, nil
}

func lookup(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
