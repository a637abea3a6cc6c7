package compaction

import "github.com/pi-lsp/pi-lsp/internal/session"

// CutPoint is Pi's CutPointResult: indices into the entries the cut was found in (the
// path for FindCutPoint, the projected context for a preparation).
type CutPoint struct {
	FirstKeptIndex int
	TurnStartIndex int // -1 when the cut is not inside a turn
	IsSplitTurn    bool
}

// isCutPointMessage: Pi cuts before user-like and assistant messages, never before a tool
// result (it must follow its call) or a system message.
func isCutPointMessage(m *session.Message) bool {
	switch m.Role {
	case session.RoleUser, session.RoleAssistant, session.RoleBashExecution, session.RoleCustom,
		session.RoleBranchSummary, session.RoleCompactionSummary:
		return true
	}
	return false
}

// isTurnStartMessage: what starts a turn (Pi 0.80+: every user-like message).
func isTurnStartMessage(m *session.Message) bool {
	switch m.Role {
	case session.RoleUser, session.RoleBashExecution, session.RoleCustom,
		session.RoleBranchSummary, session.RoleCompactionSummary:
		return true
	}
	return false
}

func anyMessage(ms []*session.Message, pred func(*session.Message) bool) bool {
	for _, m := range ms {
		if pred(m) {
			return true
		}
	}
	return false
}

// isTurnStart: an entry (not a compaction) whose messages start a turn.
func isTurnStart(u session.ProjectedEntry) bool {
	return u.Entry.Type != session.TypeCompaction && anyMessage(u.Messages, isTurnStartMessage)
}

// rawUnits pairs each entry of a path with the messages it contributes before any edit
// (Pi's sessionEntryToContextMessages), for the cut walk over a raw path.
func rawUnits(path []*session.Entry) []session.ProjectedEntry {
	out := make([]session.ProjectedEntry, len(path))
	for i, e := range path {
		out[i] = session.ProjectedEntry{Entry: e, Messages: session.EntryMessages(e)}
	}
	return out
}

// FindTurnStartIndex is Pi's findTurnStartIndex over a raw path: walking back from i to
// start, the first entry (not a compaction) with a turn-starting message; -1 if none.
func FindTurnStartIndex(path []*session.Entry, i, start int) int {
	return findTurnStart(rawUnits(path), i, start)
}

func findTurnStart(units []session.ProjectedEntry, i, start int) int {
	for j := i; j >= start; j-- {
		if isTurnStart(units[j]) {
			return j
		}
	}
	return -1
}

// FindCutPoint is Pi 1.6.0's findCutPoint over path[start:end] (every entry counted by
// the messages it contributes).
func FindCutPoint(path []*session.Entry, start, end, keepRecentTokens int) CutPoint {
	return findCut(rawUnits(path), start, end, keepRecentTokens, false)
}

// findCut is Pi 1.6.0's cut walk: walking back from the newest entry and summing the
// estimates of each entry's messages (entries without tokens skipped), it keeps at least
// keepRecentTokens and cuts at the first valid cut point at or after the entry that
// crosses the budget (or the last cut point when none follows: a trailing tool result
// larger than the budget keeps its call); then it pulls in the entries without messages
// just before the cut. Over a projected context (projected), a closed suffix after the
// cut made only of an omitted failed attempt and its edits moves the cut past it
// (Pi's findProjectedCutPoint).
func findCut(units []session.ProjectedEntry, start, end, keepRecentTokens int, projected bool) CutPoint {
	// Pi lists every cut point first; only the first one, the first one at or after the
	// entry that crosses the budget and the last one before it are used, and each is
	// found where it lies, so that a long path is not walked whole.
	isCut := func(u session.ProjectedEntry) bool {
		return u.Entry.Type != session.TypeCompaction && anyMessage(u.Messages, isCutPointMessage)
	}
	cut := -1
	for i := start; i < end; i++ {
		if isCut(units[i]) {
			cut = i
			break
		}
	}
	if cut < 0 {
		return CutPoint{FirstKeptIndex: start, TurnStartIndex: -1}
	}
	exceeded, acc := false, 0
	tokensOf := unitTokens(units, start, end)
	for i := end - 1; i >= start; i-- {
		tokens := tokensOf(i)
		if tokens == 0 {
			continue
		}
		acc += tokens
		if acc >= keepRecentTokens {
			exceeded = true
			next := -1
			for c := i; c < end; c++ {
				if isCut(units[c]) {
					next = c
					break
				}
			}
			if next < 0 { // none at or after i: the last one, before i
				for c := i - 1; c >= start; c-- {
					if isCut(units[c]) {
						next = c
						break
					}
				}
			}
			cut = next
			break
		}
	}
	if projected && exceeded && recoveryOmissionSuffix(units[cut+1:end]) {
		cut++
	}
	for cut > start {
		prev := units[cut-1]
		if prev.Entry.Type == session.TypeCompaction || len(prev.Messages) > 0 {
			break
		}
		cut--
	}
	if isTurnStart(units[cut]) {
		return CutPoint{FirstKeptIndex: cut, TurnStartIndex: -1}
	}
	ts := findTurnStart(units, cut, start)
	return CutPoint{FirstKeptIndex: cut, TurnStartIndex: ts, IsSplitTurn: ts != -1}
}

// cutChunk is how many entries findCut estimates together.
const cutChunk = 16

// unitTokens is the estimate of units[i]'s messages, asked for i from end-1 down to
// start. The units are estimated cutChunk at a time, walking back, so that the lines of
// a loaded file's messages are read together (session.EstimateTokensEach) rather than
// one read each; the walk stops once it has kept enough, having estimated at most
// cutChunk-1 entries more than it looked at.
func unitTokens(units []session.ProjectedEntry, start, end int) func(i int) int {
	lo := end
	var sums, est []int // sums[i-lo]: the tokens of units[i]
	var msgs []*session.Message
	return func(i int) int {
		if i < lo {
			hi := lo
			lo = max(start, min(i, hi-cutChunk))
			msgs = msgs[:0]
			for _, u := range units[lo:hi] {
				msgs = append(msgs, u.Messages...)
			}
			est = append(est[:0], make([]int, len(msgs))...)
			session.EstimateTokensEach(msgs, est)
			sums = sums[:0]
			k := 0
			for _, u := range units[lo:hi] {
				t := 0
				for range u.Messages {
					t += est[k]
					k++
				}
				sums = append(sums, t)
			}
		}
		return sums[i-lo]
	}
}

// recoveryOmissionSuffix: the entries after a cut are an omitted assistant attempt and
// nothing the model sees (other omitted entries, edits, settings), with no compaction and
// no edit replacing something outside the omitted set. Such a suffix is what overflow or
// cut-off recovery leaves; Pi advances the cut over it rather than keep a cut before
// input that was never sent.
func recoveryOmissionSuffix(suffix []session.ProjectedEntry) bool {
	visible := func(u session.ProjectedEntry) bool {
		return u.Entry.Type != session.TypeContextEdit && len(session.EntryMessages(u.Entry)) > 0
	}
	omitted := func(u session.ProjectedEntry) bool { return visible(u) && len(u.Messages) == 0 }
	omittedIDs := map[string]bool{}
	for _, u := range suffix {
		if omitted(u) {
			omittedIDs[u.Entry.ID] = true
		}
	}
	hasOmittedAssistant := false
	for _, u := range suffix {
		if u.Entry.Type == session.TypeCompaction || (visible(u) && !omitted(u)) {
			return false
		}
		if u.Entry.Type == session.TypeContextEdit {
			target, _ := u.Entry.ContextEditTarget()
			if !isNullReplacement(u.Entry) && !omittedIDs[target] {
				return false // a replacement of something outside the attempt
			}
		}
		if u.Entry.Type == session.TypeMessage && u.Entry.Role() == session.RoleAssistant && omitted(u) {
			hasOmittedAssistant = true
		}
	}
	return hasOmittedAssistant
}

// isNullReplacement: a context_edit whose replacement is JSON null (an omission).
func isNullReplacement(e *session.Entry) bool {
	return string(e.RawField("replacement")) == "null"
}
