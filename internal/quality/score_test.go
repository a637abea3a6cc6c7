package quality

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestWeightsSumToOne(t *testing.T) {
	var sum float64
	for _, d := range Dimensions {
		sum += d.Weight
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Errorf("weights sum to %v", sum)
	}
}

// A fact is terms joined by " & ", each with alternatives joined by " | ", matched
// case-insensitively with backticks and emphasis ignored.
func TestFactMatching(t *testing.T) {
	text := norm("- [x] `go test -race ./...` **passes** after the fix in Worker.loop")
	for fact, want := range map[string]bool{
		"go test -race":                true,
		"GO TEST -RACE & passes":       true,
		"go test -race & fails | pass": true,
		"go test -race & fails":        false,
		"worker.loop & atomic":         false,
		"atomic | worker.loop":         true,
	} {
		if got := matches(text, fact); got != want {
			t.Errorf("matches(%q) = %v, want %v", fact, got, want)
		}
	}
}

// Sections are found by their headings across the history and the split-turn parts; the
// file blocks are read apart and are no section's body.
func TestParseSummary(t *testing.T) {
	d := parseSummary("## Goal\nShip it.\n\n## Progress\n### Done\n- [x] one\n- [x] two\n\n### In Progress\n(none)\n\n---\n\n**Turn Context (split turn):**\n\n## Original Request\nAsk.\n\n## Context Needed to Continue\n- note\n\n<read-files>\na.go\n</read-files>\n\n<modified-files>\nb.go\nc.go\n</modified-files>")
	if got := d.sections["done"]; !reflect.DeepEqual(got, []string{"- [x] one", "- [x] two"}) {
		t.Errorf("done = %q", got)
	}
	if got := d.sections["context needed to continue"]; !reflect.DeepEqual(got, []string{"- note"}) {
		t.Errorf("context = %q", got)
	}
	if !d.placeholderOnly("in progress") || d.placeholderOnly("done") {
		t.Error("placeholderOnly")
	}
	if !reflect.DeepEqual(d.readBlock, []string{"a.go"}) || !reflect.DeepEqual(d.modBlock, []string{"b.go", "c.go"}) || !d.hasBlocks {
		t.Errorf("blocks: %q %q", d.readBlock, d.modBlock)
	}
	if strings.Contains(d.text, "<read-files>") {
		t.Error("file blocks left in the text")
	}
	want := []string{"## Goal", "## Progress", "### Done", "### In Progress", "## Original Request", "## Context Needed to Continue"}
	if !reflect.DeepEqual(d.headings, want) {
		t.Errorf("headings = %q", d.headings)
	}
}

// An entity cut by an ellipsis is not kept whole, and a cut backtick span counts as a
// broken entity; Go's "./..." is not a cut.
func TestEntitiesKeptWhole(t *testing.T) {
	if entityWhole("Ran `go test ./internal/queue/…`", "go test ./internal/queue/") {
		t.Error("a cut entity counts as whole")
	}
	if !entityWhole("cut `a/b.go…` then whole a/b.go.", "a/b.go") {
		t.Error("a later whole occurrence does not count")
	}
	ents, broken := summaryEntities("- Ran `go test ./...`\n- Ran `kubectl -n staging apply -f k8s/stag…`\n- Ran `make e2e\n- see https://example.com/x and internal/a.go, #418, 9e8f7a6")
	if broken != 2 { // the cut span, and the line with an unclosed span
		t.Errorf("broken = %d", broken)
	}
	for _, want := range []string{"go test ./...", "https://example.com/x", "internal/a.go", "#418", "9e8f7a6"} {
		found := false
		for _, e := range ents {
			if e == want {
				found = true
			}
		}
		if !found {
			t.Errorf("entity %q not found in %q", want, ents)
		}
	}
}

func TestF1AndLength(t *testing.T) {
	if got := f1([]string{"a", "b"}, []string{"a", "b"}); got != 1 {
		t.Errorf("f1 = %v", got)
	}
	if got := f1([]string{"a", "x"}, []string{"a", "b"}); math.Abs(got-0.5) > 1e-9 {
		t.Errorf("f1 = %v", got)
	}
	if f1(nil, nil) != 1 || f1([]string{"a"}, nil) != 0 || f1(nil, []string{"a"}) != 0 {
		t.Error("f1 of empty lists")
	}
	if lengthScore(5000, 20) >= 0.45 || lengthScore(5000, 500) != 1 || lengthScore(1000, 900) >= 0.5 || lengthScore(200, 300) != 0.85 {
		t.Error("lengthScore bands")
	}
}

const sampleSummary = `## Goal
Fix the flaky TestWorkerDrain.

## Constraints & Preferences
- No sleeps in the test.

## Progress
### Done
- [x] ` + "`go test -race ./...`" + ` passes

### In Progress
(none)

### Blocked
%s

## Key Decisions
(none)

## Next Steps
1. Run ` + "`go test -count=50 ./internal/queue/`" + ` again

## Critical Context
(none)`

var sampleWant = Expect{
	Goal:        []string{"TestWorkerDrain"},
	Constraints: []string{"sleeps"},
	Done:        []string{"go test -race & pass"},
	Next:        []string{"-count=50"},
	Stale:       []string{"drained 9 jobs"},
	Entities:    []string{"go test -race ./..."},
}

const sampleSource = "TestWorkerDrain flaky, no sleeps. go test -count=50 ./internal/queue/ drained 9 jobs, want 10. go test -race ./... ok"

// An error resolved later may be mentioned as resolved, not presented as a current
// blocker.
func TestStaleErrorAsCurrent(t *testing.T) {
	clean := score(History, sampleWant, strings.Replace(sampleSummary, "%s", "(none)", 1), sampleSource, false)
	stale := score(History, sampleWant, strings.Replace(sampleSummary, "%s", "- `go test -count=50` fails: drained 9 jobs, want 10", 1), sampleSource, false)
	resolved := score(History, sampleWant, strings.Replace(sampleSummary, "%s", "- (drained 9 jobs, want 10: fixed)", 1), sampleSource, false)
	if clean.Dims["blockers"] != 1 || stale.Dims["blockers"] >= 1 || resolved.Dims["blockers"] != 1 {
		t.Errorf("blocker fidelity: clean %v, stale %v, resolved %v", clean.Dims["blockers"], stale.Dims["blockers"], resolved.Dims["blockers"])
	}
	if stale.Penalty("contradiction") == 0 || clean.Penalty("contradiction") != 0 {
		t.Errorf("contradiction penalty: %v", stale.Penalties)
	}
	if !(stale.Total < clean.Total) {
		t.Errorf("stale %.3f, clean %.3f", stale.Total, clean.Total)
	}
}

// Open work reported as done is a fabricated completion, and a live blocker reported as
// none is missed.
func TestFabricatedCompletionAndMissedBlocker(t *testing.T) {
	w := sampleWant
	w.InProgress = []string{"QUEUE_DRAIN_TIMEOUT"}
	w.Blocked = []string{"undefined: time"}
	honest := strings.Replace(strings.Replace(sampleSummary, "%s", "- `go build` fails: undefined: time", 1), "### In Progress\n(none)", "### In Progress\n- [ ] QUEUE_DRAIN_TIMEOUT", 1)
	lying := strings.Replace(strings.Replace(sampleSummary, "%s", "(none)", 1), "passes\n", "passes\n- [x] QUEUE_DRAIN_TIMEOUT is done; all tasks are complete\n", 1)
	h := score(History, w, honest, sampleSource+" QUEUE_DRAIN_TIMEOUT undefined: time", false)
	l := score(History, w, lying, sampleSource+" QUEUE_DRAIN_TIMEOUT undefined: time", false)
	if h.Penalty("hallucinated_completion") != 0 || l.Penalty("hallucinated_completion") != 0.2 {
		t.Errorf("hallucinated_completion: honest %v, lying %v", h.Penalties, l.Penalties)
	}
	if h.Penalty("missed_blocker") != 0 || l.Penalty("missed_blocker") != 0.12 {
		t.Errorf("missed_blocker: honest %v, lying %v", h.Penalties, l.Penalties)
	}
	if l.Total > HallucinatedCeil || h.Total < GoodGate {
		t.Errorf("honest %.3f, lying %.3f", h.Total, l.Total)
	}
}

// Harness text, a continued conversation, missing Pi headings and unsupported entities
// each cost a penalty.
func TestPenalties(t *testing.T) {
	base := strings.Replace(sampleSummary, "%s", "(none)", 1)
	for name, summary := range map[string]string{
		"harness_text":                "<system-reminder>\nstuff\n</system-reminder>\n" + base,
		"continues_conversation":      base + "\n\nLet me know if you would like me to continue!",
		"missing_exact_pi_headings":   strings.Replace(strings.Replace(base, "## Goal", "Goal:", 1), "## Next Steps", "### Next Steps", 1),
		"unsupported_entity_stuffing": base + "\n- see `a/x.go`, `b/y.go`, `c/z.go` and `d/w.go`",
		"cut_entities":                base + "\n- Ran `go test ./internal/que…",
		"malformed_or_encoded_output": "Goal%20here\n" + base,
	} {
		s := score(History, sampleWant, summary, sampleSource, false)
		if s.Penalty(name) == 0 {
			t.Errorf("%s: not applied (penalties %v)", name, s.Penalties)
		}
	}
	if s := score(History, sampleWant, base, sampleSource, false); len(s.Penalties) != 0 {
		t.Errorf("the clean sample has penalties %v", s.Penalties)
	}
}

// Generic next steps ("Continue from the kept messages", "Finish: ...") carry no next
// action even when they quote the right words.
func TestGenericNextSteps(t *testing.T) {
	summary := strings.Replace(strings.Replace(sampleSummary, "%s", "(none)", 1), "1. Run `go test -count=50 ./internal/queue/` again", "1. Continue from the kept messages (last request: go test -count=50)\n2. Finish: Ran `go test -count=50` (no result yet)", 1)
	s := score(History, sampleWant, summary, sampleSource, false)
	if s.Dims["next"] != 0 {
		t.Errorf("next = %v", s.Dims["next"])
	}
}

// Scoring is deterministic: the same input gives the same score, to the bit.
func TestScoreDeterministic(t *testing.T) {
	summary := strings.Replace(sampleSummary, "%s", "(none)", 1)
	a := score(History, sampleWant, summary, sampleSource, false)
	for i := 0; i < 20; i++ {
		if b := score(History, sampleWant, summary, sampleSource, false); !reflect.DeepEqual(a, b) {
			t.Fatalf("run %d differs: %+v vs %+v", i, a, b)
		}
	}
}
