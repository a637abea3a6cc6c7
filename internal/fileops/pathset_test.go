package fileops

import (
	"fmt"
	"testing"
)

// A pathSet holds each path once, in the order first added, through growth and
// reservations, and finds exactly what it holds.
func TestPathSetKeepsEachPathOnce(t *testing.T) {
	var s pathSet
	s.reserve(3)
	for round := range 3 {
		for i := range 5000 {
			s.addString(fmt.Sprintf("src/f%d.go", (i*7+round)%3000))
		}
		if round == 1 {
			s.reserve(10000)
		}
	}
	if s.Len() != 3000 {
		t.Fatalf("Len = %d, want 3000", s.Len())
	}
	seen := map[string]bool{}
	for _, p := range s.paths {
		if seen[p.path] {
			t.Fatalf("%s is held twice", p.path)
		}
		seen[p.path] = true
	}
	if s.paths[0].path != "src/f0.go" || s.paths[1].path != "src/f7.go" {
		t.Fatalf("first paths %q, %q: not in the order added", s.paths[0].path, s.paths[1].path)
	}
	for i := range 3000 {
		p := fmt.Sprintf("src/f%d.go", i)
		if !s.has(p, hashPath(p)) {
			t.Fatalf("%s is missing", p)
		}
	}
	if s.has("src/f3000.go", hashPath("src/f3000.go")) {
		t.Fatal("a path never added is found")
	}
	var empty pathSet
	if empty.has("x", hashPath("x")) || empty.Len() != 0 {
		t.Fatal("an empty set holds something")
	}
}
