package compaction

import (
	"context"
	"regexp"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/redact"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// What would a compaction drop? The critical entities of the summarized range (files
// modified, commands run, error strings, URLs, ids, the user's constraints and latest
// request) that the summary does not carry. It works on any summary (extractive, a
// model's, an edited one), so a user can check one before it is committed.

// Entity is one thing of the summarized range a checkpoint should carry.
type Entity struct {
	// Kind is file, command, error, url, id, constraint or request.
	Kind string `json:"kind"`
	Text string `json:"text"`
	// EntryID is the entry of the message the entity was first seen in ("" for a
	// modified file, which the file operations name): the message a user can pin so
	// that every summary quotes it.
	EntryID string `json:"entryId,omitempty"`
	// Pinnable: EntryID is a user message, which a pin quotes verbatim.
	Pinnable bool `json:"pinnable,omitempty"`
}

// Coverage is how much of the summarized range's entities a summary carries.
type Coverage struct {
	Entities []Entity `json:"entities"`
	Missing  []Entity `json:"missing"`
	// Covered is the share of Entities the summary carries (1 when there are none).
	Covered float64 `json:"covered"`
}

// maxEntities bounds the list of a huge range: the newest are kept.
const maxEntities = 200

var (
	urlRe      = regexp.MustCompile(`https?://[^\s<>"'` + "`" + `)\]]+`)
	prRe       = regexp.MustCompile(`(?:^|[\s(])(#\d{2,7})\b`)
	shaRe      = regexp.MustCompile(`\b[0-9a-f]{7,40}\b`)
	backtickRe = regexp.MustCompile("`([^`\n]{3,120})`")
)

// CheckCoverage lists the entities of p's summarized messages and those summary lacks.
// An entity's text is redacted (redact.String) before it is cut, as the summary it is
// looked for in is: the list never shows a secret the summary left out. It stops with
// ctx's error once ctx is done (the analysis of a large range takes seconds).
func CheckCoverage(ctx context.Context, p *Preparation, summary string) (Coverage, error) {
	msgs := append(append([]*session.Message(nil), p.MessagesToSummarize...), p.TurnPrefixMessages...)
	entryOf := p.entriesOf()
	var ents []Entity
	seen := map[string]bool{}
	var from *session.Message // the message being read
	add := func(kind, text string) {
		text = strings.TrimSpace(redact.String(text))
		key := kind + "\x00" + strings.ToLower(text)
		if text == "" || seen[key] {
			return
		}
		seen[key] = true
		e := Entity{Kind: kind, Text: text}
		if from != nil {
			e.EntryID, e.Pinnable = entryOf[from], from.Role == session.RoleUser
		}
		ents = append(ents, e)
	}
	_, modified := p.FileOps.Lists()
	for _, f := range modified {
		add("file", f)
	}
	for i, m := range msgs {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return Coverage{}, err
			}
		}
		from = m
		switch m.Role {
		case session.RoleUser, session.RoleAssistant:
			text := m.Text("\n")
			if m.Role == session.RoleUser {
				text, _ = cleanUserText(text)
			}
			text = redact.String(text)
			textEntities(text, add)
			for _, b := range m.Blocks() {
				if b.Type == "toolCall" && b.Name == "bash" {
					if c := argString(b, "command"); c != "" {
						add("command", clip(firstLine(redact.String(c)), 120))
					}
				}
			}
		case session.RoleToolResult:
			if m.IsError {
				if l := firstLine(redact.String(m.Text("\n"))); l != "" {
					add("error", clip(l, 120))
				}
			}
		case session.RoleBashExecution:
			add("command", clip(firstLine(redact.String(m.Bash().Command)), 120))
		}
	}
	a := analyze(ctx, msgs, false)
	if err := ctx.Err(); err != nil {
		return Coverage{}, err // the analysis stopped part way
	}
	users := userTexts(msgs)
	for _, c := range a.constraints(0) {
		from = users.with(c)
		add("constraint", c)
	}
	if rs := a.requests(); len(rs) > 0 {
		r := clip(redact.String(rs[len(rs)-1].request), 300)
		from = users.with(r)
		add("request", r)
	}
	if len(ents) > maxEntities {
		ents = ents[len(ents)-maxEntities:]
	}
	out := Coverage{Entities: ents, Missing: []Entity{}, Covered: 1}
	if out.Entities == nil {
		out.Entities = []Entity{}
	}
	norm := normalize(summary)
	for _, e := range ents {
		if !carries(norm, e) {
			out.Missing = append(out.Missing, e)
		}
	}
	if len(ents) > 0 {
		out.Covered = float64(len(ents)-len(out.Missing)) / float64(len(ents))
	}
	return out, nil
}

// entriesOf maps each message of the projected path to the entry it comes from.
func (p *Preparation) entriesOf() map[*session.Message]string {
	out := make(map[*session.Message]string, len(p.Projected))
	for _, u := range p.Projected {
		for _, m := range u.Messages {
			out[m] = u.Entry.ID
		}
	}
	return out
}

// userText is a user message with its text normalized.
type userText struct {
	m    *session.Message
	norm string
}

// users are the user messages of a range, normalized once for the lookups of with.
type users []userText

func userTexts(msgs []*session.Message) users {
	var out users
	for _, m := range msgs {
		if m.Role == session.RoleUser {
			out = append(out, userText{m, normalize(m.Text("\n"))})
		}
	}
	return out
}

// with is the last user message whose words hold text's start (a constraint or request
// is a sentence of one, possibly clipped), or nil.
func (us users) with(text string) *session.Message {
	probe := normalize(strings.TrimSuffix(text, "…"))
	if len(probe) > 40 {
		probe = probe[:40]
	}
	for i := len(us) - 1; i >= 0; i-- {
		if strings.Contains(us[i].norm, probe) {
			return us[i].m
		}
	}
	return nil
}

// textEntities finds the exact entities of prose: URLs, PR numbers, commit ids and
// backtick spans.
func textEntities(text string, add func(kind, text string)) {
	for _, u := range urlRe.FindAllString(text, -1) {
		add("url", strings.TrimRight(u, ".,;:"))
	}
	for _, m := range prRe.FindAllStringSubmatch(text, -1) {
		add("id", m[1])
	}
	for _, s := range shaRe.FindAllString(text, -1) {
		if strings.ContainsAny(s, "abcdef") && strings.ContainsAny(s, "0123456789") {
			add("id", s)
		}
	}
	for _, m := range backtickRe.FindAllStringSubmatch(text, -1) {
		add("id", m[1])
	}
}

// carries reports whether a normalized summary holds e: exact entities verbatim, a
// constraint or request by most of its words (a checkpoint restates them).
func carries(norm string, e Entity) bool {
	t := normalize(e.Text)
	if strings.Contains(norm, t) {
		return true
	}
	switch e.Kind {
	case "constraint", "request":
		words, found := 0, 0
		for _, w := range strings.Fields(t) {
			w = strings.Trim(w, ".,;:!?()\"'`")
			if len(w) < 4 {
				continue
			}
			words++
			if strings.Contains(norm, w) {
				found++
			}
		}
		return words > 0 && float64(found) >= 0.6*float64(words)
	case "command", "error":
		// A long line is carried by its start (a summary cuts at a word boundary).
		return len(t) > 60 && strings.Contains(norm, t[:60])
	}
	return false
}

func normalize(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }
