package bridge

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A live pi whose bridge speaks another protocol is not skipped in silence: Find refuses
// with both protocols (and the extension's version) named, unless a registration of the
// same session speaks this one.
func TestFindRefusesAnotherProtocolNamingBoth(t *testing.T) {
	dir := privateTemp(t)
	session := filepath.Join(t.TempDir(), "s.jsonl")
	listen(t, filepath.Join(dir, "new.sock"))
	writeReg(t, dir, "new", Registration{Protocol: Protocol + 1, Version: "9.9.9", PID: os.Getpid(), SessionFile: session, Socket: filepath.Join(dir, "new.sock"), Token: "x"}, 0o600)
	_, err := Find(context.Background(), session, dir)
	var pe *ProtocolError
	if !errors.As(err, &pe) || pe.Theirs != Protocol+1 || pe.Version != "9.9.9" || pe.PID != os.Getpid() {
		t.Fatalf("Find = %v, want a *ProtocolError for protocol %d", err, Protocol+1)
	}
	for _, want := range []string{"bridge protocol 2", "pi-lsp's Pi extension 9.9.9", "speaks bridge protocol 1", "update one of them"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	if errors.Is(err, ErrNoBridge) {
		t.Errorf("a protocol mismatch is not the absence of a bridge: %v", err)
	}
	// Another session's registration with another protocol changes nothing.
	if _, err := Find(context.Background(), session+".other", dir); !errors.Is(err, ErrNoBridge) {
		t.Errorf("Find of another session: %v, want ErrNoBridge", err)
	}
	// A registration that speaks this protocol wins.
	listen(t, filepath.Join(dir, "ok.sock"))
	writeReg(t, dir, "ok", Registration{Protocol: Protocol, PID: os.Getpid(), SessionFile: session, Socket: filepath.Join(dir, "ok.sock"), Token: "y"}, 0o600)
	if r, err := Find(context.Background(), session, dir); err != nil || r.Protocol != Protocol {
		t.Errorf("Find = %+v, %v; want the protocol %d registration", r, err, Protocol)
	}
}
