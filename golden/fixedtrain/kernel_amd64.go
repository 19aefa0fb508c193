//go:build !purego

package fixedtrain

import "golang.org/x/sys/cpu"

// useAVX2 selects the 16-state loops of moveUp and moveDown. They compute
// every word exactly like moveUpGo and moveDownGo, so the choice never
// changes a result, only the speed (TestKernelPaths).
var useAVX2 = cpu.X86.HasAVX2

// useChunked selects the chunked TPMs (applyChunked, 32 states per AVX-512
// instruction), typeI32 and sample8 in the trainer. They compute every
// word exactly like applyTPM and the Go loops (TestChunkedMatchesApplyTPM,
// TestTypeI32EqualsGo), so the choice never changes a result, only the
// speed. The kernels use AVX-512 F, BW and VL.
var useChunked = chunkKernels

// chunkKernels reports whether this CPU runs the AVX-512 kernels (up32,
// down32, typeI32, sample8); the tests that force useChunked need it.
var chunkKernels = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL

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

// up32 applies the upward moves of TPM1 to the chunks c0..c1 of the SPV
// at q (kernel_amd64.s, AVX-512): state n hands floor((q[n]*prob[n] +
// (r + dith[n] mod 2^16)) / 2^16) to state n+1. It returns the transfer
// out of the top chunk (for state 32*c1+32, which the caller updates) and
// the masks of the non-zero words of chunks c1 and c0 after the update.
// topMask selects the states of chunk c1 that belong to the SPV; dith and
// prob cover every state of the chunks.
//
//go:noescape
func up32(q, dith, prob *uint16, c0, c1 int, r uint16, topMask uint32) (carry uint16, mTop, mBot uint32)

// down32 is up32's downward twin for TPM2 and TPM3: state n hands its
// transfer to state n-1; the transfer out of the bottom chunk is for state
// 32*c0-1.
//
//go:noescape
func down32(q, dith, prob *uint16, c0, c1 int, r uint16, topMask uint32) (carry uint16, mTop, mBot uint32)

// typeIArgs are the operands of typeI32: Type I feedback (consistent
// rule) of one clause. The assembly reads the fields at fixed offsets
// (kernel_amd64.s, TestTypeIArgsLayout).
type typeIArgs struct {
	q, lo, hi, inc *uint16 // the clause's first SPV, supports and include masses
	lit            *bool   // the literal values of the example
	dith, up, down *uint16 // the chunked tables (chunkTables)
	lane           uint64  // the clause's lane, advanced by one draw per literal
	stride         int     // bytes per SPV: 4N
	nl             int     // literals: 2o
	n              int     // N
	last           int     // byte offset of the SPV's last chunk
	top            int     // 2N-1
	topMask        uint32  // the states of the last chunk that belong to the SPV
	upP, downP     uint32  // UP and DOWN
	fires          uint32  // 1 if the clause fired, else 0
}

// typeI32 is Trainer.typeI for the consistent rule over the chunked TPMs
// (AVX-512): for each literal i in order one rounding draw from a.lane,
// then TPM1 (literal 1, clause fires) or TPM3, the include mass and the
// support updated as applyChunked does.
//
//go:noescape
func typeI32(a *typeIArgs)

// useTypeI32 selects typeI32 for Type I feedback when the chunked TPMs
// are in use; it gives the words of the Go loop over applyChunked
// (TestTrainChunkedEqualsApplyTPM).
var useTypeI32 = true

// typeIChunked is typeIRange (consistent rule) through typeI32: the
// literals i0..i1-1 of clause c, lane state s before the first draw; it
// returns the lane state after the last.
func (tr *Trainer) typeIChunked(c, i0, i1 int, fires bool, s uint64) uint64 {
	if i1 <= i0 {
		return s
	}
	return tr.typeI32At(c*tr.lits+i0, tr.lit[i0:i1], fires, s)
}

// typeI32At runs typeI32 (the chunked kernels' tables must be set) on the
// len(lit) TAs from base, whose literals are lit, lane state s before the
// first draw; it returns the lane state after the last.
func (sp *spvs) typeI32At(base int, lit []bool, fires bool, s uint64) uint64 {
	nl, n2 := len(lit), 2*sp.n
	ct := sp.ct
	last := (n2 - 1) / chunk
	a := typeIArgs{
		q: &sp.spv[base*n2], lo: &sp.lo[base], hi: &sp.hi[base], inc: &sp.inc[base],
		lit: &lit[0], dith: &ct.dith[0], up: &ct.up[0], down: &ct.down[0],
		lane: s, stride: 2 * n2, nl: nl, n: sp.n, last: last * chunk * 2, top: n2 - 1,
		topMask: uint32(1)<<uint(n2-last*chunk) - 1, upP: sp.mv.Up, downP: sp.mv.Down,
	}
	if n2-last*chunk == chunk {
		a.topMask = 0xFFFFFFFF
	}
	if fires {
		a.fires = 1
	}
	_ = sp.spv[(base+nl)*n2-1]
	_, _ = sp.lo[base+nl-1], sp.hi[base+nl-1]
	_ = sp.inc[base+nl-1]
	typeI32(&a)
	return a.lane
}

// sample8 is phase A sampling of n <= 8 consecutive clauses at once
// (kernel_amd64.s, AVX-512): lanes and inc are those of the first clause,
// nl the literals per clause, lit0 the nz literals of value 0. It returns
// per clause the number of included 0-literals (not capped) and the last
// one, and advances the lanes by nz draws. inc must be readable one word
// past the last TA of the clauses (the gather reads 32 bits).
//
//go:noescape
func sample8(lanes *uint64, inc *uint16, nl int, lit0 *int32, nz int, shift uint64, n int, z, who *[8]uint64)

// useSample8 selects sample8 for phase A when the chunked TPMs are in use
// (both need AVX-512); the draws and results are those of sample's loop.
const useSample8 = true

// sampleAVX512 is Trainer.sample through sample8.
func (tr *Trainer) sampleAVX512(a, b int) (v int) {
	shift := uint64(16 - tr.bits)
	nl := tr.lits
	nz := len(tr.lit0)
	var lit0 *int32
	if nz > 0 {
		lit0 = &tr.lit0[0]
	}
	var z, who [8]uint64
	inc := tr.inc[:cap(tr.inc)]
	for c := a; c < b; c += 8 {
		n := min(8, b-c)
		_ = inc[(c+n)*nl] // the gather reads one word past the group
		sample8(&tr.clane[c].s, &inc[c*nl], nl, lit0, nz, shift, n, &z, &who)
		for k := 0; k < n; k++ {
			tr.zeros[c+k], tr.who[c+k] = uint8(min(z[k], 2)), int32(who[k])
			if z[k] == 0 {
				if (c+k)%tr.clauses%2 == 0 { // even clauses vote for the class
					v++
				} else {
					v--
				}
			}
		}
	}
	return v
}

// tpm4Args are the operands of tpm4s. The assembly reads the fields at
// fixed offsets (kernel_amd64.s, TestTPM4ArgsLayout).
type tpm4Args struct {
	q, lo, hi, inc *uint16 // TA base's SPV, support and include mass
	idx            *int32  // the TAs' offsets from base, increasing
	cnt            int     // len(idx)
	stride         int     // bytes from one SPV to the next: 4N
	n              int     // N
}

// tpm4s is spvs.tpm4 on each TA of a list, in order, in one assembly call
// (AVX-512: the exclude states move up 32 at a time, the TA 6 ahead is
// prefetched).
//
//go:noescape
func tpm4s(a *tpm4Args)

// useTPM4s selects tpm4s in tpm4List when the chunked kernels (AVX-512)
// are in use; it gives the words of spvs.tpm4 (TestTPM4ListEqualsGo).
var useTPM4s = true

// tpm4List applies TPM4 to the TAs base+i for i in idx (increasing), as
// spvs.tpm4 on each in order: Type II feedback on the 0-literals of a
// clause whose first TA is base.
func (s *spvs) tpm4List(base int, idx []int32) {
	if !useTPM4s || !useChunked || len(idx) == 0 {
		for _, i := range idx {
			s.tpm4(base + int(i))
		}
		return
	}
	if idx[0] < 0 {
		panic("fixedtrain: tpm4List: negative TA offset")
	}
	last := base + int(idx[len(idx)-1])
	_, _, _ = s.lo[last], s.hi[last], s.inc[last]
	_ = s.spv[(last+1)*2*s.n-1]
	a := tpm4Args{q: &s.spv[base*2*s.n], lo: &s.lo[base], hi: &s.hi[base], inc: &s.inc[base],
		idx: &idx[0], cnt: len(idx), stride: 4 * s.n, n: s.n}
	tpm4s(&a)
}
