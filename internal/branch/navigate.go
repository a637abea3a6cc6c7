package branch

import (
	"context"
	"errors"
	"fmt"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/redact"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// MarkerType is the customType of the "custom" entry that records a move without a
// summary. Custom entries never reach the LLM; the entry's parent is the new position,
// so Pi, whose leaf on open is the last entry of the file, continues from there.
const MarkerType = "pi-lsp/navigate"

// ErrNotFound is wrapped by the error for an unknown entry id ("entry X not found").
var ErrNotFound = errors.New("not found")

// ErrCancelled is returned when the before-navigation hook cancels.
var ErrCancelled = errors.New("navigation cancelled")

// ErrNoCompaction means the current path holds no compaction to undo.
var ErrNoCompaction = errors.New("no compaction on the current path")

// ErrSessionChanged means the file changed between loading and writing; nothing was
// written. It matches compaction.ErrSessionChanged with errors.Is.
var ErrSessionChanged error = sessionChanged{}

type sessionChanged struct{}

func (sessionChanged) Error() string {
	return "the session changed while navigating; nothing was written, try again"
}
func (sessionChanged) Is(target error) bool { return target == compaction.ErrSessionChanged }

// ErrCycle means the new position sits on a parent cycle: appending below it would
// give Pi a leaf it loops on forever.
var ErrCycle = errors.New("the entry sits on a parent cycle (Pi would loop forever on it)")

func notFound(id string) error { return fmt.Errorf("entry %s %w", id, ErrNotFound) }

// HookSummary is a summary supplied by the hook instead of generating one.
type HookSummary struct {
	Text    string
	Details any // stored as given (nil: no details)
}

// HookDecision is the answer of a before-navigation hook (Pi's session_before_tree).
type HookDecision struct {
	Cancel bool
	// Summary is used only when a summary was requested; it is stored with
	// fromHook: true.
	Summary *HookSummary
	// Non-nil fields override the options.
	CustomInstructions  *string
	ReplaceInstructions *bool
	Label               *string
}

// Hook runs after the branch is collected, before any summary is generated. It is
// called whether or not a summary was requested, as Pi's session_before_tree is.
type Hook func(ctx context.Context, p *Preparation) (HookDecision, error)

// NavigateOptions configure a navigation.
type NavigateOptions struct {
	// FromLeaf is the position to navigate from ("": Pi's leaf, the last entry).
	FromLeaf            string
	Summarize           bool
	CustomInstructions  string
	ReplaceInstructions bool
	Label               string
	Summarizer          compaction.Summarizer
	// ReserveTokens (default 16384) and ContextWindow (default 128000) set the token
	// budget of the summarized messages; Budget, when non-zero, replaces it (negative:
	// no limit). See SummaryOptions.
	ReserveTokens int
	ContextWindow int
	Budget        int
	Hook          Hook
	// Phase is told when the job moves to "preparing", "summarizing" and "writing".
	Phase    func(phase string)
	Progress func(compaction.Progress)
	// DryRun collects and prepares, and writes nothing (no hook, no summary).
	DryRun bool
	// EditedSummary, with Summarize, is the user's own (edited) summary text: it is
	// written as given, with the branch's file lists and details.edited, and no model is
	// asked.
	EditedSummary string
}

// Preparation is what a navigation is about to do (Pi's TreePreparation plus the
// prepared messages).
type Preparation struct {
	TargetID  string
	OldLeafID string
	// CommonAncestorID is "" when the two positions share no entry.
	CommonAncestorID string
	// Entries are the entries of the branch being left, in Pi's order.
	Entries             []*session.Entry
	UserWantsSummary    bool
	CustomInstructions  string
	ReplaceInstructions bool
	Label               string
	// Budget is the token budget of the prepared messages (0: no limit).
	Budget int
	// Prepared is Pi's exact prepareBranchEntries of Entries within Budget (its file
	// lists are Pi's; the summary written also accumulates compaction details).
	Prepared Prepared
	// ReadFiles and ModifiedFiles are Pi's file lists of Prepared.
	ReadFiles, ModifiedFiles []string
	// Index is the session as loaded.
	Index *session.Index
}

// NavigateResult is what a navigation did.
type NavigateResult struct {
	// LeafID is the session's leaf afterwards, as Pi sees it on open: the last entry
	// appended (label, summary or marker), or the position when nothing was written.
	LeafID string
	// Position is where the active branch now continues from, before the entries this
	// navigation appended: the target, or its parent for a user or custom message (""
	// for the root).
	Position         string
	OldLeafID        string
	CommonAncestorID string
	// SummaryEntry, LabelEntry and MarkerEntry are the appended entries (nil when not
	// written).
	SummaryEntry, LabelEntry, MarkerEntry *session.Entry
	// EditorText is the text of the user (or custom) message navigated to, for the
	// editor, when HasEditorText.
	EditorText    string
	HasEditorText bool
	// AlreadyThere is set when the target is the current leaf: nothing was done.
	AlreadyThere bool
	// FromHook is set when the summary came from the hook.
	FromHook bool
	// Summary is the generated summary (nil when none was generated).
	Summary     *Summary
	Preparation *Preparation
	// UndoneCompactionID is the compaction UndoCompaction stepped back over.
	UndoneCompactionID string
}

// Navigate moves the leaf of the session snap was taken of to targetID, as Pi's
// navigateTree does, optionally summarizing the branch being left. Everything is
// computed on the snapshot (the file is not read again) and all entries are appended in
// one write (Snapshot.Append), only while the file is still the one snap read, else
// ErrSessionChanged; any failure, cancellation or hook cancel leaves the file untouched.
func Navigate(ctx context.Context, snap *session.Snapshot, targetID string, opt NavigateOptions) (*NavigateResult, error) {
	return navigate(ctx, snap, targetID, opt, "")
}

func navigate(ctx context.Context, snap *session.Snapshot, targetID string, opt NavigateOptions, undoneCompaction string) (*NavigateResult, error) {
	phase := compaction.Phases(opt.Phase)
	phase("preparing")
	ix := snap.Index()
	oldLeaf, err := leafOf(ix, opt.FromLeaf)
	if err != nil {
		return nil, err
	}
	if targetID == "" {
		return nil, errors.New("no target entry id")
	}
	target := ix.Entry(targetID)
	if target == nil {
		return nil, notFound(targetID)
	}
	prep, sopt := prepareNavigation(ix, oldLeaf, targetID, opt)
	res := &NavigateResult{OldLeafID: oldLeaf, Preparation: prep, CommonAncestorID: prep.CommonAncestorID}
	if targetID == oldLeaf {
		// Pi's navigateTree does nothing (and asks no hook) when already there.
		res.AlreadyThere, res.LeafID, res.Position = true, oldLeaf, oldLeaf
		return res, nil
	}
	position := targetID
	if undoneCompaction == "" {
		position, res.EditorText, res.HasEditorText = positionOf(ix, target)
	}
	res.Position = position
	if position != "" && onCycle(ix, position) {
		return nil, fmt.Errorf("cannot navigate to %s: %w", position, ErrCycle)
	}
	if opt.DryRun {
		res.LeafID = position
		return res, nil
	}
	hookSummary, label, err := askHook(ctx, opt, prep, &sopt)
	if err != nil {
		return nil, err
	}
	text, fields, err := summaryOf(ctx, opt, prep, sopt, hookSummary, res, phase)
	if err != nil {
		return nil, err
	}
	add, kinds := entriesFor(ix, oldLeaf, targetID, position, label, text, fields, undoneCompaction)
	res.LeafID = position
	if len(add) == 0 {
		return res, nil
	}
	if err := writeNavigation(snap, add, kinds, res, phase); err != nil {
		return nil, err
	}
	return res, nil
}

// prepareNavigation is Pi's preparation of a navigation from oldLeaf to targetID: the
// branch being left, its budgeted messages and file lists, and the summary's options.
func prepareNavigation(ix *session.Index, oldLeaf, targetID string, opt NavigateOptions) (*Preparation, SummaryOptions) {
	col := Collect(ix, oldLeaf, targetID)
	sopt := SummaryOptions{
		CustomInstructions: opt.CustomInstructions, ReplaceInstructions: opt.ReplaceInstructions,
		ReserveTokens: opt.ReserveTokens, ContextWindow: opt.ContextWindow, Budget: opt.Budget,
		Progress: opt.Progress, ThinkingLevel: session.ContextOfPath(ix.Path(oldLeaf)).Level(),
	}
	prep := &Preparation{
		TargetID: targetID, OldLeafID: oldLeaf, CommonAncestorID: col.CommonAncestorID,
		Entries: col.Entries, UserWantsSummary: opt.Summarize,
		CustomInstructions: opt.CustomInstructions, ReplaceInstructions: opt.ReplaceInstructions,
		Label: opt.Label, Budget: sopt.TokenBudget(), Index: ix,
	}
	prep.Prepared = Prepare(col.Entries, prep.Budget)
	prep.ReadFiles, prep.ModifiedFiles = prep.Prepared.FileOps.Lists()
	return prep, sopt
}

// positionOf is where the active branch continues after a move to target (Pi's rule): a
// user or custom message puts the leaf on its parent and its text in the editor; anything
// else becomes the leaf itself.
func positionOf(ix *session.Index, target *session.Entry) (position, editorText string, hasEditorText bool) {
	switch {
	case target.Type == session.TypeMessage && target.Role() == session.RoleUser:
		m, _ := target.Message()
		return existingParent(ix, target), m.Text(""), true
	case target.Type == session.TypeCustomMessage:
		return existingParent(ix, target), session.CustomMessage(target).Text(""), true
	}
	return target.ID, "", false
}

// askHook runs the before-navigate hook: it may cancel, supply the summary, or change
// the instructions (in sopt) and the label.
func askHook(ctx context.Context, opt NavigateOptions, prep *Preparation, sopt *SummaryOptions) (*HookSummary, string, error) {
	label := opt.Label
	var hookSummary *HookSummary
	if opt.Hook != nil {
		d, err := opt.Hook(ctx, prep)
		if err != nil {
			return nil, "", fmt.Errorf("before-navigate hook: %w", err)
		}
		if d.Cancel {
			return nil, "", ErrCancelled
		}
		if d.Summary != nil && opt.Summarize {
			hookSummary = d.Summary
		}
		if d.CustomInstructions != nil {
			sopt.CustomInstructions = *d.CustomInstructions
		}
		if d.ReplaceInstructions != nil {
			sopt.ReplaceInstructions = *d.ReplaceInstructions
		}
		if d.Label != nil {
			label = *d.Label
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, "", fmt.Errorf("navigation cancelled: %w", err)
	}
	return hookSummary, label, nil
}

// summaryOf is the branch summary to write ("" for none) and its fields after fromId and
// summary: an edited one, a generated one, or the hook's. The text written holds no
// credential.
func summaryOf(ctx context.Context, opt NavigateOptions, prep *Preparation, sopt SummaryOptions, hookSummary *HookSummary, res *NavigateResult, phase func(string)) (string, []session.Field, error) {
	var text string
	var fields []session.Field
	switch {
	case opt.Summarize && opt.EditedSummary != "" && hookSummary == nil:
		text = opt.EditedSummary
		read, mod := PrepareWith(prep.Entries, prep.Budget, PrepareOptions{AccumulateCompactionDetails: true}).FileOps.Lists()
		fields = []session.Field{
			{Key: "details", Value: Details{ReadFiles: read, ModifiedFiles: mod, Edited: true}},
			{Key: "fromHook", Value: false},
		}
	case opt.Summarize && len(prep.Entries) > 0 && hookSummary == nil:
		phase("summarizing")
		s, err := Generate(ctx, prep.Entries, opt.Summarizer, sopt)
		if err != nil {
			return "", nil, err
		}
		res.Summary, text = s, s.Text
		// Pi's order: details, usage, fromHook (a nil usage is left out).
		var usage any
		if s.Usage != nil {
			usage = s.Usage
		}
		fields = []session.Field{
			{Key: "details", Value: Details{ReadFiles: s.ReadFiles, ModifiedFiles: s.ModifiedFiles}},
			{Key: "usage", Value: usage},
			{Key: "fromHook", Value: false},
		}
	case hookSummary != nil:
		text, res.FromHook = hookSummary.Text, true
		fields = []session.Field{
			{Key: "details", Value: hookSummary.Details},
			{Key: "fromHook", Value: true},
		}
	}
	if err := ctx.Err(); err != nil {
		return "", nil, fmt.Errorf("navigation cancelled: %w", err)
	}
	// Generated, edited or from the hook, the summary written holds no credential.
	return redact.String(text), fields, nil
}

// entriesFor are the entries a navigation appends, in one chain: the branch summary (or,
// without one, a marker when the leaf moves, a label is set or a compaction is undone),
// then the label; kinds names each.
func entriesFor(ix *session.Index, oldLeaf, targetID, position, label, summaryText string, summaryFields []session.Field, undoneCompaction string) ([]session.NewEntry, []string) {
	var add []session.NewEntry
	var kinds []string
	if summaryText != "" {
		fromID := oldLeaf
		if fromID == "" {
			fromID = "root"
		}
		add = append(add, session.NewEntry{
			Type:     session.TypeBranchSummary,
			ParentID: position,
			Fields: append([]session.Field{
				{Key: "fromId", Value: fromID},
				{Key: "summary", Value: summaryText},
			}, summaryFields...),
		})
		kinds = append(kinds, "summary")
	} else if position != ix.LeafID() || label != "" || undoneCompaction != "" {
		data := map[string]any{"fromId": session.IDOrNull(oldLeaf), "targetId": targetID}
		if undoneCompaction != "" {
			data["undoneCompactionId"] = undoneCompaction
		}
		add = append(add, session.NewEntry{
			Type:     session.TypeCustom,
			ParentID: position,
			Fields: []session.Field{
				{Key: "customType", Value: MarkerType},
				{Key: "data", Value: data},
			},
		})
		kinds = append(kinds, "marker")
	}
	if label != "" {
		var labelTarget any = targetID
		if summaryText != "" {
			labelTarget = session.PreviousEntryID
		}
		add = append(add, session.NewEntry{
			Type:     session.TypeLabel,
			ParentID: session.ChainToPrevious,
			Fields: []session.Field{
				{Key: "targetId", Value: labelTarget},
				{Key: "label", Value: label},
			},
		})
		kinds = append(kinds, "label")
	}
	return add, kinds
}

// writeNavigation appends a navigation's entries in one write, when the file is still
// the one the snapshot read (else ErrSessionChanged; an entry that could not be read
// back is its read error), and records them in res.
func writeNavigation(snap *session.Snapshot, add []session.NewEntry, kinds []string, res *NavigateResult, phase func(string)) error {
	if err := writable(snap.File()); err != nil {
		return err
	}
	phase("writing")
	written, err := snap.Append(add)
	if errors.Is(err, session.ErrChanged) {
		return ErrSessionChanged
	}
	if err != nil {
		return err
	}
	for i, e := range written {
		switch kinds[i] {
		case "summary":
			res.SummaryEntry = e
		case "marker":
			res.MarkerEntry = e
		case "label":
			res.LabelEntry = e
		}
	}
	res.LeafID = written[len(written)-1].ID
	return nil
}

// ErrOldFormat means the file is in format v1, whose entries have no ids: Pi gives them
// fresh ids and chains them in file order whenever it opens the file, so no branch can
// be recorded in it (open it in Pi once to migrate it).
var ErrOldFormat = errors.New("the session file is format v1 (entries without ids): Pi renumbers and re-chains its entries on every open, so a move or label cannot be recorded; open it in Pi once to migrate it")

func writable(f *session.File) error {
	if f.MigratedFrom == 1 {
		return ErrOldFormat
	}
	return nil
}

// existingParent is the parent of e when it exists, else "" (a dangling parent: the new
// position is the root, which gives the same context Pi builds for an orphan).
func existingParent(ix *session.Index, e *session.Entry) string {
	if e.ParentID == "" || ix.Entry(e.ParentID) == nil {
		return ""
	}
	return e.ParentID
}

// onCycle reports whether walking parent links from id revisits an entry.
func onCycle(ix *session.Index, id string) bool {
	seen := map[*session.Entry]bool{}
	for e := ix.Entry(id); e != nil; {
		if seen[e] {
			return true
		}
		seen[e] = true
		if e.ParentID == "" {
			return false
		}
		e = ix.Entry(e.ParentID)
	}
	return false
}

// leafOf is the leaf a command starts from: from when given (an entry of the session),
// else Pi's leaf.
func leafOf(ix *session.Index, from string) (string, error) {
	if from == "" {
		return ix.LeafID(), nil
	}
	if ix.Entry(from) == nil {
		return "", notFound(from)
	}
	return from, nil
}

// UndoCompaction makes the full context from before the newest compaction on the
// current path active again: it navigates, without a summary, to that compaction's
// parent (the leaf the compaction was made on), recording the move with a marker. The
// compaction and anything after it stay in the file on their branch. fromLeaf "" means
// Pi's leaf (the last entry). It works on snap, as Navigate does.
func UndoCompaction(ctx context.Context, snap *session.Snapshot, fromLeaf string) (*NavigateResult, error) {
	ix := snap.Index()
	leaf, err := leafOf(ix, fromLeaf)
	if err != nil {
		return nil, err
	}
	p := ix.Path(leaf)
	var comp *session.Entry
	for i := len(p) - 1; i >= 0; i-- {
		if p[i].Type == session.TypeCompaction {
			comp = p[i]
			break
		}
	}
	if comp == nil {
		return nil, ErrNoCompaction
	}
	if comp.ParentID == "" || ix.Entry(comp.ParentID) == nil {
		return nil, fmt.Errorf("compaction %s has no earlier entry to return to", comp.ID)
	}
	// The same snapshot: a change since it was taken is caught when navigate writes.
	res, err := navigate(ctx, snap, comp.ParentID, NavigateOptions{FromLeaf: fromLeaf}, comp.ID)
	if err != nil {
		return nil, err
	}
	if res.AlreadyThere {
		return nil, fmt.Errorf("already at %s, before compaction %s", comp.ParentID, comp.ID)
	}
	res.UndoneCompactionID = comp.ID
	return res, nil
}

// SetLabel sets (or, with an empty label, clears) the label of an entry by appending a
// label entry as a child of Pi's leaf (the last entry), as Pi's appendLabelChange does.
// An unknown entry is an error and nothing is written.
func SetLabel(path, entryID, label string) (*session.Entry, error) {
	var value any
	if label != "" {
		value = label
	}
	return mark(path, entryID, session.TypeLabel, session.Field{Key: "targetId", Value: entryID}, session.Field{Key: "label", Value: value})
}
