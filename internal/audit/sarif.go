package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"strings"
)

// SARIFSchema is the schema the SARIF output declares (the OASIS 2.1.0
// schema, errata 01, as GitHub code scanning takes it).
const SARIFSchema = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool        sarifTool          `json:"tool"`
	Invocations []sarifInvocation  `json:"invocations"`
	Results     []sarifResult      `json:"results"`
	Properties  map[string]any     `json:"properties,omitempty"`
	Automation  *sarifAutomationID `json:"automationDetails,omitempty"`
}

type sarifAutomationID struct {
	ID string `json:"id"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name     string      `json:"name"`
	FullName string      `json:"fullName,omitempty"`
	Version  string      `json:"version,omitempty"`
	Rules    []sarifRule `json:"rules"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifMarkdown struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown,omitempty"`
}

type sarifRule struct {
	ID               string         `json:"id"`
	Name             string         `json:"name,omitempty"`
	ShortDescription sarifText      `json:"shortDescription"`
	FullDescription  sarifText      `json:"fullDescription"`
	Help             *sarifMarkdown `json:"help,omitempty"`
	Default          sarifConfig    `json:"defaultConfiguration"`
	Properties       map[string]any `json:"properties"`
}

type sarifConfig struct {
	Level string `json:"level"`
}

type sarifInvocation struct {
	ExecutionSuccessful bool `json:"executionSuccessful"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             sarifText         `json:"message"`
	Locations           []sarifLocation   `json:"locations,omitempty"`
	PartialFingerprints map[string]string `json:"partialFingerprints,omitempty"`
	Properties          map[string]any    `json:"properties,omitempty"`
}

type sarifLocation struct {
	Physical sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	Artifact sarifArtifact `json:"artifactLocation"`
	Region   *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId,omitempty"`
}

type sarifRegion struct {
	StartLine int        `json:"startLine"`
	EndLine   int        `json:"endLine,omitempty"`
	Snippet   *sarifText `json:"snippet,omitempty"`
}

// level is a severity as a SARIF level.
func (s Severity) level() string {
	switch s {
	case High:
		return "error"
	case Medium:
		return "warning"
	}
	return "note"
}

// securitySeverity is the score GitHub code scanning shows for a security
// rule (critical is 9.0 and up; high 7.0–8.9; medium 4.0–6.9; low below).
func (s Severity) securitySeverity() string {
	switch s {
	case High:
		return "8.0"
	case Medium:
		return "5.5"
	}
	return "3.0"
}

// SARIF renders the report as a SARIF 2.1.0 log for GitHub code scanning
// and other tools: one rule per kind of problem (its id is the area and the
// model's rule id), with the findings' highest severity, its CWE tags and
// a security-severity score; one result per finding with its location
// relative to the repository root. version is brig's.
func (r *Report) SARIF(version string) ([]byte, error) {
	run := sarifRun{
		Tool:        sarifTool{Driver: sarifDriver{Name: "brig", FullName: "brig audit", Version: version, Rules: []sarifRule{}}},
		Invocations: []sarifInvocation{{ExecutionSuccessful: true}},
		Results:     []sarifResult{},
		Automation:  &sarifAutomationID{ID: "brig-audit/"},
		Properties: map[string]any{
			"provider": string(r.Provider), "model": r.Model, "requests": r.Requests,
			"bytesSent": r.SentBytes, "summary": cleanText(r.Summary, 4000), "sent": r.Transparency(),
		},
	}
	if r.Collection != nil {
		run.Properties["filesSent"] = len(r.Collection.Files)
		run.Properties["entriesSkipped"] = len(r.Collection.Skipped)
	}
	index := map[string]int{}
	for _, f := range r.Findings {
		id := f.Category.rule(f.RuleID)
		i, ok := index[id]
		if !ok {
			i = len(run.Tool.Driver.Rules)
			index[id] = i
			rule := sarifRule{
				ID: id, Name: ruleName(f.RuleID),
				ShortDescription: sarifText{Text: f.Title},
				FullDescription:  sarifText{Text: firstNonEmpty(f.Description, f.Title)},
				Default:          sarifConfig{Level: f.Severity.level()},
				Properties: map[string]any{
					"tags":              ruleTags(f),
					"precision":         "medium",
					"problem.severity":  f.Severity.level(),
					"security-severity": f.Severity.securitySeverity(),
				},
			}
			if f.Recommendation != "" {
				rule.Help = &sarifMarkdown{Text: f.Recommendation, Markdown: mdText(f.Recommendation)}
			}
			run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, rule)
		} else {
			// The rule's level and score are its worst finding's.
			rule := &run.Tool.Driver.Rules[i]
			if f.Severity.Rank() > levelRank(rule.Default.Level) {
				rule.Default.Level = f.Severity.level()
				rule.Properties["problem.severity"] = f.Severity.level()
				rule.Properties["security-severity"] = f.Severity.securitySeverity()
			}
			tags := rule.Properties["tags"].([]string)
			for _, t := range ruleTags(f) {
				if !containsString(tags, t) {
					tags = append(tags, t)
				}
			}
			rule.Properties["tags"] = tags
		}
		msg := f.Title
		if f.Description != "" {
			msg += ". " + f.Description
		}
		if f.Recommendation != "" {
			msg += " Fix: " + f.Recommendation
		}
		res := sarifResult{
			RuleID: id, RuleIndex: i, Level: f.Severity.level(), Message: sarifText{Text: msg},
			PartialFingerprints: map[string]string{"brigFinding/v1": fingerprint(id, f)},
			Properties:          map[string]any{"severity": string(f.Severity)},
		}
		if f.File != "" && !f.Unlocated {
			loc := sarifLocation{Physical: sarifPhysical{Artifact: sarifArtifact{URI: fileURI(f.File), URIBaseID: "%SRCROOT%"}}}
			if f.Line > 0 {
				reg := &sarifRegion{StartLine: f.Line}
				if f.EndLine > f.Line {
					reg.EndLine = f.EndLine
				}
				if f.Excerpt != "" {
					reg.Snippet = &sarifText{Text: f.Excerpt}
				}
				loc.Physical.Region = reg
			}
			res.Locations = []sarifLocation{loc}
		}
		run.Results = append(run.Results, res)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(sarifLog{Schema: SARIFSchema, Version: "2.1.0", Runs: []sarifRun{run}}); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func levelRank(level string) int {
	switch level {
	case "error":
		return 3
	case "warning":
		return 2
	}
	return 1
}

// ruleTags are a finding's tags as GitHub reads them: "security" (which
// makes it show the security-severity), the area, and CWE ids as
// external/cwe/cwe-N.
func ruleTags(f Finding) []string {
	tags := []string{}
	if f.Category != FocusCorrectness {
		tags = append(tags, "security")
	}
	if f.Category != FocusSecurity {
		tags = append(tags, string(f.Category))
	}
	for _, c := range f.CWE {
		if t := "external/cwe/" + strings.ToLower(c); !containsString(tags, t) {
			tags = append(tags, t)
		}
	}
	return tags
}

// ruleName is a rule id in the PascalCase SARIF suggests for names.
func ruleName(id string) string {
	var b strings.Builder
	for _, w := range strings.Split(id, "-") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}

// fileURI is a workspace-relative path as a URI reference.
func fileURI(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// fingerprint identifies a finding across runs whatever its line: the
// rule, the file and the excerpt's text.
func fingerprint(rule string, f Finding) string {
	sum := sha256.Sum256([]byte(rule + "\x00" + f.File + "\x00" + strings.Join(strings.Fields(f.Excerpt), " ") + "\x00" + strings.ToLower(f.Title)))
	return hex.EncodeToString(sum[:12])
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
