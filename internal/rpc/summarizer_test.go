package rpc_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/modelapi"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// With no summarizer configured, the server compacts with the session's model as Pi set it
// up (models.json in the agent dir), tells the editor which model that is in
// pi/sessionChanged, and, when the model's credential does not resolve, compacts with the
// extractive summary and says once why and what fixes it.
func TestServerSummarizesWithSessionModel(t *testing.T) {
	t.Setenv("PI_LSP_PI", "-")
	t.Setenv("PI_LSP_TEST_MODEL_KEY", "")
	srv := modelapi.New(t)
	models := `{"providers":{"fake":{"baseUrl":"` + srv.URL + `","api":"anthropic-messages","apiKey":"$PI_LSP_TEST_MODEL_KEY",
		"models":[{"id":"fake-model","contextWindow":100000,"maxTokens":4000}]}}}`
	summarizerOf := func(raw json.RawMessage) map[string]any {
		var p struct {
			Summarizer map[string]any `json:"summarizer"`
		}
		_ = json.Unmarshal(raw, &p)
		return p.Summarizer
	}

	t.Run("usable", func(t *testing.T) {
		t.Setenv("PI_LSP_TEST_MODEL_KEY", "sk-ant-test")
		e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"auto-threshold"}, AgentFiles: map[string]string{"models.json": models},
			InitOptions: map[string]any{"keepRecentTokens": 200}})
		path := e.Sessions["auto-threshold"]
		p := e.Start("workspace/executeCommand", map[string]any{"command": "pi.compact", "arguments": []any{map[string]any{}}}, false)
		e.Await(20*time.Second, lsptest.ResponseTo(p.ID),
			lsptest.NotificationMatching("pi/sessionChanged", "the session's model", func(raw json.RawMessage) bool {
				s := summarizerOf(raw)
				return s["kind"] == "model" && s["label"] == "Compact with fake-model via fake" && strings.Contains(fmt.Sprint(s["credential"]), "PI_LSP_TEST_MODEL_KEY")
			}))
		if _, cerr := p.Wait(time.Second); cerr != nil {
			t.Fatalf("pi.compact: %v", cerr)
		}
		reqs := srv.Requests()
		if len(reqs) == 0 || reqs[0].Path != "/v1/messages?beta=true" || reqs[0].Header.Get("X-Api-Key") != "sk-ant-test" {
			t.Fatalf("the model was not asked: %+v", reqs)
		}
		last := lastEntry(t, path)
		if !strings.Contains(string(last), `"summary":"SUMMARY`) {
			t.Errorf("the compaction does not hold the streamed summary: %.300s", last)
		}
		for _, m := range e.Notifications("window/showMessage") {
			if strings.Contains(string(m.Params), "extractive") {
				t.Errorf("a usable model was reported unusable: %s", m.Params)
			}
		}
	})

	t.Run("no credential", func(t *testing.T) {
		before := len(srv.Requests())
		e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"auto-threshold"}, AgentFiles: map[string]string{"models.json": models},
			InitOptions: map[string]any{"keepRecentTokens": 200}})
		p := e.Start("workspace/executeCommand", map[string]any{"command": "pi.compact", "arguments": []any{map[string]any{}}}, false)
		e.Await(20*time.Second, lsptest.ResponseTo(p.ID),
			lsptest.NotificationMatching("pi/sessionChanged", "extractive, with why", func(raw json.RawMessage) bool {
				s := summarizerOf(raw)
				notice, _ := s["notice"].(string)
				return s["kind"] == "extractive" && s["wanted"] == "fake/fake-model" && strings.Contains(notice, "PI_LSP_TEST_MODEL_KEY")
			}),
			lsptest.NotificationMatching("window/showMessage", "the line saying why", func(raw json.RawMessage) bool {
				return strings.Contains(string(raw), "fake/fake-model") && strings.Contains(string(raw), "export PI_LSP_TEST_MODEL_KEY")
			}))
		if _, cerr := p.Wait(time.Second); cerr != nil {
			t.Fatalf("pi.compact with the extractive summary: %v", cerr)
		}
		if n := len(srv.Requests()); n != before {
			t.Errorf("the model was asked without a credential (%d requests)", n-before)
		}
	})
}

func lastEntry(t *testing.T, path string) []byte {
	t.Helper()
	data := sessiontest.Read(t, path)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return []byte(lines[len(lines)-1])
}
