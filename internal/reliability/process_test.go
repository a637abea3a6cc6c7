package reliability

// The built binary as editors run it (pi-lsp serve, LSP on stdio): it opens no network
// listener (its only sockets are outgoing connections to the configured summarizer),
// and the API key never appears in its logs, answers, notifications or in any file,
// even when the provider echoes it back in an error.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/benchgen"
	"github.com/pi-lsp/pi-lsp/internal/oracle"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/fakemodel"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// buildBinary builds cmd/pi-lsp once per test binary.
func buildBinary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "pi-lsp-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "pi-lsp")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := isolate.GroupCmd(ctx, "go", "build", "-o", binPath, "./cmd/pi-lsp")
		cmd.Dir = oracle.RepoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// socketReport classifies the sockets a process holds.
type socketReport struct {
	Listening   []string // tcp/udp/unix sockets accepting connections or bound for datagrams
	Outgoing    []string // connected tcp sockets: "remote:port state"
	Other       []string // sockets found in no table (netlink and the like)
	StdioKinds  [3]string
	SocketCount int
}

func procSockets(t testing.TB, pid int) socketReport {
	t.Helper()
	var r socketReport
	base := fmt.Sprintf("/proc/%d", pid)
	fds, err := os.ReadDir(base + "/fd")
	if err != nil {
		t.Fatalf("read fds: %v", err)
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join(base, "fd", fd.Name()))
		if err != nil {
			continue
		}
		if n, err := strconv.Atoi(fd.Name()); err == nil && n < 3 {
			r.StdioKinds[n] = strings.SplitN(target, ":", 2)[0]
		}
		if strings.HasPrefix(target, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]")] = true
		}
	}
	r.SocketCount = len(inodes)
	found := map[string]bool{}
	for _, proto := range []string{"tcp", "tcp6", "udp", "udp6"} {
		data, err := os.ReadFile(filepath.Join(base, "net", proto))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || !inodes[f[9]] {
				continue
			}
			found[f[9]] = true
			switch {
			case strings.HasPrefix(proto, "udp"):
				r.Listening = append(r.Listening, proto+" "+f[1])
			case f[3] == "0A":
				r.Listening = append(r.Listening, proto+" LISTEN "+f[1])
			default:
				r.Outgoing = append(r.Outgoing, proto+" "+hexAddr(f[2])+" state "+f[3])
			}
		}
	}
	if data, err := os.ReadFile(filepath.Join(base, "net", "unix")); err == nil {
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 7 || !inodes[f[6]] {
				continue
			}
			found[f[6]] = true
			if flags, err := strconv.ParseUint(f[3], 16, 32); err == nil && flags&0x10000 != 0 {
				r.Listening = append(r.Listening, "unix LISTEN "+strings.Join(f[7:], " "))
			}
		}
	}
	for ino := range inodes {
		if !found[ino] {
			r.Other = append(r.Other, ino)
		}
	}
	return r
}

// hexAddr renders /proc/net/tcp's "0100007F:1F90" as "127.0.0.1:8080" (IPv4) or leaves
// IPv6 as is with the decimal port.
func hexAddr(s string) string {
	host, port, ok := strings.Cut(s, ":")
	if !ok {
		return s
	}
	p, _ := strconv.ParseUint(port, 16, 16)
	if len(host) == 8 {
		b, _ := hex.DecodeString(host)
		return fmt.Sprintf("%d.%d.%d.%d:%d", b[3], b[2], b[1], b[0], p)
	}
	return fmt.Sprintf("[%s]:%d", host, p)
}

func TestBinaryNoListenerNoSecretLeaks(t *testing.T) { binaryScenario(t, false) }

// TestProviderEchoedKeyIsRedacted: a provider (or proxy) that echoes the key in its
// error message must not make pi-lsp repeat it in answers and notifications.
func TestProviderEchoedKeyIsRedacted(t *testing.T) {
	binaryScenario(t, true)
}

// binaryScenario runs the binary through compactions and a navigation with the OpenAI
// summarizer, inspects its sockets, and searches every output and file for the key.
// With echo, the provider's first answer is a 401 that echoes the Authorization header.
func binaryScenario(t *testing.T, echo bool) {
	bin := buildBinary(t)
	agentDir, workspace, path := generatedSession(t, benchgen.Options{Entries: 400, Seed: 3, BranchEvery: 4})
	root := filepath.Dir(agentDir)

	var kb [16]byte
	_, _ = rand.Read(kb[:])
	key := "sk-pilsp-SECRET-" + hex.EncodeToString(kb[:])
	// A hostile provider (echo): its first answer echoes the Authorization header in the
	// error message (some proxies do). Otherwise a plain 401. Then a 500, then normal
	// answers.
	echoing := func(w http.ResponseWriter, r *http.Request) {
		body, _ := json.Marshal(map[string]any{"error": map[string]any{
			"message": "Incorrect API key provided: " + r.Header.Get("Authorization") + " (key " + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") + ")",
			"type":    "invalid_request_error", "code": "invalid_api_key"}})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write(body)
	}
	first := fakemodel.Status(http.StatusUnauthorized, `{"error":{"message":"Incorrect API key provided: sk-pil*****************abcd","type":"invalid_request_error","code":"invalid_api_key"}}`)
	if echo {
		first = echoing
	}
	llm := fakemodel.New(t, first, fakemodel.ServerError())
	llm.SetFallback(fakemodel.Say("## Goal\nSummary from the fake model."))
	llmURL, _ := url.Parse(llm.URL)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wire lsptest.SyncBuffer
	settings := map[string]any{"summarizer": "openai", "baseUrl": llm.URL, "model": "fake-summarizer", "apiKeyEnv": "PI_LSP_REL_KEY"}
	c := startServer(t, serverConfig{AgentDir: agentDir, Workspace: workspace, InitOptions: settings, KeepNotes: true,
		Binary: bin, Args: []string{"--log-level", "debug"}, ExtraEnv: []string{"PI_LSP_REL_KEY=" + key}, Wire: &wire})

	var answers []string
	record := func(method string, params any) (json.RawMessage, error) {
		res, err := c.call(ctx, method, params)
		answers = append(answers, fmt.Sprintf("%s → %s %v", method, res, err))
		return res, err
	}
	// 1: the provider refuses the key with a 401; 2: a 500 then success (retried).
	if _, err := record("pi/compact", map[string]any{"session": path}); err == nil {
		t.Error("the compaction with a refused key succeeded")
	}
	if _, err := record("pi/compact", map[string]any{"session": path}); err != nil {
		t.Errorf("compaction: %v", err)
	}
	ix := sessiontest.Index(t, path)
	target := branchTarget(t, ix)
	if _, err := record("pi/navigate", map[string]any{"session": path, "targetId": target, "summarize": true}); err != nil {
		t.Errorf("navigate: %v", err)
	}
	// A client that (wrongly) sends a key in its settings.
	c.notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"piLsp": map[string]any{
		"summarizer": map[string]any{"kind": "openai", "baseUrl": llm.URL, "model": "fake-summarizer", "apiKeyEnv": "PI_LSP_REL_KEY", "apiKey": key}}}})
	c.notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"apiKey": key, "summarizer": "openai"}})
	if _, err := record("pi/context", map[string]any{"session": path}); err != nil {
		t.Errorf("context: %v", err)
	}
	time.Sleep(300 * time.Millisecond) // notifications after the jobs

	// Sockets of the running server: no listener; connections only to the summarizer.
	rep := procSockets(t, c.Pid())
	if len(rep.Listening) > 0 {
		t.Errorf("the server listens: %v", rep.Listening)
	}
	for _, o := range rep.Outgoing {
		if !strings.Contains(o, ":"+llmURL.Port()+" ") {
			t.Errorf("a connection to something other than the summarizer (port %s): %s", llmURL.Port(), o)
		}
	}
	if len(rep.Other) > 0 {
		t.Errorf("sockets of unknown kind: %v", rep.Other)
	}
	for i, k := range rep.StdioKinds {
		if k != "pipe" {
			t.Errorf("fd %d is %q, want a pipe", i, k)
		}
	}
	used := 0
	for _, call := range llm.Calls() {
		if call.Header.Get("Authorization") == "Bearer "+key {
			used++
		}
	}
	if used == 0 {
		t.Fatal("the summarizer never received the key (the test would prove nothing)")
	}

	if _, err := c.call(ctx, "shutdown", nil); err != nil {
		t.Errorf("shutdown: %v", err)
	}
	c.notify("exit", nil)
	c.ExitCode(10 * time.Second)

	// The key (or any Authorization header) appears nowhere.
	needles := []string{key, strings.TrimPrefix(key, "sk-pilsp-"), "Bearer " + key[:12]}
	places := map[string]string{"stderr log": c.Logs(), "stdout (answers and notifications)": wire.String()}
	files := 0
	_ = filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			places[p] = string(b)
			files++
		}
		return nil
	})
	leaks := 0
	for where, text := range places {
		for _, n := range needles {
			if i := strings.Index(text, n); i >= 0 {
				leaks++
				lo := max(0, i-150)
				t.Errorf("the API key appears in %s: …%s…", where, text[lo:min(len(text), i+len(n)+20)])
				break
			}
		}
		if strings.Contains(text, "Authorization") {
			t.Errorf("an Authorization header appears in %s", where)
		}
	}
	t.Logf("RESULT process: sockets while serving: %d (listening %d, outgoing %v); stdio: %v; key used in %d requests; key found in %d of %d places (stderr %d bytes, stdout %d bytes, %d files)",
		rep.SocketCount, len(rep.Listening), rep.Outgoing, rep.StdioKinds, used, leaks, len(places), len(c.Logs()), len(wire.String()), files)
	if t.Failed() {
		for _, a := range answers {
			t.Log(a)
		}
		if !strings.Contains(c.Logs(), "serving") {
			t.Logf("stderr: %s", c.Logs())
		}
	}
}
