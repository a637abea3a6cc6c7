package branch

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// fake is a Summarizer that records its requests.
type fake struct {
	mu      sync.Mutex
	reqs    []compaction.Request
	text    string
	err     error
	usage   *session.Usage
	block   bool          // wait until ctx is cancelled
	started chan struct{} // closed when a blocking call starts
}

func (f *fake) Name() string { return "fake" }

func (f *fake) Summarize(ctx context.Context, req compaction.Request) (compaction.Result, error) {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	if f.block {
		if f.started != nil {
			close(f.started)
		}
		<-ctx.Done()
		return compaction.Result{}, ctx.Err()
	}
	if f.err != nil {
		return compaction.Result{}, f.err
	}
	text := f.text
	if text == "" {
		text = "SUMMARY"
	}
	return compaction.Result{Text: text, Usage: f.usage, Model: "fake"}, nil
}

func (f *fake) calls() []compaction.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]compaction.Request(nil), f.reqs...)
}

// T12: earlier branch-summary details accumulate; a file written and read is modified;
// the request asks for 2048 tokens; the nested summary serializes with its wrapper.
func TestGenerateAccumulatesDetails(t *testing.T) {
	path := writeSession(t,
		branchSummaryLine("bs", "", "older", details([]string{"old-r.ts"}, []string{"old-m.ts"}), false),
		user("u", "bs", "do it"),
		asst("a", "u", "", toolCall{"write", "w.ts"}, toolCall{"read", "w.ts"}),
	)
	f := &fake{text: "TEXT"}
	s, err := Generate(context.Background(), sessiontest.Index(t, path).Path("a"), f, SummaryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.ReadFiles, []string{"old-r.ts"}) || !reflect.DeepEqual(s.ModifiedFiles, []string{"old-m.ts", "w.ts"}) {
		t.Errorf("read %v modified %v", s.ReadFiles, s.ModifiedFiles)
	}
	want := compaction.BranchSummaryPreamble + "TEXT\n\n<read-files>\nold-r.ts\n</read-files>\n\n<modified-files>\nold-m.ts\nw.ts\n</modified-files>"
	if s.Text != want {
		t.Errorf("summary\n%q\nwant\n%q", s.Text, want)
	}
	reqs := f.calls()
	if len(reqs) != 1 {
		t.Fatalf("%d calls", len(reqs))
	}
	r := reqs[0]
	if r.Kind != compaction.KindBranch || len(r.Messages) != 3 {
		t.Errorf("request kind %s messages %d", r.Kind, len(r.Messages))
	}
	if !strings.HasPrefix(r.Conversation, "[User]: "+session.BranchSummaryPrefix+"older</summary>\n\n[User]: do it") {
		t.Errorf("conversation %q", r.Conversation)
	}
}

// T13 and custom instructions: the prompt ends with the instructions alone, or with the
// branch prompt plus "Additional focus".
func TestGenerateInstructions(t *testing.T) {
	path := writeSession(t, user("u", "", "hello"), asst("a", "u", "hi"))
	entries := sessiontest.Index(t, path).Path("a")
	for _, tc := range []struct {
		opt    SummaryOptions
		suffix string
	}{
		{SummaryOptions{CustomInstructions: "ONLY THIS", ReplaceInstructions: true}, "</conversation>\n\nONLY THIS"},
		{SummaryOptions{CustomInstructions: "MARKER-42"}, "\n\nAdditional focus: MARKER-42"},
		{SummaryOptions{ReplaceInstructions: true}, "Keep each section concise. Preserve exact file paths, function names, and error messages."},
	} {
		f := &fake{}
		if _, err := Generate(context.Background(), entries, f, tc.opt); err != nil {
			t.Fatal(err)
		}
		if p := compaction.BuildPrompt(f.calls()[0]); !strings.HasSuffix(p, tc.suffix) {
			t.Errorf("%+v: prompt ends %q", tc.opt, p[max(0, len(p)-80):])
		}
	}
}

// T14: nothing to summarize means no call and Pi's literal text; errors and
// cancellation are errors.
func TestGenerateEmptyErrorCancel(t *testing.T) {
	f := &fake{}
	s, err := Generate(context.Background(), nil, f, SummaryOptions{})
	if err != nil || s.Text != NoContent || len(f.calls()) != 0 || len(s.ReadFiles) != 0 {
		t.Errorf("empty: %+v %v, %d calls", s, err, len(f.calls()))
	}
	path := writeSession(t, user("u", "", "hello"), labelLine("l", "u", "u", "x"))
	labelsOnly := sessiontest.Index(t, path).Path("l")[1:]
	if s, err := Generate(context.Background(), labelsOnly, f, SummaryOptions{}); err != nil || s.Text != NoContent || len(f.calls()) != 0 {
		t.Errorf("labels only: %+v %v", s, err)
	}
	entries := sessiontest.Index(t, path).Path("l")
	bad := &fake{err: errors.New("bad")}
	if _, err := Generate(context.Background(), entries, bad, SummaryOptions{}); err == nil || !strings.Contains(err.Error(), "bad") {
		t.Errorf("error: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Generate(ctx, entries, &fake{block: true}, SummaryOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancel: %v", err)
	}
}

func TestTokenBudget(t *testing.T) {
	for _, tc := range []struct {
		opt  SummaryOptions
		want int
	}{
		{SummaryOptions{}, 128000 - 16384},
		{SummaryOptions{ContextWindow: 200000, ReserveTokens: 20000}, 180000},
		{SummaryOptions{ContextWindow: 10000, ReserveTokens: 16384}, 0},
		{SummaryOptions{ContextWindow: 16384}, 0},
		{SummaryOptions{Budget: 500}, 500},
		{SummaryOptions{Budget: -1}, 0},
	} {
		if got := tc.opt.TokenBudget(); got != tc.want {
			t.Errorf("%+v: %d, want %d", tc.opt, got, tc.want)
		}
	}
}

// Divergence 7: long file lists are bounded in the text, full in the details.
func TestGenerateBoundsFileLists(t *testing.T) {
	var calls []toolCall
	for i := 0; i < 60; i++ {
		calls = append(calls, toolCall{"edit", "f" + string(rune('A'+i/26)) + string(rune('a'+i%26)) + ".go"})
	}
	path := writeSession(t, user("u", "", "edit all"), asst("a", "u", "", calls...))
	s, err := Generate(context.Background(), sessiontest.Index(t, path).Path("a"), &fake{}, SummaryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.ModifiedFiles) != 60 || !strings.Contains(s.Text, "(+10 more)") {
		t.Errorf("modified %d, text tail %q", len(s.ModifiedFiles), s.Text[len(s.Text)-60:])
	}
}
