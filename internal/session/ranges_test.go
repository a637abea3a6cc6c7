package session

import (
	"runtime"
	"testing"
)

// The ranges of a parallel load cover the file once, in order, and shrink towards its
// end (guided), so that the cores finish within a small range of each other (the last
// takes in what would be a sliver after it).
func TestSplitRangesShrinkTowardsTheEnd(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, cores := range []int{2, 4} {
		runtime.GOMAXPROCS(cores)
		for _, size := range []int64{2 << 20, 3 << 20, 26 << 20, 258 << 20} {
			const pos = 1234
			rs := splitRanges(pos, size)
			if len(rs) < 2 {
				t.Fatalf("%d cores, %d bytes: %d range(s), want several", cores, size, len(rs))
			}
			at := int64(pos)
			for i, r := range rs {
				n := r.end - r.start
				if r.start != at || n <= 0 || n > maxRange {
					t.Fatalf("%d cores, %d bytes: range %d is [%d, %d) after %d", cores, size, i, r.start, r.end, at)
				}
				if i > 0 && i != len(rs)-1 && n > rs[i-1].end-rs[i-1].start {
					t.Fatalf("%d cores, %d bytes: range %d (%d bytes) is larger than the one before", cores, size, i, n)
				}
				if n < minRange && i != len(rs)-1 {
					t.Fatalf("%d cores, %d bytes: range %d has %d bytes", cores, size, i, n)
				}
				at = r.end
			}
			if at != size {
				t.Fatalf("%d cores, %d bytes: ranges end at %d", cores, size, at)
			}
			if last := rs[len(rs)-1]; last.end-last.start >= 2*minRange {
				t.Fatalf("%d cores, %d bytes: the last range has %d bytes", cores, size, last.end-last.start)
			}
		}
	}
}
