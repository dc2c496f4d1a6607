package audit

import (
	"fmt"
	"sort"
	"strings"

	"brig/internal/audit/collect"
)

// Counts counts findings by severity.
func (r *Report) Counts() map[Severity]int {
	out := map[Severity]int{}
	for _, f := range r.Findings {
		out[f.Severity]++
	}
	return out
}

// AtLeast counts the findings of severity s or higher.
func (r *Report) AtLeast(s Severity) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity.Rank() >= s.Rank() {
			n++
		}
	}
	return n
}

// Transparency is the line that says what left the machine: how many files
// and bytes went to which provider and model at which endpoint, in how many
// requests, the tokens counted, and what was redacted.
func (r *Report) Transparency() string {
	files := 0
	if r.Collection != nil {
		files = len(r.Collection.Files)
	}
	if r.Requests == 0 {
		return fmt.Sprintf("Nothing was sent to %s: no request was made.", r.Provider)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s of text from %d files went to %s (model %s, %s) in %d request%s",
		Size(r.SentBytes), files, r.Provider, r.Model, r.Endpoint, r.Requests, plural(r.Requests))
	if r.Parts > 1 {
		fmt.Fprintf(&b, " (%d parts and a merge)", r.Parts)
	}
	fmt.Fprintf(&b, ", about %s tokens with brig's prompts; the provider counted %s tokens in and %s out",
		thousands(r.PromptTokens), thousands(r.Usage.Input+r.Usage.CacheRead+r.Usage.CacheWrite), thousands(r.Usage.Output))
	if r.Cost > 0 {
		fmt.Fprintf(&b, " ($%.4f)", r.Cost)
	}
	b.WriteString(". ")
	if r.Collection != nil {
		if values, in := r.Collection.Redactions(); values > 0 {
			verb := "were"
			if values == 1 {
				verb = "was"
			}
			fmt.Fprintf(&b, "%d secret-looking value%s in %d file%s %s replaced by %s before sending. ", values, plural(values), in, plural(in), verb, collect.Redacted)
		}
	}
	b.WriteString("No tools were offered to the model; nothing else left this machine.")
	return b.String()
}

// Stopped says what an audit that failed may have sent: the requests that
// left and the file text they carried (a request that failed may or may not
// have reached the provider).
func (r *Report) Stopped() string {
	if r.Requests == 0 {
		return fmt.Sprintf("no request reached %s.", r.Provider)
	}
	return fmt.Sprintf("%d request%s left for %s (model %s, %s), carrying up to %s of file text from %d of %d part%s; the provider counted %s tokens in and %s out.",
		r.Requests, plural(r.Requests), r.Provider, r.Model, r.Endpoint, Size(r.AttemptedBytes), r.AttemptedParts, r.Parts, plural(r.Parts),
		thousands(r.Usage.Input+r.Usage.CacheRead+r.Usage.CacheWrite), thousands(r.Usage.Output))
}

// Markdown renders the report.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# brig audit: %s\n\n", mdText(r.Repo))
	if r.Summary != "" {
		fmt.Fprintf(&b, "%s\n\n", quoted("The model's summary", r.Summary))
	}
	fmt.Fprintf(&b, "> **Sent.** %s\n\n", mdText(r.Transparency()))
	var focus []string
	for _, f := range r.Focus {
		focus = append(focus, string(f))
	}
	fmt.Fprintf(&b, "Focus: %s · %s\n\n", strings.Join(focus, ", "), r.Duration.Round(100_000_000))
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "Note: %s\n\n", mdText(n))
	}

	c := r.Counts()
	if len(r.Findings) == 0 {
		b.WriteString("## Findings: none\n\nThe model reported no problem in what it was sent. That is not a proof: check what was not sent below.\n\n")
	} else {
		fmt.Fprintf(&b, "## Findings: %d high, %d medium, %d low\n\n", c[High], c[Medium], c[Low])
	}
	n := 0
	for _, sev := range []Severity{High, Medium, Low} {
		if c[sev] == 0 {
			continue
		}
		fmt.Fprintf(&b, "### %s\n\n", strings.ToUpper(string(sev[:1]))+string(sev[1:]))
		for _, f := range r.Findings {
			if f.Severity != sev {
				continue
			}
			n++
			fmt.Fprintf(&b, "**%d. %s**", n, mdText(f.Title))
			if loc := f.Location(); loc != "" {
				fmt.Fprintf(&b, " — `%s`", cell(loc)) // a file name is the repository's: made inert
			} else if f.Unlocated {
				b.WriteString(" — (no file of the repository)")
			}
			b.WriteString("  \n")
			meta := []string{string(f.Category), "`" + f.Category.rule(f.RuleID) + "`"}
			meta = append(meta, f.CWE...)
			fmt.Fprintf(&b, "%s\n\n", strings.Join(meta, " · "))
			if f.Excerpt != "" {
				b.WriteString(fence(f.Excerpt))
			}
			if f.Description != "" {
				fmt.Fprintf(&b, "%s\n\n", mdBlock(f.Description))
			}
			if f.Recommendation != "" {
				fmt.Fprintf(&b, "*Fix:* %s\n\n", mdBlock(f.Recommendation))
			}
		}
	}

	m := r.Manifest
	var runs []ManifestEntry
	for _, e := range m.Entries {
		if e.Role == RoleRuns || e.Role == RoleCI || e.Role == RoleBuild {
			runs = append(runs, e)
		}
	}
	if len(runs) > 0 || len(m.Scripts) > 0 {
		b.WriteString("## What runs on checkout, install, build or commit\n\n")
		if len(runs) > 0 {
			b.WriteString("| file | what runs it | sent |\n| --- | --- | --- |\n")
			for _, e := range runs {
				sent := "yes"
				if !e.Sent {
					sent = "no"
				}
				fmt.Fprintf(&b, "| `%s` | %s | %s |\n", cell(e.Path), cell(e.Why), sent)
			}
			b.WriteString("\n")
		}
		if len(m.Scripts) > 0 {
			b.WriteString("Scripts and generators:\n\n")
			for _, s := range m.Scripts {
				fmt.Fprintf(&b, "- `%s` %s: `%s` (%s)\n", cell(s.File), mdText(s.Name), strings.ReplaceAll(oneLineCap(cleanText(s.Command, 400), 300), "`", "'"), s.When)
			}
			b.WriteString("\n")
		}
	}
	if len(m.Languages) > 0 {
		var ls []string
		for _, l := range m.Languages {
			ls = append(ls, fmt.Sprintf("%s (%d file%s)", l.Name, l.Files, plural(l.Files)))
		}
		fmt.Fprintf(&b, "Languages: %s.\n\n", strings.Join(ls, ", "))
	}
	r.skippedMarkdown(&b)
	return b.String()
}

// maxSkippedShown bounds the skipped paths the report lists one by one.
const maxSkippedShown = 300

// skippedMarkdown lists what was not sent, by reason.
func (r *Report) skippedMarkdown(b *strings.Builder) {
	if r.Collection == nil || len(r.Collection.Skipped) == 0 {
		return
	}
	byReason := map[string][]Skip{}
	for _, s := range r.Collection.Skipped {
		byReason[s.Reason] = append(byReason[s.Reason], s)
	}
	var reasons []string
	for k := range byReason {
		reasons = append(reasons, k)
	}
	sort.Slice(reasons, func(i, j int) bool {
		if len(byReason[reasons[i]]) != len(byReason[reasons[j]]) {
			return len(byReason[reasons[i]]) > len(byReason[reasons[j]])
		}
		return reasons[i] < reasons[j]
	})
	fmt.Fprintf(b, "## Not sent (%d entr%s)\n\n", len(r.Collection.Skipped), map[bool]string{true: "y", false: "ies"}[len(r.Collection.Skipped) == 1])
	b.WriteString("| reason | entries |\n| --- | --- |\n")
	for _, k := range reasons {
		fmt.Fprintf(b, "| %s | %d |\n", cell(k), len(byReason[k]))
	}
	b.WriteString("\n| path | reason |\n| --- | --- |\n")
	shown := 0
	for _, k := range reasons {
		for _, s := range byReason[k] {
			if shown == maxSkippedShown {
				break
			}
			shown++
			p := s.Path
			if s.Dir {
				p += "/"
			}
			why := s.Reason
			if s.Exec {
				why += ", executable"
			}
			if s.Detail != "" {
				why += " (" + s.Detail + ")"
			}
			fmt.Fprintf(b, "| `%s` | %s |\n", cell(p), cell(why))
		}
	}
	if len(r.Collection.Skipped) > shown {
		fmt.Fprintf(b, "\n… and %d more entries.\n", len(r.Collection.Skipped)-shown)
	}
	b.WriteString("\n")
}

// Location is file:line (or file) of a finding.
func (f Finding) Location() string {
	switch {
	case f.File == "" || f.Unlocated:
		return ""
	case f.Line > 0 && f.EndLine > f.Line:
		return fmt.Sprintf("%s:%d-%d", f.File, f.Line, f.EndLine)
	case f.Line > 0:
		return fmt.Sprintf("%s:%d", f.File, f.Line)
	}
	return f.File
}

// rule is the full rule id of a finding: its area and its kind.
func (f Focus) rule(id string) string { return string(f) + "/" + id }

// mdText is text from the model or the repository in Markdown prose: made
// inert and with HTML tags shown rather than interpreted.
func mdText(s string) string {
	s = cleanText(s, 1<<20)
	return strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(s)
}

// mdBlock is the model's text as paragraphs that cannot pass for the
// report's own structure: a line that would start a heading, a rule or a
// setext underline (## Findings: none, ---) is escaped, so a prompt
// injected in the repository cannot forge a section of the report.
func mdBlock(s string) string {
	lines := strings.Split(mdText(s), "\n")
	for i, l := range lines {
		t := strings.TrimLeft(l, " \t")
		if t == "" {
			continue
		}
		switch t[0] {
		case '#', '=', '-', '*', '_', '+':
			lines[i] = "\\" + t
		}
	}
	return strings.Join(lines, "\n")
}

// quoted is the model's text as a block quote under a label saying whose
// words they are.
func quoted(label, s string) string {
	lines := strings.Split(mdBlock(s), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight("> "+l, " ")
	}
	return "> *" + label + ":*\n>\n" + strings.Join(lines, "\n")
}

// cell is text in a table cell.
func cell(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ", "`", "'").Replace(mdText(s))
}

// fence is a code block that the text cannot close early.
func fence(s string) string {
	ticks := "```"
	for strings.Contains(s, ticks) {
		ticks += "`"
	}
	return ticks + "\n" + s + "\n" + ticks + "\n\n"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// thousands writes 52340 as 52,340.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
