package compaction_test

import (
	"bytes"
	"encoding/json"
	"github.com/pi-lsp/pi-lsp/internal/catalog"
	"github.com/pi-lsp/pi-lsp/internal/llm"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/corpus"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// corpusCopy copies testdata/corpus/<rel> into a fresh temp dir and returns the copy's
// path, so a test can write to it.
func corpusCopy(t testing.TB, rel string) string { return corpus.Copy(t, rel) }

// sameBytes fails unless the file at path still holds exactly before.
func sameBytes(t testing.TB, path string, before []byte) {
	t.Helper()
	after := sessiontest.Read(t, path)
	if !bytes.Equal(before, after) {
		t.Errorf("session file changed: %d bytes before, %d after\nadded: %q", len(before), len(after), after[min(len(before), len(after)):])
	}
}

func settings(keep, reserve int) session.CompactionSettings {
	return session.CompactionSettings{Enabled: true, KeepRecentTokens: keep, ReserveTokens: reserve}
}

// fastConfig is an OpenAI summarizer config with short timings, for tests.
func fastConfig(url string) fakemodel.OpenAIConfig {
	return fakemodel.OpenAIConfig{
		BaseURL: url,
		Model:   "fake-model",
		APIKey:  "sk-test-key",
		RetryLimits: compaction.RetryLimits{
			MaxRetries:    2,
			RetryBase:     5 * time.Millisecond,
			MaxRetryDelay: 50 * time.Millisecond,
			StallTimeout:  5 * time.Second, // stall tests set a short one
			TotalTimeout:  20 * time.Second,
		},
	}
}

// entryJSON decodes an entry's raw JSON.
func entryJSON(t testing.TB, e *session.Entry) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(e.Raw(), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// prepareFile prepares a compaction of the file's default leaf.
func prepareFile(t testing.TB, path string, s session.CompactionSettings) *compaction.Preparation {
	t.Helper()
	ix := sessiontest.Index(t, path)
	p, err := compaction.Prepare(ix.Path(ix.LeafID()), s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// appendMessages appends message entries (raw AgentMessage JSON) to a session file,
// chained after its current leaf.
func appendMessages(t testing.TB, path string, messages ...string) {
	t.Helper()
	ix, taken := sessiontest.ForAppend(t, path)
	var nes []session.NewEntry
	for i, m := range messages {
		parent := ix.LeafID()
		if i > 0 {
			parent = session.ChainToPrevious
		}
		nes = append(nes, session.NewEntry{Type: session.TypeMessage, ParentID: parent,
			Fields: []session.Field{{Key: "message", Value: json.RawMessage(m)}}})
	}
	if _, err := session.Append(path, taken, nes); err != nil {
		t.Fatal(err)
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func userMsg(text string) string {
	return mustJSON(map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": text}}, "timestamp": 1760000000000})
}

func assistantMsg(text string, calls ...map[string]any) string {
	content := []any{map[string]any{"type": "text", "text": text}}
	for _, c := range calls {
		content = append(content, c)
	}
	stop := "stop"
	if len(calls) > 0 {
		stop = "toolUse"
	}
	return mustJSON(map[string]any{"role": "assistant", "content": content, "api": "openai-completions", "provider": "fake",
		"model": "fake-model", "usage": map[string]any{"input": 10, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 20,
			"cost": map[string]any{"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
		"stopReason": stop, "timestamp": 1760000000001})
}

func toolCall(id, name string, args map[string]any) map[string]any {
	return map[string]any{"type": "toolCall", "id": id, "name": name, "arguments": args}
}

func toolResult(id, name, text string) string {
	return mustJSON(map[string]any{"role": "toolResult", "toolCallId": id, "toolName": name,
		"content": []any{map[string]any{"type": "text", "text": text}}, "isError": false, "timestamp": 1760000000002})
}

var apiPaths = map[string]string{
	catalog.APIAnthropicMessages: "",
	catalog.APIOpenAIResponses:   "/v1",
	catalog.APIOpenAICompletions: "/v1",
	catalog.APIGoogle:            "/v1beta",
}

func modelSummarizer(t *testing.T, api, base string, cred *catalog.Credential) *compaction.ModelSummarizer {
	t.Helper()
	client, err := llm.New(llm.Config{
		Model:      &catalog.Model{ID: "m", API: api, Provider: "acme", BaseURL: base, ContextWindow: 100000, MaxTokens: 4000},
		Credential: cred, RetryLimits: compaction.RetryLimits{MaxRetries: 3, RetryBase: time.Millisecond, MaxRetryDelay: 5 * time.Millisecond,
			TotalTimeout: 20 * time.Second, StallTimeout: 5 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	return compaction.NewModelSummarizer(client, "")
}
