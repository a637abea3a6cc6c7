package jsjson

// blockClasses is what every vectorised classifier of this processor says of the whole
// blocks of b; they must agree.
func blockClasses(b []byte) uint8 {
	c := classBlocks(b)
	if haveAVX2 && classBlocksAVX2(b) != c {
		return 0xff
	}
	return c
}
