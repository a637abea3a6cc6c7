package rpc_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/bridge"
	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/isolate"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
)

// The version the binary was built with (rpc.Options.Version, main.Version) is the one
// initialize reports: the editors compare it with their own.
func TestInitializeReportsTheVersion(t *testing.T) {
	e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"tree-nav"}, Options: rpc.Options{Version: "9.8.7"}})
	var res struct {
		ServerInfo struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"serverInfo"`
	}
	if err := json.Unmarshal(e.Init, &res); err != nil {
		t.Fatal(err)
	}
	if res.ServerInfo.Name != "pi-lsp" || res.ServerInfo.Version != "9.8.7" {
		t.Errorf("serverInfo = %+v, want pi-lsp 9.8.7", res.ServerInfo)
	}
}

// A session whose header is newer than Pi 1.6.0's format reads as usual and refuses
// every write, forced or not, with a message that says it is read-only.
func TestNewerSessionFormatIsReadOnly(t *testing.T) {
	e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"tree-nav"}})
	path := e.Session("tree-nav")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	newer := strings.Replace(string(data), `"version":3,`, `"version":4,`, 1)
	if newer == string(data) {
		t.Fatal("the corpus header has no version 3")
	}
	if err := os.WriteFile(path, []byte(newer), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Command("pi.tree", map[string]any{"session": path}); err != nil {
		t.Fatalf("reading a newer session: %v", err)
	}
	for _, force := range []bool{false, true} {
		_, err := e.Command("pi.label", map[string]any{"session": path, "entryId": "a601e333", "label": "x", "force": force})
		ce := wantCode(t, err, rpc.CodeRequestFailed)
		if ce.Kind() != rpc.KindBadSession || !strings.Contains(ce.Message, "read-only") || !strings.Contains(ce.Message, "version 4") {
			t.Errorf("force %v: %s (%s), want a read-only refusal naming version 4", force, ce.Message, ce.Kind())
		}
	}
	if got, _ := os.ReadFile(path); string(got) != newer {
		t.Error("a refused write changed the file")
	}
}

// A live pi whose bridge speaks another protocol is refused with both protocols named,
// not treated as a pi without the bridge.
func TestBridgeOfAnotherProtocolIsRefused(t *testing.T) {
	dir := filepath.Join(shortTempDir(t), "pi-lsp")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"tree-nav"}, Options: rpc.Options{BridgeDir: dir}})
	path := e.Session("tree-nav")
	sock := filepath.Join(dir, "1-x.sock")
	isolate.HangUpSocket(t, sock)
	reg, _ := json.Marshal(bridge.Registration{Protocol: bridge.Protocol + 1, Version: "0.9.0", PID: os.Getpid(), SessionFile: path, Socket: sock, Token: "t"})
	if err := os.WriteFile(filepath.Join(dir, "1-x.json"), reg, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := e.Command("pi.label", map[string]any{"session": path, "entryId": "a601e333", "label": "x"})
	ce := wantCode(t, err, rpc.CodeRequestFailed)
	if ce.Kind() != rpc.KindBridgeFailed || !strings.Contains(ce.Message, "bridge protocol 2") || !strings.Contains(ce.Message, "speaks bridge protocol 1") || !strings.Contains(ce.Message, "0.9.0") {
		t.Errorf("%s (%s), want a refusal naming both protocols", ce.Message, ce.Kind())
	}
}
