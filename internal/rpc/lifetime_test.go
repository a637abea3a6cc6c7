package rpc

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"testing"
	"time"
)

// nopCloser closes nothing.
type nopCloser struct{}

func (nopCloser) Close() error { return nil }

// frameOf is a Content-Length frame of body.
func frameOf(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }

// The end of the client's input closes the connection while a handler is still running
// (one that never returns: a discovery blocked on a file), so that the server returns
// and never outlives its client; the requests read before the end are handled in order
// when their handlers return.
func TestConnClosesAtEndOfInputWhileAHandlerBlocks(t *testing.T) {
	pr, pw := io.Pipe()
	st := newStream(pr, io.Discard, nopCloser{}, 0)
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	var handled atomic.Int32
	started := make(chan struct{}, 1)
	c := newConn(context.Background(), st, func(_ context.Context, req *request) {
		handled.Add(1)
		if req.Method == "blocks" {
			started <- struct{}{}
			<-block
		}
	})
	if _, err := io.WriteString(pw, frameOf(`{"jsonrpc":"2.0","id":1,"method":"blocks"}`)); err != nil {
		t.Fatal(err)
	}
	<-started
	// A request behind the blocked one, then the end of the input.
	go func() {
		_, _ = io.WriteString(pw, frameOf(`{"jsonrpc":"2.0","method":"later"}`))
		pw.Close()
	}()
	select {
	case <-c.disconnected():
	case <-time.After(drainGrace + 3*time.Second):
		t.Fatal("the connection is still open after the client's input ended")
	}
	if n := handled.Load(); n != 1 {
		t.Errorf("%d requests handled, want the blocked one only", n)
	}
}

// Requests read before the end of the input are all handled before the connection
// closes when their handlers return (a client's shutdown and exit sent just before it
// closes its end keep their effect).
func TestConnHandlesQueuedRequestsBeforeClosing(t *testing.T) {
	pr, pw := io.Pipe()
	st := newStream(pr, io.Discard, nopCloser{}, 0)
	var order []string
	done := make(chan struct{})
	c := newConn(context.Background(), st, func(_ context.Context, req *request) {
		time.Sleep(20 * time.Millisecond)
		order = append(order, req.Method)
		if req.Method == "exit" {
			close(done)
		}
	})
	go func() {
		for _, m := range []string{"a", "b", "shutdown", "exit"} {
			_, _ = io.WriteString(pw, frameOf(`{"jsonrpc":"2.0","method":"`+m+`"}`))
		}
		pw.Close()
	}()
	<-c.disconnected()
	select {
	case <-done:
	default:
		t.Fatalf("the connection closed before exit was handled (handled %v)", order)
	}
	if fmt.Sprint(order) != "[a b shutdown exit]" {
		t.Errorf("handled %v", order)
	}
}
