package rpc_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/benchgen"
	"github.com/pi-lsp/pi-lsp/internal/jsjson"
	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// latencyClient is a minimal client that timestamps the notifications it cares about.
type latencyClient struct {
	mu       sync.Mutex
	begins   []time.Time
	changed  []time.Time
	entries  []int // entry count of each pi/sessionChanged
	onChange chan struct{}
}

// handle records a message the server sent (a notification or a request) and answers
// requests.
func (c *latencyClient) handle(rc *rawClient, method string, id, params []byte, now time.Time) {
	switch method {
	case "$/progress":
		var p struct {
			Value struct{ Kind string } `json:"value"`
		}
		if json.Unmarshal(params, &p) == nil && p.Value.Kind == "begin" {
			c.mu.Lock()
			c.begins = append(c.begins, now)
			c.mu.Unlock()
		}
	case "pi/sessionChanged":
		var p struct{ Entries int }
		_ = json.Unmarshal(params, &p)
		c.mu.Lock()
		c.changed = append(c.changed, now)
		c.entries = append(c.entries, p.Entries)
		c.mu.Unlock()
		select {
		case c.onChange <- struct{}{}:
		default:
		}
	}
	if id != nil { // a request (window/workDoneProgress/create, ...): answer null
		rc.send([]byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":null}`))
	}
}

// rawClient is the editor's side of the pipe, kept lean so that what is measured is the
// server: a response counts as arrived when its whole frame has been read; its body is
// only split into members (one validating scan), not decoded.
type rawClient struct {
	w       *os.File
	wmu     sync.Mutex
	r       *bufio.Reader
	next    atomic.Int64
	mu      sync.Mutex
	waiting map[string]chan rawReply
	lc      *latencyClient
}

type rawReply struct {
	result, err []byte
}

func newRawClient(r, w *os.File, lc *latencyClient) *rawClient {
	c := &rawClient{w: w, r: bufio.NewReaderSize(r, 1<<20), waiting: map[string]chan rawReply{}, lc: lc}
	go c.readLoop()
	return c
}

func (c *rawClient) send(body []byte) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	fmt.Fprintf(c.w, "Content-Length: %d\r\n\r\n%s", len(body), body)
}

func (c *rawClient) Call(ctx context.Context, method string, params any, out *json.RawMessage) error {
	id := strconv.FormatInt(c.next.Add(1), 10)
	ch := make(chan rawReply, 1)
	c.mu.Lock()
	c.waiting[id] = ch
	c.mu.Unlock()
	p, _ := json.Marshal(params)
	c.send([]byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + string(p) + `}`))
	select {
	case r := <-ch:
		if r.err != nil {
			return fmt.Errorf("%s: %s", method, r.err)
		}
		if out != nil {
			*out = r.result
		}
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.waiting, id)
		c.mu.Unlock()
		// As an editor does: the server stops the job (a compaction left running would
		// go on using a core, and write, while the next figures are taken).
		c.send([]byte(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":` + id + `}}`))
		return ctx.Err()
	}
}

func (c *rawClient) Notify(method string, params any) {
	p, _ := json.Marshal(params)
	c.send([]byte(`{"jsonrpc":"2.0","method":"` + method + `","params":` + string(p) + `}`))
}

// skimMembers splits a JSON object from a trusted peer into its top-level members
// without validating or decoding the values (a client reading a large answer does not
// have to decode it to know it arrived).
func skimMembers(b []byte) []jsjson.Field {
	var out []jsjson.Field
	i := bytes.IndexByte(b, '{') + 1
	skipString := func(i int) int { // b[i] is '"'; returns the index after the closing quote
		for j := i + 1; ; {
			k := bytes.IndexAny(b[j:], `"\`)
			if k < 0 {
				return len(b)
			}
			if b[j+k] == '"' {
				return j + k + 1
			}
			j += k + 2
		}
	}
	for i > 0 && i < len(b) {
		for i < len(b) && b[i] != '"' && b[i] != '}' {
			i++
		}
		if i >= len(b) || b[i] == '}' {
			break
		}
		ks := i
		i = skipString(i)
		key, _ := jsjson.StringValue(b[ks:i])
		for i < len(b) && b[i] != ':' {
			i++
		}
		i++
		for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
			i++
		}
		vs, depth := i, 0
		for i < len(b) {
			c := b[i]
			if c == '"' {
				i = skipString(i)
				if depth == 0 {
					break
				}
				continue
			}
			if c == '{' || c == '[' {
				depth++
			} else if c == '}' || c == ']' {
				if depth == 0 {
					break
				}
				depth--
				if depth == 0 {
					i++
					break
				}
			} else if c == ',' && depth == 0 {
				break
			}
			i++
		}
		out = append(out, jsjson.Field{Key: key, Value: bytes.TrimSpace(b[vs:i])})
		if i < len(b) && b[i] == ',' {
			i++
		}
	}
	return out
}

func (c *rawClient) readLoop() {
	for {
		n := -1
		for {
			line, err := c.r.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimSpace(line)
			if line == "" {
				break
			}
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				n, _ = strconv.Atoi(v)
			}
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(c.r, body); err != nil {
			return
		}
		now := time.Now()
		var id, method, result, errv, params []byte
		if rest, ok := bytes.CutPrefix(body, []byte(`{"jsonrpc":"2.0","id":`)); ok {
			// The server's own framing of a shared answer: id, then the result, last.
			if k := bytes.Index(rest, []byte(`,"result":`)); k > 0 && k < 32 {
				c.deliver(rest[:k], bytes.TrimSuffix(rest[k+len(`,"result":`):], []byte("}")), nil)
				continue
			}
		}
		for _, f := range skimMembers(body) {
			switch f.Key {
			case "id":
				id = f.Value
			case "method":
				method = f.Value
			case "result":
				result = f.Value
			case "error":
				errv = f.Value
			case "params":
				params = f.Value
			}
		}
		if method != nil {
			m, _ := jsjson.StringValue(method)
			c.lc.handle(c, m, id, params, now)
			continue
		}
		c.deliver(id, result, errv)
	}
}

func (c *rawClient) deliver(id, result, errv []byte) {
	c.mu.Lock()
	ch := c.waiting[string(id)]
	delete(c.waiting, string(id))
	c.mu.Unlock()
	if ch != nil {
		ch <- rawReply{result: result, err: errv}
	}
}

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
	agent := isolate.Under(b, root, filepath.Join(root, "agent")).AgentDir
	work := filepath.Join(root, "work")
	dir := session.SessionDir(agent, work)
	os.MkdirAll(dir, 0o755)
	os.MkdirAll(work, 0o755)
	path := filepath.Join(dir, "2026-01-01T00-00-00-000Z_bench.jsonl")
	sessiontest.Generate(b, path, benchgen.Options{Entries: mb * 620, Seed: 1})

	// Kernel pipes, as an editor's stdio: buffered, unlike net.Pipe.
	c2sR, c2sW, _ := os.Pipe()
	s2cR, s2cW, _ := os.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	defer c2sW.Close()
	// The default interval between notifications, as users get it.
	go rpc.Serve(ctx, c2sR, s2cW, c2sR, rpc.Options{AgentDir: agent, SoftThreshold: -1, WatchInterval: time.Second})
	lc := &latencyClient{onChange: make(chan struct{}, 16)}
	conn := newRawClient(s2cR, c2sW, lc)
	var init json.RawMessage
	if err := conn.Call(ctx, "initialize", map[string]any{"processId": nil, "rootUri": "file://" + work,
		"capabilities": map[string]any{"window": map[string]any{"workDoneProgress": true}}}, &init); err != nil {
		b.Fatal(err)
	}
	conn.Notify("initialized", map[string]any{})
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
		if i == 0 {
			// The first pages after the session's load: its entries' previews are made
			// then, and the collector's first cycle after the load runs beside them.
			b.ReportMetric(float64(t50.Microseconds())/1000, "tree-first-p50-ms")
			b.ReportMetric(float64(t99.Microseconds())/1000, "tree-first-p99-ms")
		}

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

		// Appended lines reaching the editor: for each of 30 appends, spaced as an agent's
		// turns are, the first pi/sessionChanged that counts it.
		time.Sleep(300 * time.Millisecond)
		raw, _ := os.ReadFile(path)
		want := 0
		for _, c := range raw {
			if c == '\n' {
				want++
			}
		} // lines = header + entries, so after one more line: entries == want
		var appendLat []time.Duration
		for k := 0; k < 30; k++ {
			fa, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			appendAt := time.Now()
			fa.WriteString(`{"type":"custom","id":"bench` + strconv.Itoa(i) + "-" + strconv.Itoa(k) + `","parentId":null,"timestamp":"2026-01-02T00:00:00.000Z","customType":"bench"}` + "\n")
			fa.Close()
			deadline := time.After(10 * time.Second)
		wait:
			for {
				select {
				case <-lc.onChange:
					lc.mu.Lock()
					for m, n := range lc.entries {
						if n >= want && lc.changed[m].After(appendAt) {
							appendLat = append(appendLat, lc.changed[m].Sub(appendAt))
							lc.mu.Unlock()
							break wait
						}
					}
					lc.mu.Unlock()
				case <-deadline:
					b.Fatal("no pi/sessionChanged after an append")
				}
			}
			want++
			time.Sleep(150 * time.Millisecond)
		}
		b.ReportMetric(float64(percentile(appendLat, 0.5).Microseconds())/1000, "append-to-changed-ms")
		b.ReportMetric(float64(percentile(appendLat, 0.99).Microseconds())/1000, "append-to-changed-p99-ms")
	}
}
