//go:build !purego

#include "textflag.h"

// With AVX, each output lane is VADDPD(VMULPD(stay, own), VMULPD(move,
// neighbour)): two rounded products and a rounded sum, exactly the scalar
// arithmetic of stayDownGo and stayUpGo, which the SSE2 loops below (used
// without AVX, and for fewer than four states) repeat one state at a time.
// A chunk's loads precede its store, and chunks advance away from the
// neighbours still to be read, so the update is in place as in the Go
// loops. Instead of a scalar tail, the last chunk (the highest for
// stayDown, the lowest for stayUp) is computed from the original values
// before the loop and stored after it, rewriting the same bits over any
// states the loop has already written.

// func stayDown(q []float64, stay, down float64)
TEXT ·stayDown(SB), NOSPLIT, $0-40
	MOVQ q_base+0(FP), SI
	MOVQ q_len+8(FP), CX
	SUBQ $1, CX                      // CX = L, the states to write: q[0..L-1]
	JLE  down_done
	CMPB ·useAVX(SB), $0
	JEQ  down_scalar
	CMPQ CX, $4
	JLT  down_scalar
	VBROADCASTSD stay+24(FP), Y0
	VBROADCASTSD down+32(FP), Y1
	CMPQ         CX, $8
	JLT          down_short
	LEAQ         -64(SI)(CX*8), DI   // DI = &q[L-8]
	VMULPD       (DI), Y0, Y6        // the last 8 states, q[L-8..L-1]
	VMULPD       8(DI), Y1, Y2
	VADDPD       Y2, Y6, Y6
	VMULPD       32(DI), Y0, Y7
	VMULPD       40(DI), Y1, Y3
	VADDPD       Y3, Y7, Y7
	SHRQ         $3, CX              // whole chunks of 8

down_loop:
	VMULPD  (SI), Y0, Y2   // q[j..j+3]
	VMULPD  8(SI), Y1, Y3  // q[j+1..j+4]
	VMULPD  32(SI), Y0, Y4 // q[j+4..j+7]
	VMULPD  40(SI), Y1, Y5 // q[j+5..j+8]
	VADDPD  Y3, Y2, Y2
	VADDPD  Y5, Y4, Y4
	VMOVUPD Y2, (SI)
	VMOVUPD Y4, 32(SI)
	ADDQ    $64, SI
	DECQ    CX
	JNZ     down_loop
	VMOVUPD Y6, (DI)
	VMOVUPD Y7, 32(DI)
	VZEROUPPER
	RET

down_short:
	LEAQ    -32(SI)(CX*8), DI // DI = &q[L-4]
	VMULPD  (DI), Y0, Y6      // the last 4 states
	VMULPD  8(DI), Y1, Y2
	VADDPD  Y2, Y6, Y6
	VMULPD  (SI), Y0, Y2      // the first 4 states
	VMULPD  8(SI), Y1, Y3
	VADDPD  Y3, Y2, Y2
	VMOVUPD Y2, (SI)
	VMOVUPD Y6, (DI)
	VZEROUPPER
	RET

down_scalar:
	MOVSD stay+24(FP), X0
	MOVSD down+32(FP), X1

down_scalar_loop:
	MOVSD (SI), X2
	MULSD X0, X2
	MOVSD 8(SI), X3
	MULSD X1, X3
	ADDSD X3, X2
	MOVSD X2, (SI)
	ADDQ  $8, SI
	DECQ  CX
	JNZ   down_scalar_loop

down_done:
	RET

// func stayUp(q []float64, stay, up float64)
TEXT ·stayUp(SB), NOSPLIT, $0-40
	MOVQ q_base+0(FP), SI
	MOVQ q_len+8(FP), CX
	SUBQ $1, CX                      // CX = L, the states to write: q[L] down to q[1]
	JLE  up_done
	CMPB ·useAVX(SB), $0
	JEQ  up_scalar
	CMPQ CX, $4
	JLT  up_scalar
	VBROADCASTSD stay+24(FP), Y0
	VBROADCASTSD up+32(FP), Y1
	CMPQ         CX, $8
	JLT          up_short
	VMULPD       8(SI), Y0, Y6       // the lowest 8 states, q[1..8]
	VMULPD       (SI), Y1, Y2
	VADDPD       Y2, Y6, Y6
	VMULPD       40(SI), Y0, Y7
	VMULPD       32(SI), Y1, Y3
	VADDPD       Y3, Y7, Y7
	MOVQ         SI, DI              // DI = &q[0]
	LEAQ         -56(SI)(CX*8), SI   // SI = &q[j-7], j = L the highest state not written
	SHRQ         $3, CX              // whole chunks of 8

up_loop:
	VMULPD  32(SI), Y0, Y2 // q[j-3..j]
	VMULPD  24(SI), Y1, Y3 // q[j-4..j-1]
	VMULPD  (SI), Y0, Y4   // q[j-7..j-4]
	VMULPD  -8(SI), Y1, Y5 // q[j-8..j-5]
	VADDPD  Y3, Y2, Y2
	VADDPD  Y5, Y4, Y4
	VMOVUPD Y2, 32(SI)
	VMOVUPD Y4, (SI)
	SUBQ    $64, SI
	DECQ    CX
	JNZ     up_loop
	VMOVUPD Y6, 8(DI)
	VMOVUPD Y7, 40(DI)
	VZEROUPPER
	RET

up_short:
	VMULPD  8(SI), Y0, Y6     // the lowest 4 states, q[1..4]
	VMULPD  (SI), Y1, Y2
	VADDPD  Y2, Y6, Y6
	LEAQ    -24(SI)(CX*8), DI // DI = &q[L-3]
	VMULPD  (DI), Y0, Y2      // the highest 4 states, q[L-3..L]
	VMULPD  -8(DI), Y1, Y3
	VADDPD  Y3, Y2, Y2
	VMOVUPD Y2, (DI)
	VMOVUPD Y6, 8(SI)
	VZEROUPPER
	RET

up_scalar:
	MOVSD stay+24(FP), X0
	MOVSD up+32(FP), X1
	LEAQ  (SI)(CX*8), SI       // SI = &q[L]

up_scalar_loop:
	MOVSD (SI), X2
	MULSD X0, X2
	MOVSD -8(SI), X3
	MULSD X1, X3
	ADDSD X3, X2
	MOVSD X2, (SI)
	SUBQ  $8, SI
	DECQ  CX
	JNZ   up_scalar_loop

up_done:
	RET
