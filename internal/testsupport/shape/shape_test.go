package shape_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/bridge"
	"github.com/pi-lsp/pi-lsp/internal/rpc"
	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/shape"
)

// TestMatchNotices keeps the shape check itself honest: an undocumented key, a missing
// member, a wrong nested member, a null or a value of another kind where the type has
// none, and the same in an entry a result carries each fail it.
func TestMatchNotices(t *testing.T) {
	pin := reflect.TypeFor[rpc.PinResult]()
	files := reflect.TypeFor[rpc.FilesResult]()
	compacted := reflect.TypeFor[rpc.Compacted]()
	entry := `{"type":"compaction","id":"c1","parentId":"p","timestamp":"t","summary":"s","firstKeptEntryId":"k","tokensBefore":1,"details":{"readFiles":[],"modifiedFiles":["a"]},"fromHook":false}`
	answer := func(e string) string {
		return `{"entry":` + e + `,"tokensBefore":1,"tokensAfter":1,"audit":{"fileBlocksIntact":true}}`
	}
	for _, bad := range []struct {
		raw string
		typ reflect.Type
	}{
		{`{"entryId":"a","pinned":true,"extra":1}`, pin},
		{`{"entryId":"a"}`, pin},
		{`{"entryId":null,"pinned":true}`, pin},
		{`{"entryId":"a","pinned":"yes"}`, pin},
		{`{"entryId":7,"pinned":true}`, pin},
		{`{"session":"s","readFiles":[],"modifiedFiles":[],"stale":[{"path":"p","readAt":"t","why":"x"}]}`, files},
		{`{"session":"s","readFiles":null,"modifiedFiles":[],"stale":[]}`, files},
		{answer(`{"type":"compaction","id":"c1"}`), compacted},
		{answer(entry[:len(entry)-1] + `,"note":"x"}`), compacted},
		{answer(`{"type":"compaction","id":"c1","parentId":"p","timestamp":"t","summary":"s","firstKeptEntryId":"k","tokensBefore":1,"details":{"readFiles":[],"modifiedFiles":[],"more":1}}`), compacted},
		{`{"protocol":1,"pid":1,"sessionFile":"s","piVersion":"1.6.0","idle":true,"running":null}`, reflect.TypeFor[bridge.Status]()},
	} {
		if shape.Match(json.RawMessage(bad.raw), bad.typ) == nil {
			t.Errorf("%s passed as %s", bad.raw, bad.typ)
		}
	}
	for _, good := range []struct {
		raw string
		typ reflect.Type
	}{
		{`{"entryId":"a","pinned":false}`, pin},
		{answer(entry), compacted},
		{entry, reflect.TypeFor[session.CompactionEntry]()},
		{`{"type":"context_edit","id":"e","parentId":null,"timestamp":"t","targetId":"x","replacement":null}`, reflect.TypeFor[session.ContextEditEntry]()},
		{`{"protocol":1,"pid":1,"sessionFile":"s","piVersion":"1.6.0","idle":true,"running":{"id":3,"type":"compact"},"leafId":null}`, reflect.TypeFor[bridge.Status]()},
	} {
		if err := shape.Match(json.RawMessage(good.raw), good.typ); err != nil {
			t.Errorf("%s: %v", good.raw, err)
		}
	}
}
