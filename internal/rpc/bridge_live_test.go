package rpc_test

// The editor drives a live pi: a real `pi` 1.6.0 in RPC mode (standing in for the TUI;
// the extension code runs the same) with pi-lsp's Pi extension, on a genuine 1.6.0
// session, offline against the scripted fake server; pi-lsp is driven as an editor
// would. pi.compact, pi.navigate and pi.label are done by that pi through Pi's own API
// (its event stream shows the compaction, the entries are in its memory), the editor
// sees the same progress and compaction notifications as for a session pi-lsp writes,
// and the answers say via: "pi". The bridge's security and faults are tested on the
// same process: only a connection with the registry's token is served, malformed and
// unknown requests are refused, a busy pi refuses, a cancel aborts Pi's compaction,
// and a pi killed mid-compaction leaves a file real Pi opens.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/bridge"
	"github.com/pi-lsp/pi-lsp/internal/oracle"
	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/shape"
)

type livePiEnv struct {
	e       *lsptest.Env
	pi      *livePi
	fake    *fakeOpenAI
	path    string
	dir     string // bridge dir
	reg     *bridge.Registration
	ctx     context.Context
	root    string
	runtime string
}

// newLivePiEnv is a live pi with pi-lsp's extension on a copy of the genuine 1.6.0
// session corpus, registered with the editor's server.
func newLivePiEnv(t *testing.T, corpus string) *livePiEnv {
	t.Helper()
	l := newLiveSetup(t, corpus, 4*time.Minute)
	l.startPi(t, livePiConfig{})
	return l
}

// newLiveSetup prepares everything a live pi needs but pi itself: the editor's server
// with its bridge dir, the session, the fake model and pi's private dirs, all bounded by
// timeout.
func newLiveSetup(t *testing.T, corpus string, timeout time.Duration) *livePiEnv {
	t.Helper()
	needLivePi(t)
	// The runtime dir is open to everyone (a real $XDG_RUNTIME_DIR is 0700): only the
	// extension's own directory and socket modes keep other users out.
	runtime := shortTempDir(t)
	if err := os.Chmod(runtime, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(runtime, "pi-lsp")
	e := lsptest.NewEnv(t, lsptest.Config{Options: rpc.Options{BridgeDir: dir}})
	root := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	path := installGenuine16(t, corpus, e.SessionDir, e.Workspace)
	fake := startFakeOpenAI(t, ctx, root)
	return &livePiEnv{e: e, fake: fake, path: path, dir: dir, ctx: ctx, root: root, runtime: runtime}
}

// startPi starts pi on the setup's session (cfg adds NoBridge, Installed, KeepRecent)
// and, unless it runs without the bridge, waits for its registration.
func (l *livePiEnv) startPi(t *testing.T, cfg livePiConfig) {
	t.Helper()
	cfg.Root, cfg.RuntimeDir, cfg.Workspace, cfg.Session, cfg.Port = l.root, l.runtime, l.e.Workspace, l.path, l.fake.Port
	l.pi = startLivePi(t, l.ctx, cfg)
	if !cfg.NoBridge {
		l.reg = l.pi.WaitBridge(l.dir, l.path)
	}
}

func (l *livePiEnv) exec(command string, args map[string]any, token string) *lsptest.Pending {
	params := map[string]any{"command": command, "arguments": []any{args}}
	if token != "" {
		params["workDoneToken"] = token
	}
	return l.e.Start("workspace/executeCommand", params, false)
}

// answerViaPi waits up to 90 s for the answer to p and, on the messages since mark, the
// expectations; it fails the test on an error answer, checks that the answer says pi
// did the work, and decodes it into an R.
func answerViaPi[R any](t *testing.T, l *livePiEnv, p *lsptest.Pending, mark int, exps ...lsptest.Expectation) R {
	t.Helper()
	since := []lsptest.Expectation{lsptest.Since(mark, lsptest.ResponseTo(p.ID))}
	for _, x := range exps {
		since = append(since, lsptest.Since(mark, x))
	}
	l.e.Await(90*time.Second, since...)
	raw, cerr := p.Wait(time.Second)
	if cerr != nil {
		t.Fatalf("%s: %v", p.Method, cerr)
	}
	if via := lsptest.Decode[struct{ Via string }](t, raw).Via; via != "pi" {
		t.Errorf("answer %s does not say pi did it", raw)
	}
	return lsptest.Decode[R](t, raw)
}

// slowCompaction starts pi.compact with a summary the fake server streams slowly, and
// returns once pi's compaction is under way and its summary request streaming, with the
// marks of the editor's and pi's messages from before it.
func (l *livePiEnv) slowCompaction(t *testing.T, instructions, token string) (p *lsptest.Pending, mark, piMark int) {
	t.Helper()
	mark, piMark = l.e.Mark(), l.pi.Mark()
	p = l.exec("pi.compact", map[string]any{"session": l.path, "instructions": instructions}, token)
	l.pi.WaitEvent(piMark, 30*time.Second, "compaction_start", func(ev map[string]any) bool { return ev["type"] == "compaction_start" })
	time.Sleep(500 * time.Millisecond) // the summary request is streaming
	return p, mark, piMark
}

// keepsFile snapshots the file at path; the check it returns fails the test when the
// file has changed since, saying which step changed it.
func keepsFile(t *testing.T, path string) func(what string) {
	t.Helper()
	before := sessiontest.Read(t, path)
	return func(what string) {
		t.Helper()
		if after := sessiontest.Read(t, path); string(after) != string(before) {
			t.Error(what + " changed the file")
		}
	}
}

// rawConn is a connection to the bridge socket that speaks lines.
type rawConn struct {
	t  *testing.T
	nc net.Conn
	r  *bufio.Reader
}

func dialRaw(t *testing.T, socket string) *rawConn {
	t.Helper()
	nc, err := net.DialTimeout("unix", socket, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawConn{t: t, nc: nc, r: bufio.NewReader(nc)}
}

func (c *rawConn) roundTrip(line string) map[string]any {
	c.t.Helper()
	_ = c.nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.nc.Write([]byte(line + "\n")); err != nil {
		c.t.Fatalf("write %q: %v", line, err)
	}
	l, err := c.r.ReadString('\n')
	if err != nil {
		c.t.Fatalf("read after %q: %v", line, err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(l), &m); err != nil {
		c.t.Fatalf("answer %q: %v", l, err)
	}
	// Every answer has the shape internal/bridge documents (editors/pi/protocol.ts):
	// an OKResponse whose result is the request type's, or an ErrorResponse.
	var req struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal([]byte(line), &req)
	if m["ok"] == true {
		if err := shape.Match(json.RawMessage(l), reflect.TypeFor[bridge.OKResponse]()); err != nil {
			c.t.Errorf("answer to %s is not an OKResponse: %v", line, err)
		}
		for _, meth := range bridge.Methods() {
			if meth.Type == req.Type && meth.Result != nil {
				res, _ := json.Marshal(m["result"])
				if err := shape.Match(res, meth.Result); err != nil {
					c.t.Errorf("the result of %s is not a %s: %v", line, meth.Result, err)
				}
			}
		}
	} else if err := shape.Match(json.RawMessage(l), reflect.TypeFor[bridge.ErrorResponse]()); err != nil {
		c.t.Errorf("answer to %s is not an ErrorResponse: %v", line, err)
	}
	return m
}

func errCode(m map[string]any) string {
	if e, ok := m["error"].(map[string]any); ok {
		s, _ := e["code"].(string)
		return s
	}
	return ""
}

func TestLivePiBridge(t *testing.T) {
	l := newLivePiEnv(t, "full-main")
	e, pi, path := l.e, l.pi, l.path

	t.Run("registry", func(t *testing.T) {
		if l.reg.PID != pi.PID {
			t.Errorf("registry pid %d, pi is %d", l.reg.PID, pi.PID)
		}
		if l.reg.PiVersion != "1.6.0" || l.reg.Protocol != bridge.Protocol {
			t.Errorf("registry says pi %q protocol %d", l.reg.PiVersion, l.reg.Protocol)
		}
		// The editor learns that the session is live (its status bar says so) without a
		// change of the file.
		e.Await(15*time.Second, lsptest.NotificationMatching("pi/sessionChanged", "owner with the bridge", func(raw json.RawMessage) bool {
			var p struct {
				Session string `json:"session"`
				Owner   *struct {
					PID    int  `json:"pid"`
					Bridge bool `json:"bridge"`
				} `json:"owner"`
			}
			return json.Unmarshal(raw, &p) == nil && p.Session == path && p.Owner != nil && p.Owner.Bridge && p.Owner.PID == pi.PID
		}))
		for p, want := range map[string]os.FileMode{l.dir: 0o700, l.reg.Socket: 0o600, l.reg.File: 0o600} {
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if got := st.Mode().Perm(); got != want {
				t.Errorf("%s has mode %o, want %o (nothing but this user may connect)", p, got, want)
			}
		}
	})

	t.Run("another user", func(t *testing.T) {
		// A process of another user cannot even reach the socket (the directory is 0700).
		if os.Getuid() != 0 {
			t.Skip("needs root to run a process as another user (the modes are asserted above)")
		}
		bin := filepath.Join(shortTempDir(t), "client")
		data, err := os.ReadFile(os.Args[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, data, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Dir(bin), 0o755); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(l.ctx, 30*time.Second)
		defer cancel()
		cmd := isolate.GroupCmd(ctx, bin, "-test.run=^TestHelperForeignClient$")
		cmd.Env = []string{"PI_LSP_FOREIGN_SOCKET=" + l.reg.Socket, "PI_LSP_FOREIGN_TOKEN=" + l.reg.Token}
		cmd.Dir = "/"
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: 65534, Gid: 65534}
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "FOREIGN refused") {
			t.Fatalf("a process of uid 65534: %v\n%s", err, out)
		}
		t.Logf("%s", strings.TrimSpace(strings.Split(string(out), "\n")[0]))
	})

	t.Run("refusals", func(t *testing.T) {
		// Without the registry's token nothing is served, and the connection is closed.
		c := dialRaw(t, l.reg.Socket)
		if m := c.roundTrip(`{"id":"1","type":"compact"}`); errCode(m) != "unauthorized" {
			t.Errorf("compact before hello: %v", m)
		}
		if _, err := c.r.ReadString('\n'); err == nil {
			t.Error("the connection stayed open after an unauthorized request")
		}
		c = dialRaw(t, l.reg.Socket)
		if m := c.roundTrip(`{"id":"1","type":"hello","protocol":1,"token":"not-the-token"}`); errCode(m) != "unauthorized" {
			t.Errorf("hello with a wrong token: %v", m)
		}
		c = dialRaw(t, l.reg.Socket)
		if m := c.roundTrip(`{"id":"1","type":"hello","protocol":99,"token":"` + l.reg.Token + `"}`); errCode(m) != "protocol" {
			t.Errorf("hello with protocol 99: %v", m)
		} else if msg := fmt.Sprint(m["error"].(map[string]any)["message"]); !strings.Contains(msg, "speaks bridge protocol 1") || !strings.Contains(msg, "protocol 99") || !strings.Contains(msg, "update one of them") {
			t.Errorf("the protocol refusal does not name both protocols: %q", msg)
		}
		c = dialRaw(t, l.reg.Socket)
		if m := c.roundTrip(`{"id":"1","type":"hello","protocol":1,"token":"` + l.reg.Token + `"}`); m["ok"] != true {
			t.Fatalf("hello: %v", m)
		}
		for line, want := range map[string]string{
			`not json at all`:              "malformed",
			`[1,2]`:                        "malformed",
			`{"id":"2"}`:                   "malformed",
			`{"id":"3","type":"rm -rf"}`:   "unknownType",
			`{"id":"4","type":"navigate"}`: "invalidParams",
			`{"id":"5","type":"navigate","targetId":7}`:      "invalidParams",
			`{"id":"6","type":"label","entryId":"nope"}`:     "notFound",
			`{"id":"7","type":"contextEdit","targetId":"x"}`: "unsupported",
			// Ids outside the plain set are refused at the door: a blank in one used to
			// leave a navigation pending forever, and the bridge busy until pi restarted.
			`{"id":"7 ","type":"navigate","targetId":"9962224e"}`:                    "malformed",
			`{"id":"a b","type":"label","entryId":"9962224e","label":"x"}`:           "malformed",
			`{"id":{"x":1},"type":"ping"}`:                                           "malformed",
			`{"id":true,"type":"ping"}`:                                              "malformed",
			`{"id":"","type":"ping"}`:                                                "malformed",
			`{"id":"` + strings.Repeat("x", 65) + `","type":"ping"}`:                 "malformed",
			`{"id":"9\n","type":"navigate","targetId":"9962224e","summarize":false}`: "malformed",
		} {
			if m := c.roundTrip(line); errCode(m) != want {
				t.Errorf("%s: %v, want error %s", line, m, want)
			}
		}
		if m := c.roundTrip(`{"id":"st.1","type":"status"}`); m["ok"] != true || m["result"].(map[string]any)["running"] != nil {
			t.Errorf("status after the refusals: %v (nothing may be left running)", m)
		}
		if m := c.roundTrip(`{"id":42,"type":"ping"}`); m["ok"] != true || m["id"] != float64(42) {
			t.Errorf("a numeric id: %v", m)
		}
		if m := c.roundTrip(`{"id":"8","type":"ping"}`); m["ok"] != true {
			t.Errorf("ping after the refusals: %v (pi must keep serving)", m)
		}
		if st := pi.Send(map[string]any{"type": "get_state"}, 10*time.Second); st["success"] != true {
			t.Error("pi is unwell after the refusals")
		}
	})

	var compactionID string
	t.Run("compact", func(t *testing.T) {
		mark, piMark := e.Mark(), pi.Mark()
		const instructions = "keep the notes.txt history"
		p := l.exec("pi.compact", map[string]any{"session": path, "instructions": instructions}, "compact-live")
		res := answerViaPi[lsptest.CompactAnswer](t, l, p, mark,
			lsptest.CompletedProgress(compactTitle),
			lsptest.ProgressBeginAtZero(compactTitle),
			lsptest.NotificationMatching("pi/compactionStart", "manual via pi", lsptest.Has(map[string]any{"session": path, "reason": "manual", "via": "pi"})),
			lsptest.NotificationMatching("pi/compactionEnd", "manual success via pi", lsptest.Has(map[string]any{"session": path, "reason": "manual", "aborted": false, "via": "pi"})),
		)
		entry := lsptest.Fields(res.Entry)
		if entry["type"] != "compaction" || entry["systemMessage"] == nil {
			t.Fatalf("answer's entry %v is not Pi's compaction with its systemMessage", entry)
		}
		// Pi's own entry has the documented shape of a compaction entry.
		if err := shape.Match(json.RawMessage(res.Entry), reflect.TypeFor[session.CompactionEntry]()); err != nil {
			t.Errorf("pi's compaction entry %s does not have the documented shape: %v", lsptest.Trunc(json.RawMessage(res.Entry)), err)
		}
		compactionID, _ = entry["id"].(string)
		if !strings.Contains(entry["summary"].(string), instructions) {
			t.Errorf("the summary does not carry the instructions: %q", entry["summary"])
		}
		// The notifications of a compaction pi made have their documented shapes too.
		for _, m := range e.Messages() {
			if m.Kind == lsptest.KindNotification && (m.Method == "pi/compactionStart" || m.Method == "pi/compactionEnd") {
				want := map[string]reflect.Type{"pi/compactionStart": reflect.TypeFor[rpc.CompactionStart](), "pi/compactionEnd": reflect.TypeFor[rpc.CompactionEnd]()}[m.Method]
				if err := shape.Match(m.Params, want); err != nil {
					t.Errorf("%s %s does not have its documented shape: %v", m.Method, lsptest.Trunc(m.Params), err)
				}
			}
		}
		// Pi's own event stream: compaction_start and compaction_end, reason manual.
		pi.WaitEvent(piMark, 5*time.Second, "compaction_start manual", func(ev map[string]any) bool {
			return ev["type"] == "compaction_start" && ev["reason"] == "manual"
		})
		end := pi.WaitEvent(piMark, 5*time.Second, "compaction_end manual", func(ev map[string]any) bool {
			return ev["type"] == "compaction_end" && ev["reason"] == "manual"
		})
		if end["aborted"] == true || end["errorMessage"] != nil {
			t.Errorf("pi's compaction_end: %v", end)
		}
		// The summary request at the fake server carried the instructions.
		found := false
		for _, r := range l.fake.Requests(t) {
			if r["kind"] == "summarizer" && r["focus"] == instructions {
				found = true
			}
		}
		if !found {
			t.Errorf("no summary request carried the instructions: %v", l.fake.Requests(t))
		}
		// The entry is in pi's memory and is the file's last entry: pi wrote it.
		mem, leaf := pi.Entries()
		if leaf != compactionID {
			t.Errorf("pi's leaf is %s, want its compaction %s", leaf, compactionID)
		}
		file := fileEntries(t, path)
		if last := file[len(file)-1]; last["id"] != compactionID {
			t.Errorf("the file's last entry is %v, want the compaction", last["id"])
		}
		if len(mem) != len(file) {
			t.Errorf("pi holds %d entries, the file %d", len(mem), len(file))
		}
	})

	t.Run("label", func(t *testing.T) {
		raw, err := e.Command("pi.label", map[string]any{"session": path, "entryId": "9962224e", "label": "from-editor"})
		if err != nil {
			t.Fatalf("pi.label: %v", err)
		}
		if res := lsptest.Decode[rpc.LabelResult](t, raw); res.Via != "pi" || res.Label != "from-editor" {
			t.Errorf("pi.label answered %s", raw)
		}
		mem, leaf := pi.Entries()
		last := mem[len(mem)-1]
		if last["type"] != "label" || last["targetId"] != "9962224e" || last["label"] != "from-editor" || last["id"] != leaf {
			t.Errorf("pi's last entry %v is not the label", last)
		}
	})

	t.Run("navigate", func(t *testing.T) {
		mark := e.Mark()
		const target = "9c870cd6" // "All done: notes.txt now says beta."
		p := l.exec("pi.navigate", map[string]any{"session": path, "targetId": target, "summarize": true, "instructions": "the abandoned chat", "label": "left"}, "nav-live")
		res := answerViaPi[lsptest.NavigateAnswer](t, l, p, mark, lsptest.CompletedProgress("Summarizing branch"))
		sum := lsptest.Fields(res.SummaryEntry)
		if sum["type"] != "branch_summary" || sum["parentId"] != target {
			t.Fatalf("navigate answered %+v", res)
		}
		if err := shape.Match(json.RawMessage(res.SummaryEntry), reflect.TypeFor[session.BranchSummaryEntry]()); err != nil {
			t.Errorf("pi's branch_summary entry %s does not have the documented shape: %v", lsptest.Trunc(json.RawMessage(res.SummaryEntry)), err)
		}
		if !strings.Contains(sum["summary"].(string), "the abandoned chat") {
			t.Errorf("the branch summary does not carry the instructions: %q", sum["summary"])
		}
		// Pi labels the summary entry: its leaf is the label on it.
		mem, leaf := pi.Entries()
		if leaf != lsptest.Str(res.LeafID) {
			t.Fatalf("pi's leaf is %s, the answer says %v", leaf, lsptest.Str(res.LeafID))
		}
		last := mem[len(mem)-1]
		if last["id"] != leaf || last["type"] != "label" || last["targetId"] != sum["id"] || last["label"] != "left" {
			t.Errorf("pi's leaf entry %v is not the label on the branch summary", last)
		}
		// pi's next prompt continues from the target.
		pi.Prompt("SCRIPT:chat after the navigation")
		mem, _ = pi.Entries()
		var user map[string]any
		for _, en := range mem {
			if m, ok := en["message"].(map[string]any); ok && m["role"] == "user" {
				if c, _ := json.Marshal(m["content"]); strings.Contains(string(c), "after the navigation") {
					user = en
				}
			}
		}
		// Its first entry (the prompt, or a system message Pi records before it) hangs
		// on the leaf navigation left.
		byID := map[string]map[string]any{}
		for _, en := range mem {
			byID[en["id"].(string)] = en
		}
		if user == nil {
			t.Fatal("pi holds no entry of the prompt after the navigation")
		}
		chain, reached := []string{}, false
		for cur := byID[strOf(user["parentId"])]; cur != nil && len(chain) < 4; cur = byID[strOf(cur["parentId"])] {
			if cur["id"] == leaf {
				reached = true
				break
			}
			m, _ := cur["message"].(map[string]any)
			chain = append(chain, strOf(cur["type"])+"/"+strOf(m["role"]))
			if m["role"] != "system" {
				break
			}
		}
		if !reached {
			t.Fatalf("the next prompt %v does not continue from the target's summary (leaf %s): %v", user, leaf, chain)
		}
		t.Logf("the prompt after the navigation: %v → leaf %s", chain, leaf)
	})

	t.Run("file is pi's", func(t *testing.T) {
		// Every entry in the file is one the live pi holds (none pi-lsp wrote behind its
		// back), in the same order; the only branches are the navigation's.
		mem, _ := pi.Entries()
		file := fileEntries(t, path)
		if len(mem) != len(file) {
			t.Fatalf("pi holds %d entries, the file %d", len(mem), len(file))
		}
		for i := range file {
			if file[i]["id"] != mem[i]["id"] {
				t.Fatalf("entry %d: file %v, pi %v", i, file[i]["id"], mem[i]["id"])
			}
		}
		if compactionID == "" {
			t.Skip("compact failed")
		}
	})

	t.Run("unsupported writes stay refused", func(t *testing.T) {
		unchanged := keepsFile(t, path)
		_, err := e.Command("pi.undoCompaction", map[string]any{"session": path})
		if ce, ok := err.(*lsptest.CallError); !ok || ce.Kind() != "ownedByPi" || !strings.Contains(ce.Message, "bridge cannot do this") {
			t.Errorf("pi.undoCompaction on a live pi: %v, want ownedByPi saying the bridge cannot do it", err)
		}
		// pi compacts at its own leaf only.
		_, err = e.Command("pi.compact", map[string]any{"session": path, "leafId": "9c870cd6"})
		if ce, ok := err.(*lsptest.CallError); !ok || ce.Code != rpc.CodeInvalidParams || !strings.Contains(ce.Message, "its own leaf") {
			t.Errorf("pi.compact at another leaf of a live pi: %v, want invalid params", err)
		}
		unchanged("the refusal")
	})

	t.Run("busy", func(t *testing.T) {
		// While pi's agent runs, a write is refused at once and nothing is written.
		mark := pi.Mark()
		pi.Send(map[string]any{"type": "prompt", "message": "SCRIPT:slow keep streaming"}, 30*time.Second)
		pi.WaitEvent(mark, 30*time.Second, "agent_start", func(ev map[string]any) bool { return ev["type"] == "agent_start" })
		_, err := e.Command("pi.compact", map[string]any{"session": path})
		if ce, ok := err.(*lsptest.CallError); !ok || ce.Kind() != "piBusy" {
			t.Errorf("pi.compact while pi's agent runs: %v, want kind piBusy", err)
		}
		pi.WaitEvent(mark, 60*time.Second, "agent_settled", func(ev map[string]any) bool { return ev["type"] == "agent_settled" })
		for _, ev := range pi.Events(mark) {
			if ev["type"] == "compaction_start" {
				t.Errorf("pi compacted while busy: %v", ev)
			}
		}
	})

	t.Run("cancel", func(t *testing.T) {
		// Cancelling the editor's request aborts Pi's compaction: nothing is written.
		unchanged := keepsFile(t, path)
		p, mark, piMark := l.slowCompaction(t, "SLOWSUMMARY please", "compact-cancel")
		p.Cancel()
		e.Await(30*time.Second, lsptest.Since(mark, lsptest.ResponseTo(p.ID)),
			lsptest.Since(mark, lsptest.NotificationMatching("pi/compactionEnd", "aborted via pi", lsptest.Has(map[string]any{"aborted": true, "via": "pi"}))))
		if _, cerr := p.Wait(time.Second); cerr == nil || cerr.Code != rpc.CodeRequestCancelled {
			t.Errorf("cancelled pi.compact answered %v, want RequestCancelled", cerr)
		}
		end := pi.WaitEvent(piMark, 10*time.Second, "compaction_end", func(ev map[string]any) bool { return ev["type"] == "compaction_end" })
		if end["aborted"] != true {
			t.Errorf("pi's compaction_end %v is not aborted", end)
		}
		unchanged("an aborted compaction")
	})

	t.Run("cancel navigation", func(t *testing.T) {
		// Cancelling a navigation with a summary aborts Pi's branch summary: pi stays
		// where it was and nothing is written.
		unchanged := keepsFile(t, path)
		_, leaf := pi.Entries()
		mark := e.Mark()
		p := l.exec("pi.navigate", map[string]any{"session": path, "targetId": "9962224e", "summarize": true, "instructions": "SLOWSUMMARY branch"}, "nav-cancel")
		// The summary request is streaming once Pi asked the fake server for it.
		deadline := time.Now().Add(30 * time.Second)
		for {
			n := 0
			for _, r := range l.fake.Requests(t) {
				if r["kind"] == "summarizer" && r["focus"] == "SLOWSUMMARY branch" {
					n++
				}
			}
			if n > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("pi never asked for the branch summary")
			}
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond)
		p.Cancel()
		e.Await(30*time.Second, lsptest.Since(mark, lsptest.ResponseTo(p.ID)))
		if _, cerr := p.Wait(time.Second); cerr == nil || cerr.Code != rpc.CodeRequestCancelled {
			t.Errorf("cancelled pi.navigate answered %v, want RequestCancelled", cerr)
		}
		if _, now := pi.Entries(); now != leaf {
			t.Errorf("pi's leaf moved from %s to %s although the navigation was cancelled", leaf, now)
		}
		unchanged("a cancelled navigation")
		st := pi.Send(map[string]any{"type": "get_state"}, 10*time.Second)["data"].(map[string]any)
		if st["isCompacting"] == true || st["isStreaming"] == true {
			t.Errorf("pi is still busy after the cancelled navigation: %v", st)
		}
	})

	t.Run("pi exits mid-compaction", func(t *testing.T) {
		unchanged := keepsFile(t, path)
		p, mark, _ := l.slowCompaction(t, "SLOWSUMMARY again", "compact-kill")
		pi.Kill()
		e.Await(30*time.Second, lsptest.Since(mark, lsptest.ResponseTo(p.ID)), lsptest.Since(mark, lsptest.CompletedProgress(compactTitle)),
			lsptest.Since(mark, lsptest.NotificationMatching("pi/compactionEnd", "failed via pi", lsptest.Has(map[string]any{"aborted": false, "via": "pi"}))))
		_, cerr := p.Wait(time.Second)
		if cerr == nil || cerr.Kind() != "piGone" || !strings.Contains(cerr.Message, "as pi left it") {
			t.Fatalf("pi.compact when pi died: %v, want kind piGone with a clear message", cerr)
		}
		unchanged("pi dying before its compaction was written")
		// The dead pi's registry is stale now: ignored (and cleaned), and the server is
		// back to its own behaviour for the session.
		if _, err := bridge.Find(context.Background(), path, l.dir); !errors.Is(err, bridge.ErrNoBridge) {
			t.Errorf("after pi died, Find: %v, want ErrNoBridge", err)
		}
		if left, _ := filepath.Glob(filepath.Join(l.dir, "*")); len(left) != 0 {
			t.Errorf("stale bridge files left: %v", left)
		}
		// Real Pi opens the file pi left.
		res := oracle.Inspect(t, path)
		if res.MessageCount == 0 {
			t.Errorf("real Pi opened %s with no messages: %+v", path, res)
		}
	})
}

// Without the bridge, the refusal says how to load it.
func TestLivePiWithoutBridge(t *testing.T) {
	l := newLiveSetup(t, "full-main", 2*time.Minute)
	e, path := l.e, l.path
	l.startPi(t, livePiConfig{NoBridge: true})
	unchanged := keepsFile(t, path)
	_, err := e.Command("pi.compact", map[string]any{"session": path})
	ce, ok := err.(*lsptest.CallError)
	if !ok || ce.Kind() != "ownedByPi" || !strings.Contains(ce.Message, "editors/pi/extension.ts") || !strings.Contains(ce.Message, "pi install") {
		t.Fatalf("pi.compact on a pi without the bridge: %v, want ownedByPi saying how to load the extension", err)
	}
	unchanged("the refusal")
}

func strOf(v any) string { s, _ := v.(string); return s }

// `pi install <repo>/editors/pi` once, and a plain pi (no -e) serves the bridge.
func TestLivePiInstalledPackage(t *testing.T) {
	l := newLiveSetup(t, "full-main", 2*time.Minute)
	e, path := l.e, l.path
	agentDir := filepath.Join(l.root, "pi-agent")
	writePiAgentDir(t, agentDir, l.fake.Port, 30)
	install := isolate.GroupCmd(l.ctx, oracle.Node(), oracle.PiCLI(), "install", filepath.Join(oracle.RepoRoot(), "editors", "pi"))
	install.Env = piEnv(l.root, l.runtime, agentDir)
	install.Dir = e.Workspace
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("pi install editors/pi: %v\n%s", err, out)
	}
	l.startPi(t, livePiConfig{Installed: true})
	pi, reg := l.pi, l.reg
	if reg.PID != pi.PID {
		t.Fatalf("registry pid %d, pi is %d", reg.PID, pi.PID)
	}
	raw, err := e.Command("pi.label", map[string]any{"session": path, "entryId": "9962224e", "label": "installed"})
	if err != nil {
		t.Fatalf("pi.label through the installed bridge: %v", err)
	}
	if res := lsptest.Decode[rpc.LabelResult](t, raw); res.Via != "pi" {
		t.Errorf("pi.label answered %s", raw)
	}
	// When pi exits, its registry file and socket go with it.
	_ = pi.CloseStdin()
	select {
	case <-pi.Exited():
	case <-time.After(30 * time.Second):
		t.Fatal("pi did not exit on the end of its input")
	}
	for _, p := range []string{reg.File, reg.Socket} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there after pi exited (%v)", p, err)
		}
	}
}

// TestHelperForeignClient is run by TestLivePiBridge/another_user as another user: it
// tries to connect to the bridge's socket (even knowing the token) and says whether it
// was refused.
func TestHelperForeignClient(t *testing.T) {
	sock := os.Getenv("PI_LSP_FOREIGN_SOCKET")
	if sock == "" {
		t.Skip("helper of TestLivePiBridge")
	}
	nc, err := net.DialTimeout("unix", sock, 5*time.Second)
	if err != nil {
		fmt.Printf("FOREIGN refused: %v\n", err)
		return
	}
	defer nc.Close()
	fmt.Fprintf(nc, `{"id":"1","type":"hello","protocol":1,"token":%q}`+"\n", os.Getenv("PI_LSP_FOREIGN_TOKEN"))
	line, _ := bufio.NewReader(nc).ReadString('\n')
	fmt.Printf("FOREIGN connected (uid %d): %s\n", os.Getuid(), line)
	t.Fail()
}

// A pi started without XDG_RUNTIME_DIR (tmux, ssh, some terminals) registers in
// <tmpdir>/pi-lsp-<uid>, and when another user created that first, in its own state dir;
// an editor's pi-lsp that has a runtime dir finds it in both, and pi's status line says
// where the bridge listens.
func TestLivePiBridgeOutsideTheRuntimeDir(t *testing.T) {
	needLivePi(t)
	for _, foreign := range []bool{false, true} {
		name := "temp dir"
		if foreign {
			name = "temp dir taken by another user"
		}
		t.Run(name, func(t *testing.T) {
			if foreign && os.Getuid() != 0 {
				t.Skip("needs root to make a directory of another user")
			}
			root := shortTempDir(t)
			e := lsptest.NewEnv(t, lsptest.Config{})
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			path := installGenuine16(t, "full-main", e.SessionDir, e.Workspace)
			fake := startFakeOpenAI(t, ctx, root)
			// The editor's server has a runtime dir (and the temp and state dirs pi uses).
			run := filepath.Join(root, "run")
			if err := os.Mkdir(run, 0o700); err != nil {
				t.Fatal(err)
			}
			t.Setenv("XDG_RUNTIME_DIR", run)
			t.Setenv("TMPDIR", filepath.Join(root, "tmp"))
			t.Setenv("XDG_STATE_HOME", filepath.Join(root, "xdg", "state"))
			want := filepath.Join(root, "tmp", "pi-lsp-"+strconv.Itoa(os.Getuid()))
			if foreign {
				if err := os.MkdirAll(want, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.Chown(want, 65534, 65534); err != nil {
					t.Fatal(err)
				}
				want = filepath.Join(root, "xdg", "state", "pi-lsp", "bridge")
			}
			pi := startLivePi(t, ctx, livePiConfig{Root: root, RuntimeDir: "", Workspace: e.Workspace, Session: path, Port: fake.Port})
			reg := pi.WaitBridge(want, path)
			pi.WaitEvent(0, 15*time.Second, "pi's status line names "+want, func(ev map[string]any) bool {
				return ev["type"] == "extension_ui_request" && ev["method"] == "setStatus" && ev["statusKey"] == "pi-lsp" &&
					strings.Contains(strOf(ev["statusText"]), "listening in "+want)
			})
			raw, err := e.Command("pi.label", map[string]any{"session": path, "entryId": "9962224e", "label": "found"})
			if err != nil {
				t.Fatalf("pi.label: %v", err)
			}
			if r := lsptest.Decode[struct {
				Via string `json:"via"`
				PID int    `json:"pid"`
			}](t, raw); r.Via != "pi" || r.PID != reg.PID {
				t.Fatalf("pi.label answered %s, want it done by pi %d", raw, reg.PID)
			}
		})
	}
}

// cliBinary builds pi-lsp into the test's temp dir.
func cliBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "pi-lsp")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/pi-lsp")
	cmd.Dir = oracle.RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// The terminal's writing commands on a session a live pi with the bridge holds go
// through that pi, as the editors' commands do: pi writes the entries (its leaf moves),
// and what pi cannot do as asked (its own settings, its own leaf) is refused.
func TestLivePiBridgeFromTheTerminal(t *testing.T) {
	l := newLivePiEnv(t, "full-main")
	pi, path := l.pi, l.path
	// The terminal's writing commands go through the same pi, as the editors' do.
	bin := cliBinary(t)
	env := append(os.Environ(), "XDG_RUNTIME_DIR="+l.runtime)
	cli := func(wantCode int, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(l.ctx, 90*time.Second)
		defer cancel()
		cmd := isolate.GroupCmd(ctx, bin, args...)
		cmd.Env = env
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		code := isolate.ExitCode(cmd.Run())
		if code != wantCode {
			t.Fatalf("pi-lsp %v: exit %d, want %d\n%s%s", args, code, wantCode, out.String(), errb.String())
		}
		if wantCode != 0 {
			return errb.String()
		}
		return out.String()
	}
	out := cli(0, "label", path, "9962224e", "from-the-terminal", "--json")
	if !strings.Contains(out, `"via":"pi"`) {
		t.Errorf("label answered %s, want it done by pi", out)
	}
	entries, _ := pi.Entries()
	if last := entries[len(entries)-1]; last["type"] != "label" || last["label"] != "from-the-terminal" {
		t.Errorf("pi's last entry %v is not the terminal's label", last)
	}
	out = cli(0, "compact", path, "--instructions", "from the terminal", "--json")
	var res struct {
		Via   string         `json:"via"`
		Entry map[string]any `json:"entry"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Via != "pi" || res.Entry["type"] != "compaction" {
		t.Fatalf("compact answered %s, want pi's compaction entry", out)
	}
	if _, leaf := pi.Entries(); leaf != res.Entry["id"] {
		t.Errorf("pi's leaf %s is not the compaction %v: pi did not write it", leaf, res.Entry["id"])
	}
	// What pi cannot do as asked is refused, and nothing is written.
	unchanged := keepsFile(t, path)
	if out := cli(1, "compact", path, "--keep-recent", "5"); !strings.Contains(out, "--keep-recent cannot be honoured") {
		t.Errorf("compact --keep-recent through pi: %s", out)
	}
	unchanged("a refused terminal compaction")
	out = cli(0, "navigate", path, "9962224e", "--json")
	if !strings.Contains(out, `"via":"pi"`) {
		t.Errorf("navigate answered %s, want it done by pi", out)
	}
	if _, leaf := pi.Entries(); leaf != "9962224e" {
		t.Errorf("pi's leaf is %s after the terminal's navigation to 9962224e", leaf)
	}
}
