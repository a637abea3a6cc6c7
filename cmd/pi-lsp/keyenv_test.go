package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// `pi-lsp compact --summarizer openai` with PI_LSP_API_KEY_ENV naming a variable that is
// not a key (HOME) refuses with one line naming the variable and the rule, exit 1; nothing
// reaches the model and the file is unchanged.
func TestCLIRefusesAPIKeyEnvThatIsNotAKey(t *testing.T) {
	llm := fakemodel.NewSummarizer(t)
	r, path, before := startCompact(t, llm.Server, []string{"PI_LSP_API_KEY_ENV=HOME"})
	r.wait(t)
	stderr := r.stderr.String()
	if r.code != 1 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, stderr)
	}
	for _, want := range []string{`"HOME"`, "_KEY", "_TOKEN"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not say %s:\n%s", want, stderr)
		}
	}
	if n := llm.Requests.Load(); n != 0 {
		t.Errorf("%d requests reached the model", n)
	}
	if after := sessiontest.Read(t, path); !bytes.Equal(after, before) {
		t.Error("the refused compaction changed the file")
	}
}
