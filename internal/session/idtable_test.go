package session

import (
	"fmt"
	"math/rand"
	"testing"
)

// The id table finds what a map from id to the latest entry of that id finds, as it
// grows from empty and from a size given ahead.
func TestIDTableMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, presize := range []bool{false, true} {
		var entries []*Entry
		for i := 0; i < 5000; i++ {
			entries = append(entries, &Entry{ID: fmt.Sprint(rng.Intn(3000))})
			if i%97 == 0 {
				entries[i].ID = ""
			}
		}
		var tab idTable
		if presize {
			tab = newIDTable(len(entries))
		}
		want := map[string]*Entry{}
		for i, e := range entries {
			_, had := want[e.ID]
			if got := tab.put(i, entries); got != had {
				t.Fatalf("put %q: had %v, want %v", e.ID, got, had)
			}
			want[e.ID] = e
			if i%500 == 0 || i == len(entries)-1 {
				for id, w := range want {
					if g := tab.get(id, entries[:i+1]); g != w {
						t.Fatalf("get %q after %d puts: wrong entry", id, i+1)
					}
				}
				for k := 0; k < 50; k++ {
					id := fmt.Sprint(3000 + rng.Intn(1000))
					if tab.get(id, entries[:i+1]) != nil {
						t.Fatalf("get %q: found an id never put", id)
					}
				}
			}
		}
		if tab.n != len(want) {
			t.Fatalf("%d ids counted, want %d", tab.n, len(want))
		}
	}
	var empty idTable
	if empty.get("x", nil) != nil {
		t.Fatal("empty table finds an id")
	}
}
