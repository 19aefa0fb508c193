//go:build !purego

package ptm

import (
	"testing"

	"golang.org/x/sys/cpu"
)

// withKernelPaths runs f once for each path of the assembly loops: SSE2,
// and AVX where the CPU has it.
func withKernelPaths(t *testing.T, f func(t *testing.T)) {
	defer func(v bool) { useAVX = v }(useAVX)
	useAVX = false
	t.Run("sse2", f)
	if cpu.X86.HasAVX {
		useAVX = true
		t.Run("avx", f)
	}
}
