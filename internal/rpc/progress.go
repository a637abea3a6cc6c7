package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
)

// Tracker owns every work-done progress of the server, as gopls's progress.Tracker does:
// it uses the client's token or creates one, guarantees begin and end, throttles
// reports, routes window/workDoneProgress/cancel to the job, and falls back to
// window/showMessage for clients without progress support.
type Tracker struct {
	s          *Server
	mu         sync.Mutex
	inProgress map[string]*WorkDone
	// Throttle is the minimum interval between two reports of one job.
	Throttle time.Duration
}

func newTracker(s *Server) *Tracker {
	return &Tracker{s: s, inProgress: map[string]*WorkDone{}, Throttle: 100 * time.Millisecond}
}

// WorkDone is one job's progress.
type WorkDone struct {
	t        *Tracker
	token    json.RawMessage // nil when progress goes through showMessage
	title    string
	cancel   func()
	mu       sync.Mutex
	last     time.Time
	lastPct  uint32
	ended    bool
	pending  *workDoneProgressReport
	timer    *time.Timer
	fallback bool
}

// tokenKey identifies a progress token by value, so a cancel that spells the token
// differently (42.0, "\u0074ok", extra spaces) still finds the job.
func tokenKey(tok json.RawMessage) string {
	var v any
	d := json.NewDecoder(bytes.NewReader(tok))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return "raw:" + string(tok)
	}
	switch v := v.(type) {
	case string:
		return "s:" + v
	case json.Number:
		if f, err := v.Float64(); err == nil {
			return "n:" + strconv.FormatFloat(f, 'g', -1, 64)
		}
	}
	return "raw:" + string(tok)
}

// Start begins progress for a job. token is the client's workDoneToken (nil if none);
// cancel is called when the client cancels through the progress UI.
func (t *Tracker) Start(ctx context.Context, token json.RawMessage, title, message string, cancel func()) *WorkDone {
	wd := &WorkDone{t: t, title: title, cancel: cancel}
	if len(token) == 0 || string(token) == "null" {
		token = nil
		if t.s.clientProgress() {
			tok, _ := json.Marshal("pi-lsp-" + uuid.NewString())
			// The create request is abandoned when the job is cancelled meanwhile (a
			// client that never answers must not hold a cancelled job for 5 s); the
			// notifications themselves go out on an uncancellable context.
			cctx, cancelCreate := context.WithTimeout(ctx, 5*time.Second)
			err := t.s.call(cctx, "window/workDoneProgress/create", workDoneProgressCreateParams{Token: tok}, nil)
			cancelCreate()
			if err == nil {
				token = tok
			} else {
				t.s.logf("progress: client refused token: %v", err)
			}
		}
	}
	wd.token = token
	zero := uint32(0)
	if token == nil {
		wd.fallback = true
		t.s.notify("window/showMessage", showMessageParams{Type: msgInfo, Message: title + "…"})
		return wd
	}
	t.mu.Lock()
	t.inProgress[tokenKey(token)] = wd
	t.mu.Unlock()
	t.s.notify("$/progress", progressParams{Token: token, Value: workDoneProgressBegin{
		Kind: "begin", Title: title, Cancellable: cancel != nil, Message: message, Percentage: &zero,
	}})
	wd.last = time.Now()
	return wd
}

// Report sends a progress report. Reports closer together than the tracker's throttle
// are coalesced: the latest one is sent when the interval has passed.
func (wd *WorkDone) Report(message string, pct uint32) {
	if wd == nil {
		return
	}
	wd.mu.Lock()
	defer wd.mu.Unlock()
	if wd.ended || wd.fallback {
		return
	}
	if pct < wd.lastPct {
		pct = wd.lastPct // percentages never go back
	}
	if pct > 100 {
		pct = 100
	}
	wd.lastPct = pct
	p := pct
	r := &workDoneProgressReport{Kind: "report", Cancellable: wd.cancel != nil, Message: message, Percentage: &p}
	if wait := wd.t.Throttle - time.Since(wd.last); wait > 0 {
		wd.pending = r
		if wd.timer == nil {
			wd.timer = time.AfterFunc(wait, wd.flush)
		}
		return
	}
	wd.send(r)
}

func (wd *WorkDone) flush() {
	wd.mu.Lock()
	defer wd.mu.Unlock()
	wd.timer = nil
	if wd.ended || wd.pending == nil {
		return
	}
	wd.send(wd.pending)
}

func (wd *WorkDone) send(r *workDoneProgressReport) {
	wd.pending = nil
	wd.last = time.Now()
	wd.t.s.notify("$/progress", progressParams{Token: wd.token, Value: *r})
}

// End finishes the progress; later calls do nothing.
func (wd *WorkDone) End(message string) {
	if wd == nil {
		return
	}
	wd.mu.Lock()
	defer wd.mu.Unlock()
	if wd.ended {
		return
	}
	wd.ended = true
	if wd.timer != nil {
		wd.timer.Stop()
	}
	if wd.fallback {
		wd.t.s.notify("window/showMessage", showMessageParams{Type: msgInfo, Message: fmt.Sprintf("%s: %s", wd.title, message)})
		return
	}
	wd.t.mu.Lock()
	delete(wd.t.inProgress, tokenKey(wd.token))
	wd.t.mu.Unlock()
	wd.t.s.notify("$/progress", progressParams{Token: wd.token, Value: workDoneProgressEnd{Kind: "end", Message: message}})
}

// The jobs that summarize (compactions, branch summaries, previews) report on one scale:
// preparing 5%, summarizing from 10% up to 90% as the summary's tokens arrive, writing
// 95%.

// reportPhase reports a phase of a job that summarizes.
func (wd *WorkDone) reportPhase(phase string) {
	wd.Report(phase, map[string]uint32{"preparing": 5, "summarizing": 10, "writing": 95}[phase])
}

// reportSummary reports a summarizer's progress: token counts, and each request attempt.
func (wd *WorkDone) reportSummary(p compaction.Progress) {
	wd.Report(p.Message(), 10+uint32(min(80, p.Tokens*80/400)))
}

// Cancel cancels the job that owns token (window/workDoneProgress/cancel).
func (t *Tracker) Cancel(token json.RawMessage) bool {
	t.mu.Lock()
	wd := t.inProgress[tokenKey(token)]
	t.mu.Unlock()
	if wd == nil || wd.cancel == nil {
		return false
	}
	wd.cancel()
	return true
}
