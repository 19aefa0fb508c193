//go:build !purego

package ptm

import "golang.org/x/sys/cpu"

// The 256-bit loops of kernel_amd64.s round each lane exactly like the
// scalar instructions, so choosing them never changes a result, only the
// speed.
func init() {
	if cpu.X86.HasAVX {
		stayDown, stayUp = stayDownAVX, stayUpAVX
	}
}

// stayDownAVX is stayDownGo four states per instruction (requires AVX).
//
//go:noescape
func stayDownAVX(q []float64, stay, down float64)

// stayUpAVX is stayUpGo four states per instruction (requires AVX).
//
//go:noescape
func stayUpAVX(q []float64, stay, up float64)
