package compaction

import "fmt"

// LoopGuard keeps automatic compaction of a hosted session from looping: after a
// threshold compaction that left the context above the threshold, or whose context
// refilled past it within LoopTurns turns, another threshold compaction only repeats the
// summary of a summary while the context stays full of what the compaction keeps (a large
// recent tool output, a pasted file). pi-lsp then does not compact again and says what
// fills the context; a write the user makes (a manual compaction, a context edit) resets
// it. Overflow recovery is never held back: without it the next request fails.
//
// The zero value allows everything. It is not safe for concurrent use.
type LoopGuard struct {
	turns       int  // assistant messages seen
	compactedAt int  // turns at the last threshold compaction (valid when compacted)
	compacted   bool // a threshold compaction ran since the last reset
	stillAbove  bool // it left the context above the threshold
	tokensAfter float64
}

// LoopTurns is how soon a refill counts as a loop.
const LoopTurns = 2

// Turn records an appended assistant message.
func (g *LoopGuard) Turn() { g.turns++ }

// Compacted records a threshold compaction whose context is tokensAfter against
// threshold.
func (g *LoopGuard) Compacted(tokensAfter, threshold float64) {
	g.compacted, g.compactedAt, g.tokensAfter = true, g.turns, tokensAfter
	g.stillAbove = threshold > 0 && tokensAfter > threshold
}

// Reset forgets the last compaction (the user changed the context).
func (g *LoopGuard) Reset() { *g = LoopGuard{turns: g.turns} }

// Allow reports whether a threshold compaction may run now, and why not.
func (g *LoopGuard) Allow() (bool, string) {
	if !g.compacted {
		return true, ""
	}
	if g.stillAbove {
		return false, fmt.Sprintf("the last automatic compaction left ~%d tokens, still above the threshold", int(g.tokensAfter))
	}
	if n := g.turns - g.compactedAt; n <= LoopTurns {
		return false, fmt.Sprintf("the context refilled past the threshold %d turn(s) after the last automatic compaction", n)
	}
	return true, ""
}
