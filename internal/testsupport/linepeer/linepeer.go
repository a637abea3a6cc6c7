// Package linepeer is the far end of a unix socket that speaks JSON lines, as a fake pi
// serves pi-lsp's bridge: each line read is one request object, each answer is written
// back as one line. It imports nothing of this module, so that the bridge's own tests
// can use it as well as the tests that fake a whole running pi.
package linepeer

import (
	"bufio"
	"encoding/json"
	"net"
	"testing"
)

// Listen makes path a unix socket and serves every connection it accepts with serve, each
// in its own goroutine and closed when serve returns, until the test ends.
func Listen(t testing.TB, path string, serve func(nc net.Conn)) {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer nc.Close()
				serve(nc)
			}()
		}
	}()
}

// Serve reads nc's lines (up to 1 MiB each) as JSON objects, passing over a line that is
// not one, and hands each to handle with a send that writes a value back as one line. It
// returns when nc ends or handle returns false.
func Serve(nc net.Conn, handle func(req map[string]any, send func(any)) bool) {
	sc := bufio.NewScanner(nc)
	sc.Buffer(nil, 1<<20)
	send := func(v any) {
		b, _ := json.Marshal(v)
		_, _ = nc.Write(append(b, '\n'))
	}
	for sc.Scan() {
		var req map[string]any
		if json.Unmarshal(sc.Bytes(), &req) != nil {
			continue
		}
		if !handle(req, send) {
			return
		}
	}
}
