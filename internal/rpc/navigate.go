package rpc

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/pi-lsp/pi-lsp/internal/branch"
	"github.com/pi-lsp/pi-lsp/internal/service"
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
	job := writeJob[NavigateResult]{target: target{session: p.Session, entry: p.TargetID, force: p.Force}, service: true}
	if p.Summarize {
		job.progress = jobProgress{token: p.WorkDoneToken, title: "Summarizing branch", message: "preparing"}
	}
	return write(s, ctx, job, func(ctx context.Context, path string, wd *WorkDone) (NavigateResult, error) {
		req := service.NavigateRequest{Path: path, Target: p.TargetID, Summarize: p.Summarize, Instructions: p.Instructions,
			ReplaceInstructions: p.ReplaceInstructions, Label: p.Label, Summary: p.Summary, ExpectLeaf: p.ExpectLeafID,
			Force: p.Force, Hook: s.treeHook(path)}
		out, err := s.svc().Navigate(ctx, req, jobReporter{s: s, path: path, wd: wd})
		if errors.As(err, new(*service.LeafMoved)) {
			wd.End("The session moved since the preview")
			return nil, err
		}
		if err != nil {
			return nil, s.jobFailed(ctx, path, wd, err, "Failed: ", "Cancelled; pi did not move")
		}
		switch {
		case out.Via == service.ViaPi:
			wd.End("Done by pi")
			return NavigatedViaPi{LeafID: nullable(out.LeafID), Cancelled: out.Cancelled, SummaryEntry: out.SummaryEntry, Via: string(out.Via), PID: out.PID}, nil
		case out.Cancelled:
			// The client's pi/beforeTree hook cancelled: an answer, not an error, as Pi's
			// navigateTree returns {cancelled: true}.
			wd.End("Cancelled by the editor; nothing was written")
			return nil, unwritten[NavigateResult]{NavigateCancelled{LeafID: nullable(out.LeafID), Cancelled: true}}
		}
		wd.End("Done")
		res := out.Result
		r := Navigated{LeafID: nullable(res.LeafID), Position: nullable(res.Position), AlreadyThere: res.AlreadyThere, SummaryEntry: out.SummaryEntry}
		if res.HasEditorText {
			r.EditorText = &res.EditorText
		}
		return r, nil
	})
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
	job := writeJob[UndoCompactionResult]{target: target{session: p.Session, force: p.Force}, service: true}
	return write(s, ctx, job, func(ctx context.Context, path string, _ *WorkDone) (UndoCompactionResult, error) {
		// Errors are mapped by wireError: no compaction is notFound, a concurrent write
		// is ContentModified, a cancel is RequestCancelled.
		out, err := s.svc().UndoCompaction(ctx, service.UndoRequest{Path: path, Leaf: p.LeafID, Force: p.Force}, jobReporter{s: s, path: path})
		if err != nil {
			return UndoCompactionResult{}, err
		}
		res := out.Result
		return UndoCompactionResult{LeafID: nullable(res.LeafID), CompactionID: res.UndoneCompactionID, Position: nullable(res.Position),
			SideBranch: SideBranchOf(out.SideBranch)}, nil
	})
}
