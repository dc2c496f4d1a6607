package collect

import (
	"path"
	"regexp"
	"strings"

	"brig/internal/lazyre"
)

// Redacted is what replaces a secret-looking value in the text sent to the
// provider (the key or the surrounding text stays, so a reviewer still sees
// that a credential was hard-coded there).
const Redacted = "[REDACTED]"

// Redaction is one value the redactor replaced.
type Redaction struct {
	Line int    `json:"line"` // 1-based
	Kind string `json:"kind"` // what it looked like: "private key", "AWS access key", "password assignment" …
}

// tokenPatterns are credentials recognisable by their shape alone.
var tokenPatterns = []struct {
	kind string
	re   func() *regexp.Regexp
	// hints: a line holds a match only if it holds one of these
	// (lower-case; a cheap test before the expression runs).
	hints []string
	// digit: the match must hold a digit (keeps words like
	// "sk-some-long-css-class-name" out).
	digit bool
}{
	{"AWS access key", lazyre.New(`\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b`), []string{"akia", "asia", "agpa", "aida", "aroa", "anpa", "anva", "aipa"}, false},
	{"GitHub token", lazyre.New(`\bgh[pousr]_[A-Za-z0-9]{36,255}\b`), []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, false},
	{"GitHub token", lazyre.New(`\bgithub_pat_[A-Za-z0-9_]{22,255}\b`), []string{"github_pat_"}, false},
	{"GitLab token", lazyre.New(`\bglpat-[A-Za-z0-9_-]{20,}`), []string{"glpat-"}, false},
	{"Slack token", lazyre.New(`\bxox[abposr]-[A-Za-z0-9-]{10,}`), []string{"xox"}, false},
	{"Slack webhook", lazyre.New(`https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}`), []string{"hooks.slack.com"}, false},
	{"Anthropic API key", lazyre.New(`\bsk-ant-[A-Za-z0-9_-]{20,}`), []string{"sk-ant-"}, false},
	{"OpenAI API key", lazyre.New(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}`), []string{"sk-"}, true},
	{"Stripe key", lazyre.New(`\b[rs]k_(?:live|test)_[0-9A-Za-z]{16,}\b`), []string{"k_live_", "k_test_"}, false},
	{"Google API key", lazyre.New(`\bAIza[0-9A-Za-z_-]{35}\b`), []string{"aiza"}, false},
	{"npm token", lazyre.New(`\bnpm_[A-Za-z0-9]{36}\b`), []string{"npm_"}, false},
	{"PyPI token", lazyre.New(`\bpypi-[A-Za-z0-9_-]{50,}`), []string{"pypi-"}, false},
	{"Hugging Face token", lazyre.New(`\bhf_[A-Za-z0-9]{30,}\b`), []string{"hf_"}, false},
	{"SendGrid key", lazyre.New(`\bSG\.[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}`), []string{"sg."}, false},
	{"JSON web token", lazyre.New(`\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}`), []string{"eyj"}, false},
	{"Azure key", lazyre.New(`(?i)\b(?:AccountKey|SharedAccessKey)=[A-Za-z0-9+/=]{20,}`), []string{"accountkey=", "sharedaccesskey="}, false},
}

// secretWords are the lower-case words one of which a name must hold for
// its value to be redacted (secretKey's words; the cheap test).
var secretWords = []string{"pass", "pwd", "secret", "token", "key", "credential"}

func hasAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

var (
	// urlPassword is the password of user:password@host in a URL.
	urlPassword = lazyre.New(`([A-Za-z][A-Za-z0-9+.-]*://[^\s:/@"'<>]+):([^\s@/"'<>]+)@`)
	// secretKey is the part of a name that makes its value a secret.
	secretKey = `[A-Za-z0-9_.-]*(?i:password|passwd|passphrase|pwd|secret|token|api[_-]?key|access[_-]?key|auth[_-]?key|private[_-]?key|client[_-]?secret|credential)[A-Za-z0-9_.-]*`
	// assignQuoted is NAME = "value" (and :, :=, =>; the name may be
	// quoted, as in JSON).
	assignQuoted = lazyre.New(`(["']?` + secretKey + `["']?\s*(?::=|=>|=|:)\s*)("(?:[^"\\\n]|\\.)*"|'[^'\n]*')`)
	// assignBare is NAME=value with an unquoted value, as configuration
	// files write it (.env, YAML, INI, properties).
	assignBare = lazyre.New(`(["']?` + secretKey + `["']?\s*(?:=|:)[ \t]*)([^\s"'#,;]+)`)
	// xmlSecret is <password>value</password>.
	xmlSecret = lazyre.New(`(<(` + secretKey + `)>)([^<\n]{3,})(</)`)
	// keyBegin and keyEnd delimit a private key block.
	keyBegin = lazyre.New(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`)
	keyEnd   = lazyre.New(`-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`)
	numeric  = lazyre.New(`^[0-9.]+$`)
)

// Redact replaces secret-looking values in the text of the file at path:
// private key blocks, credentials recognisable by their shape (cloud and
// service API keys and tokens, JSON web tokens, passwords in URLs), and the
// values assigned to names that say they hold a secret (password, token,
// api_key …). Quoted values are redacted in every file; unquoted ones only
// in configuration files, where code would otherwise read as a secret.
// Lines are kept: the result has the same number of lines, so line numbers
// still point at the right place. It errs on the side of redacting.
func Redact(filePath, text string) (string, []Redaction) {
	if !mayHoldSecret(text) {
		return text, nil
	}
	config := configFile(filePath)
	lines := strings.SplitAfter(text, "\n")
	var out []Redaction
	inKey := false
	for i, line := range lines {
		nl := ""
		if strings.HasSuffix(line, "\n") {
			line, nl = line[:len(line)-1], "\n"
		}
		note := func(kind string) { out = append(out, Redaction{Line: i + 1, Kind: kind}) }
		if inKey {
			if loc := keyEnd().FindStringIndex(line); loc != nil {
				inKey = false
				line = line[loc[0]:]
			} else {
				lines[i] = nl // the key's body: the line stays, empty
				continue
			}
		}
		// A whole block on one line (a JSON string with \n escapes), or
		// the start of one.
		for from := 0; ; {
			b := keyBegin().FindStringIndex(line[from:])
			if b == nil {
				break
			}
			note("private key")
			head := line[:from+b[1]]
			rest := line[from+b[1]:]
			e := keyEnd().FindStringIndex(rest)
			if e == nil {
				line = head + Redacted
				inKey = true
				break
			}
			line = head + Redacted + rest[e[0]:]
			from = len(head) + len(Redacted) + (e[1] - e[0])
		}
		if inKey {
			lines[i] = line + nl
			continue
		}
		lower := strings.ToLower(line)
		for _, p := range tokenPatterns {
			if !hasAny(lower, p.hints) {
				continue
			}
			line = p.re().ReplaceAllStringFunc(line, func(m string) string {
				if p.digit && !strings.ContainsAny(m, "0123456789") {
					return m
				}
				note(p.kind)
				return Redacted
			})
		}
		if strings.Contains(line, "://") {
			line = replaceGroups(urlPassword(), line, func(g []string) string {
				if placeholder(g[2]) {
					return g[0]
				}
				note("password in a URL")
				return g[1] + ":" + Redacted + "@"
			})
		}
		if !hasAny(lower, secretWords) {
			lines[i] = line + nl
			continue
		}
		line = replaceGroups(assignQuoted(), line, func(g []string) string {
			q := g[2][:1]
			v := g[2][1 : len(g[2])-1]
			if len(v) < 3 || placeholder(v) || v == Redacted {
				return g[0]
			}
			note("secret assignment")
			return g[1] + q + Redacted + q
		})
		if config {
			line = replaceGroups(assignBare(), line, func(g []string) string {
				v := g[2]
				if len(v) < 4 || placeholder(v) || numeric().MatchString(v) || strings.Contains(v, Redacted) || boolish(v) {
					return g[0]
				}
				note("secret assignment")
				return g[1] + Redacted
			})
		}
		line = replaceGroups(xmlSecret(), line, func(g []string) string {
			if placeholder(g[3]) {
				return g[0]
			}
			note("secret assignment")
			return g[1] + Redacted + g[4]
		})
		lines[i] = line + nl
	}
	return strings.Join(lines, ""), out
}

// mayHoldSecret is a cheap first look: text with none of these can hold
// nothing Redact replaces.
func mayHoldSecret(text string) bool {
	lower := strings.ToLower(text)
	for _, s := range []string{"private key", "akia", "asia", "agpa", "aida", "aroa", "anpa", "anva", "aipa", "gh", "glpat", "xox", "hooks.slack", "sk-", "sk_", "aiza", "npm_", "pypi-", "hf_", "sg.", "eyj", "accountkey", "sharedaccesskey", "://",
		"pass", "pwd", "secret", "token", "key", "credential"} {
		if strings.Contains(lower, s) {
			return true
		}
	}
	return false
}

// replaceGroups is ReplaceAllStringFunc with the submatches.
func replaceGroups(re *regexp.Regexp, s string, f func([]string) string) string {
	if !re.MatchString(s) {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
		g := make([]string, len(m)/2)
		for i := range g {
			if m[2*i] >= 0 {
				g[i] = s[m[2*i]:m[2*i+1]]
			}
		}
		b.WriteString(s[last:m[0]])
		b.WriteString(f(g))
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// placeholder reports whether a value is a reference or a stand-in rather
// than a secret: a variable, a template, an example.
func placeholder(v string) bool {
	v = strings.TrimSpace(v)
	if v == "" {
		return true
	}
	for _, p := range []string{"$", "{{", "${", "<", "%(", "%s", "#{", "@"} {
		if strings.HasPrefix(v, p) {
			return true
		}
	}
	if strings.Trim(v, "*xX.-_ ") == "" {
		return true
	}
	// A URL or a path names where a secret is, not the secret (a URL
	// with a password in it is redacted on its own).
	if strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://") || strings.HasPrefix(v, "/") || strings.HasPrefix(v, "./") {
		return !strings.Contains(v, "@")
	}
	switch strings.ToLower(v) {
	case "null", "none", "nil", "undefined", "changeme", "your_token_here", "your-api-key", "example", "redacted", "secret", "password", "token":
		// "changeme", "password" and friends are placeholders in
		// templates; a reviewer can still see them.
		return true
	}
	return false
}

func boolish(v string) bool {
	switch strings.ToLower(v) {
	case "true", "false", "yes", "no", "on", "off", "null", "none", "required", "optional":
		return true
	}
	return false
}

// configFile reports whether a file is configuration, where unquoted
// values after a secret-looking name are secrets (in code they are
// usually variables).
func configFile(p string) bool {
	base := strings.ToLower(path.Base(p))
	if strings.HasPrefix(base, ".env") || base == "dockerfile" || strings.HasPrefix(base, "dockerfile.") || !strings.Contains(strings.TrimPrefix(base, "."), ".") {
		return true
	}
	switch path.Ext(base) {
	case ".env", ".ini", ".cfg", ".conf", ".properties", ".toml", ".yaml", ".yml", ".envrc", ".npmrc", ".pypirc", ".netrc", ".tfvars", ".config":
		return true
	}
	return false
}
