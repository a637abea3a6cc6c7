package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/oracle"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/corpus"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// Cut points (docs/rewind.md): "summarize up to here" (`compact --keep-from`) and
// "condense this range" (`condense`), each checked against the context Pi 1.6.0's library
// builds of the file it wrote.

// "Condense this range": `pi-lsp condense FILE FROM TO` on copies of genuine Pi 1.6.0
// sessions replaces the first message of a closed range (its tool calls with their
// results) by the summary and hides the others; Pi 1.6.0's library builds exactly the
// context pi-lsp reports, which holds the summary and none of the range's other
// messages. One message restored with edit-context, then the whole range with
// `condense FROM --restore`, each again as Pi builds it, and at the end the context is
// the original one.
func TestCondenseMatchesPi16(t *testing.T) {
	o := oracle.NeedLive(t)
	for _, file := range []string{"system-tools.jsonl", "compact-twice.jsonl"} {
		t.Run(file, func(t *testing.T) {
			path := isolatedCopy(t, "genuine-1.6/"+file)
			ordered := contextOrder(t, path)
			var users []int
			for i, m := range ordered {
				if m.role == session.RoleUser {
					users = append(users, i)
				}
			}
			if len(users) < 2 {
				t.Fatalf("fewer than two user messages in the context: %v", ordered)
			}
			from, toAt := ordered[users[0]].id, users[1]-1
			for ordered[toAt].role == session.RoleSystem {
				toAt--
			}
			to := ordered[toAt].id
			original, _ := sameContextAsPi(t, o, path, "nothing")

			var dry struct {
				Targets      []string `json:"targets"`
				Summary      string   `json:"summary"`
				TokensBefore float64  `json:"tokensBefore"`
				Coverage     struct {
					Entities []struct{ Kind, Text string } `json:"entities"`
				} `json:"coverage"`
			}
			cli(t, &dry, "condense", path, from, to, "--summarizer", "extractive", "--dry-run", "--json")
			if len(dry.Targets) < 2 || dry.Targets[0] != from || !strings.Contains(dry.Summary, "<summary>") || len(dry.Coverage.Entities) == 0 {
				t.Fatalf("dry run %+v", dry)
			}
			if got := sessiontest.Read(t, path); !bytes.Equal(got, corpus.Read(t, "genuine-1.6/"+file)) {
				t.Fatal("a dry run wrote")
			}
			var done struct {
				Entries []json.RawMessage `json:"entries"`
			}
			cli(t, &done, "condense", path, from, to, "--summarizer", "extractive", "--json")
			if len(done.Entries) != len(dry.Targets) {
				t.Fatalf("%d edits for %d messages", len(done.Entries), len(dry.Targets))
			}
			msgs, _ := sameContextAsPi(t, o, path, "condense")
			if want := len(original) - len(dry.Targets) + 1; len(msgs) != want {
				t.Errorf("%d messages after condensing, want %d", len(msgs), want)
			}
			if !strings.Contains(string(mustJSON(msgs)), "condensed into this summary") {
				t.Error("the summary is not in the context")
			}
			// One hidden message back, then the rest of the range.
			cli(t, &json.RawMessage{}, "edit-context", path, dry.Targets[len(dry.Targets)-1], "--restore", "--json")
			msgs, _ = sameContextAsPi(t, o, path, "restoring one")
			if want := len(original) - len(dry.Targets) + 2; len(msgs) != want {
				t.Errorf("%d messages after restoring one, want %d", len(msgs), want)
			}
			cli(t, &json.RawMessage{}, "condense", path, from, "--restore", "--json")
			msgs, _ = sameContextAsPi(t, o, path, "restoring the range")
			oracle.SameJSON(t, "context after the restore", msgs, original, nil, nil)
		})
	}
}

// A range that splits a tool call from its result is refused, and nothing is written.
func TestCondenseRefusesAnOpenRange(t *testing.T) {
	path := isolatedCopy(t, "genuine-1.6/system-tools.jsonl")
	data := sessiontest.Read(t, path)
	ordered := contextOrder(t, path)
	var from, to string
	for i, m := range ordered {
		if m.role == session.RoleUser && from == "" {
			from = m.id
		}
		if from != "" && m.role == session.RoleAssistant && i+1 < len(ordered) && ordered[i+1].role == session.RoleToolResult {
			to = m.id
			break
		}
	}
	code, _, errb := runCLI(t, "condense", path, from, to, "--summarizer", "extractive")
	if code != 1 || !strings.Contains(errb, "after the range") {
		t.Errorf("exit %d: %s", code, errb)
	}
	if got := sessiontest.Read(t, path); !bytes.Equal(got, data) {
		t.Error("a refused condense wrote")
	}
	if code, _, _ := runCLI(t, "condense", path, from); code != 2 {
		t.Errorf("no TO_ID: exit %d", code)
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// "Summarize up to here": `compact --keep-from ID` on copies of genuine Pi 1.6.0
// sessions, at a user message, at an assistant message inside a turn (a split turn)
// and at the first message after a compaction, writes a compaction whose kept part
// starts at the chosen entry, and Pi 1.6.0's library builds exactly the context
// `pi-lsp context` reports. A tool result is refused, with the nearest valid cuts.
func TestCompactKeepFromMatchesPi16(t *testing.T) {
	o := oracle.NeedLive(t)
	for _, file := range []string{"system-tools.jsonl", "compact-twice.jsonl", "auto-threshold.jsonl"} {
		rel := "genuine-1.6/" + file
		ordered := contextOrder(t, corpus.Copy(t, rel))
		pick := map[string]string{}
		// The latest of each kind: the earliest would leave nothing to summarize.
		for i := len(ordered) - 1; i > 0; i-- {
			m := ordered[i]
			switch {
			case m.role == session.RoleUser && pick["user"] == "":
				pick["user"] = m.id
			case m.role == session.RoleAssistant && ordered[i-1].role == session.RoleToolResult && pick["split"] == "":
				pick["split"] = m.id
			case m.role == session.RoleToolResult && pick["toolResult"] == "":
				pick["toolResult"] = m.id
			}
		}
		for _, what := range []string{"user", "split"} {
			id := pick[what]
			if id == "" {
				continue
			}
			t.Run(file+"/"+what, func(t *testing.T) {
				path := isolatedCopy(t, rel)
				var dry struct {
					FirstKept string `json:"firstKeptEntryId"`
					Split     bool   `json:"isSplitTurn"`
				}
				cli(t, &dry, "compact", path, "--keep-from", id, "--dry-run", "--json")
				if dry.FirstKept != id || dry.Split != (what == "split") {
					t.Errorf("dry run: %+v", dry)
				}
				var written json.RawMessage
				cli(t, &written, "compact", path, "--keep-from", id, "--summarizer", "extractive", "--json")
				last := sessiontest.Last(t, path)
				if last.Type != session.TypeCompaction || last.Compaction().FirstKeptEntryID != id {
					t.Fatalf("last entry %s", last.Raw())
				}
				msgs, _ := sameContextAsPi(t, o, path, "compact --keep-from "+id)
				summaries := 0
				for _, m := range msgs {
					if strings.Contains(string(m), `"role":"compactionSummary"`) {
						summaries++
					}
				}
				if summaries != 1 {
					t.Errorf("%d compaction summaries in the context", summaries)
				}
			})
		}
		if id := pick["toolResult"]; id != "" {
			t.Run(file+"/toolResult", func(t *testing.T) {
				path := isolatedCopy(t, rel)
				code, _, errb := runCLI(t, "compact", path, "--keep-from", id, "--summarizer", "extractive")
				if code != 1 || !strings.Contains(errb, "tool result") || !strings.Contains(errb, "nearest valid cuts are") {
					t.Errorf("exit %d: %s", code, errb)
				}
				if got := sessiontest.Read(t, path); !bytes.Equal(got, corpus.Read(t, rel)) {
					t.Error("a refused compaction wrote")
				}
			})
		}
	}
}
