#include "textflag.h"

// func controlBlocks(data []byte) bool
// Reports whether the first len(data)&^63 bytes of data hold a byte below 0x20.
// SSE2 (every amd64 has it): each 16 bytes x give the saturated difference
// 0x20 - x, zero exactly for x >= 0x20; the differences of 64 bytes are or-ed and
// tested at once.
TEXT ·controlBlocks(SB), NOSPLIT, $0-25
	MOVQ data_base+0(FP), SI
	MOVQ data_len+8(FP), CX
	SHRQ $6, CX
	JZ   none
	MOVQ $0x2020202020202020, AX
	MOVQ AX, X0
	PUNPCKLQDQ X0, X0
	PXOR X7, X7

loop:
	MOVOU 0(SI), X1
	MOVOU 16(SI), X2
	MOVOU 32(SI), X3
	MOVOU 48(SI), X4
	MOVOU X0, X5
	PSUBUSB X1, X5
	MOVOU X0, X6
	PSUBUSB X2, X6
	POR X6, X5
	MOVOU X0, X6
	PSUBUSB X3, X6
	POR X6, X5
	MOVOU X0, X6
	PSUBUSB X4, X6
	POR X6, X5
	PCMPEQB X7, X5
	PMOVMSKB X5, AX
	CMPL AX, $0xffff
	JNE  found
	ADDQ $64, SI
	DECQ CX
	JNZ  loop

none:
	MOVB $0, ret+24(FP)
	RET

found:
	MOVB $1, ret+24(FP)
	RET
