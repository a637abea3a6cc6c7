package rpc

import (
	"context"
	"time"
)

// watchParent ends the server when the client's process, named by initialize's
// processId, is gone: LSP asks a server to exit when its parent process is not alive,
// and a client that crashes can leave its end of the pipe open in a grandchild (a shell
// it spawned, a plugin's job), so the end of the input alone does not always come. A
// processId that names no live process at initialize (a client in another PID namespace,
// or one that reports a made-up id) is not watched: exiting at once would only cut off
// a client that is there.
func (s *Server) watchParent(ctx context.Context, pid int, interval time.Duration) {
	if pid <= 0 || !processAlive(pid) {
		s.log.Info("client process not watched", "pid", pid)
		return
	}
	every(ctx, interval, func() bool {
		if processAlive(pid) {
			return true
		}
		s.log.Warn("client process is gone; exiting", "pid", pid)
		s.exitOnce.Do(func() { close(s.exited) })
		return false
	})
}
