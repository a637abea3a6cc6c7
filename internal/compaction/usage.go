package compaction

import (
	"encoding/json"

	"github.com/pi-lsp/pi-lsp/internal/catalog"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// piCost is pi-ai's calculateCost: the usage's cost from the model's prices per million
// tokens (the tier whose input threshold the input passes, if any), with 1-hour cache
// writes at twice the input price; totalFromProvider false.
func piCost(m *catalog.Model, u *session.Usage) {
	if u == nil {
		return
	}
	rates := catalog.CostTier{Input: m.Cost.Input, Output: m.Cost.Output, CacheRead: m.Cost.CacheRead, CacheWrite: m.Cost.CacheWrite}
	input := u.Input + u.CacheRead + u.CacheWrite
	threshold := -1.0
	for _, t := range m.Cost.Tiers {
		if input > t.InputTokensAbove && t.InputTokensAbove > threshold {
			rates, threshold = t, t.InputTokensAbove
		}
	}
	long := 0.0
	if u.CacheWrite1h != nil {
		long = *u.CacheWrite1h
	}
	short := u.CacheWrite - long
	computed := false
	c := &session.UsageCost{
		Input:             rates.Input / 1000000 * u.Input,
		Output:            rates.Output / 1000000 * u.Output,
		CacheRead:         rates.CacheRead / 1000000 * u.CacheRead,
		CacheWrite:        (rates.CacheWrite*short + rates.Input*2*long) / 1000000,
		TotalFromProvider: &computed,
	}
	c.Total = c.Input + c.Output + c.CacheRead + c.CacheWrite
	u.Cost = c
}

func jsonUnmarshalString(s string, v any) error { return json.Unmarshal([]byte(s), v) }
