package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// signalGrace is how long a command has, after SIGINT or SIGTERM cancelled its context,
// to return on its own (a job stops, its session untouched: session writes are single
// whole-line writes) before the process exits anyway: a command blocked in a read that
// does not heed its context (a FIFO given as --summary-file, a stalled disk) must not
// keep the terminal. A second signal exits at once.
const signalGrace = 500 * time.Millisecond

// signalExit is the exit status of a command ended by sig, as a shell reports it:
// 128 + the signal's number (130 for SIGINT, 143 for SIGTERM).
func signalExit(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 130
}

// withSignals is ctx cancelled at the first SIGINT or SIGTERM, and the function that
// gives the exit status for a command's: the signal's when one came. After the grace
// (or at a second signal) it exits the process itself with that status, through exit.
func withSignals(ctx context.Context, stderr io.Writer, exit func(int)) (context.Context, func(code int) int, func()) {
	ctx, cancel := context.WithCancel(ctx)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	got := make(chan os.Signal, 1)
	go func() {
		var sig os.Signal
		select {
		case sig = <-sigs:
		case <-ctx.Done():
			return
		}
		got <- sig
		cancel()
		select {
		case <-sigs:
		case <-time.After(signalGrace):
		}
		fmt.Fprintf(stderr, "pi-lsp: %v\n", sig)
		exit(signalExit(sig))
	}()
	status := func(code int) int {
		select {
		case sig := <-got:
			return signalExit(sig)
		default:
			return code
		}
	}
	stop := func() { signal.Stop(sigs); cancel() }
	return ctx, status, stop
}
