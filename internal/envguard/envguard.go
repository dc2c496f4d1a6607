// Package envguard decides which environment variables may cross into a jail.
//
// It owns the allowlist and the credential patterns. It must not read or log
// variable values: callers pass names (or NAME=value pairs it only splits).
package envguard

import (
	"slices"
	"strings"
)

// baseNames cross into every jail.
func baseNames() []string {
	return []string{
		"PATH", "HOME", "LANG", "LANGUAGE", "TERM", "TZ", "USER", "LOGNAME",
		"SHELL", "COLORTERM", "NO_COLOR", "FORCE_COLOR", "CLICOLOR",
	}
}

// credentialParts are substrings of names that hold secrets.
func credentialParts() []string {
	return []string{
		"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE",
		"CREDENTIAL", "AUTH", "COOKIE", "SESSION", "PRIVATE", "SIGNING",
	}
}

// credentialPrefixes name whole families of cloud and forge credentials.
func credentialPrefixes() []string {
	return []string{
		"AWS_", "AZURE_", "ARM_", "GOOGLE_", "GCP_", "GCLOUD_", "CLOUDSDK_",
		"GITHUB_", "GH_", "GITLAB_", "GL_", "BITBUCKET_", "NPM_TOKEN",
		"DOCKER_", "KUBE", "VAULT_", "OP_", "HF_", "HUGGING", "ANTHROPIC_",
		"OPENAI_", "OPENROUTER_", "GEMINI_", "MISTRAL_", "GROQ_", "DEEPSEEK_",
		"BRIG_", "DIGITALOCEAN_", "HEROKU_", "CLOUDFLARE_", "STRIPE_",
		"TWILIO_", "SENTRY_", "SLACK_", "DATABASE_URL", "MYSQL_", "REDIS_",
	}
}

// credentialNames are exact names that grant access without looking like it.
func credentialNames() []string {
	return []string{"SSH_AUTH_SOCK", "GPG_AGENT_INFO", "GNUPGHOME", "NETRC", "DBUS_SESSION_BUS_ADDRESS", "XAUTHORITY", "DISPLAY", "WAYLAND_DISPLAY"}
}

// caBundleSuffixes end the names of variables that hold the path of CA
// certificates a TLS client trusts (AWS_CA_BUNDLE,
// CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE, NODE_EXTRA_CA_CERTS, VAULT_CACERT,
// GIT_SSL_CAINFO): public certificates, not secrets. A client certificate
// or key (DOCKER_CERT_PATH, *_CLIENT_CERT, *_KEY_FILE) ends otherwise.
func caBundleSuffixes() []string {
	return []string{
		"_CA_BUNDLE", "_CA_CERTS_FILE", "_CA_CERTS", "_CA_CERT_FILE", "_CA_CERT",
		"_CA_FILE", "_CACERT", "_CACERTS", "_CAINFO", "_CAPATH", "_CA_PATH",
	}
}

// caBundleNames are the exact names of CA-certificate paths OpenSSL reads.
func caBundleNames() []string { return []string{"SSL_CERT_FILE", "SSL_CERT_DIR"} }

// caBundle reports whether name (upper case) names a CA-certificate path,
// and returns what comes before its suffix.
func caBundle(up string) (string, bool) {
	if slices.Contains(caBundleNames(), up) {
		return "", true
	}
	for _, suf := range caBundleSuffixes() {
		if rest, ok := strings.CutSuffix(up, suf); ok {
			return rest, true
		}
	}
	return "", false
}

// IsCredential reports whether a variable name looks like it carries a
// secret or a handle to one (an agent socket, a bus). Such a variable never
// crosses into a jail, whatever the allowlist says.
//
// The path of a CA bundle is not a secret: a family prefix does not make
// one a credential (AWS_CA_BUNDLE), a credential word before its suffix
// still does (MY_TOKEN_CA_FILE).
func IsCredential(name string) bool {
	up := strings.ToUpper(name)
	if rest, ok := caBundle(up); ok {
		return credentialWords(rest)
	}
	for _, n := range credentialNames() {
		if up == n {
			return true
		}
	}
	for _, p := range credentialPrefixes() {
		if strings.HasPrefix(up, p) {
			return true
		}
	}
	return credentialWords(up)
}

// credentialWords reports whether an upper-case name has a word that
// names a secret. A part counts as a word of the name: GPG_KEY_ID,
// OPENAI_APIKEY, NPM_CONFIG__AUTHTOKEN, DB_SECRETS — but not KEYBOARD.
func credentialWords(up string) bool {
	for _, seg := range strings.Split(up, "_") {
		for _, p := range credentialParts() {
			if seg == p || seg == p+"S" || strings.HasSuffix(seg, p) {
				return true
			}
		}
	}
	return strings.Contains(up, "PASSWORD") || strings.Contains(up, "PASSWD")
}

// Allowed reports whether name crosses by default: a base name or a locale
// variable, and never a credential. The credential check, the costly part,
// runs only for a name that would otherwise cross: most of an environment
// does not (BenchmarkBuild, a 60-variable environment: 133 → 8 µs per
// grant, that is per call).
func Allowed(name string, extra []string) bool {
	return name != "" && listed(name, extra) && !IsCredential(name)
}

// listed reports whether name is a locale variable, a base name or one of
// the names in extra (a trailing * matches a prefix).
func listed(name string, extra []string) bool {
	if strings.HasPrefix(name, "LC_") {
		return true
	}
	if slices.Contains(baseNames(), name) {
		return true
	}
	for _, e := range extra {
		if p, ok := strings.CutSuffix(e, "*"); ok {
			if strings.HasPrefix(name, p) {
				return true
			}
		} else if name == e {
			return true
		}
	}
	return false
}

// Build returns the jail environment: the allowed variables of parent, then
// additions (which override), with every credential-like name dropped.
// extra are user-allowlisted names or NAME* prefixes.
func Build(parent []string, extra []string, additions []string) []string {
	idx := map[string]int{}
	var out []string
	put := func(kv string) {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || IsCredential(name) {
			return
		}
		if i, seen := idx[name]; seen {
			out[i] = kv
			return
		}
		idx[name] = len(out)
		out = append(out, kv)
	}
	for _, kv := range parent {
		if name, _, ok := strings.Cut(kv, "="); ok && Allowed(name, extra) {
			put(kv)
		}
	}
	for _, kv := range additions {
		put(kv)
	}
	return out
}
