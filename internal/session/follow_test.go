package session_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/testfile"
)

// TestWatchReportsAWriteMadeDuringTheFirstLook: a line appended while the caller takes
// its first look (the onChange("") call) is reported, with no rescan to fall back on.
// Before, the first look came before the watch was in place and the sizes the rescan
// compares against were taken after it, so such a write was never reported
// (TestLiveFileFromAnotherWriter timed out about once in five loaded runs).
func TestWatchReportsAWriteMadeDuringTheFirstLook(t *testing.T) {
	dir := t.TempDir()
	path := testfile.Write(t, filepath.Join(dir, "s.jsonl"), `{"type":"session"}`+"\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	firstLook := make(chan struct{})
	reported := make(chan struct{}, 16)
	done := make(chan error, 1)
	go func() {
		done <- session.Watch(ctx, dir, time.Hour, func(p string) {
			switch p {
			case "":
				f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = f.WriteString(`{"type":"message","id":"a"}` + "\n")
				f.Close()
				close(firstLook)
			case path:
				reported <- struct{}{}
			}
		})
	}()
	select {
	case <-firstLook:
	case <-time.After(10 * time.Second):
		t.Fatal("Watch made no first look (onChange(\"\")) once its watch was in place")
	}
	select {
	case <-reported:
	case <-time.After(10 * time.Second):
		t.Fatal("a write made during the first look was never reported")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
