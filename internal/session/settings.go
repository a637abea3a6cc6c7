package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Settings are the parts of Pi's settings files that pi-lsp uses, merged as Pi 1.6.0
// merges them: the project's (<cwd>/.pi/settings.json) over the global one
// (<agentDir>/settings.json), objects merged recursively (deepMergeObjects), and the
// project's file read only when Pi trusts the project (ProjectTrusted).
type Settings struct {
	// Compaction are the compaction settings resolved without a model (the ordinary
	// settings over Pi's defaults); CompactionFor resolves them for a model.
	Compaction    CompactionSettings
	BranchSummary BranchSummarySettings
	// ProjectTrusted says whether the project's settings file was read.
	ProjectTrusted bool
	// DefaultProvider, DefaultModel and DefaultThinkingLevel are Pi's defaultProvider,
	// defaultModel and defaultThinkingLevel ("" when unset or not a string): the model
	// a session without a usable model of its own continues with.
	DefaultProvider, DefaultModel, DefaultThinkingLevel string
	// PiLsp is pi-lsp's own section of the files, the "piLsp" object.
	PiLsp PiLspSettings
	// Errors lists settings files that exist but do not parse (Pi treats them as {}) and
	// compaction settings Pi would refuse (CompactionFor returns the refusal).
	Errors []error

	compaction map[string]any // the merged "compaction" object, for per-model resolution
}

// PiLspSettings are pi-lsp's own keys in Pi's settings files, the "piLsp" object, merged
// key by key like Pi's own settings (Pi keeps keys it does not know when it rewrites a
// file):
//
//	{"piLsp": {"summaryTimeout": 300, "stallTimeout": "2m", "summaryModel": "anthropic/claude-haiku-4-5"}}
type PiLspSettings struct {
	// SummaryTimeout bounds one summary, retries and waits included; StallTimeout is how
	// long an attempt may receive nothing (0: unset, the default).
	SummaryTimeout, StallTimeout Timeout
	// SummaryModel is a separate model for summaries, "provider/id[:thinking]" ("":
	// the session's).
	SummaryModel string
	// Err is the first value of the section that is not what its key takes.
	Err error
}

// piLspOf reads the merged "piLsp" object.
func piLspOf(o map[string]any) PiLspSettings {
	var p PiLspSettings
	for _, f := range []struct {
		key string
		to  *Timeout
	}{{"summaryTimeout", &p.SummaryTimeout}, {"stallTimeout", &p.StallTimeout}} {
		v, present := o[f.key]
		if !present {
			continue
		}
		raw, _ := json.Marshal(v)
		var t Timeout
		if err := json.Unmarshal(raw, &t); err != nil {
			if p.Err == nil {
				p.Err = fmt.Errorf("piLsp.%s: %w", f.key, err)
			}
			continue
		}
		*f.to = t
	}
	p.SummaryModel, _ = o["summaryModel"].(string)
	return p
}

// Timeout is a duration written in settings as a number of seconds (300) or as a
// duration string ("300", "5m", "90s").
type Timeout time.Duration

// ParseTimeout reads "300", "300.5", "5m" or "90s"; zero, negative or malformed values
// are errors.
func ParseTimeout(v string) (Timeout, error) {
	v = strings.TrimSpace(v)
	var d time.Duration
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if !(f > 0 && f < 1e9) {
			return 0, fmt.Errorf("%q is not a positive number of seconds", v)
		}
		d = time.Duration(f * float64(time.Second))
	} else if d, err = time.ParseDuration(v); err != nil {
		return 0, fmt.Errorf("%q is not a number of seconds (300) or a duration (5m)", v)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration", v)
	}
	return Timeout(d), nil
}

// UnmarshalJSON accepts a number of seconds or a duration string; 0 and null leave it
// unset (the default).
func (t *Timeout) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v := v.(type) {
	case nil:
		*t = 0
		return nil
	case float64:
		if v == 0 {
			*t = 0 // unset: the default
			return nil
		}
		d, err := ParseTimeout(strconv.FormatFloat(v, 'g', -1, 64))
		*t = d
		return err
	case string:
		d, err := ParseTimeout(v)
		*t = d
		return err
	}
	return fmt.Errorf("timeout %s is not a number of seconds or a duration string", b)
}

// MarshalJSON writes the number of seconds.
func (t Timeout) MarshalJSON() ([]byte, error) {
	return []byte(strconv.FormatFloat(time.Duration(t).Seconds(), 'g', -1, 64)), nil
}

// String is the duration ("1m30s").
func (t Timeout) String() string { return time.Duration(t).String() }

// BranchSummarySettings are Pi's branchSummary settings.
type BranchSummarySettings struct {
	ReserveTokens int
	SkipPrompt    bool
}

// LoadSettings reads and merges the global and, when trusted, the project settings files.
func LoadSettings(agentDir, cwd string) Settings {
	var errs []error
	var piLspErr error // the first malformed piLsp value, named with its file
	read := func(p string) map[string]any {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			errs = append(errs, fmt.Errorf("settings %s: %w", p, err))
			return nil
		}
		if o, ok := m["piLsp"].(map[string]any); ok && piLspErr == nil {
			if err := piLspOf(o).Err; err != nil {
				piLspErr = fmt.Errorf("settings %s: %w", p, err)
			}
		}
		return m
	}
	global := map[string]any{}
	if agentDir != "" {
		if m := read(filepath.Join(agentDir, "settings.json")); m != nil {
			global = m
		}
	}
	merged := global
	trusted := false
	if cwd != "" {
		trusted = ProjectTrusted(agentDir, cwd, global)
		if trusted {
			if m := read(filepath.Join(cwd, ".pi", "settings.json")); m != nil {
				merged = deepMerge(global, m)
			}
		}
	}
	s := Settings{Compaction: DefaultCompactionSettings, BranchSummary: BranchSummarySettings{ReserveTokens: 16384},
		ProjectTrusted: trusted, Errors: errs}
	s.compaction, _ = merged["compaction"].(map[string]any)
	c, err := s.CompactionFor("", "")
	if err != nil {
		s.Errors = append(s.Errors, err)
	} else {
		s.Compaction = c
	}
	s.DefaultProvider, _ = merged["defaultProvider"].(string)
	s.DefaultModel, _ = merged["defaultModel"].(string)
	s.DefaultThinkingLevel, _ = merged["defaultThinkingLevel"].(string)
	if p, ok := merged["piLsp"].(map[string]any); ok {
		s.PiLsp = piLspOf(p)
	}
	s.PiLsp.Err = piLspErr
	if b, ok := merged["branchSummary"].(map[string]any); ok {
		if n, ok := jsonNumber(b["reserveTokens"]); ok {
			s.BranchSummary.ReserveTokens = int(n)
		}
		if v, ok := b["skipPrompt"].(bool); ok {
			s.BranchSummary.SkipPrompt = v
		}
	}
	return s
}

// CompactionFor resolves the compaction settings for a model as Pi 1.6.0's
// getCompactionSettings does: reserveTokens and keepRecentTokens each from
// compaction.modelOverrides["provider/model"], else the ordinary setting, else the
// default; enabled is global. A value that is not a non-negative safe integer, or an
// override that is not an object, is refused in Pi's words. An empty provider and model
// resolve without overrides.
func (s Settings) CompactionFor(provider, model string) (CompactionSettings, error) {
	out := DefaultCompactionSettings
	c := s.compaction
	if v, ok := c["enabled"].(bool); ok {
		out.Enabled = v
	}
	key := ""
	if provider != "" || model != "" {
		key = provider + "/" + model
	}
	var override map[string]any
	if key != "" {
		if entry, ok := c["modelOverrides"].(map[string]any); ok {
			if e, present := entry[key]; present && e != nil {
				m, ok := e.(map[string]any)
				if !ok {
					return out, fmt.Errorf("Invalid compaction.modelOverrides[%q] setting: %s. Expected an object.", key, jsString(e))
				}
				override = m
			}
		}
	}
	for _, f := range []struct {
		name string
		to   *int
	}{{"reserveTokens", &out.ReserveTokens}, {"keepRecentTokens", &out.KeepRecentTokens}} {
		if v, present := c[f.name]; present && v != nil {
			n, ok := safeCount(v)
			if !ok {
				return out, fmt.Errorf("Invalid compaction.%s setting: %s. Expected a non-negative safe integer.", f.name, jsString(v))
			}
			*f.to = n
		}
		if v, present := override[f.name]; present && v != nil {
			n, ok := safeCount(v)
			if !ok {
				return out, fmt.Errorf("Invalid compaction.modelOverrides[%q].%s setting: %s. Expected a non-negative safe integer.", key, f.name, jsString(v))
			}
			*f.to = n
		}
	}
	return out, nil
}

// ProjectTrusted is Pi 1.6.0's decision, for a process without a UI, whether the
// project's settings may be read: the nearest entry for cwd or one of its parents in
// <agentDir>/trust.json, else the global defaultProjectTrust ("always" trusts; "never"
// and "ask", the default, do not, since nobody can be asked).
func ProjectTrusted(agentDir, cwd string, global map[string]any) bool {
	dir := canonical(ResolvePath(cwd))
	if data, err := os.ReadFile(filepath.Join(ResolvePath(agentDir), "trust.json")); err == nil {
		var trust map[string]any
		if json.Unmarshal(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), &trust) == nil {
			for {
				if v, ok := trust[dir].(bool); ok {
					return v
				}
				parent := filepath.Dir(dir)
				if parent == dir {
					break
				}
				dir = parent
			}
		}
	}
	return global["defaultProjectTrust"] == "always"
}

// canonical is Pi's canonicalizePath: symlinks resolved when the path exists.
func canonical(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// deepMerge is Pi's deepMergeObjects: objects merged key by key at every depth, any other
// value of the override replacing the base's.
func deepMerge(base, over map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		bm, bok := out[k].(map[string]any)
		om, ook := v.(map[string]any)
		if bok && ook {
			out[k] = deepMerge(bm, om)
		} else {
			out[k] = v
		}
	}
	return out
}

func jsonNumber(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

// safeCount accepts what Number.isSafeInteger(v) && v >= 0 accepts.
func safeCount(v any) (int, bool) {
	f, ok := jsonNumber(v)
	if !ok || f < 0 || f > 1<<53-1 || f != math.Trunc(f) {
		return 0, false
	}
	return int(f), true
}

// jsString is String(v) for a JSON value, as Pi's messages print it.
func jsString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		if v {
			return "true"
		}
		return "false"
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			if e != nil {
				parts[i] = jsString(e)
			}
		}
		return strings.Join(parts, ",")
	case map[string]any:
		return "[object Object]"
	}
	return "null"
}
