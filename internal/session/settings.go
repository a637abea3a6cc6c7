package session

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Settings are the parts of Pi's settings files that pi-lsp uses, merged as Pi merges
// them: project (<cwd>/.pi/settings.json) over global (<agentDir>/settings.json), nested
// objects key by key.
type Settings struct {
	Compaction    CompactionSettings
	BranchSummary BranchSummarySettings
	// Errors lists settings files that exist but do not parse (Pi treats them as {}).
	Errors []error
}

// BranchSummarySettings are Pi's branchSummary settings.
type BranchSummarySettings struct {
	ReserveTokens int
	SkipPrompt    bool
}

// LoadSettings reads and merges the global and project settings files.
func LoadSettings(agentDir, cwd string) Settings {
	merged := map[string]json.RawMessage{}
	var errs []error
	for _, p := range []string{filepath.Join(agentDir, "settings.json"), filepath.Join(cwd, ".pi", "settings.json")} {
		if p == "" {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(data, &m); err != nil {
			errs = append(errs, fmt.Errorf("settings %s: %w", p, err))
			continue
		}
		for k, v := range m {
			if old, ok := merged[k]; ok && isObject(old) && isObject(v) {
				merged[k] = mergeObjects(old, v)
			} else {
				merged[k] = v
			}
		}
	}
	s := Settings{Compaction: DefaultCompactionSettings, BranchSummary: BranchSummarySettings{ReserveTokens: 16384}, Errors: errs}
	var c struct {
		Enabled          *bool    `json:"enabled"`
		ReserveTokens    *float64 `json:"reserveTokens"`
		KeepRecentTokens *float64 `json:"keepRecentTokens"`
	}
	if json.Unmarshal(merged["compaction"], &c) == nil {
		if c.Enabled != nil {
			s.Compaction.Enabled = *c.Enabled
		}
		if c.ReserveTokens != nil {
			s.Compaction.ReserveTokens = int(*c.ReserveTokens)
		}
		if c.KeepRecentTokens != nil {
			s.Compaction.KeepRecentTokens = int(*c.KeepRecentTokens)
		}
	}
	var b struct {
		ReserveTokens *float64 `json:"reserveTokens"`
		SkipPrompt    *bool    `json:"skipPrompt"`
	}
	if json.Unmarshal(merged["branchSummary"], &b) == nil {
		if b.ReserveTokens != nil {
			s.BranchSummary.ReserveTokens = int(*b.ReserveTokens)
		}
		if b.SkipPrompt != nil {
			s.BranchSummary.SkipPrompt = *b.SkipPrompt
		}
	}
	return s
}

func isObject(r json.RawMessage) bool { return len(r) > 0 && r[0] == '{' }

func mergeObjects(a, b json.RawMessage) json.RawMessage {
	var ma, mb map[string]json.RawMessage
	if json.Unmarshal(a, &ma) != nil || json.Unmarshal(b, &mb) != nil {
		return b
	}
	for k, v := range mb {
		ma[k] = v
	}
	out, err := json.Marshal(ma)
	if err != nil {
		return b
	}
	return out
}
