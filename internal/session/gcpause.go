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
// collector stays off (a memory limit) until the heap has grown again by as much as the
// loads grew it (or reaches the goal the collector had before them, when that is
// higher), and the first collection after that restores the settings. So the heap peaks
// near twice what the loads made, as it would with the collector on, never at a fixed
// headroom above it. Hostile input that makes garbage still meets a limit during the
// load. Concurrent loads share one pause.
var gcPause struct {
	sync.Mutex
	n        int   // loads running
	deferred bool  // the pause outlives the loads, until the next collection
	percent  int   // settings to restore
	limit    int64 //
	start    int64 // heap when the loads running now began
	goal     int64 // the collector's heap goal then
}

// gcPauseHeadroom is how much the heap may grow during a load before collecting.
const gcPauseHeadroom = 1 << 30

// gcPauseMin is the least a load reads to pause the collector for it. A smaller load
// allocates too little for a collection to start during it, and pausing costs more
// than it saves: turning the collector off waits for a collection under way (the
// process's first ones run for a few hundred microseconds, as long as a 1 MB load).
const gcPauseMin = 4 << 20

// gcPauseFloor is the least the heap may grow after the loads before collecting.
const gcPauseFloor = 4 << 20

func heapBytes() int64 { return readMetric("/memory/classes/heap/objects:bytes") }

// limitedBytes is the memory the runtime holds against its memory limit: all it has
// mapped but what it returned to the system.
func limitedBytes() int64 {
	return readMetric("/memory/classes/total:bytes") - readMetric("/memory/classes/heap/released:bytes")
}

func readMetric(name string) int64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(min(s[0].Value.Uint64(), 1<<62))
}

func pauseGC() (resume func()) {
	gcPause.Lock()
	if gcPause.n == 0 && !gcPause.deferred {
		gcPause.goal = readMetric("/gc/heap/goal:bytes")
		gcPause.limit = debug.SetMemoryLimit(-1)
		gcPause.percent = debug.SetGCPercent(-1)
	}
	if gcPause.n == 0 {
		// The growth allowed after the loads is what these loads made, measured from
		// now even when an earlier pause still holds: what the process allocated
		// between two loads is not theirs, and counting it let the allowance grow with
		// every load of a long-lived process that loads often (the server, tests
		// running the CLI in process), the collector never catching up.
		gcPause.start = heapBytes()
		debug.SetMemoryLimit(min(gcPause.limit, gcPause.start+gcPauseHeadroom))
	}
	gcPause.n++
	gcPause.Unlock()
	return func() {
		gcPause.Lock()
		defer gcPause.Unlock()
		if gcPause.n--; gcPause.n > 0 {
			return
		}
		// The limit counts all the runtime's memory, not only the heap's objects (a few
		// megabytes of stacks and metadata even in a small process): the growth is
		// added to that, or a small session's first collection would come after a
		// fraction of the growth intended, in the middle of what the caller does next.
		heap := heapBytes()
		debug.SetMemoryLimit(min(gcPause.limit, max(gcPause.goal, limitedBytes()+max(heap-gcPause.start, gcPauseFloor))))
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
