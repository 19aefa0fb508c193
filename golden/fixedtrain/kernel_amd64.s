//go:build !purego

#include "textflag.h"

// transfers16: t[i] = floor((q[i]*prob + d) / 2^16) with d = r + dith[i]
// mod 2^16, 16 lanes at a time: the 32-bit product is split into its high
// half (VPMULHUW) and low half (VPMULLW); the low half plus d carries into
// the result exactly when the wrapping sum differs from the saturating one.
// When n is not a multiple of 16, a last chunk ends exactly at n and
// recomputes some words already written (with the same values: the output
// is not an input).

// func transfers16(t, q, dith *uint16, n int, r, prob uint16)
TEXT ·transfers16(SB), NOSPLIT, $0-36
	MOVQ         t+0(FP), DI
	MOVQ         q+8(FP), SI
	MOVQ         dith+16(FP), DX
	MOVQ         n+24(FP), CX
	MOVQ         CX, BX
	ANDQ         $15, BX     // BX = n mod 16, the words left for the last chunk
	ANDQ         $-16, CX
	VPBROADCASTW r+32(FP), Y0
	VPBROADCASTW prob+34(FP), Y1
	VPCMPEQW     Y2, Y2, Y2  // -1 in every lane
	VPXOR        Y3, Y3, Y3
	VPSUBW       Y2, Y3, Y3  // 1 in every lane

tloop:
	VMOVDQU  (SI), Y4        // q
	VPMULHUW Y1, Y4, Y5      // high half of q*prob
	VPMULLW  Y1, Y4, Y6      // low half
	VPADDW   (DX), Y0, Y7    // d = r + dith
	VPADDW   Y7, Y6, Y8      // low + d, wrapping
	VPADDUSW Y7, Y6, Y9      // low + d, saturating
	VPCMPEQW Y9, Y8, Y8      // -1 where no carry, 0 where carry
	VPADDW   Y3, Y5, Y5
	VPADDW   Y8, Y5, Y5      // high + carry
	VMOVDQU  Y5, (DI)
	ADDQ     $32, SI
	ADDQ     $32, DX
	ADDQ     $32, DI
	SUBQ     $16, CX
	JNZ      tloop
	TESTQ    BX, BX
	JZ       tdone
	MOVQ     n+24(FP), R8    // the last chunk: words n-16..n-1
	MOVQ     t+0(FP), DI
	LEAQ     -32(DI)(R8*2), DI
	MOVQ     q+8(FP), SI
	LEAQ     -32(SI)(R8*2), SI
	MOVQ     dith+16(FP), DX
	LEAQ     -32(DX)(R8*2), DX
	MOVQ     $16, CX
	XORQ     BX, BX
	JMP      tloop

tdone:
	VZEROUPPER
	RET

// blendMask: 16 words 0 then 16 words -1; the 16 words from word k select
// the last k lanes of a chunk.
DATA blendMask<>+0(SB)/8, $0
DATA blendMask<>+8(SB)/8, $0
DATA blendMask<>+16(SB)/8, $0
DATA blendMask<>+24(SB)/8, $0
DATA blendMask<>+32(SB)/8, $-1
DATA blendMask<>+40(SB)/8, $-1
DATA blendMask<>+48(SB)/8, $-1
DATA blendMask<>+56(SB)/8, $-1
GLOBL blendMask<>(SB), RODATA|NOPTR, $64

// combine16: q[i] += t[i] - t[i+1] (up) or t[i+1] - t[i] (down), 16 lanes
// at a time, in place. When n is not a multiple of 16, the last chunk ends
// exactly at n and keeps (blends back) the lanes the loop already updated.

// func combine16(q, t *uint16, n int, up bool)
TEXT ·combine16(SB), NOSPLIT, $0-25
	MOVQ q+0(FP), DI
	MOVQ t+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ CX, BX
	ANDQ $15, BX
	ANDQ $-16, CX
	MOVQ $2, AX              // byte offset of the word a state receives from
	XORQ DX, DX              // byte offset of the word it hands on
	CMPB up+24(FP), $0
	JEQ  cloop
	XORQ AX, AX              // up: receives t[i], hands on t[i+1]
	MOVQ $2, DX

cloop:
	VMOVDQU (DI), Y0
	VPADDW  (SI)(AX*1), Y0, Y0
	VPSUBW  (SI)(DX*1), Y0, Y0
	VMOVDQU Y0, (DI)
	ADDQ    $32, DI
	ADDQ    $32, SI
	SUBQ    $16, CX
	JNZ     cloop
	TESTQ   BX, BX
	JZ      cdone
	MOVQ    n+16(FP), R8     // the last chunk: words n-16..n-1
	MOVQ    q+0(FP), DI
	LEAQ    -32(DI)(R8*2), DI
	MOVQ    t+8(FP), SI
	LEAQ    -32(SI)(R8*2), SI
	VMOVDQU (DI), Y1         // lanes below 16-BX are already final
	VPADDW  (SI)(AX*1), Y1, Y0
	VPSUBW  (SI)(DX*1), Y0, Y0
	LEAQ    blendMask<>(SB), R9
	VMOVDQU (R9)(BX*2), Y2
	VPBLENDVB Y2, Y0, Y1, Y0 // Y0 = mask ? updated : already final
	VMOVDQU Y0, (DI)

cdone:
	VZEROUPPER
	RET
