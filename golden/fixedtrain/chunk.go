package fixedtrain

import (
	"math/bits"
	"unsafe"
)

// The chunked form of TPM1, TPM2 and TPM3: an SPV is cut into aligned
// chunks of 32 states and the states of the chunks that hold its support
// move at once (up32, down32: AVX-512 on amd64). The probability of every
// state comes from a table that holds 0 where the TPM leaves a state (the
// top state under TPM1, state 0 under TPM2/TPM3, the include states under
// TPM2), so no state needs a special case; a state holding 0 hands on 0,
// so the extra states of the chunks change nothing. The words are those of
// applyTPM exactly (TestChunkedMatchesApplyTPM).

// chunk is the number of states the chunked kernels move at once.
const chunk = 32

// probTable returns the per-state move probabilities of TPM k for an SPV
// of n2 states, padded with 0 to a whole number of chunks.
func probTable(k TPM, n2 int, mv Moves) []uint16 {
	p := make([]uint16, (n2+chunk-1)/chunk*chunk)
	n := n2 / 2
	for i := 0; i < n2; i++ {
		switch {
		case k == TPM1 && i < n2-1:
			p[i] = uint16(mv.Up)
		case k == TPM3 && i > 0, k == TPM2 && i > 0 && i < n:
			p[i] = uint16(mv.Down)
		}
	}
	return p
}

// chunkTables are the tables of the chunked TPMs of one trainer: the
// dither and the three probability tables, each padded to whole chunks.
type chunkTables struct {
	dith, up, down, down2 []uint16
}

// newChunkTables returns the tables for SPVs of n2 states, or nil when the
// moves do not fit 16 bits (s = 1, or s >= 2^17): then the trainer keeps
// to applyTPM.
func newChunkTables(n2 int, mv Moves) *chunkTables {
	if mv.Up >= 1<<FracBits || mv.Down >= 1<<FracBits {
		return nil
	}
	d := ditherTable((n2 + chunk - 1) / chunk * chunk)
	return &chunkTables{dith: d, up: probTable(TPM1, n2, mv), down: probTable(TPM3, n2, mv), down2: probTable(TPM2, n2, mv)}
}

// applyChunked is applyTPM for k = TPM1, TPM2 or TPM3 through the chunked
// kernels: it multiplies the SPV q (zero outside lo..hi, q[lo] and q[hi]
// non-zero) in place and returns the change of the include mass and the
// new trimmed support, the same as applyTPM's.
func applyChunked(k TPM, q []uint16, lo, hi int, mv Moves, r uint32, ct *chunkTables) (dI int32, nlo, nhi int) {
	return applyChunkedWith(k, q, lo, hi, mv, r, ct, up32, down32)
}

// chunkKernel is the signature of up32 and down32.
type chunkKernel func(q, dith, prob *uint16, c0, c1 int, r uint16, topMask uint32) (carry uint16, mTop, mBot uint32)

// applyChunkedWith is applyChunked with the given kernels.
func applyChunkedWith(k TPM, q []uint16, lo, hi int, mv Moves, r uint32, ct *chunkTables, up, down chunkKernel) (dI int32, nlo, nhi int) {
	n2 := len(q)
	n := n2 / 2
	c0, c1 := lo/chunk, hi/chunk
	top := uint32(0xFFFFFFFF)
	if rest := n2 - c1*chunk; rest < chunk {
		top = 1<<uint(rest) - 1
	}
	_ = ct.dith[c1*chunk+chunk-1]
	if k == TPM1 {
		_ = ct.up[c1*chunk+chunk-1]
		dI = int32(transfer(uint32(q[n-1]), mv.Up, r+uint32(ct.dith[n-1])))
		carry, mTop, mBot := up(&q[0], &ct.dith[0], &ct.up[0], c0, c1, uint16(r), top)
		if carry != 0 {
			hi = c1*chunk + chunk
			q[hi] += carry
		} else {
			hi = c1*chunk + chunk - 1 - bits.LeadingZeros32(mTop)
		}
		if mBot != 0 {
			lo = c0*chunk + bits.TrailingZeros32(mBot)
		} else {
			lo = c0*chunk + chunk
		}
		return dI, lo, hi
	}
	p := ct.down
	if k == TPM3 {
		dI = -int32(transfer(uint32(q[n]), mv.Down, r+uint32(ct.dith[n])))
	} else {
		p = ct.down2
	}
	_ = p[c1*chunk+chunk-1]
	carry, mTop, mBot := down(&q[0], &ct.dith[0], &p[0], c0, c1, uint16(r), top)
	if carry != 0 {
		lo = c0*chunk - 1
		q[lo] += carry
	} else {
		lo = c0*chunk + bits.TrailingZeros32(mBot)
	}
	if mTop != 0 {
		hi = c1*chunk + chunk - 1 - bits.LeadingZeros32(mTop)
	} else {
		hi = c1*chunk - 1
	}
	return dI, lo, hi
}

// up32Go is up32 in Go (kernel_amd64.go documents it): the reference the
// assembly is tested against and the kernel where there is none.
func up32Go(q, dith, prob *uint16, c0, c1 int, r uint16, topMask uint32) (carry uint16, mTop, mBot uint32) {
	end := (c1 + 1) * chunk
	Q := unsafe.Slice(q, end)
	D := unsafe.Slice(dith, end)
	P := unsafe.Slice(prob, end)
	var in uint32
	for c := c0; c <= c1; c++ {
		mask := uint32(0xFFFFFFFF)
		if c == c1 {
			mask = topMask
		}
		var m uint32
		for k := 0; k < chunk; k++ {
			i := c*chunk + k
			if mask>>uint(k)&1 == 0 {
				in = 0 // past the SPV: holds 0, hands on 0
				continue
			}
			v := uint32(Q[i])
			t := (v*uint32(P[i]) + uint32(r+D[i])) >> FracBits
			Q[i] = uint16(v - t + in)
			in = t
			if Q[i] != 0 {
				m |= 1 << uint(k)
			}
		}
		if c == c0 {
			mBot = m
		}
		mTop = m
	}
	return uint16(in), mTop, mBot
}

// down32Go is down32 in Go.
func down32Go(q, dith, prob *uint16, c0, c1 int, r uint16, topMask uint32) (carry uint16, mTop, mBot uint32) {
	end := (c1 + 1) * chunk
	Q := unsafe.Slice(q, end)
	D := unsafe.Slice(dith, end)
	P := unsafe.Slice(prob, end)
	var in uint32
	for c := c1; c >= c0; c-- {
		mask := uint32(0xFFFFFFFF)
		if c == c1 {
			mask = topMask
		}
		var m uint32
		for k := chunk - 1; k >= 0; k-- {
			i := c*chunk + k
			if mask>>uint(k)&1 == 0 {
				continue
			}
			v := uint32(Q[i])
			t := (v*uint32(P[i]) + uint32(r+D[i])) >> FracBits
			Q[i] = uint16(v - t + in)
			in = t
			if Q[i] != 0 {
				m |= 1 << uint(k)
			}
		}
		if c == c1 {
			mTop = m
		}
		mBot = m
	}
	return uint16(in), mTop, mBot
}
