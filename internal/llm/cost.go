package llm

import (
	"github.com/pi-lsp/pi-lsp/internal/catalog"
)

// Usage is pi-ai 1.6.0's usage of one answer, in tokens, with its cost.
type Usage struct {
	Input, Output, CacheRead, CacheWrite float64
	// Reasoning counts the output tokens spent on reasoning (0 when the provider
	// reports none; nil for an API whose usage pi-ai does not give it).
	Reasoning   *float64
	TotalTokens float64
	// CacheWrite1h counts the cache writes with a 1-hour lifetime (anthropic-messages).
	CacheWrite1h *float64
	Cost         *Cost
}

// Cost is the cost part of pi-ai's usage, in dollars.
type Cost struct {
	Input, Output, CacheRead, CacheWrite, Total float64
	// TotalFromProvider says the total is the provider's own figure (false: pi-ai
	// computed it from the model's prices).
	TotalFromProvider *bool
}

// piCost is pi-ai's calculateCost: the usage's cost from the model's prices per million
// tokens (the tier whose input threshold the input passes, if any), with 1-hour cache
// writes at twice the input price; totalFromProvider false.
func piCost(m *catalog.Model, u *Usage) {
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
	c := &Cost{
		Input:             rates.Input / 1000000 * u.Input,
		Output:            rates.Output / 1000000 * u.Output,
		CacheRead:         rates.CacheRead / 1000000 * u.CacheRead,
		CacheWrite:        (rates.CacheWrite*short + rates.Input*2*long) / 1000000,
		TotalFromProvider: &computed,
	}
	c.Total = c.Input + c.Output + c.CacheRead + c.CacheWrite
	u.Cost = c
}
