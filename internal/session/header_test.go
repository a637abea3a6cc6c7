package session_test

import (
	"encoding/json"
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/jsjson"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

// A header's members are read as encoding/json decoded them into named fields, which
// is what pi-lsp has always read: keys match whatever their case (with Unicode's simple
// folding: ſ is s), the last duplicate wins, escaped keys and values are decoded, and a
// version that is not a number in range is 0.
func TestHeaderMembersAsEncodingJSON(t *testing.T) {
	headers := []string{
		`{"type":"session","version":3,"id":"abc","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p","parentSession":"/q.jsonl"}`,
		`{"type":"session","ID":"upper","Version":2,"CWD":"/c","TimeStamp":"t","PARENTSESSION":"ps"}`,
		`{"type":"session","id":"first","Id":"second","version":1,"version":"3"}`,
		`{"type":"session","\u0069d":"escaped key","c\u0077d":"\u00e9t\u00e9 \ud83d\ude00","parent\u017Fe\u017F\u017Fion":"long s"}`,
		`{"type":"session","id":"x","version":1e400}`,
		`{"type":"session","id":"x","version":-0.5e1,"timestamp":null,"cwd":7}`,
		`{"type":"session","id":"x","version":null,"parentSession":{"a":1}}`,
		`{"type":"session","id":"x","version":true}`,
		`{"type":"session","id":"x","version":2.0000000000000001}`,
		`{ "type" : "session" , "id" : "spaced" , "version" : 3 }`,
	}
	for _, h := range headers {
		f, err := session.Parse([]byte(h + "\n"))
		if err != nil {
			t.Fatalf("%s: %v", h, err)
		}
		var want struct {
			ID            json.RawMessage `json:"id"`
			Version       json.RawMessage `json:"version"`
			Timestamp     json.RawMessage `json:"timestamp"`
			Cwd           json.RawMessage `json:"cwd"`
			ParentSession json.RawMessage `json:"parentSession"`
		}
		if err := json.Unmarshal([]byte(h), &want); err != nil {
			t.Fatal(err)
		}
		var version float64
		_ = json.Unmarshal(want.Version, &version)
		str := func(r json.RawMessage) string { s, _ := jsjson.StringValue(r); return s }
		got := f.Header
		if got.ID != str(want.ID) || got.Version != version || got.Timestamp != str(want.Timestamp) ||
			got.Cwd != str(want.Cwd) || got.ParentSession != str(want.ParentSession) || string(got.Raw) != h {
			t.Errorf("%s: read %q v%v %q %q %q", h, got.ID, got.Version, got.Timestamp, got.Cwd, got.ParentSession)
		}
	}
	if _, err := session.Parse([]byte(`{"type":"session","id":5}` + "\n")); err == nil {
		t.Error("a header whose id is not a string was accepted")
	}
}
