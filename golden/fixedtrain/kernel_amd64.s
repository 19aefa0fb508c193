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

// The AVX-512 kernels (up32, down32) work on aligned chunks of 32 states
// of one SPV (chunk c holds states 32c..32c+31) and take the move
// probability of every state from a table that holds 0 where a state does
// not move, so one loop serves TPM1, TPM2 and TPM3 and the SPV's ends
// need no special case. The transfer is the same exact floor((q*prob +
// d) / 2^16) as above: the low half of the product plus d carries into
// the high half exactly when their 16-bit sum is below d (VPCMPUW). The
// neighbour's transfer comes from a two-register word permute (VPERMT2W)
// of the previous chunk's transfers (Z11) and this chunk's (Z5). The top
// chunk c1 is loaded and stored under topMask (the states of a partial
// last chunk): words past the SPV read as 0 and are never written. Both
// return the transfer that leaves the chunks (into state 32*c1+32 for up32,
// 32*c0-1 for down32; the caller adds it) and the non-zero words of the
// top and bottom chunks after the update (bit k: state 32c+k), from which
// the caller trims the support.

// Word indices for VPERMT2W: 0..31 the previous chunk's transfers, 32..63
// this chunk's. up: X[0] = prev[31], X[k] = cur[k-1]. down: X[k] =
// cur[k+1], X[31] = prev[0] (the chunk above).
DATA permup<>+0(SB)/8, $0x002200210020001f
DATA permup<>+8(SB)/8, $0x0026002500240023
DATA permup<>+16(SB)/8, $0x002a002900280027
DATA permup<>+24(SB)/8, $0x002e002d002c002b
DATA permup<>+32(SB)/8, $0x003200310030002f
DATA permup<>+40(SB)/8, $0x0036003500340033
DATA permup<>+48(SB)/8, $0x003a003900380037
DATA permup<>+56(SB)/8, $0x003e003d003c003b
GLOBL permup<>(SB), RODATA|NOPTR, $64

DATA permdown<>+0(SB)/8, $0x0024002300220021
DATA permdown<>+8(SB)/8, $0x0028002700260025
DATA permdown<>+16(SB)/8, $0x002c002b002a0029
DATA permdown<>+24(SB)/8, $0x0030002f002e002d
DATA permdown<>+32(SB)/8, $0x0034003300320031
DATA permdown<>+40(SB)/8, $0x0038003700360035
DATA permdown<>+48(SB)/8, $0x003c003b003a0039
DATA permdown<>+56(SB)/8, $0x0000003f003e003d
GLOBL permdown<>(SB), RODATA|NOPTR, $64

#define SETUP32 \
	VPBROADCASTW r+40(FP), Z0 \
	VPTERNLOGD   $0xff, Z3, Z3, Z3 \
	VPSRLW       $15, Z3, Z3 \
	VPXORQ       Z11, Z11, Z11 \
	MOVL         topMask+44(FP), R11 \
	KMOVD        R11, K1

// MOVE32 moves the chunk at SI (probabilities from BX, dither from DX;
// Z11 the previous chunk's transfers, Z10 the permutation) and leaves the
// mask of its non-zero words in R8. The chunk is read and written under
// K1 only when R11, its mask, is partial (a masked store is slow on some
// CPUs).
#define MOVE32 \
	CMPL        R11, $-1 \
	JNE         3(PC) \
	VMOVDQU64   (SI), Z4 \
	JMP         2(PC) \
	VMOVDQU16.Z (SI), K1, Z4 \
	VPMULHUW    (BX), Z4, Z5 \
	VPMULLW     (BX), Z4, Z6 \
	VPADDW      (DX), Z0, Z7 \
	VPADDW      Z7, Z6, Z8 \
	VPCMPUW     $1, Z7, Z8, K2 \
	VPADDW      Z3, Z5, K2, Z5 \
	VPERMT2W    Z5, Z10, Z11 \
	VPSUBW      Z5, Z4, Z4 \
	VPADDW      Z11, Z4, Z4 \
	VMOVDQA64   Z5, Z11 \
	VPTESTMW    Z4, Z4, K1, K3 \
	KMOVD       K3, R8 \
	CMPL        R11, $-1 \
	JNE         3(PC) \
	VMOVDQU64   Z4, (SI) \
	JMP         2(PC) \
	VMOVDQU16   Z4, K1, (SI)

// func up32(q, dith, prob *uint16, c0, c1 int, r uint16, topMask uint32) (carry uint16, mTop, mBot uint32)
TEXT ·up32(SB), NOSPLIT, $0-60
	MOVQ q+0(FP), SI
	MOVQ dith+8(FP), DX
	MOVQ prob+16(FP), BX
	MOVQ c0+24(FP), AX
	MOVQ c1+32(FP), CX
	SUBQ AX, CX // chunks after the first
	SHLQ $6, AX
	ADDQ AX, SI
	ADDQ AX, DX
	ADDQ AX, BX
	SETUP32
	VMOVDQU64 permup<>(SB), Z10
	MOVL R11, R12 // the top chunk's mask
	TESTQ CX, CX
	JZ   u32first // a single chunk: it is the top one
	MOVL $-1, R11
	KMOVD R11, K1

u32first:
	MOVE32
	MOVL R8, R9 // bottom chunk
	TESTQ CX, CX
	JZ   u32end

u32loop:
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, BX
	CMPQ CX, $1
	JNE  u32mid
	MOVL R12, R11
	KMOVD R11, K1

u32mid:
	MOVE32
	DECQ CX
	JNZ  u32loop

u32end:
	VEXTRACTI32X4 $3, Z11, X13
	VPEXTRW   $7, X13, AX
	MOVW      AX, carry+48(FP)
	MOVL      R8, mTop+52(FP)
	MOVL      R9, mBot+56(FP)
	VZEROUPPER
	RET

// func down32(q, dith, prob *uint16, c0, c1 int, r uint16, topMask uint32) (carry uint16, mTop, mBot uint32)
TEXT ·down32(SB), NOSPLIT, $0-60
	MOVQ q+0(FP), SI
	MOVQ dith+8(FP), DX
	MOVQ prob+16(FP), BX
	MOVQ c1+32(FP), AX
	MOVQ AX, CX
	SUBQ c0+24(FP), CX // chunks after the first
	SHLQ $6, AX
	ADDQ AX, SI
	ADDQ AX, DX
	ADDQ AX, BX
	SETUP32
	VMOVDQU64 permdown<>(SB), Z10
	MOVE32
	MOVL R8, R9 // top chunk
	MOVL $-1, R11
	KMOVD R11, K1
	TESTQ CX, CX
	JZ   d32end

d32loop:
	SUBQ $64, SI
	SUBQ $64, DX
	SUBQ $64, BX
	MOVE32
	DECQ CX
	JNZ  d32loop

d32end:
	VPEXTRW   $0, X11, AX
	MOVW      AX, carry+48(FP)
	MOVL      R9, mTop+52(FP)
	MOVL      R8, mBot+56(FP)
	VZEROUPPER
	RET

// Offsets of typeIArgs (kernel_amd64.go; TestTypeIArgsLayout).
#define A_Q 0
#define A_LO 8
#define A_HI 16
#define A_INC 24
#define A_LIT 32
#define A_DITH 40
#define A_UP 48
#define A_DOWN 56
#define A_LANE 64
#define A_STRIDE 72
#define A_NL 80
#define A_N 88
#define A_LAST 96
#define A_TOP 104
#define A_TOPMASK 112
#define A_UPP 116
#define A_DOWNP 120
#define A_FIRES 124

// PFD is how many TAs ahead typeI32 prefetches, PFD4 tpm4s.
#define PFD 10
#define PFD4 6

// CHUNKMASK sets K7 to the mask of the chunk at byte offset BX: the SPV's
// partial last chunk (offset A_LAST) under K1, any other whole (K6).
#define CHUNKMASK \
	KMOVD K6, K7 \
	CMPQ  BX, A_LAST(DI) \
	JNE   2(PC) \
	KMOVD K1, K7

// CHUNKBODY moves the chunk at SI+BX: probabilities from CX+BX, dither
// from DX+BX, Z11 the previous chunk's transfers in, this chunk's out,
// perm the VPERMT2W indices. The new words are left in Z4; the store is
// masked only for a partial chunk.
#define CHUNKBODY(perm) \
	CHUNKMASK \
	VMOVDQU16.Z (SI)(BX*1), K7, Z4 \
	VPMULHUW    (CX)(BX*1), Z4, Z5 \
	VPMULLW     (CX)(BX*1), Z4, Z6 \
	VPADDW      (DX)(BX*1), Z0, Z7 \
	VPADDW      Z7, Z6, Z8 \
	VPCMPUW     $1, Z7, Z8, K2 \
	VPADDW      Z3, Z5, K2, Z5 \
	VPERMT2W    Z5, perm, Z11 \
	VPSUBW      Z5, Z4, Z4 \
	VPADDW      Z11, Z4, Z4 \
	VMOVDQA64   Z5, Z11 \
	CMPQ        BX, A_LAST(DI) \
	JEQ         3(PC) \
	VMOVDQU64   Z4, (SI)(BX*1) \
	JMP         2(PC) \
	VMOVDQU16   Z4, K7, (SI)(BX*1)

// FASTBODY is CHUNKBODY for a chunk that is not the SPV's last: no mask.
#define FASTBODY(perm) \
	VMOVDQU64   (SI)(BX*1), Z4 \
	VPMULHUW    (CX)(BX*1), Z4, Z5 \
	VPMULLW     (CX)(BX*1), Z4, Z6 \
	VPADDW      (DX)(BX*1), Z0, Z7 \
	VPADDW      Z7, Z6, Z8 \
	VPCMPUW     $1, Z7, Z8, K2 \
	VPADDW      Z3, Z5, K2, Z5 \
	VPERMT2W    Z5, perm, Z11 \
	VPSUBW      Z5, Z4, Z4 \
	VPADDW      Z11, Z4, Z4 \
	VMOVDQA64   Z5, Z11 \
	VMOVDQU64   Z4, (SI)(BX*1)

// func typeI32(a *typeIArgs)
TEXT ·typeI32(SB), NOSPLIT, $0-8
	MOVQ a+0(FP), DI
	MOVQ A_LANE(DI), R8
	MOVQ A_Q(DI), SI
	XORQ R9, R9
	VPTERNLOGD $0xff, Z3, Z3, Z3
	VPSRLW     $15, Z3, Z3
	VMOVDQU64  permup<>(SB), Z10
	VMOVDQU64  permdown<>(SB), Z12
	MOVL       $-1, AX
	KMOVD      AX, K6
	MOVL       A_TOPMASK(DI), AX
	KMOVD      AX, K1

tiloop:
	// Prefetch the support of the TA PFD ahead: the SPVs are read in TA
	// order but only around each support, which the hardware prefetcher
	// does not predict. The three lines from chunk lo/32 on and the last
	// two of chunk hi/32: the five lines of a support of four chunks (at
	// 784 features the supports span states 0..~100, four chunks that
	// straddle five lines of an SPV not aligned to 64 bytes); a prefetch
	// never changes a word.
	LEAQ    PFD(R9), AX
	CMPQ    AX, A_NL(DI)
	JGE     tinopf
	MOVQ    A_LO(DI), BX
	MOVWQZX (BX)(AX*2), CX
	MOVQ    A_HI(DI), BX
	MOVWQZX (BX)(AX*2), BX
	SHRQ    $5, CX
	SHLQ    $6, CX
	SHRQ    $5, BX
	SHLQ    $6, BX
	MOVQ    A_STRIDE(DI), AX
	IMULQ   $PFD, AX
	ADDQ    SI, AX
	PREFETCHT0 (AX)(CX*1)
	PREFETCHT0 64(AX)(CX*1)
	PREFETCHT0 128(AX)(CX*1)
	PREFETCHT0 63(AX)(BX*1)
	PREFETCHT0 -1(AX)(BX*1)

tinopf:
	// r = the lane's 16-bit draw (section 4)
	MOVQ R8, AX
	MOVQ R8, CX
	SHRQ $1, CX
	XORQ CX, AX
	MOVQ R8, CX
	SHRQ $3, CX
	XORQ CX, AX
	MOVQ R8, CX
	SHRQ $4, CX
	XORQ CX, AX
	ANDQ $0xFFFF, AX
	MOVQ AX, R10
	SHRQ $16, R8
	SHLQ $48, AX
	ORQ  AX, R8
	VPBROADCASTW R10, Z0

	MOVQ    A_LO(DI), AX
	MOVWQZX (AX)(R9*2), R11
	MOVQ    A_HI(DI), AX
	MOVWQZX (AX)(R9*2), R12
	MOVQ    A_DITH(DI), DX
	MOVQ    A_N(DI), R13
	MOVQ    A_LIT(DI), AX
	MOVBLZX (AX)(R9*1), AX
	ANDL    A_FIRES(DI), AX
	JZ      tpm3

	// TPM1: every state but the top moves up
	CMPQ    R11, A_TOP(DI)
	JEQ     tinext // all mass in the top state
	MOVWLZX -2(SI)(R13*2), AX // Q[N-1]
	MOVWLZX -2(DX)(R13*2), BX // dith[N-1]
	ADDL    R10, BX
	ANDL    $0xFFFF, BX
	IMULL   A_UPP(DI), AX
	ADDL    BX, AX
	SHRL    $16, AX
	MOVQ    A_INC(DI), BX
	ADDW    AX, (BX)(R9*2)
	MOVQ    A_UP(DI), CX
	MOVQ    R11, BX
	SHRQ    $5, BX
	SHLQ    $6, BX // offset of chunk lo/32
	MOVQ    R12, R13
	SHRQ    $5, R13
	SHLQ    $6, R13 // offset of chunk hi/32
	VPXORQ  Z11, Z11, Z11
	CMPQ    R13, A_LAST(DI)
	JEQ     tiupslow
	// the chunks end before the SPV's last one: no masks
	KMOVD   K6, K7
	FASTBODY(Z10)
	VPTESTMW Z4, Z4, K7, K4 // non-zero words of the bottom chunk
	ADDQ $64, BX
	CMPQ BX, R13
	JG   tiupend

tiupf:
	FASTBODY(Z10)
	ADDQ $64, BX
	CMPQ BX, R13
	JLE  tiupf
	JMP  tiupend

tiupslow:
	CHUNKBODY(Z10)
	VPTESTMW Z4, Z4, K7, K4 // non-zero words of the bottom chunk
	ADDQ $64, BX
	CMPQ BX, R13
	JG   tiupend

tiup:
	CHUNKBODY(Z10)
	ADDQ $64, BX
	CMPQ BX, R13
	JLE  tiup

tiupend:
	VPTESTMW      Z4, Z4, K7, K3
	KMOVD         K3, CX // non-zero words of the top chunk
	VEXTRACTI32X4 $3, Z11, X13
	VPEXTRW       $7, X13, AX // the transfer out of the top chunk
	TESTL         AX, AX
	JZ            tiupkeep
	ADDW          AX, (SI)(BX*1)
	MOVQ          BX, R12
	SHRQ          $1, R12
	JMP           tiuplo

tiupkeep:
	BSRL CX, CX
	MOVQ R13, R12
	SHRQ $1, R12
	ADDQ CX, R12

tiuplo:
	KMOVD K4, AX
	SHRQ $5, R11
	SHLQ $5, R11
	TESTL AX, AX
	JZ   tiupempty
	BSFL AX, AX
	ADDQ AX, R11
	JMP  tistore

tiupempty:
	ADDQ $32, R11
	JMP  tistore

tpm3:
	// TPM3: every state but the bottom moves down
	TESTQ   R12, R12
	JZ      tinext // all mass in state 0
	MOVWLZX (SI)(R13*2), AX // Q[N]
	MOVWLZX (DX)(R13*2), BX // dith[N]
	ADDL    R10, BX
	ANDL    $0xFFFF, BX
	IMULL   A_DOWNP(DI), AX
	ADDL    BX, AX
	SHRL    $16, AX
	MOVQ    A_INC(DI), BX
	SUBW    AX, (BX)(R9*2)
	MOVQ    A_DOWN(DI), CX
	MOVQ    R12, BX
	SHRQ    $5, BX
	SHLQ    $6, BX // offset of chunk hi/32
	MOVQ    R11, R13
	SHRQ    $5, R13
	SHLQ    $6, R13 // offset of chunk lo/32
	VPXORQ  Z11, Z11, Z11
	CMPQ    BX, A_LAST(DI)
	JEQ     tidownslow
	// the chunks end before the SPV's last one: no masks
	KMOVD   K6, K7
	FASTBODY(Z12)
	VPTESTMW Z4, Z4, K7, K4 // non-zero words of the top chunk
	SUBQ $64, BX
	CMPQ BX, R13
	JL   tidownend

tidownf:
	FASTBODY(Z12)
	SUBQ $64, BX
	CMPQ BX, R13
	JGE  tidownf
	JMP  tidownend

tidownslow:
	CHUNKBODY(Z12)
	VPTESTMW Z4, Z4, K7, K4 // non-zero words of the top chunk
	SUBQ $64, BX
	CMPQ BX, R13
	JL   tidownend

tidown:
	CHUNKBODY(Z12)
	SUBQ $64, BX
	CMPQ BX, R13
	JGE  tidown

tidownend:
	VPTESTMW Z4, Z4, K7, K3
	KMOVD    K3, CX // non-zero words of the bottom chunk
	VPEXTRW  $0, X11, AX // the transfer out of the bottom chunk
	MOVQ     R13, R11
	SHRQ     $1, R11
	TESTL    AX, AX
	JZ       tidownkeep
	ADDW     AX, -2(SI)(R13*1)
	DECQ     R11
	JMP      tidownhi

tidownkeep:
	BSFL CX, CX
	ADDQ CX, R11

tidownhi:
	KMOVD K4, AX
	SHRQ $5, R12
	SHLQ $5, R12
	TESTL AX, AX
	JZ   tidownempty
	BSRL AX, AX
	ADDQ AX, R12
	JMP  tistore

tidownempty:
	DECQ R12

tistore:
	MOVQ A_LO(DI), AX
	MOVW R11, (AX)(R9*2)
	MOVQ A_HI(DI), AX
	MOVW R12, (AX)(R9*2)

tinext:
	ADDQ A_STRIDE(DI), SI
	INCQ R9
	CMPQ R9, A_NL(DI)
	JLT  tiloop
	MOVQ R8, A_LANE(DI)
	VZEROUPPER
	RET

// Dword lane numbers 0..7.
DATA iota8<>+0(SB)/8, $0x0000000100000000
DATA iota8<>+8(SB)/8, $0x0000000300000002
DATA iota8<>+16(SB)/8, $0x0000000500000004
DATA iota8<>+24(SB)/8, $0x0000000700000006
GLOBL iota8<>(SB), RODATA|NOPTR, $32

// func sample8(lanes *uint64, inc *uint16, nl int, lit0 *int32, nz int, shift uint64, n int, z, who *[8]uint64)
//
// Phase A sampling of n <= 8 consecutive clauses at once, one clause per
// 64-bit lane of Z0: for each literal i of lit0, each clause draws 16 bits
// from its lane and includes i iff the draw is below inc[c*nl+i] << shift
// (gathered). z counts the inclusions, who keeps the last included i.
TEXT ·sample8(SB), NOSPLIT, $0-72
	MOVQ n+48(FP), CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K1 // the clauses
	MOVQ lanes+0(FP), SI
	VMOVDQU64.Z (SI), K1, Z0
	VPXORQ Z1, Z1, Z1 // z
	VPXORQ Z2, Z2, Z2 // who
	MOVQ nl+16(FP), AX
	SHLQ $1, AX
	VPBROADCASTD AX, Y4
	VMOVDQU32 iota8<>(SB), Y3
	VPMULLD Y4, Y3, Y3 // byte offset of clause k's first include mass: 2*k*nl
	MOVL $0xFFFF, AX
	VPBROADCASTQ AX, Z7
	MOVQ shift+40(FP), X8
	VPTERNLOGQ $0xff, Z9, Z9, Z9 // -1
	MOVQ inc+8(FP), DX
	MOVQ lit0+24(FP), DI
	MOVQ nz+32(FP), R8
	TESTQ R8, R8
	JZ   s8end

s8loop:
	MOVLQSX (DI), AX // literal i
	// r = (s ^ s>>1 ^ s>>3 ^ s>>4) mod 2^16, s = s>>16 | r<<48
	VPSRLQ $1, Z0, Z10
	VPSRLQ $3, Z0, Z11
	VPSRLQ $4, Z0, Z12
	VPTERNLOGQ $0x96, Z10, Z11, Z12
	VPXORQ Z0, Z12, Z12
	VPANDQ Z7, Z12, Z12
	VPSRLQ $16, Z0, Z0
	VPSLLQ $48, Z12, Z13
	VPORQ  Z13, Z0, Z0
	// the include masses inc[k*nl + i] << shift
	LEAQ (AX)(AX*1), BX
	VPBROADCASTD BX, Y14
	VPADDD Y3, Y14, Y14
	KMOVW K1, K2
	VPXORQ Z15, Z15, Z15
	VPGATHERDQ (DX)(Y14*1), K2, Z15
	VPANDQ Z7, Z15, Z15
	VPSLLQ X8, Z15, Z15
	VPCMPUQ $1, Z15, Z12, K1, K3 // included: r < mass
	VPSUBQ Z9, Z1, K3, Z1
	VPBROADCASTQ AX, Z5
	VMOVDQA64 Z5, K3, Z2
	ADDQ $4, DI
	DECQ R8
	JNZ  s8loop

s8end:
	VMOVDQU64 Z0, K1, (SI)
	MOVQ z+56(FP), AX
	VMOVDQU64 Z1, (AX)
	MOVQ who+64(FP), AX
	VMOVDQU64 Z2, (AX)
	VZEROUPPER
	RET

// Offsets of tpm4Args (kernel_amd64.go; TestTPM4ArgsLayout).
#define B_Q 0
#define B_LO 8
#define B_HI 16
#define B_INC 24
#define B_IDX 32
#define B_CNT 40
#define B_STRIDE 48
#define B_N 56

// func tpm4s(a *tpm4Args)
//
// TPM4 (spvs.tpm4) on the TAs base+idx[k], k = 0..cnt-1 (q, lo, hi and
// inc point at TA base's): a TA whose support starts at an include state is left alone;
// otherwise e = min(hi, N-1), and when e = N-1 the mass of state N-1 joins
// state N (and the include mass) before the exclude states below it move
// up one state, else states lo..e move up one; state lo becomes 0, the
// support becomes lo+1..max(hi, e+1). The move is a copy of L words one
// state up, made top-down in blocks of at most 32 words (masked loads and
// stores: nothing outside the L words is read or written), so no block
// reads a word an earlier one wrote. The TA PFD4 ahead is prefetched.
TEXT ·tpm4s(SB), NOSPLIT, $0-8
	MOVQ a+0(FP), DI
	MOVQ B_Q(DI), SI
	MOVQ B_IDX(DI), R15
	MOVQ B_N(DI), R13
	XORQ R9, R9 // k

t4loop:
	CMPQ R9, B_CNT(DI)
	JGE  t4end
	// prefetch the four lines from the bottom of the support of TA
	// idx[k+PFD4] (the exclude states TPM4 moves: states 0..N-1 of N 100
	// are 200 bytes)
	LEAQ    PFD4(R9), AX
	CMPQ    AX, B_CNT(DI)
	JGE     t4nopf
	MOVLQSX (R15)(AX*4), AX
	MOVQ    B_LO(DI), BX
	MOVWQZX (BX)(AX*2), CX
	IMULQ   B_STRIDE(DI), AX
	ADDQ    SI, AX
	PREFETCHT0 (AX)(CX*2)
	PREFETCHT0 64(AX)(CX*2)
	PREFETCHT0 128(AX)(CX*2)
	PREFETCHT0 192(AX)(CX*2)

t4nopf:
	MOVLQSX (R15)(R9*4), R10 // TA base+i: offset i
	INCQ    R9
	MOVQ    B_LO(DI), BX
	MOVWQZX (BX)(R10*2), R11 // lo
	CMPQ    R11, R13
	JGE     t4loop // all mass on the include side: unchanged
	MOVQ    B_HI(DI), BX
	MOVWQZX (BX)(R10*2), R12 // hi
	MOVQ    R10, R14
	IMULQ   B_STRIDE(DI), R14
	ADDQ    SI, R14 // the SPV
	LEAQ    -1(R13), CX // N-1
	CMPQ    R12, CX
	JL      t4below
	// e = N-1: state N-1's mass joins state N, the states lo..N-2 move up
	MOVWLZX (R14)(CX*2), AX
	ADDW    AX, (R14)(R13*2)
	MOVQ    B_INC(DI), BX
	ADDW    AX, (BX)(R10*2)
	MOVQ    CX, DX // L = N-1-lo words move
	SUBQ    R11, DX
	LEAQ    1(CX), AX // new hi candidate e+1 = N
	JMP     t4move

t4below:
	// e = hi < N-1: the states lo..hi move up
	MOVQ    R12, DX
	SUBQ    R11, DX
	INCQ    DX // L = hi-lo+1
	LEAQ    1(R12), AX // e+1

t4move:
	CMPQ    AX, R12
	JLE     t4hi
	MOVQ    AX, R12 // hi = max(hi, e+1)

t4hi:
	LEAQ    1(R11), AX
	MOVQ    B_LO(DI), BX
	MOVW    AX, (BX)(R10*2) // lo+1
	MOVQ    B_HI(DI), BX
	MOVW    R12, (BX)(R10*2)
	// copy words lo..lo+L-1 to lo+1..lo+L, top-down, 32 at a time
	LEAQ    (R14)(R11*2), R8 // &q[lo]

t4block:
	TESTQ   DX, DX
	JLE     t4zero
	MOVQ    DX, CX
	CMPQ    CX, $32
	JLE     t4part
	MOVQ    $32, CX

t4part:
	SUBQ    CX, DX // the block is words DX..DX+CX-1 of the L
	MOVL    $1, AX
	SHLQ    CX, AX // CX = 32 is fine in 64 bits
	DECQ    AX
	KMOVD   AX, K1
	VMOVDQU16.Z (R8)(DX*2), K1, Z0
	VMOVDQU16   Z0, K1, 2(R8)(DX*2)
	JMP     t4block

t4zero:
	MOVW    $0, (R8)
	JMP     t4loop

t4end:
	VZEROUPPER
	RET
