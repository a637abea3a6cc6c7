package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/contextedit"
	"github.com/pi-lsp/pi-lsp/internal/rewind"
	"github.com/pi-lsp/pi-lsp/internal/service"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// rewindParams are pi/rewind's params.
type rewindParams struct {
	Session string `json:"session"`
	// EntryID is the entry to bring the files back to (not with undo).
	EntryID string `json:"entryId"`
	// Mode: "code" (the default: the files only, nothing written to the session),
	// "conversation" (navigate) or "both".
	Mode      string `json:"mode" ts:"\"code\" | \"conversation\" | \"both\""`
	Summarize bool   `json:"summarize"`
	// Files are conflicting files to bring back anyway; force picks every conflict.
	Files []string `json:"files"`
	Force bool     `json:"force"`
	// DryRun previews: each file with what it holds and what the rewind would write.
	DryRun bool `json:"dryRun"`
	// Undo puts back the bytes the session's last rewind replaced.
	Undo          bool            `json:"undo"`
	WorkDoneToken json.RawMessage `json:"workDoneToken" ts:"ProgressToken"`
}

func (p *rewindParams) validate() error {
	switch p.Mode {
	case "", "code", "conversation", "both":
	default:
		return invalidParams(`mode must be "code", "conversation" or "both"`)
	}
	if p.Undo != (p.EntryID == "") {
		return invalidParams("entryId names the entry to rewind to; undo takes none")
	}
	if p.Summarize && (p.Mode == "" || p.Mode == "code") {
		return invalidParams(`summarize moves the conversation: mode "conversation" or "both"`)
	}
	return nil
}

// RewindFile is one file of a rewind's preview: what it holds and what the rewind
// writes (exists false: absent; the rewind removes it).
type RewindFile struct {
	Path          string `json:"path"`
	AbsPath       string `json:"absPath"`
	Exists        bool   `json:"exists"`
	Current       string `json:"current"`
	TargetExists  bool   `json:"targetExists"`
	Target        string `json:"target"`
	Conflict      bool   `json:"conflict"`
	ExpectedKnown bool   `json:"expectedKnown"`
	// Expected is what the session's last change left (the other side of a conflict).
	Expected string `json:"expected"`
	// Diff is the unified diff from the disk to what the rewind writes.
	Diff string `json:"diff"`
}

// RewindNotRestorable is a file the session cannot bring back, and why.
type RewindNotRestorable struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// RewindResult is what a rewind did (or, with dryRun, would do).
type RewindResult struct {
	Session       string                `json:"session"`
	DryRun        bool                  `json:"dryRun"`
	Restored      []string              `json:"restored"`
	Removed       []string              `json:"removed"`
	Conflicts     []string              `json:"conflicts"`
	NotRestorable []RewindNotRestorable `json:"notRestorable"`
	BashCommands  []string              `json:"bashCommands"`
	// Undo names the rewind that pi/rewind undo takes back (null when no file changed).
	Undo *string `json:"undo" ts:"string | null"`
	// Files is the preview of a dry run: every file the rewind brings back.
	Files []RewindFile `json:"files"`
	// LeafID and Position: the conversation's leaf and where it continues from, when
	// it moved.
	LeafID   *string  `json:"leafId,omitempty" ts:"string | null"`
	Position *string  `json:"position,omitempty" ts:"string | null"`
	Notices  []string `json:"notices"`
}

// handleRewind brings the files back to an entry (and moves the conversation), with a
// preview on dryRun. A code rewind writes no session; a conversation move goes through
// the write sequence of every command that writes.
func (s *Server) handleRewind(ctx context.Context, p rewindParams) (RewindResult, error) {
	mode := service.RewindMode(p.Mode)
	if mode == "" {
		mode = service.RewindCode
	}
	req := service.RewindRequest{EntryID: p.EntryID, Mode: mode, Summarize: p.Summarize, Files: p.Files, Force: p.Force, DryRun: p.DryRun, Undo: p.Undo}
	progress := jobProgress{token: p.WorkDoneToken, title: "Rewinding files", message: "reading the session", refused: "Not rewound: "}
	run := func(ctx context.Context, path string, wd *WorkDone) (RewindResult, error) {
		req.Session = path
		out, notices, err := runReporting(ctx, wd, progress.refused, s.svc().Rewind, req)
		if err != nil {
			return RewindResult{}, rewindError(err)
		}
		wd.End(fmt.Sprintf("Rewound: %d restored, %d removed", len(out.Restored), len(out.Removed)))
		return rewindResult(path, out, notices), nil
	}
	if mode == service.RewindCode || p.DryRun || p.Undo {
		return readOnlyJob(s, ctx, p.Session, progress, run)
	}
	job := writeJob[RewindResult]{target: target{session: p.Session, entry: p.EntryID}, lock: lockCancellable, progress: progress}
	return write(s, ctx, job, run)
}

func rewindResult(path string, out service.RewindOutcome, notices []string) RewindResult {
	r := RewindResult{Session: path, DryRun: out.DryRun, Restored: nonNilStrings(out.Restored), Removed: nonNilStrings(out.Removed),
		Conflicts: []string{}, NotRestorable: []RewindNotRestorable{}, BashCommands: nonNilStrings(out.BashCommands),
		Files: []RewindFile{}, Notices: nonNilStrings(notices)}
	if out.Undo != "" {
		r.Undo = &out.Undo
	}
	for _, f := range out.Conflicts {
		r.Conflicts = append(r.Conflicts, f.Rel)
	}
	for _, n := range out.NotRestorable {
		r.NotRestorable = append(r.NotRestorable, RewindNotRestorable{Path: n.Path, Reason: n.Reason})
	}
	if out.DryRun && out.Plan != nil {
		for _, f := range out.Plan.Files {
			r.Files = append(r.Files, RewindFile{Path: f.Rel, AbsPath: f.Path, Exists: f.Exists, Current: string(f.Current),
				TargetExists: f.TargetExists, Target: string(f.Target), Conflict: f.Conflict, ExpectedKnown: f.ExpectedKnown,
				Expected: string(f.Expected), Diff: rewind.UnifiedDiff(f.Rel, f.Exists, f.Current, f.TargetExists, f.Target)})
		}
	}
	if n := out.Navigation; n != nil {
		r.LeafID, r.Position = nullable(n.LeafID), nullable(n.Position)
	}
	return r
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// rewindError gives a refused rewind its code and kind.
func rewindError(err error) error {
	switch {
	case errors.Is(err, rewind.ErrNotOnPath):
		return &Error{Code: CodeInvalidParams, Kind: KindNotOnBranch, Msg: err.Error(), Err: err}
	case errors.Is(err, rewind.ErrNothingToUndo):
		return &Error{Code: CodeRequestFailed, Kind: KindNotFound, Msg: err.Error(), Err: err}
	case errors.Is(err, service.ErrRewindUsage):
		return invalidParams(err.Error())
	}
	return serviceError(err)
}

// condenseParams are pi/condense's params.
type condenseParams struct {
	Session string `json:"session"`
	// FromID and ToID bound the range of the context (both included); restore takes
	// FromID only.
	FromID        string          `json:"fromId" ts:",required"`
	ToID          string          `json:"toId"`
	Instructions  string          `json:"instructions"`
	DryRun        bool            `json:"dryRun"`
	Restore       bool            `json:"restore"`
	Force         bool            `json:"force"`
	WorkDoneToken json.RawMessage `json:"workDoneToken" ts:"ProgressToken"`
}

func (p *condenseParams) validate() error {
	if err := required("fromId", p.FromID); err != nil {
		return err
	}
	if p.Restore == (p.ToID != "") {
		return invalidParams("toId ends the range to condense; restore takes none")
	}
	if p.Restore && p.DryRun {
		return invalidParams("a restore has no dry run")
	}
	return nil
}

// CondenseResult is a condensed (or, with dryRun, previewed; with restore, restored)
// range of the context.
type CondenseResult struct {
	Session string `json:"session"`
	DryRun  bool   `json:"dryRun"`
	// Targets are the entries of the range: the first holds the summary, the others
	// are hidden.
	Targets []string `json:"targets"`
	// Summary is what the first one holds.
	Summary    string `json:"summary"`
	Summarizer string `json:"summarizer"`
	// Coverage is what the summary carries of the range's critical entities.
	Coverage compaction.Coverage `json:"coverage"`
	// Entries are the context_edit entries written.
	Entries      []session.Raw[session.ContextEditEntry] `json:"entries"`
	TokensBefore float64                                 `json:"tokensBefore"`
	TokensAfter  float64                                 `json:"tokensAfter"`
	Notices      []string                                `json:"notices"`
}

// handleCondense condenses a range of the context into a summary (context edits), or
// restores one, as a long, cancellable job.
func (s *Server) handleCondense(ctx context.Context, p condenseParams) (CondenseResult, error) {
	req := service.CondenseRequest{FromID: p.FromID, ToID: p.ToID, Instructions: p.Instructions, DryRun: p.DryRun, Restore: p.Restore, Force: true}
	progress := jobProgress{token: p.WorkDoneToken, title: "Condensing context", message: "summarizing", refused: "Not condensed: "}
	run := func(ctx context.Context, path string, wd *WorkDone) (CondenseResult, error) {
		req.Session = path
		out, notices, err := runReporting(ctx, wd, progress.refused, s.svc().Condense, req)
		if err != nil {
			return CondenseResult{}, condenseError(err)
		}
		wd.End(fmt.Sprintf("Condensed: %d → %d tokens", int(out.TokensBefore), int(out.TokensAfter)))
		r := CondenseResult{Session: path, DryRun: p.DryRun, Targets: []string{}, Summary: out.Text, Summarizer: out.Summarizer, Coverage: out.Coverage,
			Entries: []session.Raw[session.ContextEditEntry]{}, TokensBefore: out.TokensBefore, TokensAfter: out.TokensAfter, Notices: nonNilStrings(notices)}
		if out.Plan != nil {
			r.Targets = out.Plan.Targets
		}
		for _, e := range out.Written {
			r.Entries = append(r.Entries, session.Raw[session.ContextEditEntry](e.Raw()))
		}
		if len(out.Written) > 0 {
			s.resetLoop(path)
		}
		return r, nil
	}
	if p.DryRun {
		return readOnlyJob(s, ctx, p.Session, progress, run)
	}
	// The service's own route check is skipped (Force): the write sequence made it.
	job := writeJob[CondenseResult]{target: target{session: p.Session, entry: p.FromID, force: p.Force}, lock: lockCancellable, progress: progress}
	return write(s, ctx, job, run)
}

func condenseError(err error) error {
	switch {
	case errors.Is(err, contextedit.ErrBadRange), errors.Is(err, service.ErrCondenseUsage):
		return &Error{Code: CodeInvalidParams, Kind: KindInvalidParams, Msg: err.Error(), Err: err}
	case errors.Is(err, compaction.ErrNotACut):
		return &Error{Code: CodeInvalidParams, Kind: KindInvalidParams, Msg: err.Error(), Err: err}
	}
	if e := editError(err); e != err {
		return e
	}
	return serviceError(err)
}
