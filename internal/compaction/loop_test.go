package compaction

import (
	"strings"
	"testing"
)

func TestLoopGuard(t *testing.T) {
	var g LoopGuard
	if ok, _ := g.Allow(); !ok {
		t.Fatal("a fresh guard refuses")
	}
	g.Turn()
	g.Compacted(3000, 8000)
	g.Turn()
	if ok, why := g.Allow(); ok || !strings.Contains(why, "refilled") {
		t.Fatalf("one turn later: %v %q", ok, why)
	}
	g.Turn()
	if ok, _ := g.Allow(); ok {
		t.Fatal("two turns later is still a loop")
	}
	g.Turn()
	if ok, _ := g.Allow(); !ok {
		t.Fatal("three turns later is not a loop")
	}
	g.Compacted(9000, 8000)
	g.Turn()
	g.Turn()
	g.Turn()
	if ok, why := g.Allow(); ok || !strings.Contains(why, "still above") {
		t.Fatalf("a compaction that left the context above the threshold: %v %q", ok, why)
	}
	g.Reset()
	if ok, _ := g.Allow(); !ok {
		t.Fatal("a reset guard refuses")
	}
}
