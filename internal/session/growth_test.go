package session

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/testsupport/testfile"
)

// A followed session that grows by hundreds of megabytes at once (here a sparse extension
// of 256 MiB of zero bytes) is loaded again with Load's limits, not read into memory by
// the tail: the heap allocated by the refresh stays a small part of the growth. (The tail
// used to allocate a buffer of the whole growth.)
func TestLiveRefreshDoesNotReadAHugeGrowthIntoMemory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	line := `{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hi","timestamp":1}}`
	testfile.Write(t, path, regularHeader+"\n"+line+"\n")
	l, err := OpenLive(path)
	if err != nil {
		t.Fatal(err)
	}
	const growth = 256 << 20
	st, _ := os.Stat(path)
	if err := os.Truncate(path, st.Size()+growth); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, rerr := l.Refresh()
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	if allocated > growth/8 {
		t.Errorf("the refresh allocated %d MB for a growth of %d MB", allocated>>20, growth>>20)
	}
	if rerr != nil && !errors.Is(rerr, ErrTooLarge) {
		t.Errorf("Refresh: %v", rerr)
	}
	if len(l.Index.File.Entries) != 1 {
		t.Errorf("%d entries after the refresh, want the one message", len(l.Index.File.Entries))
	}
	t.Logf("RESULT live growth: a 256 MiB sparse growth refreshed with %d MB allocated (err %v)", allocated>>20, rerr)
}
