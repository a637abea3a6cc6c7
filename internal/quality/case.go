package quality

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/branch"
	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// Kind is what a case summarizes.
type Kind string

const (
	// History is a compaction of the older part of the session (compaction.Prepare and
	// compaction.Generate: a first summary, an update of a previous one, or a split turn).
	History Kind = "compaction"
	// Branch is the summary of a branch left by navigating the tree (branch.Collect and
	// branch.Generate).
	Branch Kind = "branch"
)

// Case is one session of the benchmark and what a checkpoint of it must carry.
type Case struct {
	Name  string
	Title string
	Kind  Kind
	// HeldOut marks a case written after the extractive summarizer was tuned: its mean is
	// reported apart, as a check that the heuristics are not fitted to the other cases.
	HeldOut bool
	// Keep is the compaction's keepRecentTokens (History); 0 means 400.
	Keep int
	// KeepLast keeps only the session's last message (History): keepRecentTokens is its
	// estimate, so the cut falls on it.
	KeepLast bool
	// Target is the mark navigated to (Branch); the branch left ends at the script's last
	// entry.
	Target string
	// Script writes the session.
	Script func(s *Script)
	Want   Expect
}

// Expect is the annotation of a case: what a checkpoint of the summarized part must
// carry, and what it must not. A Fact is a string of terms joined by " & ", all of which
// must appear (case-insensitively, backticks and emphasis ignored) in one section the
// fact belongs to; a term may list alternatives joined by " | ".
type Expect struct {
	Goal        []string // what the user is trying to accomplish
	Latest      string   // the latest request, when it is not the goal itself
	Constraints []string // constraints and preferences stated by the user, wherever
	Done        []string // work completed, with its outcome
	InProgress  []string // work started and not finished
	Blocked     []string // failures or blockers still open at the end of the span
	Next        []string // what should happen next (the assistant's stated plan, open work)
	// Stale are errors that were resolved later in the span: a checkpoint must not
	// present them as current (under Blocked, or as a live error).
	Stale []string
	// Entities are exact strings (paths, commands, error strings, ids, URLs, numbers) the
	// checkpoint must keep whole, case-sensitively.
	Entities []string
	// Noise is harness text that must not reach the checkpoint (besides the generic
	// patterns every case checks, such as <system-reminder>).
	Noise []string
	// ReadFiles and ModifiedFiles are the file lists Pi computes for the span (checked
	// against fileops by a test).
	ReadFiles, ModifiedFiles []string
}

// Produced is a summary produced for a case through the real code path, and what the
// summarizer was given.
type Produced struct {
	Case    *Case
	Summary string
	// Source is every text the summarizer was given: the messages summarized (tool
	// arguments and results whole), the previous summary, the file lists.
	Source string
	// Read and Modified are the file lists of the entry written (details).
	Read, Modified []string
	SplitTurn      bool
	HasPrevious    bool
	// Kept describes where the kept part starts (History): the role and the start of the
	// first kept message.
	Kept string
}

// Session is the case's session file.
func (c *Case) Session() []byte {
	s := NewScript(c.Name, "/home/dev/src/"+c.Name)
	c.Script(s)
	return s.Bytes()
}

func (c *Case) keep() int {
	if c.Keep > 0 {
		return c.Keep
	}
	return 400
}

// Produce summarizes the case with s: for History, compaction.Prepare and
// compaction.Generate on the leaf's path (the header Pi adds, the split-turn part and the
// file blocks included); for Branch, branch.Collect from the leaf to the target and
// branch.Generate.
func (c *Case) Produce(ctx context.Context, s compaction.Summarizer) (*Produced, error) {
	script := NewScript(c.Name, "/home/dev/src/"+c.Name)
	c.Script(script)
	f, err := session.Parse(script.Bytes())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Name, err)
	}
	ix := session.NewIndex(f)
	out := &Produced{Case: c}
	switch c.Kind {
	case Branch:
		col := branch.Collect(ix, ix.LeafID(), script.ID(c.Target))
		sum, err := branch.Generate(ctx, col.Entries, s, branch.SummaryOptions{})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		out.Summary, out.Read, out.Modified = sum.Text, sum.ReadFiles, sum.ModifiedFiles
		out.Source = sourceOf(sum.Prepared.Messages, "", sum.ReadFiles, sum.ModifiedFiles)
	default:
		settings := session.DefaultCompactionSettings
		settings.KeepRecentTokens = c.keep()
		path := ix.Path(ix.LeafID())
		if c.KeepLast {
			if m := session.MessageOf(path[len(path)-1]); m != nil {
				settings.KeepRecentTokens = session.EstimateTokens(m)
			}
		}
		p, o, span, err := compact(ctx, path, settings, s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		out.Summary, out.Read, out.Modified = o.Summary, o.Details.ReadFiles, o.Details.ModifiedFiles
		out.Source = sourceOf(span, p.PreviousSummary, out.Read, out.Modified)
		out.SplitTurn, out.HasPrevious = p.IsSplitTurn, p.HasPrevious
		if kept := p.KeptMessages(); len(kept) > 0 {
			t := kept[0].Text(" ")
			if len(t) > 80 {
				t = t[:80]
			}
			out.Kept = fmt.Sprintf("%s (%d kept) %q", kept[0].Role, len(kept), t)
		}
	}
	return out, nil
}

// compact compacts path as Pi does (compaction.Prepare, then compaction.Generate with s);
// span is what the summarizer was given to summarize: the messages, then the prefix of a
// split turn.
func compact(ctx context.Context, path []*session.Entry, settings session.CompactionSettings, s compaction.Summarizer) (*compaction.Preparation, *compaction.Outcome, []*session.Message, error) {
	p, err := compaction.Prepare(path, settings)
	if err != nil {
		return nil, nil, nil, err
	}
	o, err := compaction.Generate(ctx, p, s, compaction.Options{})
	if err != nil {
		return nil, nil, nil, err
	}
	span := append(append([]*session.Message(nil), p.MessagesToSummarize...), p.TurnPrefixMessages...)
	return p, o, span, nil
}

// sourceOf is every text of the messages (tool arguments and results whole), then the
// previous summary and the file lists.
func sourceOf(msgs []*session.Message, previous string, read, modified []string) string {
	var b strings.Builder
	for _, m := range msgs {
		switch m.Role {
		case session.RoleBashExecution:
			b.WriteString(m.Bash().Command + "\n" + m.OutputText() + "\n")
		case session.RoleBranchSummary, session.RoleCompactionSummary:
			b.WriteString(m.SummaryText() + "\n")
		case session.RoleAssistant:
			if e := m.ErrorMessage(); e != "" {
				b.WriteString(e + "\n")
			}
			for _, blk := range m.Blocks() {
				switch blk.Type {
				case "text":
					b.WriteString(blk.Text + "\n")
				case "toolCall":
					b.WriteString(blk.Name + " " + string(blk.Arguments) + "\n")
					for _, v := range argValues(blk.Arguments) {
						b.WriteString(v + "\n")
					}
				}
			}
		default:
			b.WriteString(m.Text("\n") + "\n")
		}
	}
	b.WriteString(previous + "\n")
	b.WriteString(strings.Join(read, "\n") + "\n" + strings.Join(modified, "\n") + "\n")
	return b.String()
}

// Cases are the benchmark's sessions (the files under cases/), by name, the held-out
// ones last.
func Cases() []*Case {
	all, err := LoadCases(caseFiles, "cases")
	if err != nil {
		panic(err) // the files are embedded: a test reads them all
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].HeldOut != all[j].HeldOut {
			return !all[i].HeldOut
		}
		return all[i].Name < all[j].Name
	})
	return all
}
