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

// A mapped load's parsed ranges are released from the start of the file, in calls of at
// least releaseBatch, whatever order the cores finish them in; none twice.
func TestReleaserReleasesThePrefixInBatches(t *testing.T) {
	const mb = 1 << 20
	var ranges []byteRange
	for i := range 6 {
		ranges = append(ranges, byteRange{int64(i * 3 * mb), int64((i + 1) * 3 * mb)})
	}
	var calls []byteRange
	r := newReleaser(func(start, end int64) { calls = append(calls, byteRange{start, end}) }, ranges)
	for _, i := range []int{1, 0, 2, 3, 5, 4} {
		r.parsed(i)
	}
	want := []byteRange{{0, 9 * mb}, {9 * mb, 18 * mb}}
	if len(calls) != len(want) || calls[0] != want[0] || calls[1] != want[1] {
		t.Fatalf("released %v, want %v", calls, want)
	}
	newReleaser(nil, ranges).parsed(0) // without a mapping: nothing to do
}
