//go:build !purego

package fixedtrain

import "golang.org/x/sys/cpu"

// useAVX2 selects the 16-state loops of transfers and combine. They compute
// every word exactly like transfersGo and combineGo, so the choice never
// changes a result, only the speed (TestKernelPaths).
var useAVX2 = cpu.X86.HasAVX2

// transfers16 is transfersGo for n >= 16 states and prob < 2^16
// (kernel_amd64.s).
//
//go:noescape
func transfers16(t, q, dith *uint16, n int, r, prob uint16)

// combine16 is combineGo for n >= 16 states; it reads t[0..n]
// (kernel_amd64.s).
//
//go:noescape
func combine16(q, t *uint16, n int, up bool)

// transfers is transfersGo, 16 states at a time with AVX2.
func transfers(t, q, dith []uint16, r uint16, prob uint32) {
	if !useAVX2 || prob >= 1<<FracBits || len(t) < 16 {
		transfersGo(t, q, dith, r, prob)
		return
	}
	_, _ = q[len(t)-1], dith[len(t)-1]
	transfers16(&t[0], &q[0], &dith[0], len(t), r, uint16(prob))
}

// combine is combineGo, 16 states at a time with AVX2.
func combine(q, t []uint16, up bool) {
	if !useAVX2 || len(q) < 16 {
		combineGo(q, t, up)
		return
	}
	_ = t[len(q)]
	combine16(&q[0], &t[0], len(q), up)
}
