//go:build !amd64 || purego

package ptm

import "testing"

// withKernelPaths runs f once: the loops have a single (Go) path here.
func withKernelPaths(t *testing.T, f func(t *testing.T)) { t.Run("go", f) }
