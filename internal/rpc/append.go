package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/contextedit"
	"github.com/pi-lsp/pi-lsp/internal/service"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

type appendParams struct {
	Session string `json:"session"`
	// Messages are Pi AgentMessages, each written as it was sent (decoded one at a
	// time, see decodeAppendMessages, so a long request is not held twice).
	Messages json.RawMessage `json:"messages" ts:"AgentMessage[],required"`
	// Create starts a new session for the workspace when there is none (or when true
	// and no session is named).
	Create bool `json:"create"`
	Force  bool `json:"force"`
}

// MaxAppendMessages is the most messages one pi/append takes (a turn is a few; a
// longer conversation is appended in several requests). Each becomes an entry, which
// costs a few hundred bytes however small its message: a frame of a million tiny
// messages would take tens of times its size.
const MaxAppendMessages = 4096

// decodeAppendMessages decodes the messages array one element at a time, refusing the
// first that is not an AgentMessage with a role (before the rest are looked at) and an
// array longer than MaxAppendMessages. Each message keeps its members in the order they
// were sent.
func decodeAppendMessages(raw json.RawMessage) ([]*session.Message, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, invalidParams("messages is required")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, invalidParams("invalid params: messages must be an array")
	}
	var msgs []*session.Message
	for dec.More() {
		if len(msgs) == MaxAppendMessages {
			return nil, invalidParams(fmt.Sprintf("messages: more than %d in one request", MaxAppendMessages))
		}
		var m json.RawMessage
		if err := dec.Decode(&m); err != nil {
			return nil, invalidParams("invalid params: " + err.Error())
		}
		// Written as one line of the file: without the whitespace a client may have
		// put between its tokens.
		var line bytes.Buffer
		if err := json.Compact(&line, m); err != nil {
			return nil, invalidParams("invalid params: " + err.Error())
		}
		dm, err := session.DecodeMessage(line.Bytes())
		if err != nil || dm.Role == "" {
			return nil, invalidParams(fmt.Sprintf("messages[%d] is not an AgentMessage with a role", len(msgs)))
		}
		msgs = append(msgs, dm)
	}
	if len(msgs) == 0 {
		return nil, invalidParams("messages is required")
	}
	return msgs, nil
}

// handleAppend appends AgentMessages to a session the sidecar hosts (an editor-side
// agent's conversation), then applies Pi's automatic compaction rules to the last
// assistant message: overflow first, then the threshold.
func (s *Server) handleAppend(ctx context.Context, p appendParams) (AppendResult, error) {
	msgs, err := decodeAppendMessages(p.Messages)
	if err != nil {
		return AppendResult{}, err
	}
	var written []*session.Entry
	job := writeJob[AppendResult]{target: target{session: p.Session, force: p.Force, create: p.Create}}
	out, err := write(s, ctx, job, func(_ context.Context, path string, _ *WorkDone) (AppendResult, error) {
		err := s.host.withIndex(path, func(ix *session.Index) error {
			var err error
			written, err = appendChain(path, ix, len(msgs), func(i int) (string, []session.Field) {
				return session.TypeMessage, []session.Field{{Key: "message", Value: json.RawMessage(msgs[i].Raw())}}
			})
			return err
		})
		if err != nil {
			return AppendResult{}, err
		}
		ids := make([]string, len(written))
		for i, e := range written {
			ids[i] = e.ID
		}
		return AppendResult{Session: path, EntryIDs: ids, LeafID: ids[len(ids)-1]}, nil
	})
	if err != nil {
		return AppendResult{}, err
	}
	// After the write (and its lock): an automatic compaction takes the lock itself.
	out.AutoCompaction = s.autoCompact(out.Session, written)
	return out, nil
}

// appendChain appends n entries in one chain from the session's leaf, entry i of type
// and fields entry(i), with ids that no entry of the session has.
func appendChain(path string, ix *session.Index, n int, entry func(i int) (string, []session.Field)) ([]*session.Entry, error) {
	taken := map[string]*session.Entry{}
	for _, e := range ix.Entries() {
		taken[e.ID] = e
	}
	news := make([]session.NewEntry, n)
	for i := range news {
		parent := session.ChainToPrevious
		if i == 0 {
			parent = ix.LeafID()
		}
		typ, fields := entry(i)
		news[i] = session.NewEntry{Type: typ, ParentID: parent, Fields: fields}
	}
	return session.Append(path, taken, news)
}

func (s *Server) createSession() (string, error) {
	s.host.mu.Lock()
	dir, cwd := s.host.dir, s.host.cwd
	s.host.mu.Unlock()
	path, _, err := session.Create(dir, cwd)
	if err != nil {
		return "", err
	}
	s.host.mu.Lock()
	s.host.current = path
	s.host.mu.Unlock()
	return path, nil
}

// autoCompact applies Pi 1.6.0's _checkCompaction (compaction.AfterAppend and
// compaction.DecideAuto decide) to the last appended assistant message and starts the compaction in the background: for an
// overflow or a cut-off answer it first hides the failed attempt and its tool results
// with context_edit omissions on the same branch, then compacts after them and tells the
// editor to retry once. It returns the reason, or "".
func (s *Server) autoCompact(path string, written []*session.Entry) string {
	s.host.mu.Lock()
	last, tried := compaction.AfterAppend(written, s.host.stateLocked(path).overflowTried)
	s.host.mu.Unlock()
	s.setRecoveryTried(path, tried)
	if last == nil {
		return ""
	}
	st := s.host.state(path)
	s.host.mu.Lock()
	st.loop.Turn()
	s.host.mu.Unlock()
	settings, err := s.settingsFor(path)
	if err != nil {
		return ""
	}
	s.host.mu.Lock()
	maxTokens := s.host.cfg.SummarizerConfig.MaxTokens
	s.host.mu.Unlock()
	if maxTokens <= 0 {
		maxTokens = compaction.DefaultMaxTokens
	}
	var cwd string
	var d compaction.AutoDecision
	err = s.host.withIndex(path, func(ix *session.Index) error {
		cwd = ix.File.Header.Cwd
		d = compaction.DecideAuto(compaction.AutoInput{Path: ix.LeafPath(), Assistant: last, Settings: settings,
			Window: s.host.window(), MaxTokens: maxTokens, RecoveryTried: tried})
		return nil
	})
	if err != nil || d.Reason == "" {
		return ""
	}
	if _, err := s.svc().RouteWrite(context.Background(), path, cwd, false, false); err != nil {
		return "" // never compact what a running pi writes
	}
	if d.Reason == "threshold" && s.host.clearsFirst() && s.clearFirst(path, settings) {
		return ""
	}
	if d.Reason == "threshold" {
		s.host.mu.Lock()
		ok, why := st.loop.Allow()
		s.host.mu.Unlock()
		if !ok {
			d.Failed = s.loopMessage(path, why)
		}
	}
	if d.Failed != "" {
		s.notify("pi/compactionEnd", CompactionEnd{Session: path, Reason: d.Reason, ErrorMessage: d.Failed})
		s.notify("pi/compactionFailed", CompactionFailed{Session: path, Reason: d.Reason, ErrorMessage: d.Failed})
		return ""
	}
	if d.WillRetry {
		s.setRecoveryTried(path, true)
		if err := s.omitAttempt(path, d.Omit); err != nil {
			s.log.Warn("overflow recovery: omitting the failed attempt", "session", path, "err", err)
			return ""
		}
	}
	if err := s.autoPreparable(path, ""); err != nil {
		// Pi 1.6.0 prepares an automatic compaction before it emits anything: with
		// nothing to compact there is no start, no end and no progress.
		return ""
	}
	if !s.autoStart(path, compactJob{reason: d.Reason, willRetry: d.WillRetry}) {
		return ""
	}
	return d.Reason
}

// clearFirst is the first tier of automatic compaction: clear old tool output (as
// pi/clearToolOutput with its defaults does) and tell the editor. It reports whether
// that brought the context below the threshold, so that no summary is needed; Pi's
// next check measures the same projected figure.
func (s *Server) clearFirst(path string, settings session.CompactionSettings) bool {
	res, err := s.handleClearToolOutput(s.bgCtx, clearToolOutputParams{Session: path})
	if err != nil {
		s.log.Warn("clearing old tool output before compacting", "session", path, "err", err)
		return false
	}
	if len(res.Cleared) == 0 {
		return false
	}
	below := !session.ShouldCompact(res.TokensAfter, s.host.window(), settings)
	s.notify("pi/toolOutputCleared", ToolOutputCleared{ClearToolOutputResult: res, Reason: "threshold", Compacting: !below})
	return below
}

func (s *Server) setRecoveryTried(path string, tried bool) {
	s.host.mu.Lock()
	defer s.host.mu.Unlock()
	s.host.stateLocked(path).overflowTried = tried
}

// omitAttempt hides the failed attempt (one context_edit omission per target, chained
// from the leaf) as Pi's _omitRecoveryAttempt does before a recovery compaction: through
// the write sequence of every command, with contextedit's rules.
func (s *Server) omitAttempt(path string, targets []string) error {
	edits := make([]contextedit.Edit, len(targets))
	for i, id := range targets {
		edits[i] = contextedit.Edit{TargetID: id, Action: contextedit.Omit}
	}
	_, err := write(s, s.bgCtx, writeJob[[]*session.Entry]{target: target{session: path}}, func(ctx context.Context, path string, _ *WorkDone) ([]*session.Entry, error) {
		return contextedit.ApplyAll(ctx, path, edits)
	})
	return err
}

// autoStart starts an automatic compaction unless one is already pending or running for
// the session (a second one would only queue behind it on the job lock and compact the
// freshly compacted session again).
func (s *Server) autoStart(path string, job compactJob) bool {
	st := s.host.state(path)
	s.host.mu.Lock()
	if st.compacting {
		s.host.mu.Unlock()
		return false
	}
	st.compacting = true
	s.host.mu.Unlock()
	done := func() {
		s.host.mu.Lock()
		st.compacting = false
		s.host.mu.Unlock()
	}
	started := s.background(func(ctx context.Context) {
		defer done()
		// The write sequence checks the owner again (a pi may have started since) and
		// refreshes the session after the compaction.
		_, _ = write(s, ctx, writeJob[service.CompactOutcome]{target: target{session: path}, service: true}, func(ctx context.Context, path string, _ *WorkDone) (service.CompactOutcome, error) {
			c, err := s.compact(ctx, path, job)
			if err == nil && job.reason == "threshold" {
				threshold := 0.0
				if settings, err := s.settingsFor(path); err == nil {
					threshold = float64(s.host.window() - settings.ReserveTokens)
				}
				s.host.mu.Lock()
				st.loop.Compacted(c.Run.Outcome.TokensAfter, threshold)
				s.host.mu.Unlock()
			}
			return c, err
		})
	})
	if !started {
		done()
	}
	return started
}

// loopMessage says why a hosted session is not compacted again, and what fills its
// context: the largest messages, which the user can hide or clear instead.
func (s *Server) loopMessage(path, why string) string {
	var top []string
	_ = s.host.withIndex(path, func(ix *session.Index) error {
		sizes, err := contextedit.BySize(context.Background(), ix.LeafPath(), 0)
		if err != nil {
			return err
		}
		for _, it := range sizes.Items {
			if !it.Editable || it.Tokens == 0 {
				continue
			}
			name := it.Role
			if it.ToolName != "" {
				name += " " + it.ToolName
			}
			top = append(top, fmt.Sprintf("%s %s (~%d tokens)", it.EntryID, name, it.Tokens))
			if len(top) == 3 {
				break
			}
		}
		return nil
	})
	msg := "Not compacting again: " + why + "."
	if len(top) > 0 {
		msg += " The context is filled by " + strings.Join(top, ", ") + ": hide or replace them (Edit Context), clear old tool output, or compact by hand."
	}
	return msg
}

// background runs a server-initiated job; shutdown cancels it. It reports whether the
// job was started (not when the server is exiting).
func (s *Server) background(f func(ctx context.Context)) bool {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return false
	}
	s.jobsWG.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.jobsWG.Done()
		f(s.bgCtx)
	}()
	return true
}
