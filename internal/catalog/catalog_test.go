package catalog

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
)

func writeFile(t *testing.T, path, text string) { t.Helper(); isolate.WriteFile(t, path, text, 0o600) }

func env(m map[string]string) Env { return func(n string) string { return m[n] } }

// Config values resolve as Pi's resolve-config-value does.
func TestResolveValue(t *testing.T) {
	e := env(map[string]string{"A": "alpha", "B_2": "beta"})
	cases := []struct{ in, want, err string }{
		{in: "sk-literal", want: "sk-literal"},
		{in: "$A", want: "alpha"},
		{in: "${A}-${B_2}", want: "alpha-beta"},
		{in: "pre$A.post", want: "prealpha.post"},
		{in: "$$A", want: "$A"},
		{in: "$!x", want: "!x"},
		{in: "${not valid}", want: "${not valid}"},
		{in: "$", want: "$"},
		{in: "${A", want: "${A"},
		{in: "$MISSING", err: "environment variable: MISSING"},
		{in: "$MISSING$ALSO", err: "environment variables: MISSING, ALSO"},
		{in: "!printf ' sk-from-cmd \\n'", want: "sk-from-cmd"},
		{in: "!exit 3", err: "the output of the command"},
	}
	for _, tc := range cases {
		got, err := resolveValue(context.Background(), tc.in, "API key", e, nil)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	// A failing command's message names the program, never the rest of its line.
	_, err := resolveValue(context.Background(), "!false sk-secret-in-line", "API key", e, nil)
	if err == nil || strings.Contains(err.Error(), "sk-secret") {
		t.Errorf("command failure %v shows the command line", err)
	}
}

func TestModelsJSONComposition(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "models.json"), `{
		// a comment, as Pi allows
		"providers": {
			"anthropic": {"baseUrl": "http://127.0.0.1:9/anthropic", "modelOverrides": {"claude-sonnet-4-5": {"maxTokens": 1000, "name": "Sonnet!"}}},
			"mine": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "$MY_KEY",
				"compat": {"supportsStore": false},
				"models": [{"id": "a"}, {"id": "b", "api": "anthropic-messages", "reasoning": true, "compat": {"x": 1}},],
			},
		}
	}`)
	c := Load(dir, LoadOptions{PiPath: "-"})
	if len(c.Errors) > 0 {
		t.Fatal(c.Errors)
	}
	m := c.Find("anthropic", "claude-sonnet-4-5")
	if m == nil {
		t.Fatal("built-in claude-sonnet-4-5 missing")
	}
	if m.BaseURL != "http://127.0.0.1:9/anthropic" || m.MaxTokens != 1000 || m.Name != "Sonnet!" || m.API != APIAnthropicMessages {
		t.Errorf("override not applied: %+v", m)
	}
	if o := c.Find("anthropic", "claude-opus-4-5"); o != nil && o.BaseURL != "http://127.0.0.1:9/anthropic" {
		t.Errorf("baseUrl must apply to every built-in model, %s has %s", o.ID, o.BaseURL)
	}
	a, b := c.Find("mine", "a"), c.Find("mine", "b")
	if a == nil || b == nil {
		t.Fatal("custom models missing")
	}
	if a.API != APIOpenAICompletions || a.ContextWindow != 128000 || a.MaxTokens != 16384 || a.Name != "a" || a.Compat["supportsStore"] != false {
		t.Errorf("custom model a: %+v", a)
	}
	if b.API != APIAnthropicMessages || !b.Reasoning || b.Compat["x"] != float64(1) || b.Compat["supportsStore"] != false {
		t.Errorf("custom model b: %+v", b)
	}
}

func TestModelsJSONErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "models.json"), `{"providers": {"bad": {"models": [{"id": "x"}]}, "ok": {"baseUrl": "http://h/v1", "api": "openai-completions", "models": [{"id": "y"}]}}}`)
	c := Load(dir, LoadOptions{PiPath: "-"})
	if len(c.Errors) != 1 || !strings.Contains(c.Errors[0].Error(), "bad") {
		t.Errorf("errors %v, want one about provider bad", c.Errors)
	}
	if c.Find("ok", "y") == nil {
		t.Error("a bad provider must not drop the good one")
	}
	writeFile(t, filepath.Join(dir, "models.json"), `{"providers": `)
	if c := Load(dir, LoadOptions{PiPath: "-"}); len(c.Errors) != 1 || c.Find("ok", "y") != nil {
		t.Errorf("a models.json that does not parse is ignored whole: %v", c.Errors)
	}
}

// The credential is found in Pi's order: auth.json (through pi), models.json apiKey, env.
func TestResolveOrder(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "models.json"), `{"providers": {
		"anthropic": {"apiKey": "$MODELS_KEY", "headers": {"x-team": "${TEAM}"}, "modelOverrides": {"claude-sonnet-4-5": {"headers": {"x-model": "m"}}}},
		"c": {"baseUrl": "http://h/v1", "api": "openai-completions", "apiKey": "!printf cmd-key", "authHeader": true, "models": [{"id": "m", "headers": {"x-def": "$TEAM"}}]}
	}}`)
	vars := map[string]string{"ANTHROPIC_API_KEY": "env-key", "MODELS_KEY": "models-key", "TEAM": "blue"}
	var ran []string
	r := Resolver{AgentDir: dir, Env: env(vars), RunPi: func(_ context.Context, args ...string) (string, error) {
		ran = append(ran, strings.Join(args, " "))
		return "stored-key", nil
	}}
	c := Load(dir, LoadOptions{PiPath: "-"})
	m := c.Find("anthropic", "claude-sonnet-4-5")
	cred, err := r.Resolve(context.Background(), c, m)
	if err != nil || cred.APIKey != "models-key" || cred.Headers["x-team"] != "blue" || cred.Headers["x-model"] != "m" {
		t.Fatalf("models.json key: %+v %v", cred, err)
	}
	if !strings.Contains(cred.Source, "models.json") || strings.Contains(cred.Source, "models-key") {
		t.Errorf("source %q", cred.Source)
	}
	writeFile(t, filepath.Join(dir, "auth.json"), `{"anthropic": {"type": "api_key", "key": "x"}}`)
	if cred, err = r.Resolve(context.Background(), c, m); err != nil || cred.APIKey != "stored-key" ||
		len(ran) != 1 || ran[0] != "auth print-api-key --provider anthropic --model claude-sonnet-4-5" {
		t.Fatalf("stored key: %+v %v %v", cred, err, ran)
	}
	writeFile(t, filepath.Join(dir, "auth.json"), `{"anthropic": {"type": "oauth", "access": "x"}}`)
	if cred, err = r.Resolve(context.Background(), c, m); err != nil || !cred.OAuth || ran[1] != "auth print-bearer-token --provider anthropic --model claude-sonnet-4-5" {
		t.Fatalf("account login: %+v %v %v", cred, err, ran)
	}
	os.Remove(filepath.Join(dir, "auth.json"))
	delete(vars, "MODELS_KEY")
	if _, err = r.Resolve(context.Background(), c, m); err == nil || !strings.Contains(err.Error(), "MODELS_KEY") {
		t.Fatalf("an unset models.json variable is an error naming it, got %v", err)
	}
	cm := c.Find("c", "m")
	if cred, err = r.Resolve(context.Background(), c, cm); err != nil || cred.APIKey != "cmd-key" ||
		cred.Headers["Authorization"] != "Bearer cmd-key" || cred.Headers["x-def"] != "blue" {
		t.Fatalf("command key with authHeader: %+v %v", cred, err)
	}
	// Without models.json, the environment.
	dir2 := t.TempDir()
	c2 := Load(dir2, LoadOptions{PiPath: "-"})
	r2 := Resolver{AgentDir: dir2, Env: env(vars), Pi: "-"}
	if cred, err = r2.Resolve(context.Background(), c2, c2.Find("anthropic", "claude-sonnet-4-5")); err != nil || cred.APIKey != "env-key" || cred.Source != "environment variable ANTHROPIC_API_KEY" {
		t.Fatalf("env key: %+v %v", cred, err)
	}
	vars["ANTHROPIC_AUTH_TOKEN"] = "tok"
	if cred, err = r2.Resolve(context.Background(), c2, c2.Find("anthropic", "claude-sonnet-4-5")); err != nil || cred.APIKey != "" || cred.Headers["Authorization"] != "Bearer tok" {
		t.Fatalf("ANTHROPIC_AUTH_TOKEN is a bearer header: %+v %v", cred, err)
	}
	r3 := Resolver{AgentDir: dir2, Env: env(nil), Pi: "-"}
	_, err = r3.Resolve(context.Background(), c2, c2.Find("openai", c2.Provider("openai").Models[0].ID))
	if err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY") || !strings.Contains(err.Error(), "pi auth login openai") {
		t.Errorf("no credential: %v", err)
	}
}

func entry(t *testing.T, line string) *session.Entry {
	t.Helper()
	f, err := session.Parse([]byte(`{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}` + "\n" + line + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return f.Entries[0]
}

func TestSelect(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "models.json"), `{"providers": {"mine": {"baseUrl": "http://h/v1", "api": "openai-completions", "apiKey": "k",
		"models": [{"id": "r", "reasoning": true}, {"id": "plain"}]}}}`)
	c := Load(dir, LoadOptions{PiPath: "-"})
	r := Resolver{AgentDir: dir, Env: env(nil), Pi: "-"}
	mc := entry(t, `{"type":"model_change","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","provider":"mine","modelId":"r"}`)
	tl := entry(t, `{"type":"thinking_level_change","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:00.000Z","thinkingLevel":"max"}`)
	sel := Select(c, r, []*session.Entry{mc, tl}, session.Settings{})
	if !sel.Usable || sel.Ref() != "mine/r" || sel.ThinkingLevel != "high" || sel.From != "session" {
		t.Errorf("session model: %+v", sel)
	}
	sel = Select(c, r, []*session.Entry{mc}, session.Settings{})
	if sel.ThinkingLevel != "medium" {
		t.Errorf("no thinking entry: Pi's default medium, got %q", sel.ThinkingLevel)
	}
	gone := entry(t, `{"type":"model_change","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","provider":"anthropic","modelId":"claude-sonnet-4-5"}`)
	sel = Select(c, r, []*session.Entry{gone}, session.Settings{DefaultProvider: "mine", DefaultModel: "plain"})
	if !sel.Usable || sel.Ref() != "mine/plain" || sel.From != "settings" || sel.ThinkingLevel != "off" {
		t.Errorf("no anthropic credential: settings' default, got %+v", sel)
	}
	sel = Select(c, r, []*session.Entry{gone}, session.Settings{})
	if sel.Usable || sel.Ref() != "anthropic/claude-sonnet-4-5" || sel.Fix != "pi auth login anthropic" || !strings.Contains(sel.Why, "ANTHROPIC_API_KEY") {
		t.Errorf("unusable session model: %+v", sel)
	}
}

func TestClampLevel(t *testing.T) {
	s := func(v string) *string { return &v }
	plain := &Model{Reasoning: true}
	mapped := &Model{Reasoning: true, ThinkingLevelMap: map[string]*string{"off": nil, "minimal": nil, "xhigh": s("xhigh")}}
	for _, tc := range []struct {
		m           *Model
		level, want string
	}{
		{plain, "max", "high"}, {plain, "xhigh", "high"}, {plain, "off", "off"}, {plain, "bogus", "off"},
		{mapped, "off", "low"}, {mapped, "minimal", "low"}, {mapped, "max", "xhigh"}, {&Model{}, "high", "off"},
	} {
		if got := ClampLevel(tc.m, tc.level); got != tc.want {
			t.Errorf("ClampLevel(%v, %s) = %s, want %s", tc.m.ThinkingLevelMap, tc.level, got, tc.want)
		}
	}
}

// The installed pi's catalog is read from its pi-ai package's generated model data.
func TestInstalledCatalog(t *testing.T) {
	root := t.TempDir()
	pkg := filepath.Join(root, "lib", "node_modules", "@earendil-works", "pi-coding-agent")
	writeFile(t, filepath.Join(pkg, "package.json"), `{"name":"@earendil-works/pi-coding-agent","version":"9.9.9"}`)
	writeFile(t, filepath.Join(pkg, "dist", "bundle", "cli.js"), "")
	ai := filepath.Join(root, "lib", "node_modules", "@earendil-works", "pi-ai")
	writeFile(t, filepath.Join(ai, "package.json"), `{"name":"@earendil-works/pi-ai","version":"9.9.9"}`)
	writeFile(t, filepath.Join(ai, "dist", "providers", "data", "anthropic.json"),
		`{"anthropic-messages":{"chat:claude-next":{"id":"claude-next","name":"Next","api":"anthropic-messages","provider":"anthropic","baseUrl":"https://api.anthropic.com","reasoning":true,"input":["text"],"cost":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0},"contextWindow":1000,"maxTokens":100,"type":"chat"}}}`)
	bin := filepath.Join(root, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(pkg, "dist", "bundle", "cli.js"), filepath.Join(bin, "pi")); err != nil {
		t.Fatal(err)
	}
	c := Load(t.TempDir(), LoadOptions{PiPath: filepath.Join(bin, "pi")})
	if !strings.Contains(c.Source, "9.9.9") || c.Find("anthropic", "claude-next") == nil || c.Find("anthropic", "claude-sonnet-4-5") != nil {
		t.Fatalf("installed catalog not used: %s", c.Source)
	}
	if p := c.Provider("anthropic"); len(p.Env) == 0 || p.OAuth == "" {
		t.Errorf("provider facts come from the embedded catalog: %+v", p)
	}
	if c.Provider("openai") == nil {
		t.Error("a provider without model data keeps its facts")
	}
}
