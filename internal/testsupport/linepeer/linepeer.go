// Package linepeer is the far end of a unix socket that speaks JSON lines, as a fake pi
// serves pi-lsp's bridge: each line read is one request object, each answer is written
// back as one line (isolate.ServeSocket makes the socket). It imports nothing of this
// module, so that the bridge's own tests can use it as well as the tests that fake a
// whole running pi.
package linepeer

import (
	"bufio"
	"encoding/json"
	"net"
)

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
