package reliability

// Cancellation at every phase of a compaction (compaction.Run) and of a navigation with
// a branch summary (branch.Navigate) writes nothing partial: a call that returns an
// error leaves the file byte-identical, a call that succeeds appended exactly its whole
// entries, and the file always loads.

import (
	"bytes"
	"context"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/benchgen"
	"github.com/pi-lsp/pi-lsp/internal/branch"
	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

var cancelSettings = session.CompactionSettings{Enabled: true, ReserveTokens: 16384, KeepRecentTokens: 2000}

// genSession writes a generated session of n entries (with branches) and returns its
// path.
func genSession(t testing.TB, n int, seed int64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "2026-01-01T00-00-00-000Z_0190a000-0000-7000-8000-000000000001.jsonl")
	sessiontest.Generate(t, path, benchgen.Options{Entries: n, Seed: seed, BranchEvery: 5})
	return path
}

// checkOutcome checks the all-or-nothing rule of one job: on error the file is
// byte-identical; on success it grew by exactly wantAdded whole entries of the given
// types, appended after the old bytes.
func checkOutcome(t *testing.T, path string, before []byte, err error, wantTypes ...string) (written bool) {
	t.Helper()
	after := sessiontest.Read(t, path)
	if err != nil {
		if !bytes.Equal(before, after) {
			t.Fatalf("the job failed (%v) but the file changed (%d → %d bytes)", err, len(before), len(after))
		}
		return false
	}
	if !bytes.HasPrefix(after, before) || len(after) == len(before) || after[len(after)-1] != '\n' {
		t.Fatalf("the job succeeded but the file is not the old bytes plus whole lines")
	}
	f, perr := session.Parse(after)
	if perr != nil || f.Torn || len(f.Skipped) != 0 {
		t.Fatalf("the file does not load cleanly after the job: err=%v torn=%v skipped=%v", perr, f.Torn, f.Skipped)
	}
	old, _ := session.Parse(before)
	added := f.Entries[len(old.Entries):]
	if len(added) != len(wantTypes) {
		t.Fatalf("%d entries appended, want %d (%v)", len(added), len(wantTypes), wantTypes)
	}
	for i, e := range added {
		if e.Type != wantTypes[i] {
			t.Fatalf("appended entry %d is a %s, want %s", i, e.Type, wantTypes[i])
		}
	}
	return true
}

func isCancelled(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, compaction.ErrCancelled)
}

func openAI(url string) *compaction.ModelSummarizer {
	return fakemodel.NewOpenAI(fakemodel.OpenAIConfig{BaseURL: url, Model: "fake-summarizer", APIKey: "k",
		RetryLimits: compaction.RetryLimits{MaxRetries: 3, RetryBase: 10 * time.Millisecond, StallTimeout: 5 * time.Second, TotalTimeout: time.Minute}})
}

// phaseCase is one controlled cancellation point of a job.
type phaseCase struct {
	name        string
	cancelAt    string // phase name, "start", "chunk" or "retry"
	wantErr     bool
	maxRequests int
}

// cancelAtPhase runs job against a scripted summarizer under a context that is
// cancelled at c.cancelAt: a phase the job reports, "start" (before it runs), "chunk"
// (after the first streamed chunk of held) or "retry" (while it waits to retry a
// server error). It checks that the cancellation was prompt, that no request followed
// it beyond c.maxRequests, and that the job's error is the one c wants, and returns it.
func cancelAtPhase(t *testing.T, c phaseCase, held string, job func(ctx context.Context, sum compaction.Summarizer, phase func(string)) error) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	stop := func() { once.Do(cancel) }
	srv := fakemodel.New(t)
	switch c.cancelAt {
	case "chunk":
		srv.SetFallback(fakemodel.Stream(held, fakemodel.StreamOpts{Chunks: 3, HoldAfter: 1, OnChunk: func(int) { stop() }}))
	case "retry":
		srv.SetFallback(fakemodel.ServerError())
		go func() { <-srv.Started; time.Sleep(50 * time.Millisecond); stop() }()
	}
	sum := fakemodel.NewOpenAI(fakemodel.OpenAIConfig{BaseURL: srv.URL, Model: "fake-summarizer", APIKey: "k",
		RetryLimits: compaction.RetryLimits{MaxRetries: 3, RetryBase: 10 * time.Second, StallTimeout: 5 * time.Second, TotalTimeout: time.Minute}})
	if c.cancelAt == "start" {
		stop()
	}
	var phases []string
	start := time.Now()
	err := job(ctx, sum, func(p string) {
		phases = append(phases, p)
		if p == c.cancelAt {
			stop()
		}
	})
	t.Logf("phases %v, %d request(s), %v: err=%v", phases, srv.Count(), time.Since(start).Round(time.Millisecond), err)
	if time.Since(start) > 5*time.Second {
		t.Errorf("cancellation took %v", time.Since(start))
	}
	if srv.Count() > c.maxRequests {
		t.Errorf("%d requests after the cancellation, want at most %d", srv.Count(), c.maxRequests)
	}
	if c.wantErr {
		if !isCancelled(err) {
			t.Fatalf("err = %v, want a cancellation", err)
		}
	} else if err != nil {
		t.Fatalf("err = %v", err)
	}
	return err
}

// everyPhase are the points a summarizing job (named by its function) is cancelled at:
// before it starts, at each phase it reports, mid-stream and during a retry wait, with
// no request made before the stream and at most requests once it began; cancelling
// once writing began cannot stop the write half-way: it completes.
func everyPhase(job string, requests int) []phaseCase {
	return []phaseCase{
		{name: "before " + job, cancelAt: "start", wantErr: true},
		{name: "preparing", cancelAt: "preparing", wantErr: true},
		{name: "summarizing, before the request", cancelAt: "summarizing", wantErr: true},
		{name: "mid-stream", cancelAt: "chunk", wantErr: true, maxRequests: requests},
		{name: "during a retry wait", cancelAt: "retry", wantErr: true, maxRequests: requests},
		{name: "writing", cancelAt: "writing", wantErr: false, maxRequests: requests},
	}
}

// TestCancelCompactionAtEveryPhase cancels compaction.Run at controlled points: before
// it starts, when summarizing begins (before any request), mid-stream, during a retry
// wait, and when writing begins.
func TestCancelCompactionAtEveryPhase(t *testing.T) {
	for _, c := range everyPhase("Run", 2) {
		t.Run(c.name, func(t *testing.T) {
			path := genSession(t, 300, 7)
			before := sessiontest.Read(t, path)
			err := cancelAtPhase(t, c, "## Goal\nheld", func(ctx context.Context, sum compaction.Summarizer, phase func(string)) error {
				_, err := compaction.Run(ctx, sessiontest.Snapshot(t, path), compaction.RunOptions{Settings: cancelSettings, Summarizer: sum, Phase: phase})
				return err
			})
			checkOutcome(t, path, before, err, session.TypeCompaction)
		})
	}
}

// TestCancelNavigationAtEveryPhase does the same for a navigation with a branch summary.
func TestCancelNavigationAtEveryPhase(t *testing.T) {
	for _, c := range everyPhase("Navigate", 1) {
		t.Run(c.name, func(t *testing.T) {
			path := genSession(t, 300, 11)
			ix := sessiontest.Index(t, path)
			target := branchTarget(t, ix)
			before := sessiontest.Read(t, path)
			err := cancelAtPhase(t, c, "held", func(ctx context.Context, sum compaction.Summarizer, phase func(string)) error {
				_, err := branch.Navigate(ctx, sessiontest.Snapshot(t, path), target, branch.NavigateOptions{Summarize: true, Summarizer: sum, Label: "here", Phase: phase})
				return err
			})
			checkOutcome(t, path, before, err, session.TypeBranchSummary, session.TypeLabel)
		})
	}
}

// branchTarget is an assistant entry off the current path, so the navigation leaves a
// branch with messages to summarize.
func branchTarget(t testing.TB, ix *session.Index) string {
	t.Helper()
	onPath := map[string]bool{}
	for _, e := range ix.Path(ix.LeafID()) {
		onPath[e.ID] = true
	}
	for i := len(ix.Entries()) - 1; i >= 0; i-- {
		e := ix.Entries()[i]
		if !onPath[e.ID] && e.Role() == session.RoleAssistant {
			return e.ID
		}
	}
	t.Fatal("no entry off the current path")
	return ""
}

// jitterSummarizer answers after 0-3 ms, honouring ctx.
type jitterSummarizer struct {
	mu sync.Mutex
	r  *rand.Rand
}

func (j *jitterSummarizer) Name() string { return "jitter" }

func (j *jitterSummarizer) Summarize(ctx context.Context, req compaction.Request) (compaction.Result, error) {
	j.mu.Lock()
	d := time.Duration(j.r.Intn(3000)) * time.Microsecond
	j.mu.Unlock()
	select {
	case <-ctx.Done():
		return compaction.Result{}, ctx.Err()
	case <-time.After(d):
		return compaction.Result{Text: "## Goal\nsummary"}, nil
	}
}

// TestCancelAtRandomMoments cancels compactions and navigations at random moments
// (uniform over a typical job's length): every outcome is all or nothing, and the
// result agrees with the file.
func TestCancelAtRandomMoments(t *testing.T) {
	iterations := 150
	if testing.Short() {
		iterations = 30
	}
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewSource(seed))
	sum := &jitterSummarizer{r: rand.New(rand.NewSource(seed + 1))}
	path := genSession(t, 300, 5)
	pristine := sessiontest.Read(t, path)
	// How long each job takes here, uncancelled: the cancellation moments are spread
	// uniformly over 1.2 times that.
	span := func(job func() error) time.Duration {
		best := time.Hour
		for i := 0; i < 3; i++ { // the fastest of three (the first one warms up)
			start := time.Now()
			if err := job(); err != nil {
				t.Fatal(err)
			}
			best = min(best, time.Since(start))
			if err := os.WriteFile(path, pristine, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return best * 6 / 5
	}
	// The two jobs alternate; each runs against the file as it is (its navigation
	// target is picked anew after every restore).
	type job struct {
		name               string
		run                func(ctx context.Context, target string) error
		wantType           string
		span               time.Duration
		written, cancelled int
	}
	jobs := []*job{
		{name: "compaction", wantType: session.TypeCompaction, run: func(ctx context.Context, _ string) error {
			_, err := compaction.Run(ctx, sessiontest.Snapshot(t, path), compaction.RunOptions{Settings: cancelSettings, Summarizer: sum})
			return err
		}},
		{name: "navigation", wantType: session.TypeBranchSummary, run: func(ctx context.Context, target string) error {
			_, err := branch.Navigate(ctx, sessiontest.Snapshot(t, path), target, branch.NavigateOptions{Summarize: true, Summarizer: sum})
			return err
		}},
	}
	target0 := branchTarget(t, sessiontest.Index(t, path))
	for _, j := range jobs {
		j.span = span(func() error { return j.run(context.Background(), target0) })
	}
	for i := 0; i < iterations; i++ {
		if err := os.WriteFile(path, pristine, 0o644); err != nil {
			t.Fatal(err)
		}
		ix := sessiontest.Index(t, path)
		target := branchTarget(t, ix)
		ctx, cancel := context.WithCancel(context.Background())
		j := jobs[i%2]
		timer := time.AfterFunc(time.Duration(r.Int63n(int64(j.span))), cancel)
		err := j.run(ctx, target)
		if err != nil && !isCancelled(err) {
			t.Fatalf("%s: %v", j.name, err)
		}
		if checkOutcome(t, path, pristine, err, j.wantType) {
			j.written++
		} else {
			j.cancelled++
		}
		timer.Stop()
		cancel()
	}
	comp, nav := jobs[0], jobs[1]
	t.Logf("RESULT cancel-random: compactions written=%d cancelled=%d (cancelled at 0-%v), navigations written=%d cancelled=%d (0-%v); partial writes 0",
		comp.written, comp.cancelled, comp.span.Round(time.Microsecond), nav.written, nav.cancelled, nav.span.Round(time.Microsecond))
}
