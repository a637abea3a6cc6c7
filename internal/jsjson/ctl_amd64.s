#include "textflag.h"

// func scanBlocks(data []byte, quotes []uint64) uint8
// Classifies the first len(data)&^63 bytes of data (see lineScan): bit 0 a byte below
// 0x20, bit 1 a backslash, bit 2 a byte at or above 0x80; and writes one word of
// quotes per 64-byte block, bit j set where byte j of the block is a double quote.
// SSE2 (every amd64 has it), 64 bytes an iteration, no early exit:
//   - below 0x20: the saturated difference 0x20 - x is zero exactly for x >= 0x20;
//   - backslash, quote: byte compares with 0x5c and 0x22;
//   - high: the or of the bytes keeps every high bit.
TEXT ·scanBlocks(SB), NOSPLIT, $0-49
	MOVQ data_base+0(FP), SI
	MOVQ data_len+8(FP), CX
	MOVQ quotes_base+24(FP), DI
	SHRQ $6, CX
	JZ   none
	MOVQ $0x2020202020202020, AX
	MOVQ AX, X0
	PUNPCKLQDQ X0, X0
	MOVQ $0x5c5c5c5c5c5c5c5c, AX
	MOVQ AX, X10
	PUNPCKLQDQ X10, X10
	MOVQ $0x2222222222222222, AX
	MOVQ AX, X12
	PUNPCKLQDQ X12, X12
	PXOR X7, X7
	PXOR X8, X8   // or of the bytes
	PXOR X9, X9   // or of 0x20 - x
	PXOR X11, X11 // or of x == '\\'

loop:
	MOVOU 0(SI), X1
	MOVOU 16(SI), X2
	MOVOU 32(SI), X3
	MOVOU 48(SI), X4
	POR X1, X8
	POR X2, X8
	POR X3, X8
	POR X4, X8
	MOVOU X0, X5
	PSUBUSB X1, X5
	POR X5, X9
	MOVOU X0, X5
	PSUBUSB X2, X5
	POR X5, X9
	MOVOU X0, X5
	PSUBUSB X3, X5
	POR X5, X9
	MOVOU X0, X5
	PSUBUSB X4, X5
	POR X5, X9
	MOVOU X1, X6
	PCMPEQB X12, X6
	PMOVMSKB X6, AX
	MOVOU X2, X6
	PCMPEQB X12, X6
	PMOVMSKB X6, BX
	SHLQ $16, BX
	ORQ  BX, AX
	MOVOU X3, X6
	PCMPEQB X12, X6
	PMOVMSKB X6, BX
	SHLQ $32, BX
	ORQ  BX, AX
	MOVOU X4, X6
	PCMPEQB X12, X6
	PMOVMSKB X6, BX
	SHLQ $48, BX
	ORQ  BX, AX
	MOVQ AX, 0(DI)
	PCMPEQB X10, X1
	POR X1, X11
	PCMPEQB X10, X2
	POR X2, X11
	PCMPEQB X10, X3
	POR X3, X11
	PCMPEQB X10, X4
	POR X4, X11
	ADDQ $64, SI
	ADDQ $8, DI
	DECQ CX
	JNZ  loop

	XORL BX, BX
	PCMPEQB X7, X9
	PMOVMSKB X9, AX
	CMPL AX, $0xffff
	JEQ  noctl
	ORL  $1, BX
noctl:
	PMOVMSKB X11, AX
	TESTL AX, AX
	JZ   nobsl
	ORL  $2, BX
nobsl:
	PMOVMSKB X8, AX
	TESTL AX, AX
	JZ   done
	ORL  $4, BX
done:
	MOVB BX, ret+48(FP)
	RET

none:
	MOVB $0, ret+48(FP)
	RET

// func scanBlocksAVX2(data []byte, quotes []uint64) uint8
// scanBlocks with 32-byte registers, for processors that have AVX2.
TEXT ·scanBlocksAVX2(SB), NOSPLIT, $0-49
	MOVQ data_base+0(FP), SI
	MOVQ data_len+8(FP), CX
	MOVQ quotes_base+24(FP), DI
	SHRQ $6, CX
	JZ   none2
	MOVQ $0x2020202020202020, AX
	MOVQ AX, X0
	VPBROADCASTQ X0, Y0
	MOVQ $0x5c5c5c5c5c5c5c5c, AX
	MOVQ AX, X10
	VPBROADCASTQ X10, Y10
	MOVQ $0x2222222222222222, AX
	MOVQ AX, X12
	VPBROADCASTQ X12, Y12
	VPXOR Y8, Y8, Y8    // or of the bytes
	VPXOR Y9, Y9, Y9    // or of 0x20 - x
	VPXOR Y11, Y11, Y11 // or of x == '\\'

loop2:
	VMOVDQU 0(SI), Y1
	VMOVDQU 32(SI), Y2
	VPOR Y1, Y8, Y8
	VPOR Y2, Y8, Y8
	VPSUBUSB Y1, Y0, Y5
	VPOR Y5, Y9, Y9
	VPSUBUSB Y2, Y0, Y5
	VPOR Y5, Y9, Y9
	VPCMPEQB Y12, Y1, Y6
	VPMOVMSKB Y6, AX
	VPCMPEQB Y12, Y2, Y6
	VPMOVMSKB Y6, BX
	SHLQ $32, BX
	ORQ  BX, AX
	MOVQ AX, 0(DI)
	VPCMPEQB Y10, Y1, Y1
	VPOR Y1, Y11, Y11
	VPCMPEQB Y10, Y2, Y2
	VPOR Y2, Y11, Y11
	ADDQ $64, SI
	ADDQ $8, DI
	DECQ CX
	JNZ  loop2

	XORL BX, BX
	VPXOR Y7, Y7, Y7
	VPCMPEQB Y7, Y9, Y9
	VPMOVMSKB Y9, AX
	CMPL AX, $0xffffffff
	JEQ  noctl2
	ORL  $1, BX
noctl2:
	VPMOVMSKB Y11, AX
	TESTL AX, AX
	JZ   nobsl2
	ORL  $2, BX
nobsl2:
	VPMOVMSKB Y8, AX
	TESTL AX, AX
	JZ   done2
	ORL  $4, BX
done2:
	VZEROUPPER
	MOVB BX, ret+48(FP)
	RET

none2:
	MOVB $0, ret+48(FP)
	RET
