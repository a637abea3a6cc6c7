package service

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/catalog"
	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/llm"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// SummarizerChoice says which summarizer a job uses, with which model, and, when the model
// it wanted could not be used, why and what fixes it.
type SummarizerChoice struct {
	// Kind is "extractive", "model" (a model of Pi's catalog) or "openai" (an
	// OpenAI-compatible endpoint configured for pi-lsp).
	Kind string `json:"kind" ts:"\"extractive\" | \"model\" | \"openai\""`
	// Provider and Model name the model ("anthropic", "claude-sonnet-4-5"); API is the
	// API it is asked over.
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	API      string `json:"api,omitempty"`
	// ThinkingLevel is the reasoning asked for ("off" or a level).
	ThinkingLevel string `json:"thinkingLevel,omitempty"`
	// From says where the model came from: "session" (the session's current model),
	// "settings" (Pi's defaultProvider/defaultModel), "config" (pi-lsp's model setting or
	// --model).
	From string `json:"from,omitempty"`
	// Credential says where the key came from (never the key).
	Credential string `json:"credential,omitempty"`
	// Wanted is the model ("provider/id") that could not be used, with Why and the Fix
	// (a command or a variable), when Kind fell back to extractive.
	Wanted string `json:"wanted,omitempty"`
	Why    string `json:"why,omitempty"`
	Fix    string `json:"fix,omitempty"`
	// Label is Describe: one line for a status bar ("Compact with claude-sonnet-4-5 via
	// anthropic"); Notice is the line saying the wanted model was not used, when it was
	// not.
	Label  string `json:"label"`
	Notice string `json:"notice,omitempty"`
}

// labeled is c with Label and Notice filled in.
func (c SummarizerChoice) labeled() SummarizerChoice {
	c.Label, c.Notice = c.Describe(), c.NoticeLine()
	return c
}

// Describe is one line for a status bar or a confirmation: "Compact with
// claude-sonnet-4-5 via anthropic".
func (c SummarizerChoice) Describe() string {
	switch c.Kind {
	case "model":
		s := fmt.Sprintf("Compact with %s via %s", c.Model, c.Provider)
		if c.ThinkingLevel != "" && c.ThinkingLevel != "off" {
			s += " (thinking " + c.ThinkingLevel + ")"
		}
		return s
	case "openai":
		return fmt.Sprintf("Compact with %s via the OpenAI-compatible endpoint", c.Model)
	}
	if c.Wanted != "" {
		return fmt.Sprintf("Compact with the extractive summary (%s cannot be used: %s)", c.Wanted, c.Why)
	}
	return "Compact with the extractive summary (no model)"
}

// NoticeLine is the one line a front end shows when the wanted model was not used: which
// model, why, and what fixes it ("" when nothing fell back).
func (c SummarizerChoice) NoticeLine() string {
	if c.Wanted == "" {
		return ""
	}
	whose := "the session's model"
	switch c.From {
	case "settings":
		whose = "the default model of Pi's settings"
	case "config":
		whose = "the configured model"
	}
	s := fmt.Sprintf("summarizing with the extractive summary, not %s %s: %s", whose, c.Wanted, c.Why)
	if c.Fix != "" {
		s += "; fix: " + c.Fix
	}
	return s
}

// ParseModelRef reads "provider/id[:thinking]" (a trailing ":level" is a thinking level
// only when it names one, since model ids may hold colons).
func ParseModelRef(ref string) (provider, id, level string, err error) {
	provider, id, ok := strings.Cut(strings.TrimSpace(ref), "/")
	if !ok || provider == "" || id == "" {
		return "", "", "", fmt.Errorf("model %q is not PROVIDER/ID[:THINKING] (for example anthropic/claude-sonnet-4-5:high)", ref)
	}
	if i := strings.LastIndex(id, ":"); i >= 0 && catalog.IsThinkingLevel(id[i+1:]) {
		id, level = id[:i], id[i+1:]
	}
	return provider, id, level, nil
}

// PiPath is the user's pi pi-lsp asks for account logins and reads the catalog of
// ($PI_LSP_PI, else pi on PATH; "-" for none).
func PiPath() string { return os.Getenv("PI_LSP_PI") }

// BuildFor is the summarizer of a job on the session whose path to the leaf is path
// (header cwd cwd): "extractive"; "openai" (Build); "model", a model of Pi's catalog (the
// configured Model "provider/id[:thinking]", else piLsp.summaryModel of the settings, else
// the session's current model as Pi resumes it), which must be usable; or, with no kind
// configured, that model when its credential resolves and the extractive summary
// otherwise, the Choice saying why.
func (c SummarizerConfig) BuildFor(agentDir, cwd string, path []*session.Entry) (compaction.Summarizer, SummarizerConfig, SummarizerChoice, error) {
	s, cfg, ch, err := c.buildFor(agentDir, cwd, path)
	return s, cfg, ch.labeled(), err
}

func (c SummarizerConfig) buildFor(agentDir, cwd string, path []*session.Entry) (compaction.Summarizer, SummarizerConfig, SummarizerChoice, error) {
	kind := strings.ToLower(c.Kind)
	switch kind {
	case "extractive":
		c.Kind = "extractive"
		return compaction.Extractive{}, c, SummarizerChoice{Kind: "extractive"}, nil
	case "openai":
		s, cfg, err := c.Build(agentDir)
		if err != nil {
			return nil, cfg, SummarizerChoice{}, err
		}
		return s, cfg, SummarizerChoice{Kind: "openai", Model: cfg.Model, API: catalog.APIOpenAICompletions, From: "config"}, nil
	case "", "model":
	default:
		return nil, c, SummarizerChoice{}, fmt.Errorf("unknown summarizer %q (use extractive, model or openai)", c.Kind)
	}
	if c.err != nil {
		return nil, c, SummarizerChoice{}, fmt.Errorf("summarizer: %w", c.err)
	}
	fallback := func(ch SummarizerChoice) (compaction.Summarizer, SummarizerConfig, SummarizerChoice, error) {
		if kind == "model" {
			msg := fmt.Sprintf("model summarizer: %s cannot be used: %s", ch.Wanted, ch.Why)
			if ch.Fix != "" {
				msg += "; fix: " + ch.Fix
			}
			return nil, c, ch, errors.New(msg)
		}
		c.Kind = "extractive"
		ch.Kind = "extractive"
		return compaction.Extractive{}, c, ch, nil
	}
	cat, resolver, sel, ch, err := c.selectModel(kind, agentDir, cwd, path)
	if err != nil {
		return nil, c, SummarizerChoice{}, err
	}
	if ch.Wanted != "" {
		return fallback(ch)
	}
	cred, err := resolver.Resolve(context.Background(), cat, sel.Model)
	if err != nil {
		var ce *catalog.CredentialError
		ch.Wanted, ch.Why = sel.Ref(), err.Error()
		if errors.As(err, &ce) {
			ch.Why, ch.Fix = "no usable credential: "+ce.Reason, ce.Fix
		}
		return fallback(ch)
	}
	ch.Kind, ch.Credential = "model", cred.Source
	total, stall := c.Timeouts()
	client, err := llm.New(llm.Config{Model: sel.Model, Credential: cred, RetryLimits: llm.RetryLimits{TotalTimeout: total, StallTimeout: stall}})
	if err != nil {
		ch.Kind, ch.Wanted, ch.Why = "", sel.Ref(), err.Error()
		return fallback(ch)
	}
	s := compaction.NewModelSummarizer(client, sel.ThinkingLevel)
	c.Kind = "model"
	c.Model = sel.Model.Ref()
	c.ContextWindow = cmp.Or(c.ContextWindow, sel.Model.ContextWindow)
	c.MaxTokens = cmp.Or(c.MaxTokens, sel.Model.MaxTokens)
	return s, c, ch, nil
}

// selectModel picks the model of a "model" or default summarizer (the configured one,
// piLsp.summaryModel, or the session's), without resolving its credential: the Choice has
// Wanted, Why and Fix set when that model cannot be used.
func (c SummarizerConfig) selectModel(kind, agentDir, cwd string, path []*session.Entry) (*catalog.Catalog, catalog.Resolver, catalog.Selection, SummarizerChoice, error) {
	pi := PiPath()
	cat := catalog.Load(agentDir, catalog.LoadOptions{PiPath: pi})
	resolver := catalog.Resolver{AgentDir: agentDir, Pi: pi}
	settings := session.LoadSettings(agentDir, cwd)
	ref := c.Model
	if kind == "" && !strings.Contains(ref, "/") {
		ref = "" // an OpenAI model name (PI_LSP_MODEL) means nothing without the openai summarizer
	}
	if ref == "" {
		ref = settings.PiLsp.SummaryModel
	}
	var sel catalog.Selection
	if ref != "" {
		provider, id, level, err := ParseModelRef(ref)
		if err != nil {
			return nil, resolver, sel, SummarizerChoice{}, err
		}
		if level == "" {
			level = catalog.SessionLevel(path, settings)
		}
		sel = catalog.Pick(cat, resolver, provider, id, level, "config")
	} else {
		sel = catalog.Select(cat, resolver, path, settings)
	}
	ch := SummarizerChoice{Provider: sel.Provider, Model: sel.ModelID, ThinkingLevel: sel.ThinkingLevel, From: sel.From}
	if sel.Model != nil {
		ch.API = sel.Model.API
	}
	switch {
	case !sel.Usable:
		ch.Wanted, ch.Why, ch.Fix = sel.Ref(), sel.Why, sel.Fix
		if ch.Wanted == "" {
			ch.Wanted = "(none)"
		}
		if len(cat.Errors) > 0 {
			ch.Why += " (models.json: " + cat.Errors[0].Error() + ")"
		}
	case !catalog.Supported(sel.Model.API):
		ch.Wanted, ch.Why = sel.Ref(), "it is reached over "+sel.Model.API+", an API pi-lsp does not speak"
		ch.Fix = "set a summary model of another API: --model PROVIDER/ID, or piLsp.summaryModel in Pi's settings.json"
	default:
		ch.Credential = resolver.SourceOf(cat, sel.Provider)
	}
	return cat, resolver, sel, ch, nil
}

// Plan is the Choice BuildFor would make, without resolving the credential (no command
// runs, pi is not asked) or building the summarizer: what an editor shows before a
// compaction. A credential that is configured but does not resolve shows when the job
// runs.
func (c SummarizerConfig) Plan(agentDir, cwd string, path []*session.Entry) SummarizerChoice {
	return c.plan(agentDir, cwd, path).labeled()
}

func (c SummarizerConfig) plan(agentDir, cwd string, path []*session.Entry) SummarizerChoice {
	kind := strings.ToLower(c.Kind)
	switch kind {
	case "extractive":
		return SummarizerChoice{Kind: "extractive"}
	case "openai":
		return SummarizerChoice{Kind: "openai", Model: c.Model, API: catalog.APIOpenAICompletions, From: "config"}
	case "", "model":
	default:
		return SummarizerChoice{Kind: "extractive", Wanted: c.Kind, Why: "unknown summarizer " + c.Kind, Fix: "use extractive, model or openai"}
	}
	_, _, _, ch, err := c.selectModel(kind, agentDir, cwd, path)
	if err != nil {
		return SummarizerChoice{Kind: "extractive", Wanted: c.Model, Why: err.Error()}
	}
	if ch.Wanted != "" {
		ch.Kind = "extractive"
		return ch
	}
	ch.Kind = "model"
	return ch
}
