package oracle

import (
	"errors"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/session"
)

// Load loads cf for a differential test. A file without a session header is skipped:
// Pi would start a fresh session in its place, so there is nothing of it to compare.
func (cf CorpusFile) Load(t testing.TB) *session.File {
	t.Helper()
	f, err := session.Load(cf.Path)
	if errors.Is(err, session.ErrNoHeader) {
		t.Skip("no header: Pi would start a fresh session")
	}
	if err != nil {
		t.Fatal(err)
	}
	return f
}
