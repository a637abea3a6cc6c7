package redact

import (
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/asciifold"
)

// The prefilter: one pass over a text finds which rules have an anchor in it, ignoring
// ASCII case (a superset for the rules that match case), so that a rule's regexp runs
// only over a text that may hold a match. Each position costs a table look-up of the
// two bytes there; only a pair that starts some anchor is compared further.

type anchorRef struct {
	lower string // the anchor, ASCII-lowered
	rule  int
}

var (
	// pairIndex maps the lowered pair of bytes an anchor starts with to 1 + its index
	// in pairAnchors (0: no anchor starts so).
	pairIndex   [1 << 16]uint16
	pairAnchors [][]anchorRef
)

func init() {
	for i, r := range rules {
		for _, a := range r.anchors {
			l := strings.ToLower(a) // anchors are ASCII
			if len(l) < 2 {
				panic("redact: anchor " + a + " is shorter than two bytes")
			}
			k := pairKey(l[0], l[1])
			if pairIndex[k] == 0 {
				pairAnchors = append(pairAnchors, nil)
				pairIndex[k] = uint16(len(pairAnchors))
			}
			pairAnchors[pairIndex[k]-1] = append(pairAnchors[pairIndex[k]-1], anchorRef{l, i})
		}
	}
}

func pairKey(a, b byte) uint16 { return uint16(asciifold.Lower(a))<<8 | uint16(asciifold.Lower(b)) }

// present reports, rule by rule, whether one of its anchors occurs in s in some ASCII
// case.
func present(s string) []bool {
	has := make([]bool, len(rules))
	left := len(rules)
	for i := 0; i+1 < len(s); i++ {
		x := pairIndex[pairKey(s[i], s[i+1])]
		if x == 0 {
			continue
		}
		for _, a := range pairAnchors[x-1] {
			if !has[a.rule] && asciifold.HasPrefix(s[i:], a.lower) {
				has[a.rule] = true
				if left--; left == 0 {
					return has
				}
			}
		}
	}
	return has
}
