package main

// The CLI and the server decide every job the same way (issue 34): each job runs through
// both front ends, the `pi-lsp` command in process on one copy of a genuine session and
// the LSP server (the lsptest harness, in process) on a second copy, and both must
// agree on the model asked (the requests each front end's capture server of the model's
// API received), the routing (the file, or a live pi through pi-lsp's bridge: the
// requests that pi received), the refusal, and the entries written (equal but for their
// ids, which are random, and timestamps).

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/bridge"
	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/corpus"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/linepeer"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/modelapi"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/shape"
)

// parityModels are two models of one provider, both served by the capture server at
// BASE: the session's own model (fake-model) and the one a side branch changes to.
const parityModels = `{"providers":{"fake":{"baseUrl":"BASE/v1","api":"openai-completions","apiKey":"$PARITY_KEY",
	"models":[{"id":"fake-model","contextWindow":128000,"maxTokens":4000},{"id":"other-model","contextWindow":64000,"maxTokens":4000}]}}}`

// Entries of compact-twice (genuine, Pi 0.73.1) and those the test adds to both copies:
// a side branch that changes the model (sideLeaf, a child of branchPoint, before the
// second compaction), and a label on the leaf (mainLeaf), so that Pi's leaf stays on
// the session's own model.
const (
	branchPoint = "37b53dd2"
	parityLeaf  = "03577fa2"
	sideLeaf    = "mc000001"
	mainLeaf    = "lb000001"
)

type parity struct {
	t        *testing.T
	env      *lsptest.Env
	cli, srv string            // the two copies
	cliAPI   *modelapi.Server  // what the CLI's summaries asked
	srvAPI   *modelapi.Server  // what the server's summaries asked
	cliAgent string            // the CLI's agent dir: the server's, but for the capture server
	size     map[string]int64  // each copy's size after the last job compared
	ids      map[string]string // the id of each entry the CLI wrote, to the server's
}

func newParity(t *testing.T) *parity {
	t.Setenv("PARITY_KEY", "sk-parity")
	// Live pis register in the runtime dir, which both front ends search.
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	srvAPI, cliAPI := modelapi.New(t), modelapi.New(t)
	settings := `{"compaction":{"keepRecentTokens":200}}`
	env := lsptest.NewEnv(t, lsptest.Config{
		Corpus:     []string{"compact-twice", "compact-twice"},
		AgentFiles: map[string]string{"settings.json": settings, "models.json": strings.ReplaceAll(parityModels, "BASE", srvAPI.URL)},
		Options:    rpc.Options{BridgeDir: bridge.DefaultDir()},
	})
	p := &parity{t: t, env: env, cli: env.Paths[0], srv: env.Paths[1], cliAPI: cliAPI, srvAPI: srvAPI, size: map[string]int64{}, ids: map[string]string{}}
	p.cliAgent = filepath.Join(t.TempDir(), "agent")
	isolate.WriteFile(t, filepath.Join(p.cliAgent, "settings.json"), settings, 0o644)
	isolate.WriteFile(t, filepath.Join(p.cliAgent, "models.json"), strings.ReplaceAll(parityModels, "BASE", cliAPI.URL), 0o644)
	for _, path := range []string{p.cli, p.srv} {
		corpus.EnlargeToolResults(t, path) // old tool output worth clearing
		sessiontest.Append(t, path,
			`{"type":"model_change","id":"`+sideLeaf+`","parentId":"`+branchPoint+`","timestamp":"2026-12-01T10:00:01.000Z","provider":"fake","modelId":"other-model"}`+"\n"+
				`{"type":"label","id":"`+mainLeaf+`","parentId":"`+parityLeaf+`","timestamp":"2026-12-01T10:00:02.000Z","targetId":"cf45f48f","label":"start"}`+"\n")
		p.size[path] = fileSize(t, path)
	}
	return p
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// runCLI runs `pi-lsp args...` in process with the CLI's agent dir; FILE is the CLI's
// copy. It returns the exit code, stdout and stderr.
func (p *parity) runCLI(args ...string) (int, string, string) {
	p.t.Helper()
	p.t.Setenv("PI_CODING_AGENT_DIR", p.cliAgent)
	defer os.Setenv("PI_CODING_AGENT_DIR", p.env.AgentDir)
	for i, a := range args {
		if a == "FILE" {
			args[i] = p.cli
		}
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// call sends method to the server with params naming the server's copy.
func (p *parity) call(method string, params map[string]any) (json.RawMessage, error) {
	params["session"] = p.srv
	return p.env.Call(method, params)
}

// written are the lines appended to path since the last comparison.
func (p *parity) written(path string) []map[string]any {
	p.t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		p.t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(b[p.size[path]:]), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			p.t.Fatalf("%s: appended line %q: %v", path, line, err)
		}
		out = append(out, m)
	}
	p.size[path] = int64(len(b))
	return out
}

// sameWritten compares the entries the two front ends appended since the last job:
// as many (want, or with want -1 some), of the same types and content, the ids each
// wrote mapped onto the other's.
func (p *parity) sameWritten(job string, want int) {
	p.t.Helper()
	a, b := p.written(p.cli), p.written(p.srv)
	if len(a) != len(b) || (want >= 0 && len(a) != want) || (want < 0 && len(a) == 0) {
		p.t.Fatalf("%s: the CLI wrote %d entries, the server %d; want %d", job, len(a), len(b), want)
	}
	ids := p.ids
	for i := range a {
		ida, _ := a[i]["id"].(string)
		idb, _ := b[i]["id"].(string)
		ids[ida] = idb
	}
	for i := range a {
		ja, _ := json.Marshal(withoutTimestamps(a[i]))
		jb, _ := json.Marshal(withoutTimestamps(b[i]))
		sa := string(ja)
		for from, to := range ids {
			sa = strings.ReplaceAll(sa, `"`+from+`"`, `"`+to+`"`)
		}
		if sa != string(jb) {
			p.t.Errorf("%s: entry %d differs:\n CLI    %.600s\n server %.600s", job, i, sa, jb)
		}
	}
}

func withoutTimestamps(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if k != "timestamp" {
			out[k] = v
		}
	}
	return out
}

// sameModelRequests compares what each front end asked the model's API since the
// last job, and returns the models asked.
func (p *parity) sameModelRequests(job string, cliFrom, srvFrom int) []string {
	p.t.Helper()
	a, b := p.cliAPI.Requests()[cliFrom:], p.srvAPI.Requests()[srvFrom:]
	if len(a) != len(b) {
		p.t.Fatalf("%s: the CLI asked the model %d times, the server %d", job, len(a), len(b))
	}
	var models []string
	for i := range a {
		if a[i].Path != b[i].Path || !reflect.DeepEqual(a[i].Body, b[i].Body) {
			p.t.Errorf("%s: request %d differs:\n CLI    %s %v\n server %s %v", job, i, a[i].Path, a[i].Body, b[i].Path, b[i].Body)
		}
		body, _ := a[i].Body.(map[string]any)
		m, _ := body["model"].(string)
		models = append(models, m)
	}
	return models
}

func (p *parity) requests() (int, int) { return len(p.cliAPI.Requests()), len(p.srvAPI.Requests()) }

// mustCLI runs the CLI with --json and fails on a non-zero exit or an answer that is
// not one of the command's documented shapes (rpc.CLIAnswers).
func (p *parity) mustCLI(args ...string) string {
	p.t.Helper()
	code, out, errOut := p.runCLI(append(args, "--json")...)
	if code != 0 {
		p.t.Fatalf("pi-lsp %v: exit %d: %s", args, code, errOut)
	}
	p.documented(args[0], out)
	return out
}

// documented checks that out is one of the --json shapes docs/protocol.md gives cmd.
func (p *parity) documented(cmd, out string) {
	p.t.Helper()
	var types []reflect.Type
	for _, a := range rpc.CLIAnswers() {
		if strings.Fields(a.Command)[0] == cmd {
			types = append(types, a.Type)
		}
	}
	if len(types) == 0 {
		p.t.Fatalf("no documented --json answer of %s", cmd)
	}
	if err := shape.Match(json.RawMessage(out), types...); err != nil {
		p.t.Errorf("pi-lsp %s --json answered %.300s: %v", cmd, out, err)
	}
}

func (p *parity) mustCall(method string, params map[string]any) json.RawMessage {
	p.t.Helper()
	res, err := p.call(method, params)
	if err != nil {
		p.t.Fatalf("%s: %v", method, err)
	}
	return res
}

func TestFrontEndsDecideEachJobAlike(t *testing.T) {
	p := newParity(t)

	// compact at a leaf other than Pi's: the model of the path compacted (the side
	// branch's other-model), in both.
	c0, s0 := p.requests()
	p.mustCLI("compact", "FILE", "--leaf", sideLeaf, "--instructions", "parity")
	p.mustCall("pi/compact", map[string]any{"leafId": sideLeaf, "instructions": "parity"})
	if models := p.sameModelRequests("compact --leaf", c0, s0); len(models) == 0 || slices.ContainsFunc(models, func(m string) bool { return m != "other-model" }) {
		t.Errorf("compact at %s asked %v, want other-model (the model of the path compacted)", sideLeaf, models)
	}
	p.sameWritten("compact --leaf", 1)

	// navigate back to the main branch with a branch summary: the model of the path
	// left (other-model again, the compaction's branch).
	c0, s0 = p.requests()
	p.mustCLI("navigate", "FILE", mainLeaf, "--summarize", "--label", "back")
	p.mustCall("pi/navigate", map[string]any{"targetId": mainLeaf, "summarize": true, "label": "back"})
	if models := p.sameModelRequests("navigate --summarize", c0, s0); len(models) != 1 || models[0] != "other-model" {
		t.Errorf("navigate --summarize asked %v, want other-model once", models)
	}
	p.sameWritten("navigate --summarize", 2)

	p.mustCLI("label", "FILE", "b60d4c89", "parity label")
	p.mustCall("pi/label", map[string]any{"entryId": "b60d4c89", "label": "parity label"})
	p.sameWritten("label", 1)

	p.mustCLI("edit-context", "FILE", "cf45f48f", "--replace", "shorter")
	p.mustCall("pi/editContext", map[string]any{"entryId": "cf45f48f", "action": "replace", "text": "shorter"})
	p.sameWritten("edit-context", 1)

	// The same undo answers the same compaction, position and side branch (entries
	// described alike) in both.
	var cliUndo, srvUndo struct {
		CompactionID string          `json:"compactionId"`
		Position     *string         `json:"position"`
		SideBranch   json.RawMessage `json:"sideBranch"`
	}
	if err := json.Unmarshal([]byte(p.mustCLI("undo-compaction", "FILE")), &cliUndo); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(p.mustCall("pi/undoCompaction", map[string]any{}), &srvUndo); err != nil {
		t.Fatal(err)
	}
	side := string(cliUndo.SideBranch) // the entries each front end wrote have ids of their own
	for from, to := range p.ids {
		side = strings.ReplaceAll(side, from, to)
	}
	cliUndo.SideBranch = json.RawMessage(side)
	if cliUndo.CompactionID == "" || side == "[]" || !reflect.DeepEqual(cliUndo, srvUndo) {
		t.Errorf("undo-compaction answered %+v (side branch %s), pi/undoCompaction %+v (side branch %s)",
			cliUndo, cliUndo.SideBranch, srvUndo, srvUndo.SideBranch)
	}
	p.sameWritten("undo-compaction", -1)

	p.mustCLI("clear-tool-output", "FILE", "--keep-recent-tokens", "1", "--min-tokens", "1")
	p.mustCall("pi/clearToolOutput", map[string]any{"keepRecentTokens": 1, "minTokens": 1})
	p.sameWritten("clear-tool-output", -1)

	// A live pi with pi-lsp's bridge holds both copies: every write is routed to it or
	// refused alike.
	pi := startParityPi(t, []string{p.cli, p.srv})
	pi.leaf = "23456789"
	t.Run("live pi", func(t *testing.T) {
		p.t = t
		type job struct {
			name    string
			cli     []string
			method  string
			params  map[string]any
			refused string // "": done by pi; else what both refusals say
		}
		for _, j := range []job{
			{name: "compact", cli: []string{"compact", "FILE", "--instructions", "live"}, method: "pi/compact", params: map[string]any{"instructions": "live"}},
			{name: "compact at pi's leaf", cli: []string{"compact", "FILE", "--leaf", "23456789"}, method: "pi/compact", params: map[string]any{"leafId": "23456789"}},
			{name: "compact elsewhere", cli: []string{"compact", "FILE", "--leaf", "b60d4c89"}, method: "pi/compact", params: map[string]any{"leafId": "b60d4c89"}, refused: "it works at its own leaf 23456789, not b60d4c89"},
			{name: "navigate", cli: []string{"navigate", "FILE", "b60d4c89", "--summarize"}, method: "pi/navigate", params: map[string]any{"targetId": "b60d4c89", "summarize": true}},
			{name: "label", cli: []string{"label", "FILE", "b60d4c89", "live"}, method: "pi/label", params: map[string]any{"entryId": "b60d4c89", "label": "live"}},
			{name: "undo-compaction", cli: []string{"undo-compaction", "FILE"}, method: "pi/undoCompaction", params: map[string]any{}, refused: "its pi-lsp bridge cannot do this"},
			{name: "edit-context", cli: []string{"edit-context", "FILE", "cf45f48f", "--omit"}, method: "pi/editContext", params: map[string]any{"entryId": "cf45f48f", "action": "omit"}, refused: "its pi-lsp bridge cannot do this"},
			{name: "clear-tool-output", cli: []string{"clear-tool-output", "FILE"}, method: "pi/clearToolOutput", params: map[string]any{}, refused: "its pi-lsp bridge cannot do this"},
		} {
			mark := pi.mark()
			code, out, errOut := p.runCLI(append(j.cli, "--json")...)
			if code == 0 {
				p.documented(j.cli[0], out)
			}
			cliAsked := pi.since(mark)
			mark = pi.mark()
			res, err := p.call(j.method, j.params)
			srvAsked := pi.since(mark)
			if j.refused != "" {
				ce, ok := err.(*lsptest.CallError)
				if code != 1 || !strings.Contains(errOut, j.refused) || !ok || !strings.Contains(ce.Message, j.refused) {
					t.Errorf("%s: CLI exit %d %q, server %v; want both refused with %q", j.name, code, errOut, err, j.refused)
				}
			} else if code != 0 || err != nil || !strings.Contains(string(res), `"via":"pi"`) {
				t.Errorf("%s: CLI exit %d %s %s, server %s %v; want both done by pi", j.name, code, out, errOut, res, err)
			}
			if !reflect.DeepEqual(cliAsked, srvAsked) {
				t.Errorf("%s: pi was asked %v by the CLI, %v by the server", j.name, cliAsked, srvAsked)
			}
			if j.refused == "" && len(cliAsked) == 0 {
				t.Errorf("%s: pi was asked nothing", j.name)
			}
		}
		p.sameWritten("the live pi's jobs", 0)
	})
}

// parityPi is a live pi with pi-lsp's bridge that holds the given sessions: it answers
// hello and status (its leaf), does every compact, navigate and label it is asked
// (without writing: the real pi's writes are the live-pi tests' business), and records
// each request but hello and status, without its id.
type parityPi struct {
	mu    sync.Mutex
	asked []map[string]any
	leaf  string
}

func (pi *parityPi) mark() int {
	pi.mu.Lock()
	defer pi.mu.Unlock()
	return len(pi.asked)
}

func (pi *parityPi) since(mark int) []map[string]any {
	pi.mu.Lock()
	defer pi.mu.Unlock()
	return append([]map[string]any(nil), pi.asked[mark:]...)
}

func startParityPi(t *testing.T, sessions []string) *parityPi {
	t.Helper()
	pi := &parityPi{}
	dir := bridge.DefaultDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	sockDir, err := os.MkdirTemp("", "plpar")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "pi.sock")
	isolate.ServeSocket(t, sock, func(nc net.Conn) { linepeer.Serve(nc, pi.answer) })
	for i, s := range sessions {
		b, _ := json.Marshal(bridge.Registration{Protocol: bridge.Protocol, PID: os.Getpid(), SessionFile: s, Socket: sock, Token: "tok", PiVersion: "1.6.0"})
		isolate.WriteFile(t, filepath.Join(dir, "parity-"+string(rune('a'+i))+".json"), string(b), 0o600)
	}
	return pi
}

// answer answers one request of the bridge as a running pi would.
func (pi *parityPi) answer(req map[string]any, send func(any)) bool {
	id := req["id"]
	ok := func(result any) { send(map[string]any{"type": "response", "id": id, "ok": true, "result": result}) }
	pi.mu.Lock()
	leaf := pi.leaf
	pi.mu.Unlock()
	switch req["type"] {
	case "hello":
		ok(map[string]any{"protocol": bridge.Protocol, "pid": os.Getpid(), "idle": true})
		return true
	case "status":
		ok(map[string]any{"protocol": bridge.Protocol, "pid": os.Getpid(), "idle": true, "running": nil, "leafId": leaf})
		return true
	}
	delete(req, "id")
	pi.mu.Lock()
	pi.asked = append(pi.asked, req)
	pi.mu.Unlock()
	switch req["type"] {
	case "compact":
		send(map[string]any{"type": "event", "id": id, "event": map[string]any{"type": "compaction_start", "reason": "manual"}})
		result := map[string]any{"summary": "pi's summary", "firstKeptEntryId": "b60d4c89", "tokensBefore": 1234}
		send(map[string]any{"type": "event", "id": id, "event": map[string]any{"type": "compaction_end", "reason": "manual", "aborted": false, "willRetry": false, "result": result}})
		ok(map[string]any{"result": result, "entry": map[string]any{"type": "compaction", "id": "c0mpac7e", "parentId": leaf, "timestamp": "2026-12-01T10:00:03.000Z",
			"summary": "pi's summary", "firstKeptEntryId": "b60d4c89", "tokensBefore": 1234}, "leafId": "c0mpac7e"})
	case "navigate":
		ok(map[string]any{"cancelled": false, "leafId": req["targetId"], "oldLeafId": leaf, "summaryEntry": nil})
	case "label":
		ok(map[string]any{"entryId": req["entryId"], "label": req["label"], "leafId": leaf})
	default:
		send(map[string]any{"type": "response", "id": id, "ok": false, "error": map[string]any{"code": "unknownType", "message": "unknown"}})
	}
	return true
}
