package reliability

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/benchgen"
	"github.com/pi-lsp/pi-lsp/internal/oracle"
	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/corpus"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

func TestMain(m *testing.M) { os.Exit(oracle.Main(m)) }

// needLive skips (or, with PI_LSP_REQUIRE_ORACLE=1, fails) a test that needs node and
// the installed real Pi.
func needLive(t testing.TB, what string) { t.Helper(); oracle.NeedPiCLI(t, what) }

// liveOracle returns the live oracle or skips/fails as needLive does.
func liveOracle(t testing.TB) *oracle.Oracle {
	t.Helper()
	needLive(t, "loading in real Pi")
	return oracle.NeedLive(t)
}

// optionalOracle is the live oracle, or nil when real Pi is not available (a test then
// runs its own checks and leaves out the real-Pi ones); with PI_LSP_REQUIRE_ORACLE=1 a
// missing oracle fails the test.
func optionalOracle(t testing.TB) *oracle.Oracle {
	t.Helper()
	o := oracle.StartLive(t)
	if o == nil {
		t.Log("real Pi is not available: the real-Pi load checks are left out")
	}
	return o
}

// checkPiLoads loads path in real Pi (a copy) and checks that Pi sees exactly the
// entries, leaf and number of context messages that pi-lsp sees. It reports whether the
// check ran (o nil: no real Pi).
func checkPiLoads(t testing.TB, o *oracle.Oracle, path string) bool {
	t.Helper()
	if o == nil {
		return false
	}
	f, err := session.Load(path)
	if err != nil {
		t.Fatalf("pi-lsp cannot load %s: %v", path, err)
	}
	ix := session.NewIndex(f)
	got := o.PiLoad(t, path)
	if got.NewSession {
		t.Errorf("real Pi did not recognise the session header and started a new session")
	}
	if got.Rewritten {
		t.Errorf("real Pi rewrote the file on open")
	}
	mine := make([]string, len(f.Entries))
	for i, e := range f.Entries {
		mine[i] = e.ID
	}
	if !reflect.DeepEqual(got.IDs, mine) {
		t.Errorf("real Pi sees %d entries, pi-lsp %d (ids differ)", len(got.IDs), len(mine))
	}
	leaf := ""
	if got.LeafID != nil {
		leaf = *got.LeafID
	}
	if leaf != ix.LeafID() {
		t.Errorf("real Pi's leaf %q, pi-lsp's %q", leaf, ix.LeafID())
	}
	if n := len(ix.BuildContext("").Messages); n != len(got.Messages) {
		t.Errorf("real Pi's context has %d messages, pi-lsp's %d", len(got.Messages), n)
	}
	return true
}

// world is an isolated test's dirs (isolate.Setup): below its temp root, Pi's agent dir
// and a workspace.
type world struct{ root, agentDir, workspace string }

// newWorld isolates the test and creates its workspace.
func newWorld(t testing.TB) world {
	t.Helper()
	root := isolate.Setup(t).Root
	w := world{root: root, agentDir: filepath.Join(root, "agent"), workspace: filepath.Join(root, "work", "project")}
	if err := os.MkdirAll(w.workspace, 0o755); err != nil {
		t.Fatal(err)
	}
	return w
}

// sessionsFolder is Pi's sessions folder of the workspace.
func (w world) sessionsFolder() string { return session.SessionDir(w.agentDir, w.workspace) }

// install copies the session file src into the workspace's sessions folder (under the
// name Pi gives it, its cwd the workspace) and returns the copy's path.
func (w world) install(t testing.TB, src string) string {
	t.Helper()
	return corpus.InstallWithCwd(t, src, w.sessionsFolder(), w.workspace)
}

// generatedSession isolates the test and installs a session generated with opts as the
// one session of a workspace there; it returns the agent dir, the workspace and the
// session's path.
func generatedSession(t testing.TB, opts benchgen.Options) (agentDir, workspace, path string) {
	t.Helper()
	w := newWorld(t)
	genPath := filepath.Join(w.root, "gen.jsonl")
	sessiontest.Generate(t, genPath, opts)
	path = w.install(t, genPath)
	os.Remove(genPath)
	return w.agentDir, w.workspace, path
}

// ---- processes ----

// selfCmd re-executes this test binary running only the named helper test.
func selfCmd(ctx context.Context, helper string, env ...string) *exec.Cmd {
	cmd := isolate.GroupCmd(ctx, os.Args[0], "-test.run=^"+helper+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

// ---- the LSP client: the shared harness (lsptest) ----

type note struct {
	Method string
	Params json.RawMessage
}

// wireErr is a JSON-RPC error answer.
type wireErr struct {
	Code    int64
	Message string
	Kind    string
}

func (e *wireErr) Error() string { return fmt.Sprintf("%d %s (%s)", e.Code, e.Message, e.Kind) }

// client is a server under lsptest with the calls these tests make.
type client struct {
	*lsptest.Env
	t testing.TB
}

// serverConfig configures startServer.
type serverConfig struct {
	AgentDir    string
	Workspace   string
	InitOptions map[string]any
	KeepNotes   bool // record notifications (and every other message)
	Options     rpc.Options
	// Binary, Args, ExtraEnv and Wire spawn a built pi-lsp instead (see lsptest.Config).
	Binary   string
	Args     []string
	ExtraEnv []string
	Wire     io.Writer
}

// startServer starts the server (in process on a net.Pipe, or cfg.Binary) for the
// test's own isolated dirs, initializes it for the workspace and returns the client.
// The server is closed at cleanup.
func startServer(t testing.TB, cfg serverConfig) *client {
	t.Helper()
	opt := cfg.Options
	e := lsptest.NewEnv(t, lsptest.Config{AgentDir: cfg.AgentDir, Workspace: cfg.Workspace, InitOptions: cfg.InitOptions,
		NoProgress: true, Quiet: !cfg.KeepNotes, Options: opt, Binary: cfg.Binary, Args: cfg.Args, ExtraEnv: cfg.ExtraEnv,
		Wire: cfg.Wire, CloseTimeout: 10 * time.Second})
	return &client{Env: e, t: t}
}

func (c *client) notify(method string, params any) { c.Notify(method, params) }

// answerTimeout bounds the wait for an answer, also after a cancellation (a cancelled
// compaction is answered only once the session's previous compaction let go of it).
const answerTimeout = 3 * time.Minute

// call sends a request and waits for its answer. When ctx ends first, it sends
// $/cancelRequest and still waits for the (cancelled) answer: every request must be
// answered. A JSON-RPC error answer is returned as *wireErr.
func (c *client) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	res, err := c.CallContext(ctx, method, params, answerTimeout)
	var ce *lsptest.CallError
	if errors.As(err, &ce) {
		return nil, &wireErr{Code: ce.Code, Message: ce.Message, Kind: ce.Kind()}
	}
	return res, err
}

// mustCall fails the test on any error.
func (c *client) mustCall(method string, params any) json.RawMessage {
	c.t.Helper()
	res, err := c.call(context.Background(), method, params)
	if err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	return res
}

// mustCallFor is mustCall with the answer decoded into an R (a result type of
// internal/rpc).
func mustCallFor[R any](c *client, method string, params any) R {
	c.t.Helper()
	return lsptest.Decode[R](c.t, c.mustCall(method, params))
}

// kindOf is the data.kind of an error answer ("" for other errors).
func kindOf(err error) string {
	var we *wireErr
	if errors.As(err, &we) {
		return we.Kind
	}
	return ""
}

func (c *client) notifications(method string) []note {
	var out []note
	for _, m := range c.Notifications(method) {
		out = append(out, note{m.Method, m.Params})
	}
	return out
}

// ---- files ----

// drain discards a reader (for child stderr we do not look at).
func drain(r io.Reader) { _, _ = io.Copy(io.Discard, r) }
