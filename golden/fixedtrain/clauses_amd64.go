//go:build !purego

package fixedtrain

// typeIFast runs Clauses.TypeI through typeI32 when the chunked kernels
// are in use and reports whether it did.
func (cl *Clauses) typeIFast(c int, lit []bool, fires bool) bool {
	if !useTypeI32 || !useChunked || cl.ct == nil {
		return false
	}
	cl.lanes[c].s = cl.typeI32At(c*cl.lits, lit[:cl.lits], fires, cl.lanes[c].s)
	return true
}
