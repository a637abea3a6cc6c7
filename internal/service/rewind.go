package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/pi-lsp/pi-lsp/internal/branch"
	"github.com/pi-lsp/pi-lsp/internal/rewind"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// RewindMode is what a rewind moves back: the files, the conversation, or both.
type RewindMode string

const (
	RewindCode         RewindMode = "code"
	RewindConversation RewindMode = "conversation"
	RewindBoth         RewindMode = "both"
)

// RewindRequest is one rewind of a session's workspace (and conversation) to an entry.
type RewindRequest struct {
	Session string
	EntryID string
	// Mode is RewindCode when empty.
	Mode RewindMode
	// Summarize, with a conversation move, writes a branch summary of what is left.
	Summarize    bool
	Instructions string
	// Files are the conflicting files to bring back anyway; Force picks every conflict.
	Files []string
	Force bool
	// DryRun computes the plan and writes nothing.
	DryRun bool
	// Undo takes back the session's last rewind (EntryID unused).
	Undo bool
	// StateDir is where the kept bytes go ("" for rewind.StateDir()).
	StateDir string
	// Trash overrides the system trash (tests).
	Trash rewind.Trash
}

// RewindOutcome is what a rewind did, or with DryRun would do.
type RewindOutcome struct {
	// Plan is the computed plan (nil for an undo or a conversation-only rewind).
	Plan          *rewind.Plan
	Restored      []string
	Removed       []string
	Conflicts     []rewind.File
	NotRestorable []rewind.NotRestorable
	BashCommands  []string
	// Undo names the rewind: what `rewind --undo` takes back ("" when no file changed).
	Undo string
	// Navigation is the conversation's move, with Mode conversation or both.
	Navigation *branch.NavigateResult
	DryRun     bool
}

// ErrRewindUsage: a request that names no entry, or an unknown mode (errors.Is).
var ErrRewindUsage = errors.New("invalid rewind request")

// Rewind brings the files the agent changed after req.EntryID back to what they held
// there (Mode code), moves the conversation there as navigate does (conversation), or
// both: the files first, then the conversation, and when the move fails the files are
// put back, so a failed or cancelled rewind leaves the files and the session as they
// were. A code rewind writes nothing to the session.
func (c Config) Rewind(ctx context.Context, req RewindRequest, rep Reporter) (RewindOutcome, error) {
	if rep == nil {
		rep = NoReporter{}
	}
	opt := rewind.ApplyOptions{StateDir: req.StateDir, Pick: req.Files, Force: req.Force, Trash: req.Trash,
		Step: func(ctx context.Context, i, n int, path string) error {
			rep.Report(fmt.Sprintf("rewinding %s (%d/%d)", path, i+1, n), 100*i/max(n, 1))
			return ctx.Err()
		}}
	if req.Undo {
		return c.undoRewind(ctx, req, opt)
	}
	mode := req.Mode
	if mode == "" {
		mode = RewindCode
	}
	if req.EntryID == "" || (mode != RewindCode && mode != RewindConversation && mode != RewindBoth) {
		return RewindOutcome{}, fmt.Errorf("%w: entry %q, mode %q", ErrRewindUsage, req.EntryID, mode)
	}
	moves := mode != RewindCode
	var out RewindOutcome
	out.DryRun = req.DryRun
	snap, err := session.LoadSnapshot(req.Session)
	if err != nil {
		return out, err
	}
	if moves && !req.DryRun {
		// The conversation's move is a write a running pi would lose: refused then, as
		// a navigate is (the bridge has no call that also moves the files).
		if _, err := c.RouteWrite(ctx, req.Session, snap.Index().File.Header.Cwd, false, false); err != nil {
			return out, err
		}
	}
	if mode != RewindConversation {
		rep.Report("reading the session's changes", -1)
		p, err := rewind.Compute(ctx, snap, req.EntryID, rewind.Options{})
		if err != nil {
			return out, err
		}
		out.Plan, out.NotRestorable = p, p.NotRestorable
		for _, cmd := range p.Commands {
			out.BashCommands = append(out.BashCommands, cmd.Command)
		}
		if req.DryRun {
			for _, f := range p.Files {
				switch {
				case !p.Picked(f, req.Files, req.Force):
					out.Conflicts = append(out.Conflicts, f)
				case f.Remove():
					out.Removed = append(out.Removed, f.Rel)
				default:
					out.Restored = append(out.Restored, f.Rel)
				}
			}
			return out, nil
		}
		res, err := rewind.Apply(ctx, p, opt)
		if err != nil {
			return out, err
		}
		out.Restored, out.Removed, out.Conflicts, out.Undo = res.Restored, res.Removed, res.Conflicts, res.ID
		for _, f := range res.Conflicts {
			rep.Notice(fmt.Sprintf("%s changed since the session's last change: left alone (pick it with --file %s)", f.Rel, f.Rel))
		}
	}
	if !moves || req.DryRun {
		return out, nil
	}
	rep.Report("moving the conversation", -1)
	nav, err := c.navigateForRewind(ctx, snap, req)
	if err != nil {
		if out.Undo != "" {
			// Put the files back: the conversation did not move.
			uo := opt
			uo.Force, uo.Step = true, nil
			if _, uerr := rewind.Undo(context.WithoutCancel(ctx), out.Undo, uo); uerr != nil {
				return out, fmt.Errorf("%w; and putting the files back failed: %v (their bytes are kept under rewind %s)", err, uerr, out.Undo)
			}
		}
		return RewindOutcome{}, err
	}
	out.Navigation = nav
	return out, nil
}

func (c Config) navigateForRewind(ctx context.Context, snap *session.Snapshot, req RewindRequest) (*branch.NavigateResult, error) {
	ix := snap.Index()
	cwd := ix.File.Header.Cwd
	opt := branch.NavigateOptions{Summarize: req.Summarize, CustomInstructions: req.Instructions, ReserveTokens: c.BranchReserve(cwd)}
	if req.Summarize {
		s, cfg, _, err := c.Summarizer(cwd, ix.LeafPath())
		if err != nil {
			return nil, err
		}
		opt.Summarizer, opt.ContextWindow = s, cfg.Window()
	}
	return branch.Navigate(ctx, snap, req.EntryID, opt)
}

func (c Config) undoRewind(ctx context.Context, req RewindRequest, opt rewind.ApplyOptions) (RewindOutcome, error) {
	id, err := rewind.Last(req.StateDir, req.Session)
	if err != nil {
		return RewindOutcome{}, err
	}
	if id == "" {
		return RewindOutcome{}, rewind.ErrNothingToUndo
	}
	res, err := rewind.Undo(ctx, id, opt)
	if err != nil {
		return RewindOutcome{}, err
	}
	return RewindOutcome{Restored: res.Restored, Removed: res.Removed, Conflicts: res.Conflicts, Undo: res.ID}, nil
}
