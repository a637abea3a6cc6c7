package service

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/llm"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
)

// The defaults: a failing summarizer holds a job at most 90 s; a stall is 60 s of
// silence and is retried once.
func TestSummaryTimeoutDefaults(t *testing.T) {
	s, _, err := SummarizerConfig{Kind: "openai", BaseURL: "http://127.0.0.1:1/v1", Model: "m"}.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l := limitsOf(t, s)
	if l.TotalTimeout != llm.DefaultTotalTimeout || llm.DefaultTotalTimeout > 90*time.Second {
		t.Errorf("total timeout %v (default %v), want at most 90s", l.TotalTimeout, llm.DefaultTotalTimeout)
	}
	if l.StallTimeout != 60*time.Second || l.MaxStallRetries != 1 {
		t.Errorf("stall timeout %v, stall retries %d", l.StallTimeout, l.MaxStallRetries)
	}
	c, err := llm.New(llm.Config{Model: llm.CompatibleModel("http://127.0.0.1:1/v1", "m", 0, 0, false), RetryLimits: llm.RetryLimits{MaxStallRetries: -1}})
	if err != nil || c.Limits().MaxStallRetries != 0 {
		t.Errorf("MaxStallRetries -1 gave %d (%v)", c.Limits().MaxStallRetries, err)
	}
}

// limitsOf are the bounds of a model summarizer's requests.
func limitsOf(t *testing.T, s compaction.Summarizer) llm.RetryLimits {
	t.Helper()
	ms, ok := s.(*compaction.ModelSummarizer)
	if !ok {
		t.Fatalf("summarizer %T", s)
	}
	return ms.Limits()
}

func writeSettings(t *testing.T, path, text string) {
	t.Helper()
	isolate.WriteFile(t, path, text, 0o644)
}

// Where the bounds come from: editor settings or flags, then PI_LSP_SUMMARY_TIMEOUT and
// PI_LSP_STALL_TIMEOUT, then the piLsp object of Pi's settings files (the project's over
// the global one, key by key), then the defaults.
func TestSummaryTimeoutSources(t *testing.T) {
	agent, cwd := t.TempDir(), t.TempDir()
	t.Setenv("PI_LSP_SUMMARY_TIMEOUT", "")
	t.Setenv("PI_LSP_STALL_TIMEOUT", "")
	t.Setenv("PI_LSP_TIMEOUT_TEST_KEY", "k")
	base := SummarizerConfig{Kind: "openai", BaseURL: "http://127.0.0.1:1/v1", Model: "m", APIKeyEnv: "PI_LSP_TIMEOUT_TEST_KEY"}
	built := func(c SummarizerConfig) (time.Duration, time.Duration, error) {
		t.Helper()
		s, _, err := c.Over(ConfigFromEnv()).Over(ConfigFromSettings(agent, cwd)).Build(agent)
		if err != nil {
			return 0, 0, err
		}
		l := limitsOf(t, s)
		return l.TotalTimeout, l.StallTimeout, nil
	}
	check := func(step string, c SummarizerConfig, total, stall time.Duration) {
		t.Helper()
		gotTotal, gotStall, err := built(c)
		if err != nil || gotTotal != total || gotStall != stall {
			t.Errorf("%s: total %v stall %v err %v, want %v and %v", step, gotTotal, gotStall, err, total, stall)
		}
	}
	check("nothing set", base, 90*time.Second, 60*time.Second)

	writeSettings(t, filepath.Join(agent, "settings.json"), `{"compaction": {"keepRecentTokens": 1000}, "piLsp": {"summaryTimeout": 300, "stallTimeout": 120}}`)
	check("global settings", base, 300*time.Second, 120*time.Second)

	writeSettings(t, filepath.Join(cwd, ".pi", "settings.json"), `{"piLsp": {"summaryTimeout": "10m"}}`)
	check("an untrusted project's settings are not read", base, 300*time.Second, 120*time.Second)
	trust, _ := json.Marshal(map[string]bool{cwd: true})
	writeSettings(t, filepath.Join(agent, "trust.json"), string(trust))
	check("project settings over global, key by key", base, 10*time.Minute, 120*time.Second)

	t.Setenv("PI_LSP_SUMMARY_TIMEOUT", "45")
	t.Setenv("PI_LSP_STALL_TIMEOUT", "2m30s")
	check("env over settings", base, 45*time.Second, 150*time.Second)

	editor := base
	if err := json.Unmarshal([]byte(`{"summarizer": "openai", "summaryTimeout": 600, "stallTimeout": "90s"}`), &editor); err != nil {
		t.Fatal(err)
	}
	check("editor settings over env", editor, 10*time.Minute, 90*time.Second)

	t.Setenv("PI_LSP_SUMMARY_TIMEOUT", "soon")
	if _, _, err := built(base); err == nil || !strings.Contains(err.Error(), "PI_LSP_SUMMARY_TIMEOUT") || !strings.Contains(err.Error(), `"soon"`) {
		t.Errorf("malformed env: %v", err)
	}
	if _, _, err := (SummarizerConfig{Kind: "extractive"}).Over(ConfigFromEnv()).Build(agent); err != nil {
		t.Errorf("a malformed timeout fails the extractive summarizer, which has none: %v", err)
	}
	t.Setenv("PI_LSP_SUMMARY_TIMEOUT", "")
	t.Setenv("PI_LSP_STALL_TIMEOUT", "")
	writeSettings(t, filepath.Join(cwd, ".pi", "settings.json"), `{"piLsp": {"summaryTimeout": -5}}`)
	if _, _, err := built(base); err == nil || !strings.Contains(err.Error(), "piLsp.summaryTimeout") || !strings.Contains(err.Error(), filepath.Join(cwd, ".pi", "settings.json")) {
		t.Errorf("malformed settings: %v", err)
	}
	var c SummarizerConfig
	if err := json.Unmarshal([]byte(`{"summaryTimeout": true}`), &c); err == nil {
		t.Error("a boolean timeout was accepted")
	}
}

func TestParseTimeout(t *testing.T) {
	for in, want := range map[string]time.Duration{"300": 300 * time.Second, "2.5": 2500 * time.Millisecond, "5m": 5 * time.Minute, " 90s ": 90 * time.Second} {
		if got, err := session.ParseTimeout(in); err != nil || time.Duration(got) != want {
			t.Errorf("session.ParseTimeout(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1", "-5m", "soon", "NaN", "Inf", "1e30"} {
		if got, err := session.ParseTimeout(in); err == nil {
			t.Errorf("session.ParseTimeout(%q) = %v, want an error", in, got)
		}
	}
	b, _ := json.Marshal(SummarizerConfig{SummaryTimeout: session.Timeout(90 * time.Second)})
	if string(b) != `{"summaryTimeout":90}` {
		t.Errorf("marshalled %s", b)
	}
}
