//go:build !purego

#include "textflag.h"

// Each output lane is VADDPD(VMULPD(stay, own), VMULPD(move, neighbour)):
// two rounded products and a rounded sum, exactly the scalar arithmetic of
// stayDownGo and stayUpGo. Loads of a chunk precede its store, and chunks
// advance away from the neighbours still to be read, so the updates are in
// place as in the Go loops.

// func stayDownAVX(q []float64, stay, down float64)
TEXT ·stayDownAVX(SB), NOSPLIT, $0-40
	MOVQ         q_base+0(FP), SI
	MOVQ         q_len+8(FP), CX
	VBROADCASTSD stay+24(FP), Y0
	VBROADCASTSD down+32(FP), Y1
	SUBQ         $1, CX            // CX = states to write, q[0..len-2]
	JLE          down_done

down_loop8:
	CMPQ    CX, $8
	JLT     down_loop4
	VMOVUPD (SI), Y2               // q[j..j+3]
	VMOVUPD 8(SI), Y3              // q[j+1..j+4]
	VMOVUPD 32(SI), Y4             // q[j+4..j+7]
	VMOVUPD 40(SI), Y5             // q[j+5..j+8]
	VMULPD  Y0, Y2, Y2
	VMULPD  Y1, Y3, Y3
	VMULPD  Y0, Y4, Y4
	VMULPD  Y1, Y5, Y5
	VADDPD  Y3, Y2, Y2
	VADDPD  Y5, Y4, Y4
	VMOVUPD Y2, (SI)
	VMOVUPD Y4, 32(SI)
	ADDQ    $64, SI
	SUBQ    $8, CX
	JMP     down_loop8

down_loop4:
	CMPQ    CX, $4
	JLT     down_tail
	VMOVUPD (SI), Y2
	VMOVUPD 8(SI), Y3
	VMULPD  Y0, Y2, Y2
	VMULPD  Y1, Y3, Y3
	VADDPD  Y3, Y2, Y2
	VMOVUPD Y2, (SI)
	ADDQ    $32, SI
	SUBQ    $4, CX

down_tail:
	TESTQ  CX, CX
	JZ     down_done
	VMOVSD (SI), X2
	VMOVSD 8(SI), X3
	VMULSD X0, X2, X2
	VMULSD X1, X3, X3
	VADDSD X3, X2, X2
	VMOVSD X2, (SI)
	ADDQ   $8, SI
	DECQ   CX
	JMP    down_tail

down_done:
	VZEROUPPER
	RET

// func stayUpAVX(q []float64, stay, up float64)
TEXT ·stayUpAVX(SB), NOSPLIT, $0-40
	MOVQ         q_base+0(FP), SI
	MOVQ         q_len+8(FP), CX
	VBROADCASTSD stay+24(FP), Y0
	VBROADCASTSD up+32(FP), Y1
	SUBQ         $1, CX            // CX = states to write, q[len-1] down to q[1]
	JLE          up_done
	LEAQ         (SI)(CX*8), SI    // SI = &q[j], the highest state not yet written

up_loop8:
	CMPQ    CX, $8
	JLT     up_loop4
	VMOVUPD -24(SI), Y2            // q[j-3..j]
	VMOVUPD -32(SI), Y3            // q[j-4..j-1]
	VMOVUPD -56(SI), Y4            // q[j-7..j-4]
	VMOVUPD -64(SI), Y5            // q[j-8..j-5]
	VMULPD  Y0, Y2, Y2
	VMULPD  Y1, Y3, Y3
	VMULPD  Y0, Y4, Y4
	VMULPD  Y1, Y5, Y5
	VADDPD  Y3, Y2, Y2
	VADDPD  Y5, Y4, Y4
	VMOVUPD Y2, -24(SI)
	VMOVUPD Y4, -56(SI)
	SUBQ    $64, SI
	SUBQ    $8, CX
	JMP     up_loop8

up_loop4:
	CMPQ    CX, $4
	JLT     up_tail
	VMOVUPD -24(SI), Y2
	VMOVUPD -32(SI), Y3
	VMULPD  Y0, Y2, Y2
	VMULPD  Y1, Y3, Y3
	VADDPD  Y3, Y2, Y2
	VMOVUPD Y2, -24(SI)
	SUBQ    $32, SI
	SUBQ    $4, CX

up_tail:
	TESTQ  CX, CX
	JZ     up_done
	VMOVSD (SI), X2
	VMOVSD -8(SI), X3
	VMULSD X0, X2, X2
	VMULSD X1, X3, X3
	VADDSD X3, X2, X2
	VMOVSD X2, (SI)
	SUBQ   $8, SI
	DECQ   CX
	JMP    up_tail

up_done:
	VZEROUPPER
	RET
