package main

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
)

// heldAnswer is a model step that answers only once release is closed.
func heldAnswer(release <-chan struct{}, text string) fakemodel.Step {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		fakemodel.Say(text)(w, r)
	}
}

// `pi-lsp compact` whose session file is truncated (or replaced by a shorter one) while
// the model holds its answer: the command fails with "the session changed", it does not
// crash (it used to die of a stack overflow re-reading the vanished lines), and the file
// is left as the truncation left it.
func TestE2ECompactSessionTruncatedMidJob(t *testing.T) {
	e2eBinary(t) // built before any process bound starts counting
	for _, how := range []string{"truncated", "replaced"} {
		t.Run(how, func(t *testing.T) {
			release := make(chan struct{})
			llm := fakemodel.New(t, heldAnswer(release, "## Goal\nHeld summary."))
			r, path, before := startCompact(t, llm, []string{"PI_LSP_STALL_TIMEOUT=30", "PI_LSP_SUMMARY_TIMEOUT=60"})
			cut := cutWhileModelHolds(t, llm, how, path, before, func() string { return "stderr:\n" + r.stderr.String() })
			close(release)
			r.wait(t)
			stderr := r.stderr.String()
			t.Logf("exit %d after %v; stderr:\n%s", r.code, r.took.Round(10*time.Millisecond), stderr)
			if strings.Contains(stderr, "fatal error") || strings.Contains(stderr, "goroutine ") {
				t.Fatal("the process crashed")
			}
			if r.code != 1 || !strings.Contains(stderr, "the session changed") {
				t.Errorf("exit %d, want 1 with \"the session changed\"", r.code)
			}
			if after, _ := os.ReadFile(path); string(after) != string(cut) {
				t.Errorf("the session file was written to after the truncation (%d bytes, truncated to %d)", len(after), len(cut))
			}
			t.Logf("RESULT truncated-mid-compaction (CLI, %s): exit %d after %v, %q", how, r.code, r.took.Round(10*time.Millisecond), lastLine(stderr))
		})
	}
}

// cutWhileModelHolds waits until the job asks the model (whose answer is held), then
// shortens the session at path to the whole lines of its first half: truncated in place,
// or replaced by a shorter file renamed over it. It returns what the file then holds.
// output is what the test shows when the model is never asked.
func cutWhileModelHolds(t *testing.T, llm *fakemodel.Server, how, path string, before []byte, output func() string) []byte {
	t.Helper()
	select {
	case <-llm.Started:
	case <-time.After(30 * time.Second):
		t.Fatalf("the model was not called; %s", output())
	}
	cut := before[:len(before)/2]
	cut = cut[:strings.LastIndexByte(string(cut), '\n')+1]
	switch how {
	case "truncated":
		if err := os.Truncate(path, int64(len(cut))); err != nil {
			t.Fatal(err)
		}
	case "replaced":
		replaceFile(t, path, cut)
	default:
		t.Fatalf("no way to cut a session %q", how)
	}
	return cut
}

// replaceFile puts data at path as a new file (a rename over it, as an editor saves).
func replaceFile(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// The server's pi/compact on a session truncated (or replaced) while the model holds its
// answer: a ContentModified error of kind sessionChanged, the server alive and answering
// (it used to die of a stack overflow), the file as the truncation left it.
func TestE2ELSPCompactSessionTruncatedMidJob(t *testing.T) {
	for _, how := range []string{"truncated", "replaced"} {
		t.Run(how, func(t *testing.T) {
			release := make(chan struct{})
			llm := fakemodel.New(t, heldAnswer(release, "## Goal\nHeld summary."))
			e := e2eEnv(t, lsptest.Config{
				InitOptions: map[string]any{"summarizer": "openai", "baseUrl": llm.URL, "model": "fake",
					"apiKeyEnv": "PI_LSP_E2E_KEY", "keepRecentTokens": 200},
				ExtraEnv: []string{"PI_LSP_E2E_KEY=test-key"},
			})
			path := e.Paths[1]
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			p := e.Start("pi/compact", map[string]any{"session": path}, false)
			cut := cutWhileModelHolds(t, llm, how, path, before, func() string { return "logs:\n" + e.Logs() })
			close(release)
			_, cerr := p.Wait(30 * time.Second)
			if cerr == nil {
				t.Fatal("pi/compact succeeded on a truncated session")
			}
			if cerr.Code != -32801 || cerr.Kind() != "sessionChanged" {
				t.Errorf("pi/compact answered %v (kind %q), want -32801 sessionChanged", cerr, cerr.Kind())
			}
			if _, err := e.Call("pi/sessions", map[string]any{}); err != nil {
				t.Errorf("the server does not answer after the failed job: %v; logs:\n%s", err, e.Logs())
			}
			if after, _ := os.ReadFile(path); string(after) != string(cut) {
				t.Errorf("the session file was written to after the truncation (%d bytes, truncated to %d)", len(after), len(cut))
			}
			t.Logf("RESULT truncated-mid-compaction (LSP, %s): %v, kind %s; server alive", how, cerr, cerr.Kind())
		})
	}
}
