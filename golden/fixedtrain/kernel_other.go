//go:build !amd64 || purego

package fixedtrain

// useChunked selects the chunked TPMs (applyChunked) in the trainer; here
// they run in Go and are slower than applyTPM's loops, so they serve only
// the tests.
var useChunked = false

// chunkKernels is true: up32 and down32 are Go here and run anywhere.
const chunkKernels = true

// moveUp is moveUpGo (no assembly for this architecture or build).
func moveUp(R, dith []uint16, cnt int, r uint16, prob uint32) { moveUpGo(R, dith, cnt, r, prob, 0) }

// moveDown is moveDownGo (no assembly for this architecture or build).
func moveDown(R, dith []uint16, cnt int, r uint16, prob uint32) {
	moveDownGo(R, dith, cnt, r, prob, 0)
}

// up32 is up32Go (no assembly for this architecture or build).
func up32(q, dith, prob *uint16, c0, c1 int, r uint16, topMask uint32) (carry uint16, mTop, mBot uint32) {
	return up32Go(q, dith, prob, c0, c1, r, topMask)
}

// down32 is down32Go (no assembly for this architecture or build).
func down32(q, dith, prob *uint16, c0, c1 int, r uint16, topMask uint32) (carry uint16, mTop, mBot uint32) {
	return down32Go(q, dith, prob, c0, c1, r, topMask)
}

// useTypeI32 is false: there is no typeI32 here.
const useTypeI32 = false

// typeIChunked is never called here (useTypeI32 is false).
func (tr *Trainer) typeIChunked(c, i0, i1 int, fires bool, s uint64) uint64 {
	panic("fixedtrain: no typeI32")
}

// useSample8 is false: there is no sample8 here.
const useSample8 = false

// sampleAVX512 is never called here (useSample8 is false).
func (tr *Trainer) sampleAVX512(a, b int) int { panic("fixedtrain: no sample8") }

// tpm4List applies TPM4 to the TAs base+i for i in idx (increasing), as
// spvs.tpm4 on each in order (no assembly for this architecture or build).
func (s *spvs) tpm4List(base int, idx []int32) {
	for _, i := range idx {
		s.tpm4(base + int(i))
	}
}
