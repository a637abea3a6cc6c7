package service_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/service"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/modelapi"
)

func pathOf(t *testing.T, lines ...string) []*session.Entry {
	t.Helper()
	text := `{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}` + "\n" + strings.Join(lines, "\n") + "\n"
	f, err := session.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return f.Entries
}

// With no summarizer configured, the session's model when its credential resolves, else
// the extractive summary and a line saying which model, why, and the fix.
func TestBuildForChoosesTheSessionModel(t *testing.T) {
	d := isolate.Setup(t)
	t.Setenv("PI_LSP_PI", "-")
	t.Setenv("ACME_KEY", "")
	if err := os.WriteFile(filepath.Join(d.AgentDir, "models.json"), []byte(`{"providers":{"acme":{"baseUrl":"http://127.0.0.1:9/v1","api":"openai-completions","apiKey":"$ACME_KEY",
		"models":[{"id":"small","reasoning":true,"contextWindow":50000,"maxTokens":2000},{"id":"big"}]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	path := pathOf(t,
		`{"type":"model_change","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","provider":"acme","modelId":"small"}`,
		`{"type":"thinking_level_change","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:00.000Z","thinkingLevel":"xhigh"}`)

	s, _, ch, err := service.SummarizerConfig{}.BuildFor(d.AgentDir, "", path)
	if err != nil || s.Name() != "extractive" || ch.Kind != "extractive" || ch.Wanted != "acme/small" || ch.Fix != "export ACME_KEY in the environment pi-lsp runs in" {
		t.Fatalf("without the key: %v %+v %v", s, ch, err)
	}
	if n := ch.Notice; !strings.Contains(n, "the session's model acme/small") || !strings.Contains(n, "ACME_KEY") {
		t.Errorf("notice %q", n)
	}
	if _, _, _, err := (service.SummarizerConfig{Kind: "model"}).BuildFor(d.AgentDir, "", path); err == nil || !strings.Contains(err.Error(), "ACME_KEY") {
		t.Errorf("--summarizer model without a usable model must fail: %v", err)
	}

	t.Setenv("ACME_KEY", "k")
	s, cfg, ch, err := service.SummarizerConfig{}.BuildFor(d.AgentDir, "", path)
	if err != nil || s.Name() != "acme/small" || ch.Kind != "model" || ch.ThinkingLevel != "high" || ch.From != "session" || ch.Notice != "" {
		t.Fatalf("with the key: %v %+v %v", s, ch, err)
	}
	if cfg.ContextWindow != 50000 || cfg.MaxTokens != 2000 {
		t.Errorf("the model's limits: %+v", cfg)
	}
	if got := ch.Label; got != "Compact with small via acme (thinking high)" {
		t.Errorf("describe %q", got)
	}
	if !strings.Contains(ch.Credential, "ACME_KEY") {
		t.Errorf("credential source %q", ch.Credential)
	}

	s, _, ch, err = service.SummarizerConfig{Model: "acme/big:low"}.BuildFor(d.AgentDir, "", path)
	if err != nil || s.Name() != "acme/big" || ch.From != "config" || ch.ThinkingLevel != "off" {
		t.Errorf("--model acme/big:low (not a reasoning model): %v %+v %v", s, ch, err)
	}
	// A bare name (PI_LSP_MODEL for the openai summarizer) means nothing to the default.
	if s, _, _, err := (service.SummarizerConfig{Model: "gpt-4o"}).BuildFor(d.AgentDir, "", path); err != nil || s.Name() != "acme/small" {
		t.Errorf("a bare model name without --summarizer openai: %v %v", s, err)
	}
	if _, _, _, err := (service.SummarizerConfig{Kind: "model", Model: "nope"}).BuildFor(d.AgentDir, "", path); err == nil {
		t.Error("a model that is not PROVIDER/ID must be refused")
	}
	s, _, ch, _ = service.SummarizerConfig{Kind: "extractive"}.BuildFor(d.AgentDir, "", path)
	if s.Name() != "extractive" || ch.Wanted != "" || ch.Notice != "" {
		t.Errorf("--summarizer extractive: %+v", ch)
	}

	// A separate summary model in Pi's settings (piLsp.summaryModel).
	if err := os.WriteFile(filepath.Join(d.AgentDir, "settings.json"), []byte(`{"piLsp":{"summaryModel":"acme/big"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, _, _, err = (service.SummarizerConfig{}).BuildFor(d.AgentDir, "", path); err != nil || s.Name() != "acme/big" {
		t.Errorf("piLsp.summaryModel: %v %v", s, err)
	}
}

func TestParseModelRef(t *testing.T) {
	for _, tc := range []struct{ in, p, id, level string }{
		{"anthropic/claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5", ""},
		{"anthropic/claude-sonnet-4-5:high", "anthropic", "claude-sonnet-4-5", "high"},
		{"amazon-bedrock/amazon.nova-2-lite-v1:0", "amazon-bedrock", "amazon.nova-2-lite-v1:0", ""},
		{"openrouter/openai/gpt-5:max", "openrouter", "openai/gpt-5", "max"},
	} {
		p, id, level, err := service.ParseModelRef(tc.in)
		if err != nil || p != tc.p || id != tc.id || level != tc.level {
			t.Errorf("%s: %q %q %q %v", tc.in, p, id, level, err)
		}
	}
}

// The openai summarizer reads Pi's key forms in models.json too: "$NAME" is the variable's
// value and "!command" its output, never the text itself.
func TestOpenAISummarizerResolvesPiKeyForms(t *testing.T) {
	for _, tc := range []struct{ apiKey, want string }{
		{"$PI_LSP_TEST_FORM_KEY", "Bearer from-env"},
		{"${PI_LSP_TEST_FORM_KEY}", "Bearer from-env"},
		{"!printf from-command", "Bearer from-command"},
	} {
		t.Run(tc.apiKey, func(t *testing.T) {
			d := isolate.Setup(t)
			t.Setenv("PI_LSP_TEST_FORM_KEY", "from-env")
			srv := modelapi.New(t)
			if err := os.WriteFile(filepath.Join(d.AgentDir, "models.json"), []byte(`{"providers":{"local":{"baseUrl":"`+srv.URL+`/v1","api":"openai-completions","apiKey":`+strconv.Quote(tc.apiKey)+`,"models":[{"id":"m"}]}}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			s, _, _, err := service.SummarizerConfig{Kind: "openai"}.BuildFor(d.AgentDir, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Summarize(context.Background(), compaction.Request{Kind: compaction.KindHistory, Conversation: "x"}); err != nil {
				t.Fatal(err)
			}
			if got := srv.Requests()[0].Header.Get("Authorization"); got != tc.want {
				t.Errorf("Authorization %q, want %q", got, tc.want)
			}
		})
	}
}
