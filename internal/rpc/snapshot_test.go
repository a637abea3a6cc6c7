package rpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// TestCompactionJobWorksOnItsSnapshot: a compaction computes on a snapshot of the
// session taken when it starts. While it waits for its hook, another writer appends to
// the file and the server refreshes its followed index (pi/sessionChanged names the new
// leaf); the job's view does not change with it, so its write is refused as a
// concurrent change (ContentModified) and the file is exactly what the other writer
// left.
func TestCompactionJobWorksOnItsSnapshot(t *testing.T) {
	llm := fakemodel.NewSummarizer(t)
	var e *lsptest.Env
	var path, line string
	const other = "0e0e0e0e"
	envReady := make(chan struct{})
	first := true
	e, path = compactEnv(t, llm, lsptest.Config{ClientHooks: true, Hooks: lsptest.Hooks{
		BeforeCompact: func(ctx context.Context, p json.RawMessage) (any, error) {
			<-envReady
			if first {
				first = false
				f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					return nil, err
				}
				_, err = f.WriteString(line)
				f.Close()
				if err != nil {
					return nil, err
				}
				// The server follows the file while the job waits: its index now ends
				// at the other writer's entry.
				e.Await(10*time.Second, lsptest.NotificationMatching("pi/sessionChanged", "the other writer's leaf", lsptest.Has(map[string]any{"leafId": other})))
			}
			return map[string]any{"summary": "A summary of the path the job was started on."}, nil
		}}})
	line = fmt.Sprintf(`{"type":"custom","id":%q,"parentId":%q,"timestamp":"2025-01-01T00:00:00.000Z","customType":"another-writer"}`+"\n", other, sessiontest.Last(t, path).ID)
	before := sessiontest.Read(t, path)
	close(envReady)
	_, err := e.Compact(nil)
	var ce *lsptest.CallError
	if !errors.As(err, &ce) || ce.Code != rpc.CodeContentModified {
		t.Fatalf("answer %v, want ContentModified (%d): the session changed while compacting", err, rpc.CodeContentModified)
	}
	if after := sessiontest.Read(t, path); !bytes.Equal(after, append(before, line...)) {
		t.Fatalf("the file is not what the other writer left:\n%s", after[len(before):])
	}
	// The next job takes a snapshot of the session as it now is, and writes.
	res, err := e.Call("pi/compact", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Entry struct {
			ParentID string `json:"parentId"`
		} `json:"entry"`
	}
	if err := json.Unmarshal(res, &c); err != nil || c.Entry.ParentID != other {
		t.Errorf("the second compaction %s: want it on the other writer's entry %s (%v)", lsptest.Trunc(res), other, err)
	}
	if n := llm.Requests.Load(); n != 0 {
		t.Errorf("summarizer called %d times", n)
	}
}
