package convcosim

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/internal/testenv"
)

// TestRectangleEdges co-simulates clauses at the edges of the range
// scan's rectangle, which with generator 0.2.4 stands for the clause's
// thermometer literals (the clause lanes AND only the window's literals,
// gated by "patch in rectangle"): no literal included, thermometer
// literals only (fires on every image), an empty column or row range
// beside included window literals (never fires), a rectangle of one
// patch in the far corner (the partial last block), one-sided ranges with
// random window literals. Shape 5 of TestRandomShapes (8x8, window 5x5:
// 4 x 4 patches, 3 row and 3 column thermometers; 5 clause lanes, so the
// lanes' row gates are used), its memories written through the ports,
// so the range and compact builds are TestRandomShapes' own: 0
// mismatches in every class-sum word against conv.Core.
func TestRectangleEdges(t *testing.T) {
	needVerilator(t)
	testenv.Heartbeat(t, 0)
	tc := shapeCases[5]
	s := tc.s
	win, ty, f := s.WindowBits(), s.H-s.WY, s.Features()
	rowT := func(k int) int { return win + k }      // literal "y > k"
	colT := func(k int) int { return win + ty + k } // literal "x > k"
	neg := func(i int) int { return f + i }         // its negation
	rng := rand.New(rand.NewPCG(29, 2904))
	h := RandomHead(s, tc.nc, tc.c, tc.st, 40, 50, rng)
	b := RandomBank(h, tc.bits, rng)
	nl := s.Literals()
	always := uint32(1)<<uint(tc.bits) - 1
	set := func(c int, lits map[int]uint32) {
		row := b.Thresh[c*nl : (c+1)*nl]
		clear(row)
		for i, q := range lits {
			row[i] = q
		}
	}
	randWin := func(m map[int]uint32, n int) map[int]uint32 {
		for ; n > 0; n-- {
			i := rng.IntN(win)
			if rng.IntN(2) == 0 {
				i = neg(i)
			}
			m[i] = 1 + rng.Uint32N(always)
		}
		return m
	}
	set(0, nil)                                                                                                 // no literal: outputs 0
	set(1, map[int]uint32{rowT(0): always, neg(colT(1)): always})                                               // rows 1..3, columns 0..1, nothing else: fires on every image
	set(2, map[int]uint32{colT(2): always, neg(colT(1)): always, 0: always, neg(5): always})                    // columns 3..1: never fires
	set(3, map[int]uint32{rowT(2): always, neg(rowT(0)): always, colT(0): always, neg(7): always})              // rows 3..0: never fires
	set(4, randWin(map[int]uint32{rowT(2): always, colT(2): always}, 3))                                        // the patch (3, 3) only
	set(5, randWin(map[int]uint32{colT(1): always}, 2))                                                         // columns 2..3, every row
	set(6, randWin(map[int]uint32{neg(rowT(1)): always, neg(colT(0)): 1 + rng.Uint32N(always)}, 2))             // rows 0..1, column 0 in some samples
	set(7, randWin(map[int]uint32{rowT(1): 1 + rng.Uint32N(always), neg(rowT(1)): 1 + rng.Uint32N(always)}, 1)) // rows 2..1 when both are drawn
	set(8, randWin(map[int]uint32{}, 2))                                                                        // window literals only: the whole image
	reqs := RandomRequests(s, testenv.Size(8, 100), 6, rng)
	for _, r := range []struct {
		pn   int
		scan string
	}{{tc.pn, hw.ScanRange}, {tc.pn, hw.ScanCompact}} {
		t.Run(fmt.Sprintf("pn%d-%s", r.pn, r.scan), func(t *testing.T) {
			res, err := Run(Options{Bank: b, Config: hw.Config{Bits: tc.bits, LFSRWidth: tc.lw, ClauseLanes: tc.lc, LiteralLanes: tc.ll, MaxK: 16, PatchLanes: r.pn, Scan: r.scan},
				Requests: reqs, LoadPorts: true, Ready: tc.ready, Seed: 29})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d requests, %d samples, %d words (%d non-zero, %d distinct samples): %d mismatches; %.1f cycles per sample",
				res.Requests, res.SamplesCompared, res.WordsCompared, res.NonZeroWords, res.DistinctSums, res.Mismatches, res.CyclesPerSample)
			if res.Mismatches != 0 || res.FirstMismatch != nil {
				t.Fatalf("%d mismatches, first %+v", res.Mismatches, res.FirstMismatch)
			}
			if res.SamplesCompared == 0 || res.WordsCompared != res.SamplesCompared*tc.nc || res.DistinctSums < 2 {
				t.Fatalf("compared %d samples, %d words, %d distinct samples", res.SamplesCompared, res.WordsCompared, res.DistinctSums)
			}
		})
	}
	// The clauses do what the comments say on conv.Core (the contract):
	// clause 1 fires on every image, 0, 2 and 3 on none (each alone with
	// weight 1 for class 0, so class 0's sum is its output).
	for c, want := range map[int]int32{0: 0, 1: 1, 2: 0, 3: 0} {
		one := *b
		one.Head.Weights = make([]int32, len(h.Weights))
		one.Head.Weights[c] = 1 // class 0, clause c (coalesced: k*C + c)
		core, err := conv.NewCore(&one, conv.HW{Bits: tc.bits, LFSRWidth: tc.lw, ClauseLanes: tc.lc, LiteralLanes: tc.ll})
		if err != nil {
			t.Fatal(err)
		}
		pt := conv.NewPatches(s)
		for i, r := range reqs {
			if err := pt.Fill(r.Planes); err != nil {
				t.Fatal(err)
			}
			sums, _, err := core.Run(pt, 1, r.Seed, nil)
			if err != nil {
				t.Fatal(err)
			}
			if sums[0] != want {
				t.Errorf("clause %d on image %d: output %d, want %d", c, i, sums[0], want)
			}
		}
	}
}
