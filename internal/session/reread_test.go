package session

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/testsupport/testfile"
)

// A loaded message read again from its line (one pass, blocks taken in it) is the
// message DecodeMessage makes of the line's "message" member, on lines whose members
// repeat or hold what is not a block.
func TestLoadedMessageMatchesDecodeMessage(t *testing.T) {
	lines := []string{
		`{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"a \"quoted\" é"},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"x.go"}}],"usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3},"stopReason":"toolUse","timestamp":1}}`,
		`{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"old"}],"content":[{"type":"text","text":"new"},7,"s",{"type":"image","data":"x","mimeType":"image/png"}],"isError":false,"timestamp":2}}`,
		`{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"just text\nwith a newline","timestamp":3}}`,
		`{"type":"message","id":"a4","parentId":"a3","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":[]},"message":{"role":"user","content":[{"type":"text","text":"the later message"}],"timestamp":4}}`,
		`{"type":"message","id":"a5","parentId":"a4","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"first"}],"content":"then a string","timestamp":5}}`,
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	head := `{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`
	testfile.Write(t, path, head+"\n"+strings.Join(lines, "\n")+"\n")
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Entries) != len(lines) {
		t.Fatalf("%d entries, want %d", len(f.Entries), len(lines))
	}
	for _, e := range f.Entries {
		m, err := e.Message()
		if err != nil {
			t.Fatal(err)
		}
		if !m.lazy() {
			t.Fatalf("%s: the message of a loaded file is in memory", e.ID)
		}
		got := m.loaded()
		want, err := DecodeMessage(e.RawField("message"))
		if err != nil {
			t.Fatal(err)
		}
		gs, gok := got.StringContent()
		ws, wok := want.StringContent()
		if gs != ws || gok != wok || !reflect.DeepEqual(got.Blocks(), want.Blocks()) || got.Role != want.Role || EstimateTokens(got) != EstimateTokens(want) {
			t.Errorf("%s: read again %q %v %+v; DecodeMessage %q %v %+v", e.ID, gs, gok, got.Blocks(), ws, wok, want.Blocks())
		}
	}
}
