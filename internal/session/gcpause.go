package session

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// gcPause turns the collector off while lines are decoded. What a load allocates stays
// live (entries, messages, their strings) and the read buffers are reused, so a
// collection in the middle of a load frees almost nothing, yet marking and the write
// barriers it turns on cost a third of the load.
//
// The pause also outlives the load: restoring the collector's percentage at once would
// start a collection straight away (its last one saw the heap before the load), which
// then runs alongside whatever the caller does with what it loaded. Instead the
// collector stays off until the heap doubles (a memory limit), and the first collection
// after that restores the settings. Hostile input that makes garbage still meets a
// limit during the load. Concurrent loads share one pause.
var gcPause struct {
	sync.Mutex
	n        int   // loads running
	deferred bool  // the pause outlives the loads, until the next collection
	percent  int   // settings to restore
	limit    int64 //
}

// gcPauseHeadroom is how much the heap may grow during a load before collecting.
const gcPauseHeadroom = 1 << 30

func heapBytes() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

func pauseGC() (resume func()) {
	gcPause.Lock()
	if gcPause.n == 0 && !gcPause.deferred {
		gcPause.limit = debug.SetMemoryLimit(-1)
		gcPause.percent = debug.SetGCPercent(-1)
	}
	if gcPause.n == 0 {
		debug.SetMemoryLimit(min(gcPause.limit, heapBytes()+gcPauseHeadroom))
	}
	gcPause.n++
	gcPause.Unlock()
	return func() {
		gcPause.Lock()
		defer gcPause.Unlock()
		if gcPause.n--; gcPause.n > 0 {
			return
		}
		debug.SetMemoryLimit(min(gcPause.limit, 2*heapBytes()+64<<20))
		gcPause.deferred = true
		sentinel := new([64]byte) // not a tiny allocation, which could be kept alive by a neighbour
		runtime.AddCleanup(sentinel, func(struct{}) { restoreGC() }, struct{}{})
	}
}

// restoreGC runs after the first collection that follows the last load.
func restoreGC() {
	gcPause.Lock()
	defer gcPause.Unlock()
	if gcPause.n > 0 || !gcPause.deferred {
		return // a load started again; its end arranges the restore
	}
	debug.SetGCPercent(gcPause.percent)
	debug.SetMemoryLimit(gcPause.limit)
	gcPause.deferred = false
}
