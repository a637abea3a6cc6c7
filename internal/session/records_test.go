package session_test

import (
	"testing"

	"github.com/pi-lsp/pi-lsp/internal/session"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/sessiontest"
	"github.com/pi-lsp/pi-lsp/internal/testsupport/testfile"
)

// The provider and model members are given back as written, parsed and loaded: plain
// strings, strings with escapes, other values, repeated members, and none.
func TestProviderAndModelJSONAsWritten(t *testing.T) {
	cases := []struct{ msg, provider, model string }{
		{`{"role":"assistant","provider":"openai","model":"gpt-5"}`, `"openai"`, `"gpt-5"`},
		{`{"role":"assistant","provider":"caf\u00e9","model":"a\"b"}`, `"caf\u00e9"`, `"a\"b"`},
		{`{"role":"assistant","provider":7,"model":null}`, `7`, `null`},
		{`{"role":"assistant","provider":7,"provider":"x","model":"y","model":{"id":1}}`, `"x"`, `{"id":1}`},
		{`{"role":"assistant","provider":""}`, `""`, ``},
		{`{"role":"user"}`, ``, ``},
	}
	for _, c := range cases {
		line := `{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":` + c.msg + `}`
		data := []byte(limitsHeader + "\n" + line + "\n")
		path := testfile.Temp(t, "s.jsonl", string(data))
		parsed, loaded := sessiontest.Parse(t, data), sessiontest.Load(t, path)
		for what, f := range map[string]*session.File{"parsed": parsed, "loaded": loaded} {
			m, err := f.Entries[0].Message()
			if err != nil {
				t.Fatal(err)
			}
			if got := string(m.ProviderJSON()); got != c.provider {
				t.Errorf("%s %s: provider %s, want %s", what, c.msg, got, c.provider)
			}
			if got := string(m.ModelJSON()); got != c.model {
				t.Errorf("%s %s: model %s, want %s", what, c.msg, got, c.model)
			}
		}
	}
}
