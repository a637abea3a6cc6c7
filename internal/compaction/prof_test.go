package compaction_test

import (
	"os"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/pi-lsp/pi-lsp/internal/compaction"
	"github.com/pi-lsp/pi-lsp/internal/session"
)

func TestProfileBig(t *testing.T) {
	p := os.Getenv("BIG")
	if p == "" {
		t.Skip()
	}
	pf, _ := os.Create("/tmp/cpu.prof")
	pprof.StartCPUProfile(pf)
	defer pprof.StopCPUProfile()
	t0 := time.Now()
	f, err := session.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	t1 := time.Now()
	ix := session.NewIndex(f)
	t2 := time.Now()
	c := ix.BuildContext("")
	t3 := time.Now()
	_, err = compaction.Prepare(ix.Path(ix.LeafID()), session.DefaultCompactionSettings)
	t4 := time.Now()
	t.Logf("load %v index %v context %v (%d msgs) prepare %v err %v", t1.Sub(t0), t2.Sub(t1), t3.Sub(t2), len(c.Messages), t4.Sub(t3), err)
}
