package main

// Real Pi 1.6.0 and pi-lsp summarize the same session with the session's model, nothing
// configured for pi-lsp but Pi's agent dir: `pi --mode rpc --session COPY` answers an RPC
// compact (or, for branch summaries, its /navtree extension command) and `pi-lsp compact
// COPY` (`pi-lsp navigate COPY ID --summarize`) runs on a second copy, each against its
// own local capture server of the model's API. The captured requests are equal in number,
// path, credential and body, and both write the summary the server streamed.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/oracle"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/corpus"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/modelapi"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/pirpc"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// modelCase is one session, model and credential both sides summarize with.
type modelCase struct {
	name string
	file string // genuine 1.6 corpus file
	// models is models.json with BASE for the capture server's URL.
	models string
	// auth, when set, is auth.json.
	auth string
	// env are the variables both processes get (keys).
	env map[string]string
	// append are entries added at the leaf (model_change, thinking_level_change); their
	// parentId "$LEAF" is the leaf's id.
	append []string
	keep   int
	// piOnPath puts the real pi on PATH for pi-lsp (a key saved in auth.json resolves
	// through it).
	piOnPath bool
	// requests, when set, is how many requests each side must send (2: a split turn).
	requests int
}

func thinking(level string) string {
	return fmt.Sprintf(`{"type":"thinking_level_change","id":"tl%06d","parentId":"$LEAF","timestamp":"2026-12-01T10:00:00.000Z","thinkingLevel":%q}`, len(level), level)
}

func modelChange(provider, model string) string {
	return fmt.Sprintf(`{"type":"model_change","id":"mc000001","parentId":"$LEAF","timestamp":"2026-12-01T10:00:01.000Z","provider":%q,"modelId":%q}`, provider, model)
}

// builtinCase is a provider built into Pi's catalog, its baseUrl pointed by models.json
// at the capture server (BASE and the API's path), its key in the provider's variable
// (keyEnv, "VAR=key"), the session switched to model at the thinking level.
func builtinCase(name, provider, apiPath, keyEnv, model, level string, requests int) modelCase {
	keyVar, key, _ := strings.Cut(keyEnv, "=")
	return modelCase{name: name, file: "compact-twice.jsonl", keep: 200, requests: requests,
		models: fmt.Sprintf(`{"providers":{%q:{"baseUrl":"BASE%s"}}}`, provider, apiPath),
		env:    map[string]string{keyVar: key},
		append: []string{modelChange(provider, model), thinking(level)}}
}

var modelCases = []modelCase{
	{name: "anthropic/command-key/split/high", file: "compact-split.jsonl", keep: 60, requests: 2,
		models: `{"providers":{"fake":{"baseUrl":"BASE","api":"anthropic-messages","apiKey":"!printf sk-ant-from-command",
			"models":[{"id":"fake-model","reasoning":true,"contextWindow":200000,"maxTokens":8192}]}}}`,
		append: []string{thinking("high")}},
	{name: "anthropic/adaptive/medium", file: "compact-twice.jsonl", keep: 200, requests: 1,
		models: `{"providers":{"fake":{"baseUrl":"BASE","api":"anthropic-messages","apiKey":"$ANT_KEY",
			"models":[{"id":"fake-model","reasoning":true,"contextWindow":100000,"maxTokens":64000,"compat":{"forceAdaptiveThinking":true}}]}}}`,
		env: map[string]string{"ANT_KEY": "sk-ant-env"}, append: []string{thinking("medium")}},
	{name: "openai-responses/env-key/split/medium", file: "compact-split.jsonl", keep: 60, requests: 2,
		models: `{"providers":{"fake":{"baseUrl":"BASE/v1","api":"openai-responses","apiKey":"$MY_KEY",
			"models":[{"id":"fake-model","reasoning":true,"contextWindow":128000,"maxTokens":32000}]}}}`,
		env: map[string]string{"MY_KEY": "sk-resp-env"}, append: []string{thinking("medium")}},
	{name: "openai-responses/off", file: "full-main.jsonl", keep: 100,
		models: `{"providers":{"fake":{"baseUrl":"BASE/v1","api":"openai-responses","apiKey":"${MY_KEY}",
			"models":[{"id":"fake-model","reasoning":true}]}}}`,
		env: map[string]string{"MY_KEY": "sk-resp-braces"}},
	{name: "openai-completions/braces-key/split", file: "compact-split.jsonl", keep: 60, requests: 2,
		models: `{"providers":{"fake":{"baseUrl":"BASE/v1","api":"openai-completions","apiKey":"k-${MY_KEY}-x",
			"models":[{"id":"fake-model","reasoning":true,"maxTokens":4000}]}}}`,
		env: map[string]string{"MY_KEY": "mid"}, append: []string{thinking("low")}},
	{name: "google/literal-key/split/low", file: "compact-split.jsonl", keep: 60, requests: 2,
		models: `{"providers":{"fake":{"baseUrl":"BASE/v1beta","api":"google-generative-ai","apiKey":"g-literal-key",
			"models":[{"id":"fake-model","reasoning":true,"contextWindow":1000000,"maxTokens":65536}]}}}`,
		append: []string{thinking("low")}},
	{name: "google/gemini-3/high", file: "compact-twice.jsonl", keep: 200, requests: 1,
		models: `{"providers":{"fake":{"baseUrl":"BASE/v1beta","api":"google-generative-ai","apiKey":"g-literal-key",
			"models":[{"id":"gemini-3-pro-preview","reasoning":true,"contextWindow":1000000,"maxTokens":65536}]}}}`,
		append: []string{modelChange("fake", "gemini-3-pro-preview"), thinking("high")}},
	// A built-in provider whose baseUrl models.json overrides, its key in its variable.
	builtinCase("builtin-anthropic/baseUrl-override/env", "anthropic", "", "ANTHROPIC_API_KEY=sk-ant-builtin", "claude-sonnet-4-5", "high", 1),
	builtinCase("builtin-openai/baseUrl-override/env", "openai", "/v1", "OPENAI_API_KEY=sk-openai-builtin", "gpt-5.5", "high", 1),
	// Built-in providers whose catalog compat shapes the body: thinking formats, the
	// output-limit field, level maps (an unsupported level clamps), the "off" effort.
	builtinCase("builtin-openrouter/completions/thinking-format", "openrouter", "/v1", "OPENROUTER_API_KEY=sk-or-builtin", "~deepseek/deepseek-flash-latest", "medium", 0),
	builtinCase("builtin-zai/completions/off", "zai", "/v1", "ZAI_API_KEY=zai-builtin", "glm-4.7", "off", 0),
	builtinCase("builtin-deepseek/completions/high", "deepseek", "", "DEEPSEEK_API_KEY=ds-builtin", "deepseek-flash", "high", 0),
	builtinCase("builtin-google/gemini-2.5-flash/medium", "google", "/v1beta", "GEMINI_API_KEY=gemini-builtin", "gemini-2.5-flash", "medium", 0),
	builtinCase("builtin-xai/responses/off", "xai", "/v1", "XAI_API_KEY=xai-builtin", "grok-4.3", "off", 0),
	// A key saved in auth.json: pi-lsp asks the user's pi (pi auth print-api-key).
	{name: "openai-completions/auth.json-through-pi", file: "compact-twice.jsonl", keep: 200, requests: 1, piOnPath: true,
		models: `{"providers":{"fake":{"baseUrl":"BASE/v1","api":"openai-completions","models":[{"id":"fake-model"}]}}}`,
		auth:   `{"fake":{"type":"api_key","key":"sk-saved-in-auth-json"}}`},
	// An account login saved in auth.json: pi-lsp asks the user's pi for its bearer token
	// (pi auth print-bearer-token), and the request is Pi's for such a token (Bearer,
	// Claude Code's identity, its betas).
	{name: "builtin-anthropic/account-login-through-pi", file: "compact-twice.jsonl", keep: 200, piOnPath: true,
		models: `{"providers":{"anthropic":{"baseUrl":"BASE"}}}`,
		auth:   `{"anthropic":{"type":"oauth","access":"sk-ant-oat01-test-token","refresh":"unused","expires":4102444800000}}`,
		append: []string{modelChange("anthropic", "claude-sonnet-4-5"), thinking("medium")}},
}

// credentialOf is the credential a request carried, whichever header its API uses.
func credentialOf(h map[string][]string) string {
	for _, k := range []string{"X-Api-Key", "Authorization", "X-Goog-Api-Key"} {
		if v := h[k]; len(v) > 0 && v[0] != "" {
			return k + ": " + v[0]
		}
	}
	return ""
}

// sameModelRequests fails unless pi-lsp's requests are Pi's: number, path, credential, body.
func sameModelRequests(t *testing.T, pi, ours []modelapi.Request, want int) {
	t.Helper()
	if (want != 0 && len(pi) != want) || len(pi) == 0 {
		t.Fatalf("Pi sent %d requests, the case expects %d", len(pi), want)
	}
	if len(ours) != len(pi) {
		t.Fatalf("pi-lsp sent %d requests, Pi %d", len(ours), len(pi))
	}
	for i := range pi {
		if ours[i].Path != pi[i].Path || ours[i].Method != pi[i].Method {
			t.Errorf("request %d: pi-lsp %s %s, Pi %s %s", i+1, ours[i].Method, ours[i].Path, pi[i].Method, pi[i].Path)
		}
		if a, b := credentialOf(ours[i].Header), credentialOf(pi[i].Header); a != b || a == "" {
			t.Errorf("request %d: pi-lsp's credential %q, Pi's %q", i+1, a, b)
		}
		if a, b := ours[i].Header.Get("anthropic-beta"), pi[i].Header.Get("anthropic-beta"); a != b {
			t.Errorf("request %d: anthropic-beta %q, Pi's %q", i+1, a, b)
		}
		if !reflect.DeepEqual(ours[i].Body, pi[i].Body) {
			gb, _ := json.MarshalIndent(ours[i].Body, "", " ")
			wb, _ := json.MarshalIndent(pi[i].Body, "", " ")
			t.Errorf("request %d body differs from Pi's\npi-lsp: %.2500s\n    Pi: %.2500s", i+1, gb, wb)
		}
	}
}

// modelSession copies a corpus file twice (for Pi and for pi-lsp) with its header cwd
// set to dir and the case's entries appended at the leaf.
func modelSession(t *testing.T, file, cwd string, extra []string) (piCopy, ours string) {
	t.Helper()
	src := corpus.Copy(t, "genuine-1.6/"+file)
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	var h map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &h); err != nil {
		t.Fatal(err)
	}
	h["cwd"] = cwd
	b, _ := json.Marshal(h)
	lines[0] = string(b)
	for _, e := range extra {
		var last struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal([]byte(lines[len(lines)-1]), &last)
		lines = append(lines, strings.ReplaceAll(e, "$LEAF", last.ID))
	}
	text := strings.Join(lines, "\n") + "\n"
	dir := t.TempDir()
	piCopy, ours = filepath.Join(dir, "pi.jsonl"), filepath.Join(dir, "pi-lsp.jsonl")
	for _, p := range []string{piCopy, ours} {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return piCopy, ours
}

// realPi is one `pi --mode rpc` process of a test.
type realPi struct {
	*pirpc.Proc
	t *testing.T
}

// startRealPi runs real Pi 1.6.0 on session in RPC mode, isolated in d, with env added.
func startRealPi(t *testing.T, d isolate.Dirs, cwd, sessionFile string, env map[string]string, extensions ...string) *realPi {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	args := []string{oracle.PiCLI(), "--mode", "rpc", "--no-skills", "--no-prompt-templates", "--no-themes", "--no-context-files", "--no-extensions"}
	for _, e := range extensions {
		args = append(args, "-e", e)
	}
	args = append(args, "--session", sessionFile)
	cmd := isolate.GroupCmd(ctx, oracle.Node(), args...)
	cmd.Dir = cwd
	cmd.Env = pirpc.Environ("PI_")
	tmp := filepath.Join(d.Root, "tmp")
	_ = os.MkdirAll(tmp, 0o755)
	cmd.Env = append(cmd.Env, d.Env()...)
	cmd.Env = append(cmd.Env, "TMPDIR="+tmp, "PI_OFFLINE=1", "PI_SKIP_VERSION_CHECK=1", "PI_TELEMETRY=0", "NO_COLOR=1")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return &realPi{Proc: pirpc.Start(t, cmd), t: t}
}

// stop kills pi's process group and waits for it.
func (p *realPi) stop() { p.Kill() }

// await waits for a line of pi's that match accepts.
func (p *realPi) await(what string, timeout time.Duration, match func(map[string]any) bool) map[string]any {
	p.t.Helper()
	m, err := p.Await(timeout, match)
	if err != nil {
		p.t.Fatalf("pi: no %s within %s (%v)\nstderr: %.3000s", what, timeout, err, p.Stderr())
	}
	return m
}

func (p *realPi) send(cmd map[string]any) {
	p.t.Helper()
	if err := p.Send(cmd); err != nil {
		p.t.Fatal(err)
	}
}

// piWorld is the isolated dirs and the agent dir both sides read.
type piWorld struct {
	dirs isolate.Dirs
	cwd  string
}

// setupModelWorld isolates the test (pi-lsp runs in process), writes the agent dir and
// returns it with two capture servers: Pi's and pi-lsp's.
func setupModelWorld(t *testing.T, models, auth string, keep int, env map[string]string, piOnPath bool) (piWorld, *modelapi.Server, *modelapi.Server) {
	t.Helper()
	oracle.NeedPiCLI(t, "the differential test of summaries with the session's model")
	d := isolate.Setup(t)
	t.Setenv("PI_LSP_PI", "") // the pi on PATH, as for a user
	cwd := filepath.Join(d.Root, "project")
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	forPi, forUs := modelapi.New(t), modelapi.New(t)
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(d.AgentDir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("settings.json", fmt.Sprintf(`{"compaction":{"keepRecentTokens":%d},"quietStartup":true}`, keep))
	write("models.json", strings.ReplaceAll(models, "BASE", forPi.URL))
	if auth != "" {
		write("auth.json", auth)
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
	if piOnPath {
		bin := filepath.Join(d.Root, "bin")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		script := fmt.Sprintf("#!/bin/sh\nexec %q %q \"$@\"\n", oracle.Node(), oracle.PiCLI())
		if err := os.WriteFile(filepath.Join(bin, "pi"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		t.Setenv("PI_OFFLINE", "1")
		t.Setenv("PI_TELEMETRY", "0")
	} else {
		t.Setenv("PI_LSP_PI", "-") // no pi: the embedded catalog, as on a machine without one
	}
	return piWorld{dirs: d, cwd: cwd}, forPi, forUs
}

// pointModels points models.json at srv (pi-lsp's turn: Pi has run).
func pointModels(t *testing.T, w piWorld, models string, srv *modelapi.Server) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(w.dirs.AgentDir, "models.json"), []byte(strings.ReplaceAll(models, "BASE", srv.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
}

func lastOfType(t *testing.T, path, typ string) *session.Entry {
	t.Helper()
	entries := sessiontest.Load(t, path).Entries
	for i := len(entries) - 1; i >= 0; i-- {
		if entries[i].Type == typ {
			return entries[i]
		}
	}
	t.Fatalf("%s has no %s entry", path, typ)
	return nil
}

func summaryOf(t *testing.T, e *session.Entry) (string, any) {
	t.Helper()
	var f struct {
		Summary string `json:"summary"`
		Usage   any    `json:"usage"`
	}
	if err := json.Unmarshal(e.Raw(), &f); err != nil {
		t.Fatal(err)
	}
	return f.Summary, f.Usage
}

func TestCompactWithSessionModelMatchesPi(t *testing.T) {
	for _, tc := range modelCases {
		t.Run(tc.name, func(t *testing.T) {
			w, forPi, forUs := setupModelWorld(t, tc.models, tc.auth, tc.keep, tc.env, tc.piOnPath)
			piCopy, ours := modelSession(t, tc.file, w.cwd, tc.append)

			pi := startRealPi(t, w.dirs, w.cwd, piCopy, tc.env)
			pi.send(map[string]any{"type": "compact", "id": "c1"})
			resp := pi.await("compact response", 2*time.Minute, func(m map[string]any) bool { return m["type"] == "response" && m["id"] == "c1" })
			if resp["success"] != true {
				t.Fatalf("Pi's compact failed: %v", resp["error"])
			}
			pi.stop() // pi-lsp refuses to write a session a running pi holds

			pointModels(t, w, tc.models, forUs)
			authBefore, _ := os.ReadFile(filepath.Join(w.dirs.AgentDir, "auth.json"))
			code, out, errOut := runCLI(t, "compact", ours, "--json")
			if code != 0 {
				t.Fatalf("pi-lsp compact: exit %d: %s %s", code, errOut, out)
			}
			if after, _ := os.ReadFile(filepath.Join(w.dirs.AgentDir, "auth.json")); string(after) != string(authBefore) {
				t.Error("auth.json changed")
			}
			if strings.Contains(errOut, "extractive") {
				t.Fatalf("pi-lsp fell back to the extractive summary: %s", errOut)
			}
			sameModelRequests(t, forPi.Requests(), forUs.Requests(), tc.requests)

			piSummary, piUsage := summaryOf(t, lastOfType(t, piCopy, session.TypeCompaction))
			ourSummary, ourUsage := summaryOf(t, lastOfType(t, ours, session.TypeCompaction))
			if !strings.Contains(ourSummary, forUs.Answer) {
				t.Errorf("pi-lsp's summary %q does not hold what the server streamed", ourSummary)
			}
			// Design divergence 1: a split turn with nothing new before it keeps the
			// previous summary, which Pi keeps with its old file blocks.
			if i := strings.Index(piSummary, compaction.SplitTurnSeparator); i >= 0 {
				piSummary = modelapi.WithoutFileBlocks(piSummary[:i]) + piSummary[i:]
			}
			if ourSummary != piSummary {
				t.Errorf("summary\npi-lsp: %q\n    Pi: %q", ourSummary, piSummary)
			}
			if !reflect.DeepEqual(ourUsage, piUsage) {
				t.Errorf("usage %v, Pi's %v", ourUsage, piUsage)
			}
		})
	}
}

// Branch summaries: Pi's navigateTree with a summary (its /navtree test command) and
// `pi-lsp navigate --summarize`, with the session's model.
func TestNavigateSummaryWithSessionModelMatchesPi(t *testing.T) {
	cases := []struct {
		name, models string
		env          map[string]string
		append       []string
		target       int // index of the target among the file's entries
	}{
		{name: "anthropic/high", target: 4, append: []string{thinking("high")},
			models: `{"providers":{"fake":{"baseUrl":"BASE","api":"anthropic-messages","apiKey":"$ANT_KEY",
				"models":[{"id":"fake-model","reasoning":true,"contextWindow":60000,"maxTokens":16000}]}}}`,
			env: map[string]string{"ANT_KEY": "sk-ant-branch"}},
		{name: "openai-responses/off", target: 2,
			models: `{"providers":{"fake":{"baseUrl":"BASE/v1","api":"openai-responses","apiKey":"!printf sk-branch",
				"models":[{"id":"fake-model","reasoning":true}]}}}`},
		{name: "openai-completions/medium", target: 9, append: []string{thinking("medium")},
			models: `{"providers":{"fake":{"baseUrl":"BASE/v1","api":"openai-completions","apiKey":"$K_KEY",
				"models":[{"id":"fake-model","reasoning":true}]}}}`,
			env: map[string]string{"K_KEY": "sk-comp-branch"}},
		{name: "google/minimal", target: 1, append: []string{thinking("minimal")},
			models: `{"providers":{"fake":{"baseUrl":"BASE/v1beta","api":"google-generative-ai","apiKey":"g-branch",
				"models":[{"id":"fake-model","reasoning":true}]}}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, forPi, forUs := setupModelWorld(t, tc.models, "", 20000, tc.env, false)
			piCopy, ours := modelSession(t, "tree-nav.jsonl", w.cwd, tc.append)
			target := sessiontest.Load(t, piCopy).Entries[tc.target].ID

			ext := filepath.Join(oracle.RepoRoot(), "test", "pi", "ext", "pi16-test-helper.ts")
			pi := startRealPi(t, w.dirs, w.cwd, piCopy, tc.env, ext)
			pi.send(map[string]any{"type": "prompt", "id": "n1", "message": "/navtree " + target + " summarize"})
			report := pi.await("navtree report", 2*time.Minute, func(m map[string]any) bool {
				msg, _ := m["message"].(string)
				return m["type"] == "extension_ui_request" && strings.HasPrefix(msg, "pi-test-helper")
			})
			if msg := report["message"].(string); strings.HasPrefix(msg, "pi-test-helper-error:") {
				t.Fatalf("Pi's navigation failed: %s", msg)
			}
			pi.stop()

			pointModels(t, w, tc.models, forUs)
			code, out, errOut := runCLI(t, "navigate", ours, target, "--summarize", "--json")
			if code != 0 {
				t.Fatalf("pi-lsp navigate: exit %d: %s %s", code, errOut, out)
			}
			sameModelRequests(t, forPi.Requests(), forUs.Requests(), 1)
			piSummary, piUsage := summaryOf(t, lastOfType(t, piCopy, session.TypeBranchSummary))
			ourSummary, ourUsage := summaryOf(t, lastOfType(t, ours, session.TypeBranchSummary))
			if ourSummary != piSummary {
				t.Errorf("summary\npi-lsp: %q\n    Pi: %q", ourSummary, piSummary)
			}
			if !reflect.DeepEqual(ourUsage, piUsage) {
				t.Errorf("usage %v, Pi's %v", ourUsage, piUsage)
			}
		})
	}
}
