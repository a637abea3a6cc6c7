package service

import (
	"errors"
	"fmt"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// Config is what a front end adds to Pi's own settings for a job: the agent dir, its
// summarizer choice (client options or CLI flags) and token overrides (0: Pi's).
type Config struct {
	AgentDir         string
	SummarizerConfig SummarizerConfig
	KeepRecentTokens int
	ReserveTokens    int
	// BridgeDirs are where live pis register (nil: bridge.Dirs()).
	BridgeDirs []string
	// Sessions is how a job reads its session and waits for the other jobs of this
	// process (nil: the files, read once per job).
	Sessions Sessions
}

// ErrInvalidSettings: a settings file Pi 1.6.0 would refuse (errors.Is).
var ErrInvalidSettings = errors.New("invalid settings")

// ErrSummarizer: the summarizer cannot be built from its configuration (errors.Is).
var ErrSummarizer = errors.New("summarizer not usable")

// kindError is an error of one of the kinds above whose text is its cause's.
type kindError struct{ kind, err error }

func (e *kindError) Error() string   { return e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.kind, e.err} }

// CompactionSettings are the compaction settings of a job on a session whose header cwd
// is cwd, for the model provider/model (Pi 1.6.0's compaction.modelOverrides), with the
// front end's overrides on top.
func (c Config) CompactionSettings(cwd, provider, model string) (session.CompactionSettings, error) {
	s, err := session.LoadSettings(c.AgentDir, cwd).CompactionFor(provider, model)
	if err != nil {
		return s, &kindError{ErrInvalidSettings, fmt.Errorf("settings: %w", err)}
	}
	if c.KeepRecentTokens > 0 {
		s.KeepRecentTokens = c.KeepRecentTokens
	}
	if c.ReserveTokens > 0 {
		s.ReserveTokens = c.ReserveTokens
	}
	return s, nil
}

// SettingsFor is CompactionSettings as compaction.RunOptions.SettingsFor wants it: the
// run calls it with the model of the path it compacts (the requested leaf's, not the
// session's current leaf's), so the CLI and the server apply the same overrides.
func (c Config) SettingsFor(cwd string) func(provider, model string) (session.CompactionSettings, error) {
	return func(provider, model string) (session.CompactionSettings, error) {
		return c.CompactionSettings(cwd, provider, model)
	}
}

// SettingsAt are the compaction settings of the path to leaf ("" for the current leaf).
func (c Config) SettingsAt(ix *session.Index, leaf string) (session.CompactionSettings, error) {
	if leaf == "" {
		leaf = ix.LeafID()
	}
	provider, model := session.ModelOfPath(ix.Path(leaf))
	return c.CompactionSettings(ix.File.Header.Cwd, provider, model)
}

// SettingsOfPath is CompactionSettings for the model of a root-first path of a session
// whose header cwd is cwd (contextedit.ClearOptions.Settings).
func (c Config) SettingsOfPath(cwd string, path []*session.Entry) (session.CompactionSettings, error) {
	provider, model := session.ModelOfPath(path)
	return c.CompactionSettings(cwd, provider, model)
}

// Summarizer builds the summarizer of a job on a session whose header cwd is cwd and
// whose path to the leaf is path: the front end's choice, over the environment, over the
// piLsp object of Pi's settings files, in that order; with none, the session's current
// model as Pi 1.6.0 resumes the session when its credential resolves, else the extractive
// summary. Its config says which model it uses and its context window; the Choice says
// which summarizer and model, and why a wanted model was not used (its Notice is the one
// line a front end shows).
func (c Config) Summarizer(cwd string, path []*session.Entry) (compaction.Summarizer, SummarizerConfig, SummarizerChoice, error) {
	cfg := c.SummarizerConfig.Over(ConfigFromEnv()).Over(ConfigFromSettings(c.AgentDir, cwd))
	s, cfg, choice, err := cfg.BuildFor(c.AgentDir, cwd, path)
	if err != nil {
		return nil, cfg, choice, &kindError{ErrSummarizer, err}
	}
	return s, cfg, choice, nil
}

// SummaryPlan is the summarizer and model a job on the session would use (the Choice of
// Summarizer), found without resolving a credential: what editors show before a
// compaction.
func (c Config) SummaryPlan(cwd string, path []*session.Entry) SummarizerChoice {
	cfg := c.SummarizerConfig.Over(ConfigFromEnv()).Over(ConfigFromSettings(c.AgentDir, cwd))
	return cfg.Plan(c.AgentDir, cwd, path)
}

// BranchReserve is Pi's branchSummary.reserveTokens for a session whose cwd is cwd.
func (c Config) BranchReserve(cwd string) int {
	return session.LoadSettings(c.AgentDir, cwd).BranchSummary.ReserveTokens
}
