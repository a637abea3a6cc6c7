package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pi-lsp/pi-lsp/internal/branch"
	"github.com/pi-lsp/pi-lsp/internal/bridge"
	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

type navigateParams struct {
	Session             string          `json:"session"`
	TargetID            string          `json:"targetId" ts:",required"`
	Summarize           bool            `json:"summarize"`
	Instructions        string          `json:"instructions"`
	ReplaceInstructions bool            `json:"replaceInstructions"`
	Label               string          `json:"label"`
	Force               bool            `json:"force"`
	WorkDoneToken       json.RawMessage `json:"workDoneToken" ts:"ProgressToken"`
	// Summary, with summarize, commits this (previewed, possibly edited) text instead of
	// generating one.
	Summary string `json:"summary"`
	// ExpectLeafID, when set, refuses the navigation if the session's leaf is no longer
	// this one (the leaf a previewed summary was made from).
	ExpectLeafID string `json:"expectLeafId"`
}

func (p *navigateParams) validate() error { return required("targetId", p.TargetID) }

func (s *Server) handleNavigate(ctx context.Context, p navigateParams) (NavigateResult, error) {
	viaPi := func(ctx context.Context, path string, reg *bridge.Registration, wd *WorkDone) (NavigateResult, error) {
		if p.Summary != "" || p.ExpectLeafID != "" {
			wd.End("Not navigated")
			return nil, invalidParams("a previewed summary (summary, expectLeafId) cannot be committed through the live pi: pi summarizes with its own model")
		}
		return s.navigateViaPi(ctx, path, reg, p, wd)
	}
	job := writeJob[NavigateResult]{target: target{session: p.Session, entry: p.TargetID, force: p.Force}, viaPi: viaPi, lock: lockCancellable}
	if p.Summarize {
		job.progress = jobProgress{token: p.WorkDoneToken, title: "Summarizing branch", message: "preparing"}
	}
	return write(s, ctx, job, func(ctx context.Context, path string, wd *WorkDone) (NavigateResult, error) {
		return s.navigate(ctx, path, p, wd)
	})
}

// navigate moves the leaf of a session pi-lsp writes, under the session's job lock.
func (s *Server) navigate(ctx context.Context, path string, p navigateParams, wd *WorkDone) (NavigateResult, error) {
	if p.ExpectLeafID != "" {
		var leaf string
		_ = s.host.withIndex(path, func(ix *session.Index) error { leaf = ix.LeafID(); return nil })
		if leaf != p.ExpectLeafID {
			wd.End("The session moved since the preview")
			return nil, &Error{Code: CodeContentModified, Kind: KindSessionChanged,
				Msg: fmt.Sprintf("the session's leaf moved from %s to %s since the preview; preview again", p.ExpectLeafID, leaf)}
		}
	}
	opt := branch.NavigateOptions{
		Summarize:           p.Summarize,
		CustomInstructions:  p.Instructions,
		ReplaceInstructions: p.ReplaceInstructions,
		EditedSummary:       p.Summary,
		Label:               p.Label,
		Hook:                s.treeHook(path),
	}
	if p.Summarize {
		sum, _, err := s.summarizerFor(path)
		if err != nil {
			wd.End("Failed: " + err.Error())
			return nil, err
		}
		opt.Summarizer = sum
		opt.ReserveTokens = s.branchReserve(path)
		opt.ContextWindow = s.host.window()
		if ms, ok := sum.(*compaction.ModelSummarizer); ok && s.host.configuredWindow() == 0 {
			opt.ContextWindow = ms.ContextWindow() // Pi's budget: the model's window
		}
		opt.Phase, opt.Progress = wd.reportPhase, wd.reportSummary
	}
	// A snapshot of the session, which refreshes while the summary is generated do not
	// change; the navigation writes only if the file is still the one it read.
	snap, err := s.host.snapshot(path)
	var res *branch.NavigateResult
	if err == nil {
		res, err = branch.Navigate(ctx, snap, p.TargetID, opt)
	}
	if errors.Is(err, branch.ErrCancelled) && ctx.Err() == nil {
		// The client's pi/beforeTree hook cancelled: an answer, not an error, as Pi's
		// navigateTree returns {cancelled: true}.
		wd.End("Cancelled by the editor; nothing was written")
		leaf := ""
		_ = s.host.withIndex(path, func(ix *session.Index) error { leaf = ix.LeafID(); return nil })
		return nil, unwritten[NavigateResult]{NavigateCancelled{LeafID: nullable(leaf), Cancelled: true}}
	}
	if err != nil {
		return nil, endFailed(wd, err, ctx.Err() != nil || errors.Is(err, context.Canceled), "Cancelled; nothing was written", "Failed: ")
	}
	wd.End("Done")
	out := Navigated{LeafID: nullable(res.LeafID), Position: nullable(res.Position), AlreadyThere: res.AlreadyThere}
	if res.SummaryEntry != nil {
		out.SummaryEntry = session.Raw[session.BranchSummaryEntry](res.SummaryEntry.Raw())
	}
	if res.HasEditorText {
		out.EditorText = &res.EditorText
	}
	return out, nil
}

func (s *Server) branchReserve(path string) int {
	return s.svc().BranchReserve(s.host.cwdOf(path))
}

func (s *Server) treeHook(path string) branch.Hook {
	if !s.clientHooks() {
		return nil
	}
	return func(ctx context.Context, p *branch.Preparation) (branch.HookDecision, error) {
		params := BeforeTree{
			Session: path, TargetID: p.TargetID, OldLeafID: nullable(p.OldLeafID),
			CommonAncestorID: nullable(p.CommonAncestorID), Entries: len(p.Entries),
			UserWantsSummary: p.UserWantsSummary, CustomInstructions: p.CustomInstructions,
			ReplaceInstructions: p.ReplaceInstructions, Label: p.Label,
		}
		var ans *beforeTreeAnswer
		if !s.askClient(ctx, "pi/beforeTree", params, &ans) || ans == nil {
			return branch.HookDecision{}, nil
		}
		d := branch.HookDecision{Cancel: ans.Cancel, CustomInstructions: ans.CustomInstructions, ReplaceInstructions: ans.ReplaceInstructions, Label: ans.Label}
		if ans.Summary != nil {
			var details any
			if len(ans.Summary.Details) > 0 {
				details = ans.Summary.Details
			}
			d.Summary = &branch.HookSummary{Text: ans.Summary.Summary, Details: details}
		}
		return d, nil
	}
}

func (s *Server) handleUndoCompaction(ctx context.Context, p undoCompactionParams) (UndoCompactionResult, error) {
	job := writeJob[UndoCompactionResult]{target: target{session: p.Session, force: p.Force}}
	return write(s, ctx, job, func(ctx context.Context, path string, _ *WorkDone) (UndoCompactionResult, error) {
		snap, err := s.host.snapshot(path)
		if err != nil {
			return UndoCompactionResult{}, err
		}
		res, err := branch.UndoCompaction(ctx, snap, "")
		if err != nil {
			// Mapped by wireError: no compaction is notFound, a concurrent write is
			// ContentModified, a cancel is RequestCancelled.
			return UndoCompactionResult{}, err
		}
		return UndoCompactionResult{LeafID: nullable(res.LeafID), CompactionID: res.UndoneCompactionID}, nil
	})
}
