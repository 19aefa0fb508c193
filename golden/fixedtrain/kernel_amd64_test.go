//go:build !purego

package fixedtrain

import (
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"golang.org/x/sys/cpu"

	"github.com/ptmhw/ptm/golden/ptm"
)

// TestKernelPaths: the AVX2 loops give the Go loops' words for random
// inputs, every length 0..100 and the extreme probabilities.
func TestKernelPaths(t *testing.T) {
	if !cpu.X86.HasAVX2 {
		t.Skip("no AVX2 on this CPU")
	}
	defer func(v bool) { useAVX2 = v }(useAVX2)
	rng := rand.New(rand.NewPCG(8, 9))
	for cnt := 0; cnt < 100; cnt++ {
		for _, prob := range []uint32{0, 1, 16804, 48732, 65535, 65536} {
			R := make([]uint16, cnt+1)
			for i := range R {
				R[i] = uint16(rng.IntN(1<<15 + 1))
				if rng.IntN(3) == 0 {
					R[i] = uint16(rng.IntN(4))
				}
			}
			off := rng.IntN(50)
			dith := ditherTable(cnt + 1 + off)[off:]
			r := uint16(rng.Uint32())
			for _, up := range []bool{true, false} {
				var out [2][]uint16
				for k, avx := range []bool{false, true} {
					useAVX2 = avx
					q := append([]uint16(nil), R...)
					if up {
						moveUp(q, dith[:cnt], cnt, r, prob)
					} else {
						moveDown(q, dith, cnt, r, prob)
					}
					out[k] = q
				}
				for i := range out[0] {
					if out[0][i] != out[1][i] {
						t.Fatalf("cnt=%d prob=%d up=%v: word %d: AVX2 %d, Go %d", cnt, prob, up, i, out[1][i], out[0][i])
					}
				}
			}
		}
	}
}

// TestTypeIArgsLayout pins the field offsets typeI32 reads
// (kernel_amd64.s A_*).
func TestTypeIArgsLayout(t *testing.T) {
	var a typeIArgs
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"q", unsafe.Offsetof(a.q), 0}, {"lo", unsafe.Offsetof(a.lo), 8}, {"hi", unsafe.Offsetof(a.hi), 16},
		{"inc", unsafe.Offsetof(a.inc), 24}, {"lit", unsafe.Offsetof(a.lit), 32}, {"dith", unsafe.Offsetof(a.dith), 40},
		{"up", unsafe.Offsetof(a.up), 48}, {"down", unsafe.Offsetof(a.down), 56}, {"lane", unsafe.Offsetof(a.lane), 64},
		{"stride", unsafe.Offsetof(a.stride), 72}, {"nl", unsafe.Offsetof(a.nl), 80}, {"n", unsafe.Offsetof(a.n), 88},
		{"last", unsafe.Offsetof(a.last), 96}, {"top", unsafe.Offsetof(a.top), 104}, {"topMask", unsafe.Offsetof(a.topMask), 112},
		{"upP", unsafe.Offsetof(a.upP), 116}, {"downP", unsafe.Offsetof(a.downP), 120}, {"fires", unsafe.Offsetof(a.fires), 124},
	} {
		if c.got != c.want {
			t.Errorf("typeIArgs.%s at offset %d, the assembly reads %d", c.name, c.got, c.want)
		}
	}
}

// TestTypeI32EqualsGo: Type I feedback through typeI32 gives the words of
// the Go loop over the chunked TPMs and of applyTPM, for N whose SPVs end
// in a partial chunk, a whole one, or fit one chunk.
func TestTypeI32EqualsGo(t *testing.T) {
	if !useChunked {
		t.Skip("no AVX-512 on this CPU")
	}
	defer func(c, a bool) { useChunked, useTypeI32 = c, a }(useChunked, useTypeI32)
	X, y := classicXOR(300, 5, 0.2, rand.New(rand.NewPCG(7, 8)))
	for _, n := range []int{3, 16, 33, 64, 100} {
		var hash []string
		for _, p := range [][2]bool{{false, false}, {true, false}, {true, true}} {
			useChunked, useTypeI32 = p[0], p[1]
			cfg := Config{Params: ptm.Params{Clauses: 6, T: 5, S: 3.9, N: n, Epochs: 3, Seed: 4, Feedback: ptm.ConsistentFeedback}}
			tr := train(t, cfg, 3, 5, false, X, y)
			if err := tr.Check(); err != nil {
				t.Fatal(err)
			}
			hash = append(hash, spvHash(tr))
		}
		if hash[0] != hash[1] || hash[0] != hash[2] {
			t.Errorf("N=%d: applyTPM, applyChunked, typeI32 give %v", n, hash)
		}
	}
}

// TestTPM4ArgsLayout pins the field offsets tpm4s reads (kernel_amd64.s
// B_*).
func TestTPM4ArgsLayout(t *testing.T) {
	var a tpm4Args
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"q", unsafe.Offsetof(a.q), 0}, {"lo", unsafe.Offsetof(a.lo), 8}, {"hi", unsafe.Offsetof(a.hi), 16},
		{"inc", unsafe.Offsetof(a.inc), 24}, {"idx", unsafe.Offsetof(a.idx), 32}, {"cnt", unsafe.Offsetof(a.cnt), 40},
		{"stride", unsafe.Offsetof(a.stride), 48}, {"n", unsafe.Offsetof(a.n), 56},
	} {
		if c.got != c.want {
			t.Errorf("tpm4Args.%s at offset %d, the assembly reads %d", c.name, c.got, c.want)
		}
	}
}

// TestTPM4ListEqualsGo: tpm4s gives spvs.tpm4's words, include masses and
// supports on random SPVs whose supports start and end below, at and
// above N-1 and N, with moves of 0 to more than 64 words, for N from 1 to
// 100 and random increasing TA lists.
func TestTPM4ListEqualsGo(t *testing.T) {
	if !useChunked {
		t.Skip("no AVX-512 on this CPU")
	}
	defer func(v bool) { useTPM4s = v }(useTPM4s)
	rng := rand.New(rand.NewPCG(4, 4))
	kinds := map[string]int{}
	for _, n := range []int{1, 2, 15, 16, 17, 31, 32, 33, 34, 64, 65, 100} {
		const tas = 60
		var ref spvs
		ref.n = n
		ref.spv = make([]uint16, tas*2*n)
		ref.inc, ref.lo, ref.hi = make([]uint16, tas), make([]uint16, tas), make([]uint16, tas)
		for ta := 0; ta < tas; ta++ {
			lo := rng.IntN(2 * n)
			hi := lo + rng.IntN(2*n-lo)
			if rng.IntN(4) == 0 { // support ending at N-1 or N
				lo = rng.IntN(n)
				hi = min(2*n-1, n-1+rng.IntN(2))
			}
			q := ref.spv[ta*2*n : (ta+1)*2*n]
			for i := lo; i <= hi; i++ {
				q[i] = uint16(rng.IntN(1 << 14))
			}
			q[lo], q[hi] = uint16(1+rng.IntN(100)), uint16(1+rng.IntN(100))
			var inc uint16
			for i := n; i < 2*n; i++ {
				inc += q[i]
			}
			ref.inc[ta], ref.lo[ta], ref.hi[ta] = inc, uint16(lo), uint16(hi)
			switch {
			case lo >= n:
				kinds["include side"]++
			case hi >= n-1:
				kinds["e = N-1"]++
			case hi-lo+1 > 32:
				kinds["below, over 32 words"]++
			default:
				kinds["below"]++
			}
		}
		base := rng.IntN(5) // the list's offsets count from TA base
		var idx []int32
		for ta := base; ta < tas; ta++ {
			if rng.IntN(3) != 0 {
				idx = append(idx, int32(ta-base))
			}
		}
		var got [2]spvs
		for k, asm := range []bool{false, true} {
			s := ref
			s.spv = append([]uint16(nil), ref.spv...)
			s.inc = append([]uint16(nil), ref.inc...)
			s.lo = append([]uint16(nil), ref.lo...)
			s.hi = append([]uint16(nil), ref.hi...)
			useTPM4s = asm
			for rep := 0; rep < 3; rep++ { // supports move up: later passes see new shapes
				s.tpm4List(base, idx)
			}
			got[k] = s
		}
		for ta := 0; ta < tas; ta++ {
			a, b := got[0], got[1]
			if !slices.Equal(a.spv[ta*2*n:(ta+1)*2*n], b.spv[ta*2*n:(ta+1)*2*n]) || a.inc[ta] != b.inc[ta] || a.lo[ta] != b.lo[ta] || a.hi[ta] != b.hi[ta] {
				t.Fatalf("N=%d TA %d: tpm4s %v inc %d support %d..%d; Go %v inc %d support %d..%d", n, ta,
					b.spv[ta*2*n:(ta+1)*2*n], b.inc[ta], b.lo[ta], b.hi[ta], a.spv[ta*2*n:(ta+1)*2*n], a.inc[ta], a.lo[ta], a.hi[ta])
			}
		}
	}
	for _, k := range []string{"include side", "e = N-1", "below, over 32 words", "below"} {
		if kinds[k] == 0 {
			t.Errorf("no SPV of kind %q", k)
		}
	}
}
