//go:build !purego

package ptm

import "golang.org/x/sys/cpu"

// useAVX selects the 256-bit loops of stayDown and stayUp. They round each
// lane exactly like the scalar loops, so the choice never changes a result,
// only the speed.
var useAVX = cpu.X86.HasAVX

// stayDown is stayDownGo in assembly (kernel_amd64.s).
//
//go:noescape
func stayDown(q []float64, stay, down float64)

// stayUp is stayUpGo in assembly (kernel_amd64.s).
//
//go:noescape
func stayUp(q []float64, stay, up float64)
