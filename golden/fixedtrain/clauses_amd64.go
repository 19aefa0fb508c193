//go:build !purego

package fixedtrain

// typeIFast runs Clauses.TypeI through typeI32 when the chunked kernels
// are in use and reports whether it did.
func (cl *Clauses) typeIFast(c int, lit []bool, fires bool) bool {
	if !useTypeI32 || !useChunked || cl.ct == nil {
		return false
	}
	nl, n2 := cl.lits, 2*cl.n
	base := c * nl
	ct := cl.ct
	last := (n2 - 1) / chunk
	a := typeIArgs{
		q: &cl.spv[base*n2], lo: &cl.lo[base], hi: &cl.hi[base], inc: &cl.inc[base],
		lit: &lit[0], dith: &ct.dith[0], up: &ct.up[0], down: &ct.down[0],
		lane: cl.lanes[c].s, stride: 2 * n2, nl: nl, n: cl.n, last: last * chunk * 2, top: n2 - 1,
		topMask: uint32(1)<<uint(n2-last*chunk) - 1, upP: cl.mv.Up, downP: cl.mv.Down,
	}
	if n2-last*chunk == chunk {
		a.topMask = 0xFFFFFFFF
	}
	if fires {
		a.fires = 1
	}
	_ = cl.spv[(base+nl)*n2-1]
	_, _ = cl.lo[base+nl-1], cl.hi[base+nl-1]
	_ = cl.inc[base+nl-1]
	_ = lit[nl-1]
	typeI32(&a)
	cl.lanes[c].s = a.lane
	return true
}
