package compaction

import "github.com/pi-lsp/pi-lsp/internal/session"

// CutPoint is Pi's CutPointResult.
type CutPoint struct {
	FirstKeptIndex int
	TurnStartIndex int // -1 when the cut is not inside a turn
	IsSplitTurn    bool
}

func isCutPoint(e *session.Entry) bool {
	switch e.Type {
	case session.TypeMessage:
		switch e.Role() {
		case session.RoleBashExecution, session.RoleCustom, session.RoleBranchSummary,
			session.RoleCompactionSummary, session.RoleUser, session.RoleAssistant:
			return true
		}
	case session.TypeBranchSummary, session.TypeCustomMessage:
		return true
	}
	return false
}

// FindTurnStartIndex is Pi's findTurnStartIndex: walking back from i to start, the first
// branch_summary, custom_message, or user / bashExecution message; -1 if none.
func FindTurnStartIndex(path []*session.Entry, i, start int) int {
	for j := i; j >= start; j-- {
		e := path[j]
		if e.Type == session.TypeBranchSummary || e.Type == session.TypeCustomMessage {
			return j
		}
		if e.Type == session.TypeMessage {
			if r := e.Role(); r == session.RoleUser || r == session.RoleBashExecution {
				return j
			}
		}
	}
	return -1
}

// FindCutPoint is Pi's findCutPoint over path[start:end]: walking back from the newest
// entry and summing the estimates of message entries only, it keeps at least
// keepRecentTokens and cuts at the nearest valid cut point at or after the entry that
// crosses the budget, then pulls in the non-message entries just before the cut.
func FindCutPoint(path []*session.Entry, start, end, keepRecentTokens int) CutPoint {
	// The first valid cut point at or after i, or -1. Pi lists them all first; only the
	// first one from the start and the first one after the budget's position matter.
	firstCutFrom := func(i int) int {
		for ; i < end; i++ {
			if isCutPoint(path[i]) {
				return i
			}
		}
		return -1
	}
	cut := firstCutFrom(start)
	if cut < 0 {
		return CutPoint{FirstKeptIndex: start, TurnStartIndex: -1}
	}
	acc := 0
	for i := end - 1; i >= start; i-- {
		e := path[i]
		if e.Type != session.TypeMessage {
			continue
		}
		m, err := e.Message()
		if err != nil {
			continue
		}
		acc += session.EstimateTokens(m)
		if acc >= keepRecentTokens {
			if c := firstCutFrom(i); c >= 0 {
				cut = c
			}
			break
		}
	}
	for cut > start {
		prev := path[cut-1]
		if prev.Type == session.TypeCompaction || prev.Type == session.TypeMessage {
			break
		}
		cut--
	}
	isUser := path[cut].Type == session.TypeMessage && path[cut].Role() == session.RoleUser
	turnStart := -1
	if !isUser {
		turnStart = FindTurnStartIndex(path, cut, start)
	}
	return CutPoint{FirstKeptIndex: cut, TurnStartIndex: turnStart, IsSplitTurn: !isUser && turnStart != -1}
}
