package rpc_test

import (
	"fmt"
	"math/rand"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
)

// TestConcurrentRequests sends 200 requests at once (tree, context, files and slow
// compactions over four sessions), cancels a third of them, and checks that each is
// answered exactly once with a right result or -32800, that every progress ends, and
// that nothing is left running once the connection is closed. Run it with -race.
func TestConcurrentRequests(t *testing.T) {
	baseline := runtime.NumGoroutine()
	llm := fakemodel.NewSummarizer(t)
	llm.Set(func(f *fakemodel.Summarizer) { f.Delay = 15 * time.Millisecond; f.Chunks = 4 })
	e, _ := compactEnv(t, llm, lsptest.Config{Corpus: []string{"auto-threshold", "auto-threshold", "auto-threshold", "auto-threshold"}})
	sessions := e.Paths
	rng := rand.New(rand.NewSource(1))

	type req struct {
		p         *lsptest.Pending
		cancelled bool
	}
	const n = 200
	reqs := make([]req, n)
	cancel := map[int]bool{}
	for _, i := range rng.Perm(n)[:n/3] {
		cancel[i] = true
	}
	for i := range n {
		sess := sessions[rng.Intn(len(sessions))]
		var method string
		var params map[string]any
		switch i % 6 {
		case 0:
			method, params = "pi/compact", map[string]any{"session": sess}
		case 1:
			method, params = "workspace/executeCommand", map[string]any{"command": "pi.tree", "arguments": []any{map[string]any{"session": sess}}}
		case 2:
			method, params = "pi/context", map[string]any{"session": sess}
		case 3:
			method, params = "pi/files", map[string]any{}
		case 4:
			method, params = "pi/tree", map[string]any{"session": sess}
		case 5:
			method, params = "workspace/executeCommand", map[string]any{"command": "pi.compact", "arguments": []any{map[string]any{"session": sess}}}
		}
		reqs[i] = req{p: e.Start(method, params, i%2 == 1)}
		if cancel[i] {
			reqs[i].cancelled = true
			r := reqs[i]
			delay := time.Duration(rng.Intn(40)) * time.Millisecond
			go func() {
				time.Sleep(delay)
				r.p.Cancel()
			}()
		}
	}
	var exps []lsptest.Expectation
	for _, r := range reqs {
		exps = append(exps, lsptest.ResponseTo(r.p.ID))
	}
	msgs := e.Await(60*time.Second, exps...)
	// Let late duplicates, if any, arrive before counting.
	time.Sleep(200 * time.Millisecond)
	msgs = e.Messages()
	count := map[string]int{}
	byID := map[string]lsptest.Msg{}
	for _, m := range msgs {
		if m.Kind == lsptest.KindResponse {
			count[m.ID]++
			byID[m.ID] = m
		}
	}
	cancelledAnswers, cancelledCompactions, compacted := 0, 0, 0
	for i, r := range reqs {
		id := r.p.ID
		if count[id] != 1 {
			t.Errorf("request %d (%s) answered %d times", i, r.p.Method, count[id])
			continue
		}
		m := byID[id]
		if m.Err != nil {
			if m.Err.Code == 0 {
				t.Errorf("request %d: error code 0", i)
			}
			if int64(m.Err.Code) == rpc.CodeRequestCancelled && r.cancelled {
				cancelledAnswers++
				if i%6 == 0 || i%6 == 5 {
					cancelledCompactions++
				}
				continue
			}
			t.Errorf("request %d (%s, cancelled=%v): error %d %s", i, r.p.Method, r.cancelled, m.Err.Code, m.Err.Message)
			continue
		}
		res := lsptest.Fields(m.Result)
		switch {
		case i%6 == 0 || i%6 == 5:
			if _, ok := res["entry"]; ok {
				compacted++
			} else if res["nothingToCompact"] != true {
				t.Errorf("request %d: compact answer %s", i, lsptest.Trunc(m.Result))
			}
		case i%6 == 1 || i%6 == 4:
			if _, ok := res["roots"]; !ok || res["session"] == nil {
				t.Errorf("request %d: tree answer %s", i, lsptest.Trunc(m.Result))
			}
		case i%6 == 2:
			if _, ok := res["messageCount"]; !ok {
				t.Errorf("request %d: context answer %s", i, lsptest.Trunc(m.Result))
			}
		case i%6 == 3:
			if _, ok := res["readFiles"]; !ok {
				t.Errorf("request %d: files answer %s", i, lsptest.Trunc(m.Result))
			}
		}
	}
	if compacted == 0 || cancelledCompactions == 0 {
		t.Errorf("%d compactions written, %d cancelled: the mix did not exercise both", compacted, cancelledCompactions)
	}
	t.Logf("%d cancelled answers (%d compactions), %d compactions written", cancelledAnswers, cancelledCompactions, compacted)
	// Every begun progress ends.
	e.Await(5*time.Second, lsptest.Expectation{Desc: "every progress ended", Check: func(msgs []lsptest.Msg) lsptest.Verdict {
		open := map[string]bool{}
		for _, p := range lsptest.Progresses(msgs) {
			switch p.Kind {
			case "begin":
				open[p.Token] = true
			case "end":
				delete(open, p.Token)
			}
		}
		if len(open) == 0 {
			return lsptest.Met
		}
		return lsptest.Unmet
	}})
	// Every session file still loads: no torn or interleaved writes.
	for _, s := range sessions {
		if _, err := e.Call("pi/context", map[string]any{"session": s}); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}

	// Close everything and check that no goroutine outlives the connection.
	e.Close()
	llm.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		now := runtime.NumGoroutine()
		if now <= baseline {
			break
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("goroutines: %d before, %d after closing\n%s", baseline, now, filterStacks(string(buf)))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// filterStacks keeps the goroutines that run pi-lsp or library code.
func filterStacks(all string) string {
	var out []string
	for _, g := range strings.Split(all, "\n\n") {
		if strings.Contains(g, "pi-lsp/internal") || strings.Contains(g, "jsonrpc2") || strings.Contains(g, "fsnotify") || strings.Contains(g, "net/http") {
			out = append(out, g)
		}
	}
	return fmt.Sprintf("%d goroutines of interest:\n%s", len(out), strings.Join(out, "\n\n"))
}
