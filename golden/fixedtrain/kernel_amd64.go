//go:build !purego

package fixedtrain

import "golang.org/x/sys/cpu"

// useAVX2 selects the 16-state loops of moveUp and moveDown. They compute
// every word exactly like moveUpGo and moveDownGo, so the choice never
// changes a result, only the speed (TestKernelPaths).
var useAVX2 = cpu.X86.HasAVX2

// up16 runs moveUpGo's loop over chunks*16 states of R (no receiving
// state) with carry 0 and returns the transfer the last state handed on
// (kernel_amd64.s). prob < 2^16.
//
//go:noescape
func up16(R, dith *uint16, chunks int, r, prob uint16) uint16

// down16 runs moveDownGo's loop over chunks*16 states ending at top+15,
// from the top down, with carry 0, and returns the transfer the lowest of
// them handed on (kernel_amd64.s). top points at the lowest state of the
// highest chunk. prob < 2^16.
//
//go:noescape
func down16(top, dith *uint16, chunks int, r, prob uint16) uint16

// moveUp is moveUpGo with carry 0, 16 states at a time with AVX2.
func moveUp(R, dith []uint16, cnt int, r uint16, prob uint32) {
	full := cnt / 16
	if !useAVX2 || prob >= 1<<FracBits || full == 0 {
		moveUpGo(R, dith, cnt, r, prob, 0)
		return
	}
	_, _ = R[cnt], dith[cnt-1]
	carry := up16(&R[0], &dith[0], full, r, uint16(prob))
	k := full * 16
	moveUpGo(R[k:], dith[k:], cnt-k, r, prob, uint32(carry))
}

// moveDown is moveDownGo with carry 0, 16 states at a time with AVX2.
func moveDown(R, dith []uint16, cnt int, r uint16, prob uint32) {
	full := cnt / 16
	if !useAVX2 || prob >= 1<<FracBits || full == 0 {
		moveDownGo(R, dith, cnt, r, prob, 0)
		return
	}
	_, _ = R[cnt], dith[cnt]
	carry := down16(&R[cnt-15], &dith[cnt-15], full, r, uint16(prob))
	k := cnt - full*16 // states 1..k are left, below the chunks
	moveDownGo(R[:k+1], dith[:k+1], k, r, prob, uint32(carry))
}
