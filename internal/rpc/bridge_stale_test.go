package rpc_test

import (
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/bridge"
	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
)

// A registry left behind by a pi that died, whose pid is now a live process of this
// user (a reused pid: here this test's own process) and whose socket nobody listens on,
// is stale: writes go on as if there were no bridge (here, directly: no running pi holds
// the file), the registry's files are removed, and pi/sessionChanged names no owner.
func TestStaleBridgeRegistryIsRemovedAndWritesGoOn(t *testing.T) {
	dir := filepath.Join(shortTempDir(t), "pi-lsp")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"full-main"}, Options: rpc.Options{BridgeDir: dir}})
	path := e.Sessions["full-main"]
	sock := filepath.Join(dir, "dead.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close() // the socket file stays, and refuses
	regFile := filepath.Join(dir, "dead.json")
	reg, _ := json.Marshal(bridge.Registration{Protocol: bridge.Protocol, PID: os.Getpid(), SessionFile: path, Socket: sock, Token: "t", PiVersion: "1.6.0"})
	if err := os.WriteFile(regFile, reg, 0o600); err != nil {
		t.Fatal(err)
	}

	f, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	root := session.NewIndex(f).Entries()[0].ID
	mark := e.Mark()
	raw, err := e.Command("pi.label", map[string]any{"session": path, "entryId": root, "label": "after-a-dead-pi"})
	if err != nil {
		t.Fatalf("pi.label with a stale registry: %v", err)
	}
	if strings.Contains(string(raw), `"via":"pi"`) {
		t.Fatalf("answered via a dead pi: %s", raw)
	}
	f2, _ := session.Load(path)
	if got := session.NewIndex(f2).Label(root); got != "after-a-dead-pi" {
		t.Fatalf("label not written: %q", got)
	}
	for _, p := range []string{regFile, sock} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("stale %s was not removed (%v)", p, err)
		}
	}
	e.Await(10*time.Second, lsptest.Since(mark, lsptest.NotificationMatching("pi/sessionChanged", "no owner", func(raw json.RawMessage) bool {
		var p struct {
			Session string          `json:"session"`
			Owner   json.RawMessage `json:"owner"`
		}
		return json.Unmarshal(raw, &p) == nil && p.Session == path && len(p.Owner) == 0
	})))
}
