package isolate

import (
	"net"
	"testing"
)

// ServeSocket makes path a unix socket and serves every connection it accepts with
// serve, each in its own goroutine and closed when serve returns, until the test ends.
func ServeSocket(t testing.TB, path string, serve func(nc net.Conn)) {
	t.Helper()
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(c)
			}()
		}
	}()
}
