package catalog

import (
	"bytes"
	"cmp"
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// APIs pi-lsp can summarize with.
const (
	APIAnthropicMessages = "anthropic-messages"
	APIOpenAIResponses   = "openai-responses"
	APIOpenAICompletions = "openai-completions"
	APIGoogle            = "google-generative-ai"
)

// Supported reports whether pi-lsp speaks api.
func Supported(api string) bool {
	switch api {
	case APIAnthropicMessages, APIOpenAIResponses, APIOpenAICompletions, APIGoogle:
		return true
	}
	return false
}

// Cost is a model's price per million tokens (pi-ai's ModelCost).
type Cost struct {
	Input      float64    `json:"input"`
	Output     float64    `json:"output"`
	CacheRead  float64    `json:"cacheRead"`
	CacheWrite float64    `json:"cacheWrite"`
	Tiers      []CostTier `json:"tiers,omitempty"`
}

// CostTier is a price that applies above an input size.
type CostTier struct {
	InputTokensAbove float64 `json:"inputTokensAbove"`
	Input            float64 `json:"input"`
	Output           float64 `json:"output"`
	CacheRead        float64 `json:"cacheRead"`
	CacheWrite       float64 `json:"cacheWrite"`
}

// Model is a chat model as pi-ai builds it (Model<Api>), after models.json.
type Model struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	API       string `json:"api"`
	Provider  string `json:"provider"`
	BaseURL   string `json:"baseUrl"`
	Reasoning bool   `json:"reasoning"`
	// ThinkingLevelMap maps a thinking level to the provider's value; a key present with a
	// nil value is Pi's null (the level is not supported).
	ThinkingLevelMap              map[string]*string        `json:"thinkingLevelMap,omitempty"`
	Input                         []string                  `json:"input,omitempty"`
	Cost                          Cost                      `json:"cost"`
	ContextWindow                 int                       `json:"contextWindow"`
	MaxTokens                     int                       `json:"maxTokens"`
	Headers                       map[string]string         `json:"headers,omitempty"`
	Compat                        map[string]any            `json:"compat,omitempty"`
	SamplingParams                map[string]any            `json:"samplingParams,omitempty"`
	SamplingParamsByThinkingLevel map[string]map[string]any `json:"samplingParamsByThinkingLevel,omitempty"`
}

// Ref is "provider/id".
func (m *Model) Ref() string { return m.Provider + "/" + m.ID }

// CompatBool is compat[key] when it is a boolean.
func (m *Model) CompatBool(key string) (v, ok bool) {
	v, ok = m.Compat[key].(bool)
	return v, ok
}

// CompatString is compat[key] when it is a string.
func (m *Model) CompatString(key string) (string, bool) {
	v, ok := m.Compat[key].(string)
	return v, ok
}

// EnvVar is an environment variable a provider's key is read from, and what its value
// becomes: "apiKey" (the key) or "bearer" (an Authorization: Bearer header).
type EnvVar struct {
	Name string `json:"name"`
	As   string `json:"as"`
}

// Provider is a provider of the catalog: built in, changed or added by models.json.
type Provider struct {
	ID      string            `json:"id"`
	Name    string            `json:"name"`
	BaseURL string            `json:"baseUrl,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// APIKey: the provider takes an API key (OAuth-only providers do not).
	APIKey bool `json:"apiKey"`
	// OAuth names its account login ("" without one).
	OAuth string   `json:"oauth,omitempty"`
	Env   []EnvVar `json:"env"`
	// CustomAuth: the provider also reads ambient credentials (cloud profiles, account ids)
	// pi-lsp does not reproduce.
	CustomAuth bool     `json:"customAuth,omitempty"`
	Models     []*Model `json:"models"`

	// Builtin: the provider is one of Pi's own (not only models.json's).
	Builtin bool `json:"-"`
	// Config is the provider's models.json entry, nil when it has none.
	Config *ProviderConfig `json:"-"`
}

// builtin is the catalog's built-in part, as scripts/gen-pi-catalog.mjs writes it.
type builtin struct {
	PiAI      string      `json:"piAi"`
	Providers []*Provider `json:"providers"`
}

//go:embed pi-catalog.json
var embedded []byte

// The built-in catalogs are parsed once (the embedded one) or once per change of the
// installed package's model data; nothing changes a parsed catalog afterwards (models.json
// composes copies).
var (
	embeddedOnce   sync.Once
	embeddedParsed *builtin
	installedMu    sync.Mutex
	installedCache = map[string]installedEntry{}
)

type installedEntry struct {
	stamp string
	b     *builtin
}

func embeddedCatalog() *builtin {
	embeddedOnce.Do(func() {
		b, err := parseBuiltin(embedded)
		if err != nil {
			panic("catalog: embedded pi-catalog.json: " + err.Error())
		}
		embeddedParsed = b
	})
	return embeddedParsed
}

// EmbeddedVersion is the pi-ai version the embedded catalog was generated from.
func EmbeddedVersion() string { return embeddedCatalog().PiAI }

// installedCatalog is readInstalled, cached while the package's manifest is unchanged.
func installedCatalog(dir string) (*builtin, error) {
	stamp := ""
	for _, f := range []string{"package.json", filepath.Join("dist", "providers", "data", ".manifest.json")} {
		if st, err := os.Stat(filepath.Join(dir, f)); err == nil {
			stamp += st.ModTime().String() + fmt.Sprint(st.Size())
		}
	}
	installedMu.Lock()
	e, ok := installedCache[dir]
	installedMu.Unlock()
	if ok && e.stamp == stamp {
		return e.b, nil
	}
	b, err := readInstalled(dir)
	if err != nil {
		return nil, err
	}
	installedMu.Lock()
	installedCache[dir] = installedEntry{stamp: stamp, b: b}
	installedMu.Unlock()
	return b, nil
}

func parseBuiltin(data []byte) (*builtin, error) {
	var b builtin
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, err
	}
	for _, p := range b.Providers {
		p.Builtin = true
	}
	return &b, nil
}

// Catalog is the models the user's pi knows, built-in and from models.json.
type Catalog struct {
	providers map[string]*Provider
	order     []string
	// Source says where the built-in catalog came from ("pi 1.6.0 at DIR" or "the copy of
	// Pi 1.6.0's catalog built into pi-lsp").
	Source string
	// Errors are problems of models.json Pi would report (the file or a provider ignored).
	Errors []error
	// AgentDir is the agent dir models.json and auth.json were read from.
	AgentDir string
}

// Provider is the provider with that id, or nil.
func (c *Catalog) Provider(id string) *Provider { return c.providers[id] }

// Providers are the catalog's providers, in id order.
func (c *Catalog) Providers() []*Provider {
	out := make([]*Provider, 0, len(c.order))
	for _, id := range c.order {
		out = append(out, c.providers[id])
	}
	return out
}

// Find is the model provider/id, or nil.
func (c *Catalog) Find(provider, id string) *Model {
	p := c.providers[provider]
	if p == nil {
		return nil
	}
	for _, m := range p.Models {
		if m.ID == id {
			return m
		}
	}
	return nil
}

// LoadOptions say where the catalog comes from.
type LoadOptions struct {
	// PiPath is the user's pi ("" to look it up on PATH; "-" for none: the embedded
	// catalog).
	PiPath string
}

// Load reads the catalog the user's pi would use with agentDir: the installed pi's
// built-in models (else the embedded copy) and models.json.
func Load(agentDir string, opt LoadOptions) *Catalog {
	c := &Catalog{providers: map[string]*Provider{}, AgentDir: agentDir}
	var base *builtin
	if opt.PiPath != "-" {
		if dir := InstalledPiAI(opt.PiPath); dir != "" {
			if b, err := installedCatalog(dir); err == nil {
				base = b
				c.Source = fmt.Sprintf("pi-ai %s at %s", b.PiAI, dir)
			}
		}
	}
	if base == nil {
		b := embeddedCatalog()
		base = b
		c.Source = fmt.Sprintf("the copy of Pi's catalog (pi-ai %s) built into pi-lsp", b.PiAI)
	}
	for _, p := range base.Providers {
		c.providers[p.ID] = p
	}
	cfg, err := ReadModelsJSON(filepath.Join(agentDir, "models.json"))
	if err != nil {
		c.Errors = append(c.Errors, err)
	}
	for id, pc := range cfg {
		composed, err := compose(id, c.providers[id], pc)
		if err != nil {
			c.Errors = append(c.Errors, err)
			continue
		}
		c.providers[id] = composed
	}
	for id := range c.providers {
		c.order = append(c.order, id)
	}
	sort.Strings(c.order)
	return c
}

// InstalledPiAI is the directory of the @earendil-works/pi-ai package of the user's pi
// (pi as given, or found on PATH), or "" when there is none.
func InstalledPiAI(pi string) string {
	if pi == "" {
		p, err := exec.LookPath("pi")
		if err != nil {
			return ""
		}
		pi = p
	}
	real, err := filepath.EvalSymlinks(pi)
	if err != nil {
		return ""
	}
	// Up from the binary to the pi-coding-agent package.
	for dir := filepath.Dir(real); ; {
		if isPackage(dir, "@earendil-works/pi-coding-agent") {
			for _, cand := range []string{
				filepath.Join(dir, "node_modules", "@earendil-works", "pi-ai"),
				filepath.Join(filepath.Dir(dir), "pi-ai"), // hoisted beside it
			} {
				if isPackage(cand, "@earendil-works/pi-ai") {
					return cand
				}
			}
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

func isPackage(dir, name string) bool {
	data, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return false
	}
	var p struct {
		Name string `json:"name"`
	}
	return json.Unmarshal(data, &p) == nil && p.Name == name
}

// readInstalled reads an installed pi-ai's generated model data (dist/providers/data,
// one file a provider: {api: {"chat:<id>": model}}), with each provider's auth facts from
// the embedded catalog (the data files do not hold them).
func readInstalled(dir string) (*builtin, error) {
	var pkg struct {
		Version string `json:"version"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(dir, "dist", "providers", "data", "*.json"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no model data in %s", dir)
	}
	facts := map[string]*Provider{}
	for _, p := range embeddedCatalog().Providers {
		facts[p.ID] = p
	}
	out := &builtin{PiAI: pkg.Version}
	byID := map[string]*Provider{}
	for _, f := range files {
		if strings.HasPrefix(filepath.Base(f), ".") {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var groups map[string]map[string]json.RawMessage
		if err := json.Unmarshal(raw, &groups); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for _, models := range groups {
			keys := make([]string, 0, len(models))
			for k := range models {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if !strings.HasPrefix(k, "chat:") {
					continue
				}
				var m Model
				if err := json.Unmarshal(models[k], &m); err != nil {
					return nil, fmt.Errorf("%s: %s: %w", f, k, err)
				}
				p := byID[m.Provider]
				if p == nil {
					p = &Provider{ID: m.Provider, Name: m.Provider, APIKey: true, Builtin: true}
					if k := facts[m.Provider]; k != nil {
						p.Name, p.BaseURL, p.Headers, p.APIKey, p.OAuth, p.Env, p.CustomAuth = k.Name, k.BaseURL, k.Headers, k.APIKey, k.OAuth, k.Env, k.CustomAuth
					}
					byID[m.Provider] = p
					out.Providers = append(out.Providers, p)
				}
				p.Models = append(p.Models, &m)
			}
		}
	}
	// Providers the data files leave out (no static models) keep their facts.
	for id, p := range facts {
		if byID[id] == nil {
			cp := *p
			cp.Models = nil
			out.Providers = append(out.Providers, &cp)
		}
	}
	return out, nil
}

// ProviderConfig is a provider entry of models.json.
type ProviderConfig struct {
	Name           string                   `json:"name,omitempty"`
	BaseURL        string                   `json:"baseUrl,omitempty"`
	APIKey         *string                  `json:"apiKey,omitempty"`
	API            string                   `json:"api,omitempty"`
	OAuth          string                   `json:"oauth,omitempty"`
	Headers        map[string]string        `json:"headers,omitempty"`
	Compat         map[string]any           `json:"compat,omitempty"`
	AuthHeader     *bool                    `json:"authHeader,omitempty"`
	Models         []ModelDefinition        `json:"models,omitempty"`
	ModelOverrides map[string]ModelOverride `json:"modelOverrides,omitempty"`
}

// ModelDefinition is a model of a models.json provider.
type ModelDefinition struct {
	ID      string `json:"id"`
	Name    string `json:"name,omitempty"`
	API     string `json:"api,omitempty"`
	BaseURL string `json:"baseUrl,omitempty"`
	Cost    *Cost  `json:"cost,omitempty"`
	modelSettings
}

// PartialCost is a modelOverrides cost: each price falls back to the model's.
type PartialCost struct {
	Input      *float64   `json:"input,omitempty"`
	Output     *float64   `json:"output,omitempty"`
	CacheRead  *float64   `json:"cacheRead,omitempty"`
	CacheWrite *float64   `json:"cacheWrite,omitempty"`
	Tiers      []CostTier `json:"tiers,omitempty"`
}

// ModelOverride is a modelOverrides entry of models.json.
type ModelOverride struct {
	Name string       `json:"name,omitempty"`
	Cost *PartialCost `json:"cost,omitempty"`
	modelSettings
}

// modelSettings are the fields a models.json model and a modelOverrides entry have alike
// (encoding/json promotes them: they stand at the top level of each).
type modelSettings struct {
	Reasoning                     *bool                     `json:"reasoning,omitempty"`
	ThinkingLevelMap              map[string]*string        `json:"thinkingLevelMap,omitempty"`
	Input                         []string                  `json:"input,omitempty"`
	ContextWindow                 *float64                  `json:"contextWindow,omitempty"`
	MaxTokens                     *float64                  `json:"maxTokens,omitempty"`
	SamplingParams                map[string]any            `json:"samplingParams,omitempty"`
	SamplingParamsByThinkingLevel map[string]map[string]any `json:"samplingParamsByThinkingLevel,omitempty"`
	Headers                       map[string]string         `json:"headers,omitempty"`
	Compat                        map[string]any            `json:"compat,omitempty"`
}

var (
	lineCommentRe   = regexp.MustCompile(`"(?:\\.|[^"\\])*"|//[^\n]*`)
	trailingCommaRe = regexp.MustCompile(`"(?:\\.|[^"\\])*"|,(\s*[}\]])`)
	utf8BOM         = []byte("\xef\xbb\xbf")
)

// stripJSONComments is Pi's stripJsonComments: // line comments and trailing commas
// outside strings are dropped.
func stripJSONComments(s string) string {
	s = lineCommentRe.ReplaceAllStringFunc(s, func(m string) string {
		if m[0] == '"' {
			return m
		}
		return ""
	})
	return trailingCommaRe.ReplaceAllStringFunc(s, func(m string) string {
		if m[0] == '"' {
			return m
		}
		return m[1:]
	})
}

// ReadModelsJSON reads models.json's providers (none when the file does not exist). A
// file Pi cannot parse is ignored whole, as Pi ignores it, and reported.
func ReadModelsJSON(path string) (map[string]*ProviderConfig, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("failed to load models.json: %w (file %s)", err, path)
	}
	text := stripJSONComments(string(bytes.TrimPrefix(data, utf8BOM)))
	var doc struct {
		Providers map[string]*ProviderConfig `json:"providers"`
	}
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		return nil, fmt.Errorf("failed to parse models.json: %w (file %s; Pi ignores it too)", err, path)
	}
	if doc.Providers == nil {
		return nil, fmt.Errorf("invalid models.json: it needs a providers object (file %s; Pi ignores it too)", path)
	}
	for id, p := range doc.Providers {
		if p == nil {
			return nil, fmt.Errorf("invalid models.json: providers.%s is not an object (file %s; Pi ignores it too)", id, path)
		}
		for _, m := range p.Models {
			if m.ID == "" {
				return nil, fmt.Errorf("invalid models.json: a model of providers.%s has no id (file %s; Pi ignores it too)", id, path)
			}
		}
	}
	return doc.Providers, nil
}

// compose is pi-coding-agent's composeModelProvider without extensions: the built-in
// provider base (nil for a custom one) changed by its models.json entry.
func compose(id string, base *Provider, cfg *ProviderConfig) (*Provider, error) {
	if cfg.OAuth != "" && cfg.BaseURL == "" {
		return nil, fmt.Errorf("models.json: provider %s: \"baseUrl\" is required when \"oauth\" is set", id)
	}
	hasOverrides := len(cfg.ModelOverrides) > 0
	if len(cfg.Models) == 0 && cfg.BaseURL == "" && cfg.Headers == nil && cfg.Compat == nil && !hasOverrides &&
		cfg.APIKey == nil && cfg.OAuth == "" && cfg.AuthHeader == nil {
		return nil, fmt.Errorf("models.json: provider %s: must specify \"baseUrl\", \"headers\", \"compat\", \"modelOverrides\", or \"models\"", id)
	}
	p := &Provider{ID: id, Name: id, APIKey: true, Config: cfg}
	if base != nil {
		cp := *base
		cp.Config = cfg
		p = &cp
	}
	if cfg.Name != "" {
		p.Name = cfg.Name
	}
	if cfg.BaseURL != "" {
		p.BaseURL = cfg.BaseURL
	}
	var models []*Model
	if base != nil {
		for _, bm := range base.Models {
			m := *bm
			if cfg.OAuth != "radius" && cfg.BaseURL != "" {
				m.BaseURL = cfg.BaseURL
			}
			m.Compat = mergeCompat(m.Compat, cfg.Compat)
			models = append(models, &m)
		}
	}
	for _, def := range cfg.Models {
		api := def.API
		if api == "" {
			api = cfg.API
		}
		defaults := findDefaults(models, def.ID, api)
		m, err := modelFromJSON(id, def, cfg, defaults)
		if err != nil {
			return nil, err
		}
		replaced := false
		for i, existing := range models {
			if existing.ID == def.ID {
				models[i], replaced = m, true
				break
			}
		}
		if !replaced {
			models = append(models, m)
		}
	}
	for i, m := range models {
		if o, ok := cfg.ModelOverrides[m.ID]; ok {
			models[i] = applyOverride(m, o)
		}
	}
	p.Models = models
	return p, nil
}

// findDefaults is Pi's findModelDefaults: the model a models.json definition inherits
// api and baseUrl from.
func findDefaults(models []*Model, id, api string) *Model {
	for _, m := range models {
		if m.ID == id {
			return m
		}
	}
	if api != "" {
		for _, m := range models {
			if m.API == api {
				return m
			}
		}
	}
	for _, m := range models {
		if m.API == APIOpenAICompletions {
			return m
		}
	}
	if len(models) > 0 {
		return models[0]
	}
	return nil
}

// modelFromJSON is Pi's modelFromJson.
func modelFromJSON(providerID string, def ModelDefinition, cfg *ProviderConfig, defaults *Model) (*Model, error) {
	api := cmp.Or(def.API, cfg.API)
	if api == "" && defaults != nil {
		api = defaults.API
	}
	if api == "" {
		return nil, fmt.Errorf("models.json: provider %s, model %s: no \"api\" specified; set it at provider or model level", providerID, def.ID)
	}
	baseURL := cmp.Or(def.BaseURL, cfg.BaseURL)
	if baseURL == "" && defaults != nil {
		baseURL = defaults.BaseURL
	}
	if baseURL == "" {
		return nil, fmt.Errorf("models.json: provider %s: \"baseUrl\" is required when defining custom models", providerID)
	}
	m := &Model{ID: def.ID, Name: def.Name, API: api, Provider: providerID, BaseURL: baseURL,
		ThinkingLevelMap: def.ThinkingLevelMap, Input: def.Input, ContextWindow: 128000, MaxTokens: 16384,
		SamplingParams: def.SamplingParams, SamplingParamsByThinkingLevel: def.SamplingParamsByThinkingLevel,
		Compat: mergeCompat(cfg.Compat, def.Compat)}
	if m.Name == "" {
		m.Name = def.ID
	}
	if def.Reasoning != nil {
		m.Reasoning = *def.Reasoning
	}
	if m.Input == nil {
		m.Input = []string{"text"}
	}
	if def.Cost != nil {
		m.Cost = *def.Cost
	}
	if def.ContextWindow != nil {
		if *def.ContextWindow <= 0 {
			return nil, fmt.Errorf("models.json: provider %s, model %s: invalid contextWindow", providerID, def.ID)
		}
		m.ContextWindow = int(*def.ContextWindow)
	}
	if def.MaxTokens != nil {
		if *def.MaxTokens <= 0 {
			return nil, fmt.Errorf("models.json: provider %s, model %s: invalid maxTokens", providerID, def.ID)
		}
		m.MaxTokens = int(*def.MaxTokens)
	}
	return m, nil
}

// nestedCompat are the compat keys whose objects merge key by key (Pi's mergeCompat).
var nestedCompat = []string{"openRouterRouting", "vercelGatewayRouting", "chatTemplateKwargs", "chatTemplateArgs"}

func mergeCompat(base, over map[string]any) map[string]any {
	if over == nil {
		return base
	}
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	for _, k := range nestedCompat {
		b, bok := base[k].(map[string]any)
		o, ook := over[k].(map[string]any)
		if bok || ook {
			m := map[string]any{}
			for kk, vv := range b {
				m[kk] = vv
			}
			for kk, vv := range o {
				m[kk] = vv
			}
			out[k] = m
		}
	}
	return out
}

// overlaid is a new map of base's entries with over's laid on them (over wins).
func overlaid[V any](base, over map[string]V) map[string]V {
	m := make(map[string]V, len(base)+len(over))
	maps.Copy(m, base)
	maps.Copy(m, over)
	return m
}

// applyOverride is Pi's applyModelOverride.
func applyOverride(base *Model, o ModelOverride) *Model {
	m := *base
	if o.Name != "" {
		m.Name = o.Name
	}
	if o.Reasoning != nil {
		m.Reasoning = *o.Reasoning
	}
	if o.ThinkingLevelMap != nil {
		m.ThinkingLevelMap = overlaid(base.ThinkingLevelMap, o.ThinkingLevelMap)
	}
	if o.Input != nil {
		m.Input = o.Input
	}
	if c := o.Cost; c != nil {
		pick := func(p *float64, d float64) float64 {
			if p != nil {
				return *p
			}
			return d
		}
		m.Cost = Cost{Input: pick(c.Input, base.Cost.Input), Output: pick(c.Output, base.Cost.Output),
			CacheRead: pick(c.CacheRead, base.Cost.CacheRead), CacheWrite: pick(c.CacheWrite, base.Cost.CacheWrite), Tiers: base.Cost.Tiers}
		if c.Tiers != nil {
			m.Cost.Tiers = c.Tiers
		}
	}
	if o.ContextWindow != nil {
		m.ContextWindow = int(*o.ContextWindow)
	}
	if o.MaxTokens != nil {
		m.MaxTokens = int(*o.MaxTokens)
	}
	if o.SamplingParams != nil {
		m.SamplingParams = overlaid(base.SamplingParams, o.SamplingParams)
	}
	if o.SamplingParamsByThinkingLevel != nil {
		merged := overlaid(base.SamplingParamsByThinkingLevel, nil)
		for _, level := range thinkingLevels {
			if params := o.SamplingParamsByThinkingLevel[level]; params != nil {
				merged[level] = overlaid(base.SamplingParamsByThinkingLevel[level], params)
			}
		}
		m.SamplingParamsByThinkingLevel = merged
	}
	m.Compat = mergeCompat(m.Compat, o.Compat)
	return &m
}
