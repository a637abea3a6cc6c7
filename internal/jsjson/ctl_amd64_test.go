package jsjson

// blockClasses is what every vectorised classifier of this processor says of the whole
// blocks of b (0xff when they disagree, on the class or on a quote).
func blockClasses(b []byte) uint8 {
	n := len(b) / 64
	q1, q2 := make([]uint64, n), make([]uint64, n)
	c := scanBlocks(b, q1)
	if haveAVX2 && scanBlocksAVX2(b, q2) != c {
		return 0xff
	}
	for k := range q1 {
		if q1[k] != quoteBits(b[k*64:k*64+64]) || haveAVX2 && q2[k] != q1[k] {
			return 0xff
		}
	}
	return c
}
