package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"brig/internal/lazyre"
)

// Severity ranks a finding.
type Severity string

// The severities, highest first.
const (
	High   Severity = "high"
	Medium Severity = "medium"
	Low    Severity = "low"
)

// Rank orders severities: high 3, medium 2, low 1, anything else 0.
func (s Severity) Rank() int {
	switch s {
	case High:
		return 3
	case Medium:
		return 2
	case Low:
		return 1
	}
	return 0
}

// ParseSeverity reads a severity (as --fail-on takes it).
func ParseSeverity(s string) (Severity, error) {
	switch Severity(strings.ToLower(strings.TrimSpace(s))) {
	case High:
		return High, nil
	case Medium:
		return Medium, nil
	case Low:
		return Low, nil
	}
	return "", fmt.Errorf("severity %q: want high, medium or low", s)
}

// Focus is an area of review.
type Focus string

// The areas.
const (
	FocusSecurity    Focus = "security"
	FocusSupplyChain Focus = "supply-chain"
	FocusCorrectness Focus = "correctness"
)

// AllFocus is every area, in report order.
var AllFocus = []Focus{FocusSecurity, FocusSupplyChain, FocusCorrectness}

// ParseFocus reads --focus values (repeatable, comma-separated); none
// means every area.
func ParseFocus(values []string) ([]Focus, error) {
	var out []Focus
	for _, v := range values {
		for _, f := range strings.Split(v, ",") {
			f = strings.ToLower(strings.TrimSpace(f))
			switch Focus(f) {
			case FocusSecurity, FocusSupplyChain, FocusCorrectness:
				if !containsFocus(out, Focus(f)) {
					out = append(out, Focus(f))
				}
			case "supplychain", "supply_chain":
				if !containsFocus(out, FocusSupplyChain) {
					out = append(out, FocusSupplyChain)
				}
			case "":
			default:
				return nil, fmt.Errorf("--focus %q: want security, supply-chain or correctness", f)
			}
		}
	}
	if len(out) == 0 {
		return AllFocus, nil
	}
	sort.Slice(out, func(i, j int) bool { return focusIndex(out[i]) < focusIndex(out[j]) })
	return out, nil
}

func containsFocus(fs []Focus, f Focus) bool {
	for _, x := range fs {
		if x == f {
			return true
		}
	}
	return false
}

func focusIndex(f Focus) int {
	for i, x := range AllFocus {
		if x == f {
			return i
		}
	}
	return len(AllFocus)
}

// Finding is one problem the review found, checked against the collection.
type Finding struct {
	Title          string   `json:"title"`
	Severity       Severity `json:"severity"`
	Category       Focus    `json:"category"`
	RuleID         string   `json:"rule_id"`
	CWE            []string `json:"cwe,omitempty"`
	File           string   `json:"file,omitempty"`
	Line           int      `json:"line,omitempty"`
	EndLine        int      `json:"end_line,omitempty"`
	Excerpt        string   `json:"excerpt,omitempty"`
	Description    string   `json:"description"`
	Recommendation string   `json:"recommendation,omitempty"`
	// Unlocated: the model named a file the repository does not have (or
	// none); the finding keeps its text but points nowhere.
	Unlocated bool `json:"unlocated,omitempty"`
}

// Answer is what the model must reply: a summary and the findings.
type Answer struct {
	Summary  string    `json:"summary"`
	Findings []Finding `json:"findings"`
}

// maxFindings bounds the findings taken from one answer.
const maxFindings = 200

// rawAnswer is the answer as the model wrote it; numbers may arrive as
// strings and a CWE list as one string.
type rawAnswer struct {
	Summary  *string       `json:"summary"`
	Findings *[]rawFinding `json:"findings"`
}

type rawFinding struct {
	Title          string   `json:"title"`
	Severity       string   `json:"severity"`
	Category       string   `json:"category"`
	RuleID         string   `json:"rule_id"`
	CWE            flexList `json:"cwe"`
	File           string   `json:"file"`
	Line           flexInt  `json:"line"`
	EndLine        flexInt  `json:"end_line"`
	Excerpt        string   `json:"excerpt"`
	Description    string   `json:"description"`
	Recommendation string   `json:"recommendation"`
}

// flexInt takes 12, "12" or null.
type flexInt int

func (n *flexInt) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `" `)
	if s == "" || s == "null" {
		*n = 0
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("%s is not a line number", b)
	}
	*n = flexInt(int(v))
	return nil
}

// flexList takes ["a","b"], "a" or null.
type flexList []string

func (l *flexList) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		if one != "" {
			*l = flexList{one}
		}
		return nil
	}
	var many []any
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("%s is not a list of CWE ids", b)
	}
	for _, v := range many {
		*l = append(*l, fmt.Sprint(v))
	}
	return nil
}

// ParseAnswer reads a model's answer: one JSON object (surrounding prose
// or a Markdown fence are tolerated) with a findings list whose entries
// each have a title and a severity. The error says what was wrong, for
// the retry and for the user.
func ParseAnswer(text string) (Answer, error) {
	js := extractJSON(text)
	if js == "" {
		return Answer{}, errors.New("the answer holds no JSON object")
	}
	var raw rawAnswer
	dec := json.NewDecoder(strings.NewReader(js))
	if err := dec.Decode(&raw); err != nil {
		return Answer{}, fmt.Errorf("the answer is not valid JSON: %v", err)
	}
	if raw.Findings == nil {
		return Answer{}, errors.New(`the answer has no "findings" list`)
	}
	a := Answer{}
	if raw.Summary != nil {
		a.Summary = cleanText(*raw.Summary, 4000)
	}
	var problems []string
	for i, rf := range *raw.Findings {
		if i == maxFindings {
			break
		}
		f, err := rf.finding()
		if err != nil {
			problems = append(problems, fmt.Sprintf("finding %d: %v", i+1, err))
			continue
		}
		a.Findings = append(a.Findings, f)
	}
	if len(problems) > 0 {
		if len(problems) > 5 {
			problems = append(problems[:5], fmt.Sprintf("and %d more", len(problems)-5))
		}
		return Answer{}, errors.New(strings.Join(problems, "; "))
	}
	return a, nil
}

// extractJSON finds the JSON object in an answer.
func extractJSON(text string) string {
	text = strings.TrimSpace(text)
	// The outermost braces first: a fence inside one of the answer's
	// strings (an excerpt quoting Markdown) cut the object short, and the
	// review failed (red team, 2026-12-03).
	whole := braces(text)
	if json.Valid([]byte(whole)) {
		return whole
	}
	if i := strings.Index(text, "```"); i >= 0 {
		rest := text[i+3:]
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
			rest = rest[nl+1:]
		}
		if j := strings.LastIndex(rest, "```"); j >= 0 {
			rest = rest[:j]
		}
		if strings.Contains(rest, "{") {
			return braces(strings.TrimSpace(rest))
		}
	}
	return whole
}

// braces is text from its first { to its last }, or "".
func braces(text string) string {
	start := strings.IndexByte(text, '{')
	end := strings.LastIndexByte(text, '}')
	if start < 0 || end < start {
		return ""
	}
	return text[start : end+1]
}

var (
	cweID   = lazyre.New(`(?i)^(?:cwe)?[-_ ]?(\d{1,4})$`)
	ruleBad = lazyre.New(`[^a-z0-9]+`)
)

// finding checks and normalises one finding.
func (rf rawFinding) finding() (Finding, error) {
	f := Finding{
		Title:          cleanLine(rf.Title, 200),
		File:           strings.TrimSpace(rf.File),
		Line:           max(int(rf.Line), 0),
		EndLine:        max(int(rf.EndLine), 0),
		Excerpt:        cleanText(rf.Excerpt, 600),
		Description:    cleanText(rf.Description, 4000),
		Recommendation: cleanText(rf.Recommendation, 2000),
	}
	if f.Title == "" {
		return f, errors.New(`"title" is missing`)
	}
	switch s := strings.ToLower(strings.TrimSpace(rf.Severity)); s {
	case "critical", "high", "error":
		f.Severity = High
	case "medium", "moderate", "warning":
		f.Severity = Medium
	case "low", "info", "informational", "note":
		f.Severity = Low
	default:
		return f, fmt.Errorf(`"severity" %q is not high, medium or low`, rf.Severity)
	}
	switch c := strings.ToLower(strings.TrimSpace(rf.Category)); {
	case strings.Contains(c, "supply"):
		f.Category = FocusSupplyChain
	case strings.Contains(c, "correct") || c == "bug" || c == "reliability":
		f.Category = FocusCorrectness
	default:
		f.Category = FocusSecurity
	}
	for _, c := range rf.CWE {
		if m := cweID().FindStringSubmatch(strings.TrimSpace(c)); m != nil {
			n, _ := strconv.Atoi(m[1])
			id := fmt.Sprintf("CWE-%d", n)
			if !containsString(f.CWE, id) {
				f.CWE = append(f.CWE, id)
			}
		}
	}
	// The report names a rule category/id: a model that wrote the
	// category into its id (supply-chain/curl-pipe-sh) would get it twice.
	f.RuleID = ruleSlug(strings.TrimPrefix(strings.TrimSpace(rf.RuleID), string(f.Category)+"/"))
	if f.RuleID == "" {
		f.RuleID = ruleSlug(f.Title)
	}
	if f.EndLine < f.Line {
		f.EndLine = 0
	}
	return f, nil
}

// ruleSlug is a rule id: lower case, words joined by dashes, at most 60
// bytes.
func ruleSlug(s string) string {
	s = strings.Trim(ruleBad().ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(s) > 60 {
		s = strings.TrimRight(s[:60], "-")
	}
	return s
}

func containsString(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// cleanText keeps text the model or the repository wrote fit for a
// Markdown file and a terminal: control characters other than newlines and
// tabs are shown as symbols (ESC as ␛), the bidirectional controls that
// can make code read differently from what runs as ⟨U+202E⟩, invalid
// UTF-8 as U+FFFD; and it is capped at n bytes.
func cleanText(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20:
			b.WriteRune(0x2400 + r)
		case r == 0x7f:
			b.WriteRune('␡')
		case r >= 0x80 && r < 0xa0:
			b.WriteRune('\uFFFD')
		case r == '\u2028' || r == '\u2029' || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) || r == '\u200E' || r == '\u200F' || r == '\u061C':
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
		default:
			b.WriteRune(r)
		}
	}
	s = strings.TrimSpace(b.String())
	if len(s) > n {
		cut := n
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// cleanLine is cleanText on one line.
func cleanLine(s string, n int) string {
	return cleanText(strings.Join(strings.Fields(cleanText(s, 4*n)), " "), n)
}

// Locate checks findings against the collection: the file must be one of
// the repository's (a path the model made up points nowhere), the line
// within the file, and the excerpt is taken from the text that was sent
// (a line off by a few is corrected when the model's excerpt is found
// nearby or only once in the file).
func Locate(fs []Finding, c *Collection) []Finding {
	files := map[string]*File{}
	for i := range c.Files {
		files[c.Files[i].Path] = &c.Files[i]
	}
	known := map[string]bool{}
	for _, s := range c.Skipped {
		known[s.Path] = true
	}
	out := make([]Finding, 0, len(fs))
	for _, f := range fs {
		p := normPath(f.File)
		file := files[p]
		switch {
		case file != nil:
			f.File = p
			locateLine(&f, file)
		case p != "" && known[p]:
			f.File, f.Line, f.EndLine = p, 0, 0
		default:
			f.Unlocated, f.Line, f.EndLine = true, 0, 0
		}
		out = append(out, f)
	}
	return out
}

// normPath turns a path as a model writes it into the collection's form.
func normPath(p string) string {
	p = strings.TrimSpace(strings.ReplaceAll(p, "\\", "/"))
	p = strings.TrimPrefix(p, "./")
	p = strings.TrimLeft(p, "/")
	if p == "" {
		return ""
	}
	p = path.Clean(p)
	if p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return ""
	}
	return p
}

// locateLine fixes a finding's line and excerpt from the file's text.
func locateLine(f *Finding, file *File) {
	lines := strings.Split(strings.TrimSuffix(file.Text, "\n"), "\n")
	want := firstLine(strings.TrimSpace(f.Excerpt))
	want = strings.TrimSpace(strings.TrimLeft(want, "0123456789\t|: ")) // a quoted line number
	has := func(n int) bool {
		return n >= 1 && n <= len(lines) && want != "" && strings.Contains(lines[n-1], want)
	}
	if want != "" && !has(f.Line) {
		// Nearby first, then a single occurrence anywhere.
		fixed := 0
		for d := 1; d <= 3 && fixed == 0; d++ {
			if has(f.Line - d) {
				fixed = f.Line - d
			} else if has(f.Line + d) {
				fixed = f.Line + d
			}
		}
		if fixed == 0 {
			var at []int
			for i := range lines {
				if has(i + 1) {
					at = append(at, i+1)
				}
			}
			if len(at) == 1 {
				fixed = at[0]
			}
		}
		if fixed != 0 {
			if f.EndLine > 0 {
				f.EndLine += fixed - f.Line
			}
			f.Line = fixed
		}
	}
	if f.Line > len(lines) {
		f.Line, f.EndLine = 0, 0
	}
	if f.EndLine > len(lines) {
		f.EndLine = len(lines)
	}
	if f.Line == 0 {
		return
	}
	last := f.Line
	if f.EndLine > f.Line {
		last = min(f.EndLine, f.Line+2)
	}
	f.Excerpt = cleanText(strings.Join(lines[f.Line-1:last], "\n"), 600)
}

// Merge sorts findings (severity, then file and line) and drops
// duplicates: the same rule at the same place, or the same title at the
// same place; the higher severity and every CWE are kept.
func Merge(fs []Finding) []Finding {
	type key struct{ file, id string }
	var out []Finding
	seen := map[key]int{}
	for _, f := range fs {
		where := fmt.Sprintf("%s:%d", f.File, f.Line)
		keys := []key{{where, "rule:" + f.RuleID}, {where, "title:" + strings.ToLower(f.Title)}}
		dup := -1
		for _, k := range keys {
			if i, ok := seen[k]; ok {
				dup = i
				break
			}
		}
		if dup < 0 {
			out = append(out, f)
			for _, k := range keys {
				seen[k] = len(out) - 1
			}
			continue
		}
		d := &out[dup]
		if f.Severity.Rank() > d.Severity.Rank() {
			d.Severity = f.Severity
		}
		for _, c := range f.CWE {
			if !containsString(d.CWE, c) {
				d.CWE = append(d.CWE, c)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Severity.Rank() != b.Severity.Rank() {
			return a.Severity.Rank() > b.Severity.Rank()
		}
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	return out
}

// findingsJSON is findings as the reduce request shows them to the model.
func findingsJSON(fs []Finding) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(fs)
	return strings.TrimSpace(b.String())
}
