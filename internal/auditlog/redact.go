package auditlog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"brig/internal/envguard"
	"brig/internal/lazyre"
)

// Redacted replaces a secret in the log.
const Redacted = "[REDACTED]"

// MaxArgBytes is the longest argument value kept as it is; a longer one
// (a file's content) is logged as its size and hash.
const MaxArgBytes = 2048

var (
	rePrivateKey = lazyre.New(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z0-9 ]*PRIVATE KEY-----|$)`)
	// Tokens with a recognisable shape.
	reToken = lazyre.New(`\b(sk-ant-[A-Za-z0-9_\-]{8,}|sk-(proj-)?[A-Za-z0-9_\-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_\-]{16,}|xox[abposr]-[A-Za-z0-9\-]{10,}|AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}|AIza[0-9A-Za-z_\-]{30,}|npm_[A-Za-z0-9]{30,}|hf_[A-Za-z0-9]{30,}|eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,})`)
	// NAME=value, where the name looks like a credential's.
	reAssign = lazyre.New(`\b([A-Za-z_][A-Za-z0-9_]*)=("[^"\n]*"|'[^'\n]*'|[^\s;&|]+)`)
	// Authorization and similar headers.
	reHeader = lazyre.New(`(?i)\b(authorization|proxy-authorization|x-api-key|api-key|x-auth-token|private-token|cookie|set-cookie)(\s*[:=]\s*)("?)(bearer\s+|basic\s+|token\s+)?[^\s"']+`)
	// scheme://user:password@host
	reURLAuth = lazyre.New(`([A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@]+:)[^@\s/]+@`)
	// --password=x, --token x, -p=x is too ambiguous to touch.
	reFlag = lazyre.New(`(?i)(--?(?:password|passwd|pass|token|secret|api[-_]?key|access[-_]?key|auth[-_]?token|client[-_]?secret)(?:=|\s+))("[^"\n]*"|'[^'\n]*'|\S+)`)
)

// RedactString replaces what looks like a secret in s: private keys,
// tokens of known shapes, credential-named assignments (GITHUB_TOKEN=…),
// authorization headers, passwords in URLs and password or token flags.
func RedactString(s string) string {
	s = rePrivateKey().ReplaceAllString(s, Redacted)
	s = reToken().ReplaceAllString(s, Redacted)
	s = reAssign().ReplaceAllStringFunc(s, func(m string) string {
		name, _, _ := strings.Cut(m, "=")
		if envguard.IsCredential(name) {
			return name + "=" + Redacted
		}
		return m
	})
	s = reHeader().ReplaceAllString(s, "${1}${2}${3}${4}"+Redacted)
	s = reURLAuth().ReplaceAllString(s, "${1}"+Redacted+"@")
	s = reFlag().ReplaceAllString(s, "${1}"+Redacted)
	return s
}

// secretKey reports whether a JSON key names a secret (its value is then
// redacted whole).
func secretKey(k string) bool {
	k = strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(k))
	return envguard.IsCredential(k) && !strings.HasPrefix(k, "GITHUB_") && k != "DISPLAY"
}

// RedactArgs is a call's arguments as the log keeps them: every string
// redacted (RedactString), values under secret-looking keys replaced, and
// strings longer than MaxArgBytes (file contents) replaced by their size
// and hash. Arguments that are not JSON are kept as a redacted string.
func RedactArgs(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		b, _ := marshal(redactValue(string(raw)))
		return b
	}
	b, err := marshal(redactAny(v))
	if err != nil {
		return nil
	}
	return b
}

func redactAny(v any) any {
	switch t := v.(type) {
	case string:
		return redactValue(t)
	case map[string]any:
		for k, e := range t {
			if _, isString := e.(string); isString && secretKey(k) {
				t[k] = Redacted
				continue
			}
			t[k] = redactAny(e)
		}
		return t
	case []any:
		for i, e := range t {
			t[i] = redactAny(e)
		}
		return t
	}
	return v
}

func redactValue(s string) string {
	if len(s) > MaxArgBytes {
		sum := sha256.Sum256([]byte(s))
		return fmt.Sprintf("[%d bytes, sha256 %s]", len(s), hex.EncodeToString(sum[:]))
	}
	return RedactString(s)
}
