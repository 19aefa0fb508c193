//go:build !amd64 || purego

package fixedtrain

// typeIFast reports false: there is no typeI32 here.
func (cl *Clauses) typeIFast(c int, lit []bool, fires bool) bool { return false }
