package compaction

import (
	"strings"
)

// Findings: what an investigation established, wherever the assistant said it. A long
// run states its finding in the middle ("The cause is …", "It turns out …") and ends on
// the fix or on a short "Done."; reading the last message only, the checkpoint keeps the
// fix and loses why, and the next agent reopens the question.

var findingRe = keyed(`(?i)(\b(?:the |a )?root cause\b|\bthe (?:cause|culprit|reason) (?:is|was|of)\b|\b(?:is|was|are|were) caused by\b|\bturns out\b|\bturned out\b|\bthe (?:problem|issue|bug|leak|regression) (?:is|was|comes from|came from)\b|\bi found (?:that|the)\b|\bfound it\b|\bconfirmed (?:that|it)\b|\bthis (?:explains|means) (?:why|that)\b)`)

var foundItRe = keyed(`(?i)^(?:i )?found it[\s,:;.!—–-]*`)

// findings are the finding sentences of the assistant's messages before the span's last
// reply (that one is read by problems and the report), the newest four, each once.
func (a *analysis) findings() []string {
	last := ""
	if t := a.lastReply(); t != nil {
		last = t.final
	}
	var out []string
	for _, t := range a.turns {
		if a.stop() {
			break
		}
		for _, text := range t.texts {
			if text == last {
				continue
			}
			for _, s := range sentences(text) {
				s = strings.TrimSpace(listItemRe.ReplaceAllString(s, ""))
				if len(s) < 24 || strings.HasSuffix(s, "?") || strings.HasSuffix(s, ":") || !findingRe.MatchString(s) {
					continue
				}
				if planRe.MatchString(s) || offerRe.MatchString(s) || tidyItem(s) == "" {
					continue
				}
				if t := foundItRe.ReplaceAllString(s, ""); len(t) >= 16 {
					s = t // "Found it — X" is the finding X
				}
				out = addUnique(out, clip(s, 280))
			}
		}
	}
	return newest(out, 4)
}
