package compaction_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/redact"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/secrets"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// A place in a session where a secret is planted: the messages that put s there.
type secretPlace struct {
	name string
	msgs func(s secrets.Secret) []string
}

var secretPlaces = []secretPlace{
	{"user text", func(s secrets.Secret) []string {
		return []string{userMsg("Deploy with this, you must keep it: " + s.Use), assistantMsg("Understood, deploying now.")}
	}},
	{"bash tool call", func(s secrets.Secret) []string {
		return []string{userMsg("run the deploy script"),
			assistantMsg("Running it.", toolCall("call_1", "bash", map[string]any{"command": s.Use})),
			toolResult("call_1", "bash", "ok"), assistantMsg("Deployed.")}
	}},
	{"user bash command", func(s secrets.Secret) []string {
		return []string{mustJSON(map[string]any{"role": "bashExecution", "command": s.Use, "output": "ok\n", "exitCode": 0,
			"cancelled": false, "truncated": false, "timestamp": 1760000000003}), userMsg("that worked"), assistantMsg("Good.")}
	}},
	{"tool error line", func(s secrets.Secret) []string {
		return []string{userMsg("deploy it"),
			assistantMsg("Deploying.", toolCall("call_1", "bash", map[string]any{"command": "make deploy"})),
			mustJSON(map[string]any{"role": "toolResult", "toolCallId": "call_1", "toolName": "bash",
				"content": []any{map[string]any{"type": "text", "text": "error: " + s.OneLine() + "\nmake: *** [deploy] Error 1"}},
				"isError": true, "timestamp": 1760000000002}),
			assistantMsg("The deploy failed.")}
	}},
}

// secretSession writes a session whose older part holds msgs, followed by a recent turn
// that a compaction with secretSettings keeps.
func secretSession(t *testing.T, msgs ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "2026-01-02T03-04-05-000Z_0190aaaa-0000-7000-8000-000000000001.jsonl")
	header := `{"type":"session","version":3,"id":"0190aaaa-0000-7000-8000-000000000001","timestamp":"2026-01-02T03:04:05.000Z","cwd":"/tmp/project"}` + "\n"
	if err := os.WriteFile(path, []byte(header), 0o644); err != nil {
		t.Fatal(err)
	}
	appendMessages(t, path, append(msgs, userMsg("now check the build: "+strings.Repeat("it must compile cleanly. ", 30)),
		assistantMsg("The build is fine."))...)
	return path
}

var secretSettings = settings(100, 16384)

// A compaction whose summarized part holds a secret of each kind (in the user's text, a
// bash command, a tool's error line) writes an entry that holds none of them; a secret
// the summary quotes is there as its redaction marker. The extractive summarizer quotes
// these places, so on code that does not redact the secrets reach the file.
func TestCompactionRedactsSecrets(t *testing.T) {
	q := newQuoted()
	for _, place := range secretPlaces {
		for _, s := range secrets.All() {
			path := secretSession(t, place.msgs(s)...)
			before := sessiontest.Read(t, path)
			opt := compaction.Options{}
			if place.name == "user text" {
				// A pinned message that holds a secret is quoted redacted, and the
				// audit accepts that.
				opt.Pinned = []string{"Deploy with this, you must keep it: " + s.Use}
			}
			res, err := runWith(context.Background(), path, compaction.Extractive{}, secretSettings, opt)
			if err != nil {
				t.Fatalf("%s, %s: %v", place.name, s.Kind, err)
			}
			after := sessiontest.Read(t, path)
			written := string(after[len(before):])
			secrets.NoLeak(t, place.name+", "+s.Kind+": the entry written", written)
			summary, _ := entryJSON(t, sessiontest.Last(t, path))["summary"].(string)
			q.saw(place.name, s.Kind, summary)
			if res.Outcome.Summary != summary {
				t.Errorf("%s, %s: the outcome's summary is not the one written", place.name, s.Kind)
			}
		}
	}
	q.check(t, "compactions")
}

// quoted records which planted secrets a summary quoted (as its marker), so that a test
// fails when it no longer checks anything: every kind must be quoted from some place.
// Which places a summarizer quotes is its own design; a place it never quotes is only
// logged.
type quoted struct {
	kinds  map[string]bool
	places map[string]int
	order  []string
}

func newQuoted() *quoted { return &quoted{kinds: map[string]bool{}, places: map[string]int{}} }

func (q *quoted) saw(place, kind, summary string) {
	if _, ok := q.places[place]; !ok {
		q.order = append(q.order, place)
		q.places[place] = 0
	}
	if strings.Contains(summary, redact.Marker(redact.Kind(kind))) {
		q.kinds[kind] = true
		q.places[place]++
	}
}

func (q *quoted) check(t *testing.T, what string) {
	t.Helper()
	n := 0
	for _, c := range q.places {
		n += c
	}
	if !t.Failed() {
		t.Logf("RESULT secrets in %s: %d secrets of %d kinds in %d places, %d quoted (as markers), 0 leaked",
			what, len(secrets.All()), len(redact.Kinds()), len(q.order), n)
	}
	for _, k := range redact.Kinds() {
		if !q.kinds[string(k)] {
			t.Errorf("premise: no summary quotes the planted %s from any place (the test checks nothing for it)", k)
		}
	}
	for _, p := range q.order {
		if q.places[p] == 0 {
			t.Logf("note: the summaries quote nothing from the %s", p)
		}
	}
}

// A summary that comes from a hook or a --summary-file (the CLI passes the file's text
// as a hook outcome) is written redacted too.
func TestCompactionRedactsHookSummary(t *testing.T) {
	var text strings.Builder
	for _, s := range secrets.All() {
		text.WriteString("- " + s.Use + "\n")
	}
	path := secretSession(t, userMsg("start"), assistantMsg("ok"))
	before := sessiontest.Read(t, path)
	_, err := compaction.Run(context.Background(), sessiontest.Snapshot(t, path), compaction.RunOptions{Settings: secretSettings, Summarizer: compaction.Extractive{},
		Hook: func(ctx context.Context, p *compaction.Preparation) (compaction.HookDecision, error) {
			return compaction.HookDecision{Outcome: &compaction.Outcome{Summary: text.String()}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	secrets.NoLeak(t, "the entry written", string(sessiontest.Read(t, path)[len(before):]))
}

// The drafts cache keeps no secret on disk: neither a draft made in the background (its
// summary, its focus, the pinned texts its audit names) nor one stored as given.
func TestDraftCacheRedactsSecrets(t *testing.T) {
	q := newQuoted()
	dir := t.TempDir()
	store := compaction.NewDraftStore(dir)
	sessions := 0
	for _, place := range secretPlaces {
		for _, s := range secrets.All() {
			path := secretSession(t, place.msgs(s)...)
			p := prepareFile(t, path, secretSettings)
			opt := compaction.Options{CustomInstructions: "keep " + s.Use, Pinned: []string{s.Use}}
			d, err := store.Refresh(context.Background(), path, p, compaction.Extractive{}, opt)
			if err != nil {
				t.Fatalf("%s, %s: %v", place.name, s.Kind, err)
			}
			q.saw(place.name, s.Kind, d.Outcome.Summary)
			sessions++
		}
	}
	q.check(t, "drafts")
	// A draft stored as given.
	all := make([]string, 0, len(secrets.All()))
	for _, s := range secrets.All() {
		all = append(all, s.Use)
	}
	given := &compaction.Draft{Session: filepath.Join(t.TempDir(), "given.jsonl"), Key: "k", Instructions: strings.Join(all, " "),
		Outcome: &compaction.Outcome{Summary: strings.Join(all, "\n"), Audit: compaction.Audit{MissingPinned: all}}}
	if err := store.Put(given); err != nil {
		t.Fatal(err)
	}
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != sessions+1 {
		t.Fatalf("%d cache files, want %d", len(files), sessions+1)
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		secrets.NoLeak(t, "cache file "+f.Name(), string(data))
	}
	// What a later read returns is what the file holds.
	fresh := compaction.NewDraftStore(dir)
	if d := fresh.Get(given.Session); d == nil {
		t.Fatal("the stored draft is not read back")
	} else {
		secrets.NoLeak(t, "the draft read back", d.Outcome.Summary+d.Instructions+strings.Join(d.Outcome.Audit.MissingPinned, " "))
	}
}
