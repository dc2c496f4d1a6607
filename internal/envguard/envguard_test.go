package envguard

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestIsCredential(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"ANTHROPIC_API_KEY", true},
		{"OPENAI_API_KEY", true},
		{"GITHUB_TOKEN", true},
		{"AWS_ACCESS_KEY_ID", true},
		{"SSH_AUTH_SOCK", true},
		{"MY_DB_PASSWORD", true},
		{"npm_config__authToken", true},
		{"PATH", false},
		{"HOME", false},
		{"LANG", false},
		{"LC_ALL", false},
		{"GOCACHE", false},
		{"KEYBOARD", false},
		{"GPG_KEY_ID", true},
		{"OPENAI_APIKEY", true},
		{"DB_SECRETS_FILE", true},
		{"MYPASSWORDFILE", true},
		{"npm_config_cache", false},
		{"NPM_TOKEN", true},
		// The path of a CA bundle (public certificates) is not a
		// credential, whatever family it belongs to …
		{"AWS_CA_BUNDLE", false},
		{"CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE", false},
		{"REQUESTS_CA_BUNDLE", false},
		{"CURL_CA_BUNDLE", false},
		{"NODE_EXTRA_CA_CERTS", false},
		{"SSL_CERT_FILE", false},
		{"SSL_CERT_DIR", false},
		{"VAULT_CACERT", false},
		{"KUBE_CA_FILE", false},
		{"GIT_SSL_CAINFO", false},
		// … unless a credential word comes before the suffix, and a
		// client certificate or key, or the rest of a family, still is.
		{"MY_TOKEN_CA_FILE", true},
		{"DB_PASSWORD_CA_BUNDLE", true},
		{"AWS_SESSION_CA_BUNDLE", true},
		{"VAULT_CLIENT_KEY", true},
		{"VAULT_CLIENT_CERT", true},
		{"DOCKER_CERT_PATH", true},
		{"AWS_CA_BUNDLE_KEY", true},
		{"CA_KEY_FILE", true},
	} {
		if got := IsCredential(tc.name); got != tc.want {
			t.Errorf("IsCredential(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestBuildDropsCredentialsEvenWhenAllowlisted(t *testing.T) {
	parent := []string{
		"PATH=/usr/bin", "HOME=/home/u", "LC_ALL=C", "EDITOR=vi",
		"GITHUB_TOKEN=canary", "MY_API_KEY=canary", "SSH_AUTH_SOCK=/tmp/agent",
		"RANDOM_THING=x",
	}
	// The user allowlists everything starting with GITHUB_ and MY_: the
	// credential rule still wins.
	got := Build(parent, []string{"GITHUB_*", "MY_*", "EDITOR"}, []string{"TMPDIR=/tmp", "HOME=/override", "X_SECRET=1"})
	want := []string{"PATH=/usr/bin", "HOME=/override", "LC_ALL=C", "EDITOR=vi", "TMPDIR=/tmp"}
	if !slices.Equal(got, want) {
		t.Fatalf("Build = %q, want %q", got, want)
	}
	if strings.Contains(strings.Join(got, "\n"), "canary") {
		t.Fatal("a credential value crossed")
	}
	// A CA bundle crosses when allowlisted; the rest of the AWS_ family does not.
	if got := Build([]string{"AWS_CA_BUNDLE=/etc/ca.pem", "AWS_REGION=x"}, []string{"AWS_*"}, nil); !slices.Equal(got, []string{"AWS_CA_BUNDLE=/etc/ca.pem"}) {
		t.Fatalf("Build with AWS_* allowlisted = %q", got)
	}
	// Control: a non-credential allowlisted name does cross.
	if !slices.Contains(Build([]string{"RANDOM_THING=x"}, []string{"RANDOM_*"}, nil), "RANDOM_THING=x") {
		t.Fatal("an allowlisted prefix did not cross")
	}
}

// BenchmarkBuild filters an environment of a user's size (60 variables,
// few of which cross), as every call's grant does.
func BenchmarkBuild(b *testing.B) {
	var env []string
	for i := range 60 {
		env = append(env, fmt.Sprintf("SOME_VARIABLE_NAME_%d=value-%d", i, i))
	}
	env = append(env, "PATH=/usr/bin", "HOME=/home/u", "LANG=C.UTF-8", "OPENAI_API_KEY=sk-x")
	for b.Loop() {
		Build(env, []string{"EDITOR"}, []string{"TMPDIR=/tmp", "GOCACHE=/cache"})
	}
}
