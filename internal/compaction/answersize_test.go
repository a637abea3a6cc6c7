package compaction_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/catalog"
	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
)

// endlessAnswer is a server that answers in api's streaming format with text deltas of
// 16 KiB until total bytes of text were sent or the client went away; sent counts the
// text bytes written.
func endlessAnswer(t *testing.T, api string, total int64, oneLine bool) (*httptest.Server, *atomic.Int64) {
	var sent atomic.Int64
	piece := strings.Repeat("summary text ", 16<<10/13)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		ev := func(name string, v any) bool {
			b, _ := json.Marshal(v)
			if name != "" {
				fmt.Fprintf(w, "event: %s\n", name)
			}
			_, err := fmt.Fprintf(w, "data: %s\n\n", b)
			fl.Flush()
			return err == nil && r.Context().Err() == nil
		}
		switch api {
		case catalog.APIAnthropicMessages:
			ev("message_start", map[string]any{"type": "message_start", "message": map[string]any{"model": "m", "usage": map[string]any{"input_tokens": 1}}})
			ev("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		case catalog.APIOpenAIResponses:
			ev("", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": map[string]any{"type": "message"}})
		}
		if oneLine {
			// One line that never ends: a reader that buffers lines must be cut too.
			fmt.Fprint(w, "data: ")
			for sent.Load() < total && r.Context().Err() == nil {
				if _, err := fmt.Fprint(w, piece); err != nil {
					return
				}
				sent.Add(int64(len(piece)))
			}
			return
		}
		for sent.Load() < total {
			var ok bool
			switch api {
			case catalog.APIAnthropicMessages:
				ok = ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": piece}})
			case catalog.APIOpenAIResponses:
				ok = ev("", map[string]any{"type": "response.output_text.delta", "output_index": 0, "delta": piece})
			case catalog.APIOpenAICompletions:
				ok = ev("", map[string]any{"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
					"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": piece}, "finish_reason": nil}}})
			case catalog.APIGoogle:
				ok = ev("", map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": piece}}}}}})
			}
			if !ok {
				return
			}
			sent.Add(int64(len(piece)))
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &sent
}

// An answer far longer than the request asked for is cut off over each API: the job
// fails at once (no retry) with an error saying so, the server stops well before the
// end of its answer, and the session is untouched. A stream that sends one endless line
// is cut the same way.
func TestModelAnswerSizeIsBounded(t *testing.T) {
	const total = 200 << 20
	for api, prefix := range apiPaths {
		for _, oneLine := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/oneLine=%v", api, oneLine), func(t *testing.T) {
				srv, sent := endlessAnswer(t, api, total, oneLine)
				s := modelSummarizer(t, api, srv.URL+prefix, &catalog.Credential{APIKey: "k"})
				path := corpusCopy(t, normalFile)
				before := sessiontest.Read(t, path)
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				_, err := runWith(ctx, path, s, settings(normalKeep, 16384), compaction.Options{})
				var se *compaction.SummaryError
				if !errors.As(err, &se) || se.Kind != compaction.KindOversized || se.Retries != 0 {
					t.Fatalf("error %v, want a %s failure without a retry", err, compaction.KindOversized)
				}
				if !strings.Contains(err.Error(), "nothing of it is used") {
					t.Errorf("error %q", err)
				}
				// The model asks for 4000 tokens: at 32 bytes a token the answer is cut
				// near 200 KB (a line near 2 MB), long before 200 MB.
				if n := sent.Load(); n > 16<<20 {
					t.Errorf("the server sent %d bytes of text before the stream was cut", n)
				}
				sameBytes(t, path, before)
			})
		}
	}
}
