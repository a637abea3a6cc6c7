package jsonobj

import "testing"

type kv struct {
	k string
	v any
}

type obj []kv

func (o obj) MarshalJSON() ([]byte, error) {
	return Write(o, func(m kv) (string, any) { return m.k, m.v })
}

// Members keep their order (not encoding/json's sorted map keys), nested objects too,
// and <, > and & are written as they are, as JSON.stringify writes them.
func TestWriteKeepsOrderAndDoesNotEscapeHTML(t *testing.T) {
	got, err := Marshal(obj{{"z", 1}, {"a", "<b>&</b>"}, {"m", obj{{"y", []string{}}, {"b", nil}}}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"z":1,"a":"<b>&</b>","m":{"y":[],"b":null}}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
