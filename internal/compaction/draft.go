package compaction

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/redact"
)

// Draft is a compaction summary prepared ahead of time for a span of a session, so that
// a compaction of that span commits without waiting for a model. Drafts live in memory
// and in a cache file outside the session; they never touch the session file.
type Draft struct {
	Session      string    `json:"session"`
	Key          string    `json:"key"`     // SpanKey of the preparation it summarizes
	SpanIDs      []string  `json:"spanIds"` // entries summarized, in path order
	IsSplitTurn  bool      `json:"isSplitTurn"`
	Instructions string    `json:"instructions,omitempty"`
	Outcome      *Outcome  `json:"outcome"`
	CreatedAt    time.Time `json:"createdAt"`
	// Incremental is true when the draft was produced by updating an earlier draft with
	// only the new part of the span.
	Incremental bool `json:"incremental,omitempty"`
}

// SpanIDs lists the entries a preparation summarizes: from its boundary to the first
// kept entry (the turn prefix included).
func SpanIDs(p *Preparation) []string {
	span := p.SpanEntries()
	ids := make([]string, 0, len(span))
	for _, u := range span {
		ids = append(ids, u.Entry.ID)
	}
	return ids
}

// SpanKey identifies what a compaction of p would summarize, with which previous summary,
// focus and pins: two preparations with the same key produce the same request.
func SpanKey(p *Preparation, instructions string, pinned []string) string {
	h := sha256.New()
	fmt.Fprintf(h, "first=%s split=%v turn=%d prev=%v\n", p.FirstKeptEntryID, p.IsSplitTurn, p.Cut.TurnStartIndex-p.BoundaryStart, p.HasPrevious)
	h.Write([]byte(p.PreviousSummary))
	h.Write([]byte{0})
	for _, id := range SpanIDs(p) {
		h.Write([]byte(id))
		h.Write([]byte{0})
	}
	h.Write([]byte(instructions))
	for _, pin := range pinned {
		h.Write([]byte{0})
		h.Write([]byte(pin))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// DraftStore keeps at most one draft per session, and mirrors it in a cache directory.
type DraftStore struct {
	dir    string // "" keeps drafts in memory only
	mu     sync.Mutex
	drafts map[string]*Draft
}

// NewDraftStore returns a store that persists drafts in dir (created on first write);
// an empty dir keeps them in memory only.
func NewDraftStore(dir string) *DraftStore {
	return &DraftStore{dir: dir, drafts: map[string]*Draft{}}
}

// DefaultDraftDir is pi-lsp's draft cache: $XDG_CACHE_HOME/pi-lsp/drafts (never inside
// the Pi sessions folder).
func DefaultDraftDir() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "pi-lsp", "drafts")
}

func (s *DraftStore) file(session string) string {
	sum := sha256.Sum256([]byte(session))
	return filepath.Join(s.dir, hex.EncodeToString(sum[:8])+".json")
}

// Get returns the session's draft, from memory or the cache file.
func (s *DraftStore) Get(session string) *Draft {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.drafts[session]; d != nil {
		return d
	}
	if s.dir == "" {
		return nil
	}
	data, err := os.ReadFile(s.file(session))
	if err != nil {
		return nil
	}
	var d Draft
	if json.Unmarshal(data, &d) != nil || d.Session != session || d.Outcome == nil {
		return nil
	}
	s.drafts[session] = &d
	return &d
}

// Put stores a draft (replacing the session's previous one). What it keeps, in memory
// and in the cache file, holds no credential: the summary, the focus and the pinned
// texts the audit names are redacted (redact.String).
func (s *DraftStore) Put(d *Draft) error {
	d = d.redacted()
	s.mu.Lock()
	s.drafts[d.Session] = d
	s.mu.Unlock()
	if s.dir == "" {
		return nil
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("draft cache: %w", err)
	}
	data, err := json.Marshal(d)
	if err != nil {
		return err
	}
	tmp := s.file(d.Session) + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("draft cache: %w", err)
	}
	return os.Rename(tmp, s.file(d.Session))
}

// redacted is d, or a copy of it with its texts redacted when they hold a credential.
func (d *Draft) redacted() *Draft {
	if d.Outcome == nil {
		if redact.Has(d.Instructions) {
			c := *d
			c.Instructions = redact.String(d.Instructions)
			return &c
		}
		return d
	}
	dirty := redact.Has(d.Instructions) || redact.Has(d.Outcome.Summary)
	for _, p := range d.Outcome.Audit.MissingPinned {
		dirty = dirty || redact.Has(p)
	}
	if !dirty {
		return d
	}
	c, o := *d, *d.Outcome
	c.Instructions = redact.String(d.Instructions)
	o.Summary = redact.String(o.Summary)
	if o.Audit.MissingPinned != nil {
		o.Audit.MissingPinned = make([]string, len(d.Outcome.Audit.MissingPinned))
		for i, p := range d.Outcome.Audit.MissingPinned {
			o.Audit.MissingPinned[i] = redact.String(p)
		}
	}
	c.Outcome = &o
	return &c
}

// Drop forgets the session's draft.
func (s *DraftStore) Drop(session string) {
	s.mu.Lock()
	delete(s.drafts, session)
	s.mu.Unlock()
	if s.dir != "" {
		_ = os.Remove(s.file(session))
	}
}

// Lookup returns the draft's outcome when it was made for exactly this span.
func (s *DraftStore) Lookup(session string, p *Preparation, instructions string, pinned []string) *Outcome {
	d := s.Get(session)
	if d == nil || d.Key != SpanKey(p, instructions, pinned) {
		return nil
	}
	out := *d.Outcome
	out.TokensBefore = p.TokensBefore
	out.TokensAfter = TokensAfter(out.Summary, p)
	return &out
}

// Refresh brings the session's draft up to date with p: nothing to do when the span is
// unchanged; when the old draft covers the beginning of the span, only the new part is
// summarized (an update of the draft, as Pi updates a previous summary); otherwise the
// whole span is summarized.
func (s *DraftStore) Refresh(ctx context.Context, session string, p *Preparation, sum Summarizer, opt Options) (*Draft, error) {
	key := SpanKey(p, opt.CustomInstructions, opt.Pinned)
	old := s.Get(session)
	if old != nil && old.Key == key {
		return old, nil
	}
	ids := SpanIDs(p)
	var out *Outcome
	var err error
	incremental := false
	if delta := deltaPreparation(old, p, ids, opt); delta != nil {
		out, err = Generate(ctx, delta, sum, opt)
		incremental = true
	} else {
		out, err = Generate(ctx, p, sum, opt)
	}
	if err != nil {
		return nil, err
	}
	d := (&Draft{Session: session, Key: key, SpanIDs: ids, IsSplitTurn: p.IsSplitTurn, Instructions: opt.CustomInstructions,
		Outcome: out, CreatedAt: time.Now().UTC(), Incremental: incremental}).redacted()
	return d, s.Put(d)
}

// deltaPreparation is p reduced to the messages after the old draft's span, with the
// draft as the previous summary, when the old span is a strict prefix of the new one and
// neither splits a turn; nil otherwise.
func deltaPreparation(old *Draft, p *Preparation, ids []string, opt Options) *Preparation {
	if old == nil || old.IsSplitTurn || p.IsSplitTurn || old.Instructions != opt.CustomInstructions || len(old.SpanIDs) == 0 || len(old.SpanIDs) >= len(ids) {
		return nil
	}
	for i, id := range old.SpanIDs {
		if ids[i] != id {
			return nil
		}
	}
	delta := *p
	delta.MessagesToSummarize = nil
	delta.MessagesToSummarize = messagesOf(p.SpanEntries()[len(old.SpanIDs):], nil)
	if len(delta.MessagesToSummarize) == 0 {
		return nil
	}
	delta.PreviousSummary = stripFileBlocks(old.Outcome.Summary)
	delta.HasPrevious = true
	return &delta
}

// ReuseFrom returns a RunOptions.Reuse that commits the session's draft when it matches
// the span, or updates it with only the new part when it covers the span's beginning.
func (s *DraftStore) ReuseFrom(session string, sum Summarizer, opt Options) func(context.Context, *Preparation) (*Outcome, error) {
	return func(ctx context.Context, p *Preparation) (*Outcome, error) {
		if out := s.Lookup(session, p, opt.CustomInstructions, opt.Pinned); out != nil {
			return out, nil
		}
		old := s.Get(session)
		if old == nil || deltaPreparation(old, p, SpanIDs(p), opt) == nil {
			return nil, nil
		}
		d, err := s.Refresh(ctx, session, p, sum, opt)
		if err != nil {
			return nil, err
		}
		out := *d.Outcome
		return &out, nil
	}
}
