package reliability

// Load: an open-loop client sends mixed reads (pi/context, pi/files, pi/tree) at a
// target of 1,000 requests per second, plus compactions with a slow summarizer that
// are cancelled shortly after they start, against the in-process server on a large
// generated session. Every request is answered (cancelled compactions with the
// cancellation error, nothing else with an error), and afterwards the goroutines and
// the heap return to their baseline.
//
// Default: 5 s on a ~5 MB session. PI_LSP_LONG=1: 60 s on a ~100 MB session.
// PI_LSP_LOAD_RATE overrides the target rate, PI_LSP_LOAD_TREE the share of pi/tree
// among the reads in percent (default 10; the rest is split between pi/context and
// pi/files).

import (
	"context"
	"fmt"
	"math/rand"
	"net/http"
	"os"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/benchgen"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
)

type sample struct {
	method string
	d      time.Duration
	err    error
	// afterCancel is how long the answer took after the request was cancelled.
	afterCancel time.Duration
	cancelled   bool
}

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	i := int(float64(len(ds)-1) * p)
	return ds[i]
}

// settle collects garbage (several times: sync.Pool buffers survive one collection),
// drops idle HTTP connections (their goroutines are the transport's, not leaks), and
// returns the goroutine count and live heap.
func settle() (int, uint64) {
	if tr, ok := http.DefaultTransport.(*http.Transport); ok {
		tr.CloseIdleConnections()
	}
	time.Sleep(300 * time.Millisecond)
	for i := 0; i < 3; i++ {
		runtime.GC()
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return runtime.NumGoroutine(), ms.HeapAlloc
}

func TestLoadMixedRequests(t *testing.T) {
	long := os.Getenv("PI_LSP_LONG") == "1"
	duration, sizeMB := 5*time.Second, 5
	if long {
		duration, sizeMB = 60*time.Second, 100
	}
	rate, treePct := 1000, 10
	if s := os.Getenv("PI_LSP_LOAD_RATE"); s != "" {
		rate, _ = strconv.Atoi(s)
	}
	if s := os.Getenv("PI_LSP_LOAD_TREE"); s != "" {
		treePct, _ = strconv.Atoi(s)
	}
	start := time.Now()
	// About 1.6 KB per generated entry.
	agentDir, workspace, path := generatedSession(t, benchgen.Options{Entries: sizeMB << 20 / 1600, Seed: 9, BranchEvery: 7, CompactEvery: 25})
	st, _ := os.Stat(path)
	t.Logf("session: %d MB generated in %v", st.Size()>>20, time.Since(start).Round(time.Millisecond))

	llm := fakemodel.New(t)
	llm.SetFallback(fakemodel.Stream("## Goal\nslow summary", fakemodel.StreamOpts{Chunks: 100, Delay: 50 * time.Millisecond}))
	c := startServer(t, serverConfig{AgentDir: agentDir, Workspace: workspace,
		InitOptions: map[string]any{"summarizer": "openai", "baseUrl": llm.URL, "model": "fake-summarizer", "apiKeyEnv": "PI_LSP_LOAD_KEY"}})
	t.Setenv("PI_LSP_LOAD_KEY", "k")

	// Warm-up: the first read loads and indexes the session; one cancelled compaction.
	warm := time.Now()
	for _, m := range []string{"pi/context", "pi/files", "pi/tree"} {
		c.mustCall(m, map[string]any{})
	}
	t.Logf("warm-up (load and index): %v", time.Since(warm).Round(time.Millisecond))
	cctx, ccancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	if _, err := c.call(cctx, "pi/compact", map[string]any{}); kindOf(err) != "cancelled" {
		t.Fatalf("warm-up compaction: %v", err)
	}
	ccancel()
	goBefore, heapBefore := settle()
	before := llm.Count()

	var (
		mu       sync.Mutex
		samples  []sample
		inflight atomic.Int64
		maxIn    int64
		wg       sync.WaitGroup
		skipped  int // ticks with the in-flight cap reached
	)
	const maxInflight = 256
	r := rand.New(rand.NewSource(1))
	issue := func(method string, params map[string]any, cancelAfter time.Duration) {
		wg.Add(1)
		n := inflight.Add(1)
		mu.Lock()
		maxIn = max(maxIn, n)
		mu.Unlock()
		go func() {
			defer wg.Done()
			defer inflight.Add(-1)
			ctx := context.Background()
			if cancelAfter > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, cancelAfter)
				defer cancel()
			}
			t0 := time.Now()
			_, err := c.call(ctx, method, params)
			d := time.Since(t0)
			smp := sample{method: method, d: d, err: err}
			if cancelAfter > 0 && ctx.Err() != nil {
				smp.cancelled, smp.afterCancel = true, max(0, d-cancelAfter)
			}
			mu.Lock()
			samples = append(samples, smp)
			mu.Unlock()
		}()
	}
	t0 := time.Now()
	sent, compactions := 0, 0
	nextCompact := t0
	for {
		now := time.Now()
		elapsed := now.Sub(t0)
		if elapsed >= duration {
			break
		}
		// Two cancelled compactions per second, each cancelled 10-200 ms after it was
		// sent (before it starts, while it waits for the session's job lock, while it
		// loads, or while the summary streams).
		if !now.Before(nextCompact) {
			issue("pi/compact", map[string]any{}, time.Duration(10+r.Intn(190))*time.Millisecond)
			compactions++
			sent++
			nextCompact = nextCompact.Add(500 * time.Millisecond)
		}
		due := int(elapsed.Seconds()*float64(rate)) - sent
		for i := 0; i < due; i++ {
			if inflight.Load() >= maxInflight {
				skipped++
				sent++ // open loop: a request the client could not send in time is not retried
				continue
			}
			m := "pi/tree"
			if x := r.Intn(100); x >= treePct {
				m = []string{"pi/context", "pi/files"}[x%2]
			}
			issue(m, map[string]any{}, 0)
			sent++
		}
		time.Sleep(time.Millisecond)
	}
	sendTime := time.Since(t0)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(answerTimeout + time.Minute):
		t.Fatalf("%d requests still unanswered %v after the load stopped", inflight.Load(), answerTimeout+time.Minute)
	}
	total := time.Since(t0)
	// Wind-down (answers flushed, connections closed, jobs returning) takes a moment on a
	// loaded machine: wait for the baseline, up to a bound, instead of a fixed sleep.
	heapLimit := heapBefore + max(heapBefore/5, 16<<20)
	goAfter, heapAfter := settle()
	for deadline := time.Now().Add(15 * time.Second); (goAfter > goBefore+2 || heapAfter > heapLimit) && time.Now().Before(deadline); {
		goAfter, heapAfter = settle()
	}

	// Figures.
	byMethod := map[string][]time.Duration{}
	var all, afterCancel []time.Duration
	errs, cancelled, compactDone := 0, 0, 0
	for _, s := range samples {
		switch {
		case s.err == nil:
			if s.method == "pi/compact" {
				compactDone++ // finished before its cancellation: it wrote a compaction
			}
		case s.method == "pi/compact" && kindOf(s.err) == "cancelled":
			cancelled++
		default:
			errs++
			if errs <= 5 {
				t.Errorf("%s failed: %v", s.method, s.err)
			}
		}
		if s.method != "pi/compact" {
			byMethod[s.method] = append(byMethod[s.method], s.d)
			all = append(all, s.d)
		}
		if s.cancelled {
			afterCancel = append(afterCancel, s.afterCancel)
		}
	}
	sort.Slice(afterCancel, func(i, j int) bool { return afterCancel[i] < afterCancel[j] })
	for _, ds := range byMethod {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	answered := len(samples)
	achieved := float64(answered) / total.Seconds()
	line := fmt.Sprintf("RESULT load: %d MB session, target %d req/s (%d%% pi/tree) for %v: sent %d (%d not sent: %d in flight at most, cap %d), answered %d in %v = %.0f req/s; reads p50 %v p99 %v",
		st.Size()>>20, rate, treePct, duration, sent-skipped, skipped, maxIn, maxInflight, answered, total.Round(time.Millisecond), achieved,
		percentile(all, 0.5).Round(time.Microsecond), percentile(all, 0.99).Round(time.Microsecond))
	for _, m := range []string{"pi/context", "pi/files", "pi/tree"} {
		ds := byMethod[m]
		line += fmt.Sprintf("; %s n=%d p50 %v p99 %v", m, len(ds), percentile(ds, 0.5).Round(time.Microsecond), percentile(ds, 0.99).Round(time.Microsecond))
	}
	line += fmt.Sprintf("; compactions %d (cancelled %d, finished first %d, summary requests %d; answered after the cancellation in p50 %v, max %v); errors %d; goroutines %d → %d; heap %d MB → %d MB (sending took %v)",
		compactions, cancelled, compactDone, llm.Count()-before, percentile(afterCancel, 0.5).Round(time.Millisecond), percentile(afterCancel, 1).Round(time.Millisecond),
		errs, goBefore, goAfter, heapBefore>>20, heapAfter>>20, sendTime.Round(time.Millisecond))
	t.Log(line)

	if answered != sent-skipped {
		t.Errorf("%d requests sent, %d answered", sent-skipped, answered)
	}
	if errs > 0 {
		t.Errorf("%d requests failed", errs)
	}
	if goAfter > goBefore+2 {
		buf := make([]byte, 1<<20)
		t.Errorf("goroutines did not return to the baseline: %d → %d\n%s", goBefore, goAfter, buf[:runtime.Stack(buf, true)])
	}
	if heapAfter > heapLimit {
		t.Errorf("heap did not return to the baseline: %d MB → %d MB", heapBefore>>20, heapAfter>>20)
	}
}
