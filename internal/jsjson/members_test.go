package jsjson

import (
	"strings"
	"testing"
)

func TestEachMemberSeesMembersBeforeABreak(t *testing.T) {
	var keys []string
	ok := EachMember([]byte(`{"id":"7", "a":{"x":[1,"]}"]}, "b" : null , "c":`), func(k string, v []byte) bool {
		keys = append(keys, k+"="+string(v))
		return true
	})
	if ok || strings.Join(keys, " ") != `id="7" a={"x":[1,"]}"]} b=null` {
		t.Fatalf("ok %v, members %q", ok, keys)
	}
	deep := `{"id":1,"p":` + strings.Repeat("[", 1<<20) + strings.Repeat("]", 1<<20) + `}`
	n := 0
	if !EachMember([]byte(deep), func(string, []byte) bool { n++; return true }) || n != 2 {
		t.Fatalf("deep body: %d members", n)
	}
	if EachMember([]byte(`[1]`), func(string, []byte) bool { return true }) {
		t.Fatal("an array is not an object")
	}
	stopped := 0
	EachMember([]byte(`{"a":1,"b":2}`), func(string, []byte) bool { stopped++; return false })
	if stopped != 1 {
		t.Fatal("fn's false did not stop the walk")
	}
}
