package rpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// Helpers shared by the package's tests: a compaction set-up with a fake summarizer,
// the lines a job appended, and the JSON-RPC error code of an answer.

const compactTitle = "Compacting session"

// appended checks the file only grew from before and returns its new lines, decoded.
func appended(t *testing.T, before []byte, path string) []map[string]any {
	t.Helper()
	now := sessiontest.Read(t, path)
	if !bytes.HasPrefix(now, before) {
		t.Fatalf("%s was rewritten, not appended to", path)
	}
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(now[len(before):]), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("appended line is not JSON: %s", line)
		}
		out = append(out, m)
	}
	return out
}

// compactEnv is a session with something to compact and a fake LLM as summarizer.
func compactEnv(t *testing.T, llm *fakemodel.Summarizer, cfg lsptest.Config) (*lsptest.Env, string) {
	t.Helper()
	t.Setenv("PI_LSP_TEST_KEY", "test-key")
	if cfg.Corpus == nil {
		cfg.Corpus = []string{"auto-threshold"}
	}
	cfg.InitOptions = lsptest.Merge(llm.Config(), map[string]any{"keepRecentTokens": 200}, cfg.InitOptions)
	e := lsptest.NewEnv(t, cfg)
	return e, e.Sessions[cfg.Corpus[len(cfg.Corpus)-1]]
}

// hangs is a client hook (or a window/workDoneProgress/create handler) that never
// answers: it returns only when the server gives up on the request.
func hangs(ctx context.Context, _ json.RawMessage) (any, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// hungHookEnv is compactEnv with a pi/beforeCompact hook that never answers, which the
// server gives up on after timeout.
func hungHookEnv(t *testing.T, llm *fakemodel.Summarizer, timeout time.Duration) (*lsptest.Env, string) {
	t.Helper()
	return compactEnv(t, llm, lsptest.Config{ClientHooks: true, Options: rpc.Options{HookTimeout: timeout}, Hooks: lsptest.Hooks{BeforeCompact: hangs}})
}

func wantCode(t *testing.T, err error, code int64) *lsptest.CallError {
	t.Helper()
	var ce *lsptest.CallError
	if !errors.As(err, &ce) {
		t.Fatalf("got %v, want JSON-RPC error %d", err, code)
	}
	if ce.Code != code {
		t.Fatalf("got error %d %q (kind %s), want %d", ce.Code, ce.Message, ce.Kind(), code)
	}
	return ce
}
