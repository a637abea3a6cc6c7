package compaction

import (
	"context"

	"github.com/pi-lsp/pi-lsp/internal/llm"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// ModelSummarizer summarizes with a model over its API: each summary's prompt is built
// here (SystemPrompt, BuildPrompt) and sent through an llm.Client, which knows the model,
// its credential and the bounds of a request.
type ModelSummarizer struct {
	client *llm.Client
	// thinkingLevel is the session's thinking level (Pi's this.thinkingLevel); "" uses
	// each request's.
	thinkingLevel string
}

// NewModelSummarizer is the summarizer that asks client for summaries, at the session's
// thinking level thinkingLevel ("": each request's).
func NewModelSummarizer(client *llm.Client, thinkingLevel string) *ModelSummarizer {
	return &ModelSummarizer{client: client, thinkingLevel: thinkingLevel}
}

// Name implements Summarizer: "provider/model" ("openai:model" for an OpenAI-compatible
// endpoint).
func (s *ModelSummarizer) Name() string { return s.client.Name() }

// ContextWindow is the context window of the model summaries are made with.
func (s *ModelSummarizer) ContextWindow() int { return s.client.Model().ContextWindow }

// Limits are the bounds of each summary's attempts.
func (s *ModelSummarizer) Limits() llm.RetryLimits { return s.client.Limits() }

// Summarize implements Summarizer: Pi's summarization prompt and the request's text, at
// the session's thinking level.
func (s *ModelSummarizer) Summarize(ctx context.Context, req Request) (Result, error) {
	level := req.ThinkingLevel
	if s.thinkingLevel != "" {
		level = s.thinkingLevel
	}
	var progress func(llm.Progress)
	if req.Progress != nil {
		progress = func(p llm.Progress) {
			req.Progress(Progress{Tokens: p.Tokens, Elapsed: p.Elapsed, Kind: req.Kind, Attempt: p.Attempt, MaxAttempts: p.MaxAttempts,
				Starting: p.Starting, Retry: p.Retry, Wait: p.Wait})
		}
	}
	r, err := s.client.Complete(ctx, llm.Request{System: SystemPrompt, User: BuildPrompt(req), ThinkingLevel: level, Progress: progress})
	if err != nil {
		return Result{}, err
	}
	return Result{Text: r.Text, Usage: sessionUsage(r.Usage), Model: r.Model}, nil
}

// sessionUsage is an answer's usage as a session entry stores it.
func sessionUsage(u *llm.Usage) *session.Usage {
	if u == nil {
		return nil
	}
	out := &session.Usage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite,
		Reasoning: u.Reasoning, TotalTokens: u.TotalTokens, CacheWrite1h: u.CacheWrite1h}
	if c := u.Cost; c != nil {
		out.Cost = &session.UsageCost{Input: c.Input, Output: c.Output, CacheRead: c.CacheRead, CacheWrite: c.CacheWrite,
			Total: c.Total, TotalFromProvider: c.TotalFromProvider}
	}
	return out
}

// The failures a model summarizer returns are llm's, under the names this package's
// callers know.
type (
	SummaryError = llm.Error
	ErrorKind    = llm.ErrorKind
	RetryLimits  = llm.RetryLimits
)

const (
	KindContextTooLong = llm.KindContextTooLong
	KindRateLimited    = llm.KindRateLimited
	KindAuth           = llm.KindAuth
	KindTransient      = llm.KindTransient
	KindFatal          = llm.KindFatal
	KindEmpty          = llm.KindEmpty
	KindLength         = llm.KindLength
	KindToolCall       = llm.KindToolCall
	KindUnreachable    = llm.KindUnreachable
	KindOversized      = llm.KindOversized

	// DefaultMaxTokens is Pi's output limit of a custom model that names none.
	DefaultMaxTokens = llm.DefaultMaxTokens
)

// ErrContextTooLong means the model refused the request as larger than its context.
var ErrContextTooLong = llm.ErrContextTooLong
