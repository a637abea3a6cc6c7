//go:build linux

package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// hugeAnswer is a model that streams a 200 MB answer in 64 KiB chunks, stopping when the
// client goes away; sent counts the bytes it wrote.
func hugeAnswer(t *testing.T) (*fakemodel.Server, *atomic.Int64) {
	const total = 200 << 20
	var sent atomic.Int64
	llm := fakemodel.New(t)
	piece := strings.Repeat("x", 64<<10)
	llm.SetFallback(func(w http.ResponseWriter, r *http.Request) {
		s := fakemodel.StartSSE(w, r)
		s.Role()
		for sent.Load() < total && r.Context().Err() == nil {
			s.Content(piece)
			sent.Add(int64(len(piece)))
		}
		s.Finish("stop")
		s.Usage(nil)
		s.Done()
	})
	return llm, &sent
}

// `pi-lsp compact --summarizer openai` against a model that streams a 200 MB answer: the
// stream is cut, the command fails with a clear error, its peak memory stays far below
// the answer's size, and the session is untouched.
func TestE2ECompactRefusesHugeAnswer(t *testing.T) {
	llm, sent := hugeAnswer(t)
	r, path, before := startCompact(t, llm, []string{"PI_LSP_SUMMARY_TIMEOUT=60"})
	r.wait(t)
	stderr := r.stderr.String()
	if r.code == 0 {
		t.Fatalf("exit 0; stderr:\n%s", stderr)
	}
	if !strings.Contains(stderr, "nothing of it is used") {
		t.Errorf("stderr lacks the reason:\n%s", stderr)
	}
	peak := r.peakRSS()
	if peak >= 200<<20 {
		t.Errorf("peak RSS %d MB", peak>>20)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("the session file changed")
	}
	if n := llm.Count(); n != 1 {
		t.Errorf("%d requests, want 1 (an oversized answer is not retried)", n)
	}
	t.Logf("RESULT huge-answer (CLI): a 200 MB answer refused after %d MB sent, exit %d after %v, peak RSS %d MB, file byte-identical",
		sent.Load()>>20, r.code, r.took, peak>>20)
}

// The server against the same model: pi/compact fails with the reason, the server's peak
// memory stays far below the answer's size, and the session is untouched.
func TestE2ELSPRefusesHugeAnswer(t *testing.T) {
	llm, sent := hugeAnswer(t)
	e := e2eEnv(t, lsptest.Config{
		InitOptions: map[string]any{"summarizer": "openai", "baseUrl": llm.URL, "model": "fake",
			"apiKeyEnv": "PI_LSP_E2E_KEY", "keepRecentTokens": 200},
		ExtraEnv: []string{"PI_LSP_E2E_KEY=test-key"},
	})
	before := sessiontest.Read(t, e.Paths[1])
	_, err := e.Call("pi/compact", map[string]any{"session": e.Paths[1]})
	if err == nil || !strings.Contains(err.Error(), "nothing of it is used") {
		t.Fatalf("pi/compact answered %v", err)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", e.Pid()))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`VmHWM:\s+(\d+) kB`).FindSubmatch(status)
	if m == nil {
		t.Fatalf("no VmHWM in %s", status)
	}
	peak, _ := strconv.Atoi(string(m[1]))
	if peak >= 200<<10 {
		t.Errorf("peak RSS %d MB", peak>>10)
	}
	if after := sessiontest.Read(t, e.Paths[1]); !bytes.Equal(before, after) {
		t.Error("the session file changed")
	}
	t.Logf("RESULT huge-answer (LSP): a 200 MB answer refused after %d MB sent, server peak RSS %d MB, file byte-identical", sent.Load()>>20, peak>>10)
}
