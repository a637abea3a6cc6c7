package quality

import (
	"context"
	"testing"
)

// The scorer reproduces the rubric's calibration on hand-written checkpoints: a good
// operational checkpoint scores at least 0.75, a generic one with the right headings
// below 0.45, and one claiming the open work is finished at most 0.35.
func TestCalibration(t *testing.T) {
	byName := map[string]*Case{}
	for _, c := range Cases() {
		byName[c.Name] = c
	}
	for _, cal := range Calibrations {
		c := byName[cal.Case]
		if c == nil {
			t.Fatalf("no case %s", cal.Case)
		}
		for _, k := range []struct {
			kind string
			s    Fixed
			ok   func(float64) bool
			band string
		}{
			{"good", cal.Good, func(x float64) bool { return x >= GoodGate }, ">= 0.75"},
			{"generic", cal.Generic, func(x float64) bool { return x < GenericCeiling }, "< 0.45"},
			{"hallucinated", cal.Hallucinated, func(x float64) bool { return x <= HallucinatedCeil }, "<= 0.35"},
		} {
			p, err := c.Produce(context.Background(), k.s)
			if err != nil {
				t.Fatal(err)
			}
			sc := ScoreSummary(p)
			t.Logf("%s %s: %.3f (raw %.3f, penalties %v)", cal.Case, k.kind, sc.Total, sc.Raw, sc.Penalties)
			if !k.ok(sc.Total) {
				t.Errorf("%s: the %s checkpoint scores %.3f, want %s; dims %v, penalties %v, missed %q", cal.Case, k.kind, sc.Total, k.band, sc.Dims, sc.Penalties, sc.Missed)
			}
		}
	}
}

// The heading-only template stays far below the good gate on every case.
func TestHeadingOnlyIsGeneric(t *testing.T) {
	r, err := RunAll(context.Background(), Cases(), HeadingOnly{})
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range r.Results {
		if res.Score.Total >= GenericCeiling {
			t.Errorf("%s: heading-only scores %.3f, want < %.2f", res.Case.Name, res.Score.Total, GenericCeiling)
		}
	}
}
