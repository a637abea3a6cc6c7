package isolate

import (
	"net"
	"testing"
)

// ServeSocket makes path a unix socket that hands every connection to serve, each on a
// goroutine of its own, until the test ends: a fake peer (a running pi's bridge) that
// the code under test dials.
func ServeSocket(t testing.TB, path string, serve func(net.Conn)) {
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
			go serve(c)
		}
	}()
}
