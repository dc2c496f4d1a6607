package collect

import (
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	tests := []struct {
		name, path, in string
		gone           []string // must not survive
		kept           []string // must survive
		kinds          []string
	}{
		{"private key block", "deploy/key.txt", "x\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nQyNTUxOQAAACDW\n-----END OPENSSH PRIVATE KEY-----\ny\n",
			[]string{"b3BlbnNzaC1rZXktdjEAAAAA", "QyNTUxOQAAACDW"}, []string{"-----BEGIN OPENSSH PRIVATE KEY-----", "-----END OPENSSH PRIVATE KEY-----", "x\n", "y\n"}, []string{"private key"}},
		{"key block in a JSON string", "sa.json", `{"private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0B\n-----END PRIVATE KEY-----\n", "x": 1}`,
			[]string{"MIIEvQIBADANBgkqhkiG9w0B"}, []string{`"x": 1`}, []string{"private key"}},
		{"unterminated key block", "k.pem.txt", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nabcdef\n",
			[]string{"MIIEowIBAAKCAQEA", "abcdef"}, nil, []string{"private key"}},
		{"AWS key", "main.go", "id := \"AKIAIOSFODNN7EXAMPLE\"\n", []string{"AKIAIOSFODNN7EXAMPLE"}, []string{"id := "}, []string{"AWS access key"}},
		{"GitHub token in code", "ci.py", "requests.get(u, headers={'x': 'ghp_abcdefghijklmnopqrstuvwxyz0123456789'})\n", []string{"ghp_abcdefghijklmnopqrstuvwxyz0123456789"}, []string{"requests.get"}, []string{"GitHub token"}},
		{"Anthropic key", "notes.md", "use sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx to test\n", []string{"sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx"}, []string{"use ", " to test"}, []string{"Anthropic API key"}},
		{"OpenAI key", "a.js", "const k = process.env.K || 'sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78'\n", []string{"Ab12Cd34Ef56Gh78"}, []string{"process.env.K"}, nil},
		{"password in URL", "settings.py", "DATABASE_URL = 'postgres://app:hunter2hunter@db:5432/app'\n", []string{"hunter2hunter"}, []string{"postgres://app:", "@db:5432/app"}, nil},
		{"password assignment in code", "db.go", "password := \"s3cr3t-v@lue\"\n", []string{"s3cr3t-v@lue"}, []string{"password := \"" + Redacted + "\""}, []string{"secret assignment"}},
		{"JSON secret", "config.json", `{"client_secret": "abc123xyz789", "name": "demo"}`, []string{"abc123xyz789"}, []string{`"name": "demo"`}, nil},
		{".env value", ".env.production", "API_KEY=zq8Xk2LmP0\nDEBUG=true\n", []string{"zq8Xk2LmP0"}, []string{"API_KEY=" + Redacted, "DEBUG=true"}, nil},
		{"YAML value", "deploy/values.yaml", "db:\n  password: Tr0ub4dor&3\n  port: 5432\n", []string{"Tr0ub4dor&3"}, []string{"port: 5432"}, nil},
		{"XML value", "settings.xml", "<server><password>maven-pass-1</password></server>\n", []string{"maven-pass-1"}, []string{"<password>" + Redacted + "</password>"}, nil},
		{"JWT", "test.http", "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U\n", []string{"dozjgNryP4J3jVmNHl0w5N"}, []string{"Authorization: Bearer "}, []string{"JSON web token"}},
		// What is not a secret stays as it is.
		{"variable, not a secret", "db.go", "password := os.Getenv(\"DB_PASSWORD\")\ntoken = req.Header.Get(\"X-Token\")\n", nil, []string{"os.Getenv(\"DB_PASSWORD\")", "req.Header.Get(\"X-Token\")"}, nil},
		{"code assignment of a variable", "auth.py", "self.token = token\npassword = form.password\n", nil, []string{"self.token = token", "password = form.password"}, nil},
		{"placeholders", ".env.example", "API_KEY=\nTOKEN=${TOKEN}\nPASSWORD=changeme\nSECRET=<your secret>\n", nil, []string{"TOKEN=${TOKEN}", "PASSWORD=changeme", "SECRET=<your secret>"}, nil},
		{"numbers and flags", "app.yaml", "max_tokens: 4096\nuse_token: true\n", nil, []string{"max_tokens: 4096", "use_token: true"}, nil},
		{"token URL", "oauth.go", "const tokenURL = \"https://oauth2.example.com/token\"\n", nil, []string{"https://oauth2.example.com/token"}, nil},
		{"no digits, no key", "style.css", ".sk-some-very-long-css-class-name-here { color: red }\n", nil, []string{".sk-some-very-long-css-class-name-here"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, reds := Redact(tt.path, tt.in)
			if strings.Count(out, "\n") != strings.Count(tt.in, "\n") {
				t.Errorf("line count changed: %d → %d\n%s", strings.Count(tt.in, "\n"), strings.Count(out, "\n"), out)
			}
			for _, g := range tt.gone {
				if strings.Contains(out, g) {
					t.Errorf("%q survived:\n%s", g, out)
				}
			}
			for _, k := range tt.kept {
				if !strings.Contains(out, k) {
					t.Errorf("%q was lost:\n%s", k, out)
				}
			}
			if len(tt.gone) > 0 && len(reds) == 0 {
				t.Errorf("no redaction reported")
			}
			if len(tt.gone) == 0 && len(reds) != 0 {
				t.Errorf("redactions reported for clean text: %+v\n%s", reds, out)
			}
			for _, k := range tt.kinds {
				found := false
				for _, r := range reds {
					found = found || r.Kind == k
				}
				if !found {
					t.Errorf("kind %q not reported: %+v", k, reds)
				}
			}
			for _, r := range reds {
				if r.Line < 1 || r.Line > strings.Count(tt.in, "\n")+1 {
					t.Errorf("redaction on line %d of a %d-line text", r.Line, strings.Count(tt.in, "\n")+1)
				}
			}
		})
	}
}

// TestRedactLineNumbers: a redaction is reported on the line it was made.
func TestRedactLineNumbers(t *testing.T) {
	_, reds := Redact("a.go", "package a\n\nvar x = 1\nconst apiKey = \"zz9-plural-z-alpha\"\n")
	if len(reds) != 1 || reds[0].Line != 4 {
		t.Fatalf("redactions %+v, want one on line 4", reds)
	}
}

func FuzzRedactKeepsLines(f *testing.F) {
	for _, s := range []string{"password=abc\n", "-----BEGIN PRIVATE KEY-----\nx\n", "a\nb", "token: 'x'\r\n"} {
		f.Add("x.env", s)
	}
	f.Fuzz(func(t *testing.T, p, s string) {
		out, _ := Redact(p, s)
		if strings.Count(out, "\n") != strings.Count(s, "\n") {
			t.Fatalf("line count changed for %q: %q", s, out)
		}
	})
}
