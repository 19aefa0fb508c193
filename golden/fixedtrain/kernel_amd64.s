//go:build !purego

#include "textflag.h"

// Both loops compute, 16 states at a time, the transfer
// t = floor((q*prob + d) / 2^16) with d = r + dith mod 2^16: the 32-bit
// product is split into its high half (VPMULHUW) and low half (VPMULLW);
// the low half plus d carries into the result exactly when the wrapping
// sum differs from the saturating one. The neighbour's transfer comes from
// the same register shifted by one word (VPERM2I128 + VPALIGNR), with the
// previous chunk's transfers in Y11 supplying the word that crosses chunks.
// Each chunk reads its own states before it writes them, so the update is
// in place.

#define SETUP \
	VPBROADCASTW r+24(FP), Y0   \
	VPBROADCASTW prob+26(FP), Y1 \
	VPCMPEQW     Y2, Y2, Y2     \
	VPXOR        Y3, Y3, Y3     \
	VPSUBW       Y2, Y3, Y3     \
	VPXOR        Y11, Y11, Y11

// TRANSFER: Y4 = q (loaded from SI), Y5 = t (dither from DX).
#define TRANSFER \
	VMOVDQU  (SI), Y4     \
	VPMULHUW Y1, Y4, Y5   \
	VPMULLW  Y1, Y4, Y6   \
	VPADDW   (DX), Y0, Y7 \
	VPADDW   Y7, Y6, Y8   \
	VPADDUSW Y7, Y6, Y9   \
	VPCMPEQW Y9, Y8, Y8   \
	VPADDW   Y3, Y5, Y5   \
	VPADDW   Y8, Y5, Y5

// func up16(R, dith *uint16, chunks int, r, prob uint16) uint16
TEXT ·up16(SB), NOSPLIT, $0-34
	MOVQ R+0(FP), SI
	MOVQ dith+8(FP), DX
	MOVQ chunks+16(FP), CX
	SETUP

uloop:
	TRANSFER
	VPERM2I128 $0x21, Y5, Y11, Y10 // low: previous chunk's high half, high: this chunk's low half
	VPALIGNR   $14, Y10, Y5, Y12   // Y12[k] = t[k-1], Y12[0] = previous t[15]
	VPSUBW     Y5, Y4, Y4
	VPADDW     Y12, Y4, Y4
	VMOVDQU    Y4, (SI)
	VMOVDQA    Y5, Y11
	ADDQ       $32, SI
	ADDQ       $32, DX
	DECQ       CX
	JNZ        uloop
	VEXTRACTI128 $1, Y11, X13
	VPEXTRW    $7, X13, AX
	MOVW       AX, ret+32(FP)
	VZEROUPPER
	RET

// func down16(top, dith *uint16, chunks int, r, prob uint16) uint16
TEXT ·down16(SB), NOSPLIT, $0-34
	MOVQ top+0(FP), SI
	MOVQ dith+8(FP), DX
	MOVQ chunks+16(FP), CX
	SETUP

dloop:
	TRANSFER
	VPERM2I128 $0x21, Y11, Y5, Y10 // low: this chunk's high half, high: the chunk above's low half
	VPALIGNR   $2, Y5, Y10, Y12    // Y12[k] = t[k+1], Y12[15] = the chunk above's t[0]
	VPSUBW     Y5, Y4, Y4
	VPADDW     Y12, Y4, Y4
	VMOVDQU    Y4, (SI)
	VMOVDQA    Y5, Y11
	SUBQ       $32, SI
	SUBQ       $32, DX
	DECQ       CX
	JNZ        dloop
	VPEXTRW    $0, X11, AX
	MOVW       AX, ret+32(FP)
	VZEROUPPER
	RET
