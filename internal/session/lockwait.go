package session

import (
	"errors"
	"fmt"
	"time"
)

// waitForLock takes the session's write lock with try, which fails with busy while
// another pi-lsp holds it: it tries again every 10 ms for up to 5 s, then answers
// ErrLocked. Each system's lockFile supplies its own try.
func waitForLock(try func() error, busy error) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := try()
		if err == nil {
			return nil
		}
		if !errors.Is(err, busy) {
			return fmt.Errorf("lock session: %w", err)
		}
		if time.Now().After(deadline) {
			return ErrLocked
		}
		time.Sleep(10 * time.Millisecond)
	}
}
