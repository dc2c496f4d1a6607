package audit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"brig/agent/provider"
)

// Config is what a review needs.
type Config struct {
	Client provider.Client
	Model  provider.Model
	// Endpoint names where requests go (for the report's transparency
	// line): the base URL, or the provider's own.
	Endpoint string
	Focus    []Focus
	// ChunkTokens is the most a request may carry (estimated); 0 takes it
	// from the model's context window.
	ChunkTokens int
	// Parallel is how many parts are reviewed at once (default 3).
	Parallel int
	// Progress is told how the review goes; nil is quiet.
	Progress func(Progress)
	// Repo names the repository in prompts and the report.
	Repo string
}

// Stage is a step of an audit.
type Stage string

// The stages a Progress reports.
const (
	StageReview Stage = "review" // a part was sent, or its answer came
	StageRetry  Stage = "retry"  // an answer was not usable; asked again
	StageMerge  Stage = "merge"  // the parts' findings are being merged
)

// Progress is one step of a review.
type Progress struct {
	Stage     Stage
	Done      int // parts answered
	Total     int // parts
	SentBytes int // file text sent so far
	Tokens    int // tokens the provider counted so far (input + output)
	Note      string
}

// Report is everything the review found and what it cost, for the
// Markdown and SARIF renderings and the exit status.
type Report struct {
	Repo     string
	Focus    []Focus
	Provider provider.Name
	Model    string
	Endpoint string
	Summary  string
	Findings []Finding
	// Collection is what was collected (files sent, skipped entries).
	Collection *Collection
	Manifest   Manifest
	// Requests made (retries included), parts the files were sent in,
	// bytes of file text sent.
	Requests  int
	Parts     int
	SentBytes int64
	// Attempted counts the parts whose request left (answered or not)
	// and the file text they carried: what a failed audit may have sent.
	AttemptedParts int
	AttemptedBytes int64
	// PromptTokens estimates the tokens of everything sent; Usage is what
	// the provider counted.
	PromptTokens int
	Usage        provider.Usage
	Cost         float64
	// Notes are things the user should know about how the review went.
	Notes    []string
	Duration time.Duration
}

// AnswerError is a model answer that was not usable, even after a retry.
type AnswerError struct {
	Part   string // "the review", "part 2 of 5", "the merge"
	Reason string
	Answer string // the start of the last answer
}

func (e *AnswerError) Error() string {
	return fmt.Sprintf("the model's answer for %s is not the JSON brig asked for (%s), even after a retry; its answer began: %q", e.Part, e.Reason, e.Answer)
}

// outputTokens is the answer limit of a review request.
const outputTokens = 32000

// chunkBudget is the estimated size of one request, from the model's
// context window when not set.
func (cfg Config) chunkBudget() int {
	if cfg.ChunkTokens > 0 {
		return cfg.ChunkTokens
	}
	w := cfg.Model.ContextWindow
	if w <= 0 {
		w = 32000
	}
	budget := (w - outputTokens) * 3 / 5
	return max(min(budget, 100_000), 4000)
}

// reviewer runs the requests of one audit and adds up what they cost.
type reviewer struct {
	cfg      Config
	system   string
	progress func(Progress)

	mu        sync.Mutex
	requests  int
	usage     provider.Usage
	sent      int
	tokens    int
	done      int
	total     int
	attempted int // parts whose request left
	tried     int // and their file text
}

// Review sends the collection to the model (one request, or one per chunk
// and a merge) and returns the report.
func Review(ctx context.Context, cfg Config, col *Collection) (*Report, error) {
	start := time.Now()
	if cfg.Parallel <= 0 {
		cfg.Parallel = 3
	}
	if len(cfg.Focus) == 0 {
		cfg.Focus = AllFocus
	}
	r := &reviewer{cfg: cfg, system: SystemPrompt(cfg.Focus), progress: cfg.Progress}
	if r.progress == nil {
		r.progress = func(Progress) {}
	}
	rep := &Report{
		Repo: cfg.Repo, Focus: cfg.Focus, Provider: cfg.Client.Provider(), Model: cfg.Model.ID, Endpoint: cfg.Endpoint,
		Collection: col, Manifest: BuildManifest(col),
	}
	if len(col.Files) == 0 {
		rep.Summary = "Nothing was sent: the repository has no file that brig's rules let it send (see what was skipped)."
		rep.Duration = time.Since(start)
		return rep, nil
	}
	tag := nonce()
	manifest := rep.Manifest.Text(200)
	skipped := skippedText(col, 8)
	overhead := tokensOf(len(r.system)+len(manifest)+len(skipped)) + 500
	budget := max(cfg.chunkBudget()-overhead, 2000)
	chunks := makeChunks(col.Files, budget, tag)
	rep.Parts = len(chunks)
	r.total = len(chunks)
	answers := make([]Answer, len(chunks))
	prompts := make([]string, len(chunks))
	for i, c := range chunks {
		prompts[i] = userPrompt(cfg.Repo, manifest, skipped, c, i+1, len(chunks), tag)
		rep.PromptTokens += tokensOf(len(r.system) + len(prompts[i]))
	}
	r.progress(Progress{Stage: StageReview, Total: len(chunks)})
	err := r.each(ctx, len(chunks), func(ctx context.Context, i int) error {
		part := "the review"
		if len(chunks) > 1 {
			part = fmt.Sprintf("part %d of %d", i+1, len(chunks))
		}
		sent := 0
		for _, p := range chunks[i].pieces {
			sent += p.bytes
		}
		r.mu.Lock()
		r.attempted++
		r.tried += sent
		r.mu.Unlock()
		a, err := r.ask(ctx, part, prompts[i])
		if err != nil {
			return err
		}
		answers[i] = a
		r.mu.Lock()
		r.done++
		r.sent += sent
		pr := Progress{Stage: StageReview, Done: r.done, Total: r.total, SentBytes: r.sent, Tokens: r.tokens}
		r.mu.Unlock()
		r.progress(pr)
		return nil
	})
	r.finish(rep)
	if err != nil {
		rep.Duration = time.Since(start)
		return rep, err
	}
	var all []Finding
	for _, a := range answers {
		all = append(all, Locate(a.Findings, col)...)
	}
	rep.Findings = Merge(all)
	rep.Summary = answers[0].Summary
	if len(chunks) > 1 {
		if err := r.reduce(ctx, rep, answers, manifest, tag); err != nil {
			rep.Duration = time.Since(start)
			return rep, err
		}
	}
	r.finish(rep)
	rep.Duration = time.Since(start)
	return rep, nil
}

// reduce asks the model to merge the parts' findings; when they are too
// many to send back, they are merged by brig alone.
func (r *reviewer) reduce(ctx context.Context, rep *Report, answers []Answer, manifest, tag string) error {
	var summaries []string
	for _, a := range answers {
		summaries = append(summaries, a.Summary)
	}
	prompt := reducePrompt(r.cfg.Repo, manifest, len(answers), summaries, rep.Findings, tag)
	if tokensOf(len(r.system)+len(prompt)) > r.cfg.chunkBudget() {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the %d findings of the parts were too many to send back for merging: brig merged them itself (same rule or title at the same place), and the summary is the first part's", len(rep.Findings)))
		return nil
	}
	rep.PromptTokens += tokensOf(len(r.system) + len(prompt))
	r.progress(Progress{Stage: StageMerge, Done: r.done, Total: r.total, SentBytes: r.sent, Tokens: r.tokens})
	a, err := r.ask(ctx, "the merge", prompt)
	if err != nil {
		return err
	}
	rep.Summary = a.Summary
	rep.Findings = Merge(Locate(a.Findings, rep.Collection))
	return nil
}

func (r *reviewer) finish(rep *Report) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rep.Requests, rep.Usage = r.requests, r.usage
	rep.Cost = r.cfg.Model.Cost(r.usage)
	rep.SentBytes = int64(r.sent)
	rep.AttemptedParts, rep.AttemptedBytes = r.attempted, int64(r.tried)
}

// each runs f for 0..n-1, at most Parallel at once; the first error
// cancels the rest and is returned.
func (r *reviewer) each(ctx context.Context, n int, f func(context.Context, int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, r.cfg.Parallel)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for i := range n {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := f(ctx, i); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

// ask sends one request and parses the answer; an answer that is not the
// JSON asked for gets one more request that says what was wrong.
func (r *reviewer) ask(ctx context.Context, part, prompt string) (Answer, error) {
	msgs := []provider.Message{{Role: provider.User, Content: []provider.Block{provider.Text(prompt)}}}
	var last string
	for attempt := 0; attempt < 2; attempt++ {
		resp, err := r.send(ctx, msgs)
		if err != nil {
			return Answer{}, fmt.Errorf("%s: %w", part, err)
		}
		if resp.StopReason == provider.StopRefusal {
			return Answer{}, fmt.Errorf("%s: the model refused to review it", part)
		}
		text := resp.Message.PlainText()
		a, perr := ParseAnswer(text)
		if perr == nil {
			return a, nil
		}
		reason := perr.Error()
		if resp.StopReason == provider.StopMaxTokens {
			reason = "the answer was cut by the output limit before its end; report fewer findings with shorter descriptions"
		}
		last = reason
		if text == "" {
			text = "(empty)"
		}
		if attempt == 1 {
			return Answer{}, &AnswerError{Part: part, Reason: last, Answer: oneLineCap(text, 200)}
		}
		// Said only when it does ask again (the second failure ends it).
		r.progress(Progress{Stage: StageRetry, Done: r.done, Total: r.total, Note: part + ": " + reason})
		msgs = append(msgs,
			provider.Message{Role: provider.Assistant, Content: []provider.Block{provider.Text(text)}},
			provider.Message{Role: provider.User, Content: []provider.Block{provider.Text("Your answer could not be used: " + reason + ". Answer again with only the JSON object described in the instructions, nothing before or after it.")}},
		)
	}
	return Answer{}, errors.New("unreachable")
}

// send streams one request with no tools and adds up its usage.
func (r *reviewer) send(ctx context.Context, msgs []provider.Message) (provider.Response, error) {
	maxOut := outputTokens
	if m := r.cfg.Model.MaxOutput; m > 0 && m < maxOut {
		maxOut = m
	}
	req := provider.Request{Model: r.cfg.Model.ID, System: r.system, Messages: msgs, MaxTokens: maxOut}
	resp, err := r.cfg.Client.Stream(ctx, req, func(provider.Event) error { return nil })
	r.mu.Lock()
	r.requests++
	r.usage = r.usage.Add(resp.Usage)
	r.tokens = r.usage.Total()
	r.mu.Unlock()
	return resp, err
}
