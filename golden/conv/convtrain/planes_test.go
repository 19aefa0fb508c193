package convtrain

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ptmhw/ptm/golden/conv"
)

// TestPlanesMatchPatches checks the literal planes against conv.Patches on
// random images: every literal of every patch, the clause evaluation
// (fires, its firing set against Firing, count and nth against the list),
// and unpack against Unpack, for shapes with one and several bit-planes,
// one and several plane words, a partial last word and patch rows of 64.
func TestPlanesMatchPatches(t *testing.T) {
	shapes := []conv.Shape{
		{H: 28, W: 28, Planes: 1, WY: 10, WX: 10}, // 361 patches, 6 words
		{H: 10, W: 10, Planes: 1, WY: 4, WX: 4},   // 49 patches, 1 word
		{H: 12, W: 9, Planes: 3, WY: 5, WX: 2},    // several bit-planes
		{H: 16, W: 64, Planes: 1, WY: 1, WX: 1},   // rows of 64 patches, 16 words
		{H: 8, W: 64, Planes: 2, WY: 3, WX: 7},    // 58 patches per row
		{H: 5, W: 5, Planes: 1, WY: 5, WX: 5},     // one patch, no thermometer
	}
	rng := rand.New(rand.NewPCG(3, 9))
	for _, sh := range shapes {
		t.Run(fmt.Sprintf("%dx%dx%d-%dx%d", sh.H, sh.W, sh.Planes, sh.WY, sh.WX), func(t *testing.T) {
			if !planesFit(sh) {
				t.Fatal("shape does not fit the planes")
			}
			lp := newLitPlanes(sh)
			pt := conv.NewPatches(sh)
			nl := sh.Literals()
			lit, want := make([]bool, nl), make([]bool, nl)
			acc := make([]uint64, lp.pw)
			var fired, silent int
			for img := 0; img < 20; img++ {
				planes := make([]bool, sh.Planes*sh.Pixels())
				for i := range planes {
					planes[i] = rng.IntN(3) == 0
				}
				if err := pt.Fill(planes); err != nil {
					t.Fatal(err)
				}
				if err := lp.fill(planes); err != nil {
					t.Fatal(err)
				}
				for p := 0; p < sh.Patches(); p++ {
					for i := 0; i < nl; i++ {
						if got := lp.plane(i)[p/64]>>uint(p%64)&1 == 1; got != pt.Literal(p, i) {
							t.Fatalf("image %d patch %d literal %d: plane %v, Patches %v", img, p, i, got, pt.Literal(p, i))
						}
					}
					lp.unpack(p, lit)
					pt.Unpack(p, want)
					if !slices.Equal(lit, want) {
						t.Fatalf("image %d patch %d: unpack differs from Unpack", img, p)
					}
				}
				for k := 0; k < 50; k++ {
					inc := make([]uint64, sh.Words())
					for i := rng.IntN(6); i > 0; i-- { // 0..5 included literals
						j := rng.IntN(nl)
						inc[j/64] |= 1 << uint(j%64)
					}
					got := lp.fires(inc, acc)
					if got != pt.FiresAnywhere(inc) {
						t.Fatalf("image %d include %x: fires %v, FiresAnywhere %v", img, inc, got, !got)
					}
					list := pt.Firing(inc, nil)
					if !got {
						silent++
						if len(list) != 0 || count(acc) != 0 {
							t.Fatalf("image %d include %x: silent but %d firing patches", img, inc, len(list))
						}
						continue
					}
					fired++
					if count(acc) != len(list) {
						t.Fatalf("image %d include %x: %d firing patches, Firing %d", img, inc, count(acc), len(list))
					}
					for j, p := range list {
						if q := nth(acc, j); q != int(p) {
							t.Fatalf("image %d include %x: firing patch %d is %d, Firing %d", img, inc, j, q, p)
						}
					}
				}
			}
			if fired == 0 || silent == 0 {
				t.Fatalf("%d firing and %d silent clauses: the test exercises one side only", fired, silent)
			}
		})
	}
}

// TestExpand checks the eight-at-a-time bool expansion bit by bit.
func TestExpand(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 1))
	for n := 0; n <= 64; n++ {
		v := rng.Uint64()
		dst := make([]bool, n+2)
		dst[n], dst[n+1] = true, true
		expand(dst[:n], v)
		for j := 0; j < n; j++ {
			if dst[j] != (v>>uint(j)&1 == 1) {
				t.Fatalf("n %d: bit %d of %x expanded to %v", n, j, v, dst[j])
			}
		}
		if !dst[n] || !dst[n+1] {
			t.Fatalf("n %d: expand wrote past its slice", n)
		}
	}
}

// TestPlanesTrainAsPatches trains with the literal planes and with
// conv.Patches (usePlanes off) and compares the state hashes: both
// structures, 1 and 2 workers.
func TestPlanesTrainAsPatches(t *testing.T) {
	sh := conv.Shape{H: 14, W: 14, Planes: 1, WY: 5, WX: 5}
	X, y := strokes(200, 14, 7)
	B := booleanize(t, sh, conv.Encoder{Thresholds: []int{127}}, X)
	for _, st := range []conv.Structure{conv.PerClass, conv.Coalesced} {
		for _, w := range []int{1, 2} {
			var hs [2]string
			for k, planes := range []bool{true, false} {
				usePlanes = planes
				tr, err := New(Config{Shape: sh, Structure: st, Classes: 3, Clauses: 12, T: 6, S: 3, N: 20, Bits: 12, Seed: 2, Workers: w})
				usePlanes = true
				if err != nil {
					t.Fatal(err)
				}
				if (tr.lp != nil) != planes {
					t.Fatalf("usePlanes %v but planes in use %v", planes, tr.lp != nil)
				}
				for e := 0; e < 2; e++ {
					if err := tr.RunEpoch(B, y); err != nil {
						t.Fatal(err)
					}
				}
				hs[k] = hash(tr)
				tr.Close()
			}
			if hs[0] != hs[1] {
				t.Errorf("%s, %d workers: planes give %s, Patches %s", st, w, hs[0][:16], hs[1][:16])
			}
		}
	}
}
