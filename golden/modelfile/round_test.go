package modelfile

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRoundHalvesExample: worked examples at B = 4 (16 units) rounded to
// 2 bits (sh = 2, units of 4). [5 3 | 6 2]: include mass 8 = 2 units, the
// exclude half 2; exclude floors 1, 0 (remainders 1, 3): the unit left
// goes to state 1 -> [1 1]; include floors 1, 0 (remainders 2, 2, a tie):
// to the lower state -> [2 0]. [9 6 | 1 0]: include 1/4 unit rounds to 0,
// the exclude half takes all 4: floors 2, 1 (remainders 1, 2) -> [2 2 |
// 0 0]. [0 2 | 2 12]: include 14/4 = 3.5 units rounds up to 4, so the
// exclude half's half unit goes: [0 0 | 1 3] (rounding the whole SPV,
// state 1's remainder 2 would tie state 2's and win the unit instead).
func TestRoundHalvesExample(t *testing.T) {
	for _, c := range []struct{ src, want []uint16 }{
		{[]uint16{5, 3, 6, 2}, []uint16{1, 1, 2, 0}},
		{[]uint16{9, 6, 1, 0}, []uint16{2, 2, 0, 0}},
		{[]uint16{0, 2, 2, 12}, []uint16{0, 0, 1, 3}},
	} {
		got := make([]uint16, 4)
		if err := roundHalves(c.src, 2, 2, got, nil); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("roundHalves(%v) = %v, want %v", c.src, got, c.want)
		}
	}
}

// TestRoundHalvesProperties: on random 15-bit SPVs of 200 states (bumps
// and tails as trained ones have) rounded to 8..15 bits, every rounded SPV
// sums to 2^W, each state is its exact value floored or floored plus one,
// the include half holds the trainer's include mass rounded to the
// nearest unit (within half a unit), and W = 15 copies.
func TestRoundHalvesProperties(t *testing.T) {
	const n, bits = 100, 15
	rng := rand.New(rand.NewPCG(7, 8))
	src := make([]uint16, 2*n)
	dst := make([]uint16, 2*n)
	var rs []remainder
	for trial := 0; trial < 400; trial++ {
		clear(src)
		// Spread 2^15 units over a random support, unevenly.
		lo := rng.IntN(2 * n)
		hi := lo + rng.IntN(2*n-lo)
		left := 1 << bits
		for left > 0 {
			k := lo + rng.IntN(hi-lo+1)
			u := min(left, 1+rng.IntN(400))
			src[k] += uint16(u)
			left -= u
		}
		var inc int
		for _, v := range src[n:] {
			inc += int(v)
		}
		for w := 8; w <= bits; w++ {
			sh := uint(bits - w)
			if err := roundHalves(src, n, sh, dst, &rs); err != nil {
				t.Fatalf("trial %d, W %d: %v", trial, w, err)
			}
			var sum, dinc int
			for i, v := range dst {
				sum += int(v)
				if i >= n {
					dinc += int(v)
				}
				if fl := int(src[i] >> sh); int(v) != fl && int(v) != fl+1 || int(v) == fl+1 && src[i]&(1<<sh-1) == 0 {
					t.Fatalf("trial %d, W %d, state %d: %d from %d (floor %d)", trial, w, i, v, src[i], fl)
				}
			}
			if sum != 1<<w {
				t.Fatalf("trial %d, W %d: sum %d, want %d", trial, w, sum, 1<<w)
			}
			if d := 2*(dinc<<sh) - 2*inc; d > 1<<sh || d < -(1<<sh) {
				t.Fatalf("trial %d, W %d: include mass %d units of 2^-%d, the trainer's %d / 2^%d: more than half a unit apart", trial, w, dinc, w, inc, bits)
			}
			if w == bits && !slices.Equal(dst, src) {
				t.Fatalf("trial %d: W = B changed the SPV", trial)
			}
		}
	}
}

// TestRoundHalvesRefuses: a wrong length or a mass not a multiple of
// 2^sh is an error, not a panic.
func TestRoundHalvesRefuses(t *testing.T) {
	dst := make([]uint16, 4)
	for _, c := range []struct {
		src []uint16
		sh  uint
	}{{[]uint16{1, 2, 3}, 1}, {[]uint16{0, 0, 0, 0}, 1}, {[]uint16{1, 0, 0, 0}, 1}, {[]uint16{4, 0, 0, 0}, 16}} {
		if err := roundHalves(c.src, 2, c.sh, dst, nil); err == nil {
			t.Errorf("roundHalves(%v, sh %d): no error", c.src, c.sh)
		}
	}
}

// TestConvWholeRoundedFixture: testdata/conv-bars-spv12-whole.ptm was
// written at 8d06679, before SetSPVs rounded the halves separately
// (convSampleAt(t, 12), each SPV rounded to 12 bits as a whole by
// fixed.QuantizeSPV). It still reads, validates and re-encodes byte for
// byte; the same model rounded by halves today keeps every include mass
// within half a unit of 2^-12 of the trainer's, which the whole-SPV
// rounding did not.
func TestConvWholeRoundedFixture(t *testing.T) {
	path := filepath.Join("testdata", "conv-bars-spv12-whole.ptm")
	old, _, err := ReadConv(path)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	again, err := EncodeConv(old)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, data) {
		t.Errorf("re-encoding the fixture gives %d bytes (%.16s), the file has %d (%.16s)", len(again), Hash(again), len(data), Hash(data))
	}
	now, _ := convSampleAt(t, 12)
	if !slices.Equal(now.Include, old.Include) || !slices.Equal(now.Thresh, old.Thresh) {
		t.Fatal("the fixture's model is not convSampleAt(t, 12)'s: include masses or bank differ")
	}
	worst := func(f *ConvFile) int64 {
		var w int64
		for ta := range f.Include {
			d := f.incOf(ta)<<3 - int64(f.Include[ta])
			w = max(w, d, -d)
		}
		return w
	}
	wOld, wNow := worst(old), worst(now)
	t.Logf("largest include-mass error in units of 2^-15: whole-SPV rounding %d, by halves %d", wOld, wNow)
	if wNow > 4 {
		t.Errorf("rounding by halves: an include mass %d units of 2^-15 from the trainer's, more than half of 2^-12 (4)", wNow)
	}
	if wOld <= 4 {
		t.Errorf("the fixture's whole-SPV rounding keeps every include mass within 4 units (%d): the fixture does not show the difference", wOld)
	}
}
