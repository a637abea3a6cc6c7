package rpc_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/lsptest"
)

func frame(body string) []byte {
	return []byte(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body))
}

// rawError is the error answer of a raw frame, if it is one.
type rawError struct {
	ID    json.RawMessage `json:"id"`
	Error *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// TestMalformedFrames writes broken input between well-formed requests: each is
// answered with a JSON-RPC error (addressed to its id when one can be read), and the
// server keeps serving the next request.
func TestMalformedFrames(t *testing.T) {
	const maxFrame = 1 << 20
	e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"tree-nav"}, Options: rpc.Options{MaxFrameBytes: maxFrame}})
	deep := func(depth int) string {
		return `{"jsonrpc":"2.0","id":"deep","method":"pi/tree","params":{"session":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}}`
	}
	cases := []struct {
		name string
		raw  []byte
		code int64
		id   string // the id the error must carry ("null" when none can be read)
	}{
		{"truncated JSON body", frame(`{"jsonrpc":"2.0","id":5,"method":`), rpc.CodeParseError, "5"},
		{"truncated before the id", frame(`{"jsonrpc":"2.0","method":"pi/tree","id":`), rpc.CodeParseError, "null"},
		{"negative id", frame(`{"jsonrpc":"2.0","id":-3,"method":"pi/sessions"}`), rpc.CodeInvalidRequest, "-3"},
		{"not JSON at all", frame(`hello, server`), rpc.CodeParseError, "null"},
		{"method of the wrong type", frame(`{"jsonrpc":"2.0","id":"m7","method":42}`), rpc.CodeInvalidRequest, `"m7"`},
		{"neither request nor response", frame(`{"jsonrpc":"2.0","id":8}`), rpc.CodeInvalidRequest, "8"},
		{"id of the wrong type", frame(`{"jsonrpc":"2.0","id":{"a":1},"method":"pi/tree"}`), rpc.CodeInvalidRequest, "null"},
		{"batch", frame(`[{"jsonrpc":"2.0","id":9,"method":"pi/tree"}]`), rpc.CodeInvalidRequest, "null"},
		{"empty body", frame(``), rpc.CodeParseError, "null"},
		{"missing Content-Length", []byte("Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + `{"jsonrpc":"2.0","id":10,"method":"pi/tree"}`), rpc.CodeParseError, "null"},
		{"negative Content-Length", []byte("Content-Length: -5\r\n\r\n" + `{"jsonrpc":"2.0","id":11,"method":"pi/tree"}`), rpc.CodeParseError, "null"},
		{"Content-Length not a number", []byte("Content-Length: twelve\r\n\r\n" + `{"jsonrpc":"2.0","id":12,"method":"pi/tree"}`), rpc.CodeParseError, "null"},
		{"Content-Length beyond int64", []byte("Content-Length: 99999999999999999999999\r\n\r\n" + `{"jsonrpc":"2.0","id":13,"method":"pi/tree"}`), rpc.CodeParseError, "null"},
		{"Content-Length shorter than the body", []byte("Content-Length: 10\r\n\r\n" + `{"jsonrpc":"2.0","id":14,"method":"pi/tree"}`), rpc.CodeParseError, "null"},
		{"oversized frame", frame(`{"jsonrpc":"2.0","id":15,"method":"pi/tree","params":{"pad":"` + strings.Repeat("x", maxFrame) + `"}}`), rpc.CodeInvalidRequest, "null"},
		{"nesting beyond the decoder's limit", frame(deep(20000)), rpc.CodeParseError, `"deep"`},
		{"deep but decodable nesting", frame(deep(5000)), rpc.CodeInvalidParams, `"deep"`},
		{"params of the wrong type", frame(`{"jsonrpc":"2.0","id":16,"method":"pi/tree","params":{"session":5}}`), rpc.CodeInvalidParams, "16"},
		{"params not an object", frame(`{"jsonrpc":"2.0","id":17,"method":"pi/compact","params":[1,2]}`), rpc.CodeInvalidParams, "17"},
		{"params a string", frame(`{"jsonrpc":"2.0","id":18,"method":"pi/navigate","params":"abc"}`), rpc.CodeInvalidParams, "18"},
		{"boolean of the wrong type", frame(`{"jsonrpc":"2.0","id":19,"method":"pi/compact","params":{"force":"yes"}}`), rpc.CodeInvalidParams, "19"},
		{"command of the wrong type", frame(`{"jsonrpc":"2.0","id":20,"method":"workspace/executeCommand","params":{"command":5}}`), rpc.CodeInvalidParams, "20"},
		{"command argument not an object", frame(`{"jsonrpc":"2.0","id":21,"method":"workspace/executeCommand","params":{"command":"pi.tree","arguments":[7]}}`), rpc.CodeInvalidParams, "21"},
		{"targetId of the wrong type", frame(`{"jsonrpc":"2.0","id":"n22","method":"pi/navigate","params":{"targetId":5}}`), rpc.CodeInvalidParams, `"n22"`},
		{"stray bytes between frames", []byte("\r\n\r\ngarbage line\r\n\r\n"), rpc.CodeParseError, "null"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mark := e.RawMark()
			e.WriteRaw(c.raw)
			// The next well-formed request is still served...
			p := e.Start("pi/sessions", nil, true)
			if _, err := p.Wait(10 * time.Second); err != nil {
				t.Fatalf("request after the bad frame: %v", err)
			}
			// ...and the bad frame got its own error answer: one addressed to its id, or,
			// when it has none, an id-less answer written before the next answer (frame
			// errors are answered on the read loop, in order).
			sentinel := []byte(`"id":` + p.ID)
			var errs []rawError
			e.AwaitRaw(5*time.Second, mark, "the error answer", func(fs []json.RawMessage) bool {
				errs = errs[:0]
				for _, f := range fs {
					var re rawError
					if json.Unmarshal(f, &re) != nil {
						continue
					}
					if c.id == "null" && bytes.Contains(f, sentinel) {
						return true
					}
					if re.Error != nil && (c.id == "null" || string(re.ID) == c.id) {
						errs = append(errs, re)
						if c.id != "null" {
							return true
						}
					}
				}
				return false
			})
			if len(errs) == 0 {
				t.Fatalf("no error answer to the bad frame")
			}
			got := errs[0]
			if got.Error.Code != c.code || string(got.ID) != c.id {
				t.Errorf("answer = id %s code %d %q, want id %s code %d", got.ID, got.Error.Code, got.Error.Message, c.id, c.code)
			}
			if got.Error.Code == 0 {
				t.Errorf("error code 0 sent")
			}
		})
	}
}

// TestLowercaseHeader: header names are case-insensitive, and other headers are ignored.
func TestLowercaseHeader(t *testing.T) {
	e := lsptest.NewEnv(t, lsptest.Config{Corpus: []string{"tree-nav"}})
	body := `{"jsonrpc":"2.0","id":"lc","method":"pi/files"}`
	e.WriteRaw([]byte(fmt.Sprintf("content-type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length: %d\r\n\r\n%s", len(body), body)))
	e.Await(5*time.Second, lsptest.ResponseTo(`"lc"`))
	for _, m := range e.Messages() {
		if m.Kind == lsptest.KindResponse && m.ID == `"lc"` && m.Err != nil {
			t.Fatalf("lowercase header: %s", m)
		}
	}
}
