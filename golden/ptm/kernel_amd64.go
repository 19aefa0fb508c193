//go:build !purego

package ptm

import "golang.org/x/sys/cpu"

// useAVX selects the 256-bit loops of kernel_amd64.s. Their vector products
// and sums round each lane exactly like the scalar instructions, so the
// choice never changes a result, only the speed.
var useAVX = cpu.X86.HasAVX

// stayDownAVX is stayDownGo four states per instruction (requires AVX).
//
//go:noescape
func stayDownAVX(q []float64, stay, down float64)

// stayUpAVX is stayUpGo four states per instruction (requires AVX).
//
//go:noescape
func stayUpAVX(q []float64, stay, up float64)

// stayDown is stayDownGo, vectorised where the CPU allows.
func stayDown(q []float64, stay, down float64) {
	if useAVX {
		stayDownAVX(q, stay, down)
		return
	}
	stayDownGo(q, stay, down)
}

// stayUp is stayUpGo, vectorised where the CPU allows.
func stayUp(q []float64, stay, up float64) {
	if useAVX {
		stayUpAVX(q, stay, up)
		return
	}
	stayUpGo(q, stay, up)
}
