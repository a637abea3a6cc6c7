package rpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	sg "github.com/sourcegraph/jsonrpc2"

	"github.com/pi-lsp/pi-lsp/internal/gen"
	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// latencyClient is a minimal client that timestamps the notifications it cares about.
type latencyClient struct {
	mu       sync.Mutex
	begins   []time.Time
	changed  []time.Time
	entries  []int // entry count of each pi/sessionChanged
	onChange chan struct{}
}

func (c *latencyClient) Handle(ctx context.Context, conn *sg.Conn, req *sg.Request) {
	now := time.Now()
	switch req.Method {
	case "window/workDoneProgress/create":
		_ = conn.Reply(ctx, req.ID, nil)
	case "$/progress":
		var p struct {
			Value struct{ Kind string } `json:"value"`
		}
		if req.Params != nil && json.Unmarshal(*req.Params, &p) == nil && p.Value.Kind == "begin" {
			c.mu.Lock()
			c.begins = append(c.begins, now)
			c.mu.Unlock()
		}
	case "pi/sessionChanged":
		var p struct{ Entries int }
		if req.Params != nil {
			_ = json.Unmarshal(*req.Params, &p)
		}
		c.mu.Lock()
		c.changed = append(c.changed, now)
		c.entries = append(c.entries, p.Entries)
		c.mu.Unlock()
		select {
		case c.onChange <- struct{}{}:
		default:
		}
	default:
		if !req.Notif {
			_ = conn.Reply(ctx, req.ID, nil)
		}
	}
}

type rwc struct {
	r *os.File
	w *os.File
}

func (c rwc) Read(p []byte) (int, error)  { return c.r.Read(p) }
func (c rwc) Write(p []byte) (int, error) { return c.w.Write(p) }
func (c rwc) Close() error                { c.w.Close(); return c.r.Close() }

func percentile(d []time.Duration, p float64) time.Duration {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[min(len(d)-1, int(float64(len(d))*p))]
}

// BenchmarkLSPLatency measures, on a generated session of PI_LSP_BENCH_MB megabytes
// (default 100): pi/tree and pi/context p50/p99 with 100 concurrent requests, the time
// from a compact request to its first $/progress begin, and from an appended line to
// pi/sessionChanged. Run with: go test -run '^$' -bench LSPLatency -benchtime 1x ./internal/rpc/
func BenchmarkLSPLatency(b *testing.B) {
	mb := 100
	if v, err := strconv.Atoi(os.Getenv("PI_LSP_BENCH_MB")); err == nil && v > 0 {
		mb = v
	}
	root := b.TempDir()
	agent := filepath.Join(root, "agent")
	work := filepath.Join(root, "work")
	b.Setenv("HOME", filepath.Join(root, "home"))
	b.Setenv("PI_CODING_AGENT_DIR", agent)
	b.Setenv("XDG_CACHE_HOME", filepath.Join(root, "cache"))
	dir := session.SessionDir(agent, work)
	os.MkdirAll(dir, 0o755)
	os.MkdirAll(work, 0o755)
	path := filepath.Join(dir, "2026-01-01T00-00-00-000Z_bench.jsonl")
	f, _ := os.Create(path)
	if err := gen.Write(f, gen.Options{Entries: mb * 620, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	f.Close()

	// Kernel pipes, as an editor's stdio: buffered, unlike net.Pipe.
	c2sR, c2sW, _ := os.Pipe()
	s2cR, s2cW, _ := os.Pipe()
	clientEnd := rwc{s2cR, c2sW}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	defer c2sW.Close()
	go rpc.Serve(ctx, c2sR, s2cW, c2sR, rpc.Options{AgentDir: agent, SoftThreshold: -1, Debounce: 20 * time.Millisecond, WatchInterval: time.Second})
	lc := &latencyClient{onChange: make(chan struct{}, 16)}
	conn := sg.NewConn(ctx, sg.NewBufferedStream(clientEnd, sg.VSCodeObjectCodec{}), lc)
	defer conn.Close()
	var init json.RawMessage
	if err := conn.Call(ctx, "initialize", map[string]any{"processId": nil, "rootUri": "file://" + work,
		"capabilities": map[string]any{"window": map[string]any{"workDoneProgress": true}}}, &init); err != nil {
		b.Fatal(err)
	}
	conn.Notify(ctx, "initialized", map[string]any{})
	var warm json.RawMessage
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	defer wcancel()
	if err := conn.Call(wctx, "pi/context", map[string]any{}, &warm); err != nil { // first load
		b.Fatalf("first pi/context: %v", err)
	}
	b.ResetTimer()
	concurrent := func(method string, params map[string]any) (p50, p99 time.Duration) {
		var wg sync.WaitGroup
		lat := make([]time.Duration, 100)
		for i := range lat {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				start := time.Now()
				var out json.RawMessage
				cctx, ccancel := context.WithTimeout(ctx, time.Minute)
				defer ccancel()
				if err := conn.Call(cctx, method, params, &out); err != nil {
					b.Errorf("%s: %v", method, err)
				}
				lat[i] = time.Since(start)
			}(i)
		}
		wg.Wait()
		return percentile(lat, 0.5), percentile(lat, 0.99)
	}
	for i := 0; i < b.N; i++ {
		c50, c99 := concurrent("pi/context", map[string]any{})
		// The flat form: a linear session of this size nests deeper than Go's decoder
		// allows. One page, as an editor's tree view asks for what it shows.
		t50, t99 := concurrent("pi/tree", map[string]any{"flat": true, "limit": 500})
		// The whole tree once (an editor opening the view): its size, not the server,
		// bounds it, so one request is timed rather than 100 concurrent copies.
		fullStart := time.Now()
		var full json.RawMessage
		if err := conn.Call(ctx, "pi/tree", map[string]any{"flat": true}, &full); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(time.Since(fullStart).Microseconds())/1000, "tree-full-ms")
		b.ReportMetric(float64(len(full))/1e6, "tree-full-MB")
		b.ReportMetric(float64(c50.Microseconds())/1000, "context-p50-ms")
		b.ReportMetric(float64(c99.Microseconds())/1000, "context-p99-ms")
		b.ReportMetric(float64(t50.Microseconds())/1000, "tree-p50-ms")
		b.ReportMetric(float64(t99.Microseconds())/1000, "tree-p99-ms")

		// First $/progress begin of a compaction (cancelled right after).
		lc.mu.Lock()
		nb := len(lc.begins)
		lc.mu.Unlock()
		start := time.Now()
		cctx, ccancel := context.WithCancel(ctx)
		go func() {
			var out json.RawMessage
			_ = conn.Call(cctx, "pi/compact", map[string]any{"instructions": fmt.Sprint(i)}, &out)
		}()
		for {
			lc.mu.Lock()
			got := len(lc.begins) > nb
			var at time.Time
			if got {
				at = lc.begins[nb]
			}
			lc.mu.Unlock()
			if got {
				b.ReportMetric(float64(at.Sub(start).Microseconds())/1000, "progress-begin-ms")
				break
			}
			time.Sleep(100 * time.Microsecond)
		}
		ccancel()

		// An appended line reaching the editor: the first pi/sessionChanged that counts it.
		time.Sleep(300 * time.Millisecond)
		raw, _ := os.ReadFile(path)
		want := 0
		for _, c := range raw {
			if c == '\n' {
				want++
			}
		} // lines = header + entries, so after one more line: entries == want
		fa, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		appendAt := time.Now()
		fa.WriteString(`{"type":"custom","id":"bench` + strconv.Itoa(i) + `","parentId":null,"timestamp":"2026-01-02T00:00:00.000Z","customType":"bench"}` + "\n")
		fa.Close()
		deadline := time.After(10 * time.Second)
	wait:
		for {
			select {
			case <-lc.onChange:
				lc.mu.Lock()
				for k, n := range lc.entries {
					if n >= want && lc.changed[k].After(appendAt) {
						b.ReportMetric(float64(lc.changed[k].Sub(appendAt).Microseconds())/1000, "append-to-changed-ms")
						lc.mu.Unlock()
						break wait
					}
				}
				lc.mu.Unlock()
			case <-deadline:
				b.Fatal("no pi/sessionChanged after an append")
			}
		}
	}
}
