package convcosim

import (
	"fmt"
	"math/rand/v2"
	"os/exec"
	"testing"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/internal/testenv"
)

func needVerilator(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("verilator"); err != nil {
		t.Fatal("verilator not found: run scripts/install-deps.sh")
	}
}

// shapeCase is one random convolutional shape with its hardware.
type shapeCase struct {
	name     string
	s        conv.Shape
	nc, c    int
	st       conv.Structure
	lc, ll   int
	bits, lw int
	ports    bool // load the memories through the write ports
	ready    int
	pn       int // hw.Config.PatchLanes of the second run (the first: one patch per cycle)
}

// shapeCases cover image size, window, planes, classes, clauses, class
// structure, bits, LFSR width and lanes, with padding clauses and literal
// slots, one patch, one row and one column of patches, and back-pressure.
var shapeCases = []shapeCase{
	{"6x5-w3x2-perclass", conv.Shape{H: 6, W: 5, Planes: 1, WY: 3, WX: 2}, 3, 6, conv.PerClass, 2, 4, 4, 16, false, 100, 2},
	{"4x4-onepatch-2planes", conv.Shape{H: 4, W: 4, Planes: 2, WY: 4, WX: 4}, 2, 5, conv.Coalesced, 1, 3, 4, 16, true, 100, 4},
	{"3x7-onerow-b8", conv.Shape{H: 3, W: 7, Planes: 1, WY: 3, WX: 2}, 4, 7, conv.Coalesced, 3, 20, 8, 32, false, 60, 4},
	{"7x3-onecol-3planes", conv.Shape{H: 7, W: 3, Planes: 3, WY: 2, WX: 3}, 5, 10, conv.PerClass, 4, 1, 4, 24, true, 100, 3},
	{"10x9-w4x3-coalesced", conv.Shape{H: 10, W: 9, Planes: 2, WY: 4, WX: 3}, 10, 24, conv.Coalesced, 8, 16, 4, 32, false, 100, 7},
	{"8x8-w5-b6", conv.Shape{H: 8, W: 8, Planes: 1, WY: 5, WX: 5}, 6, 13, conv.Coalesced, 5, 7, 6, 20, true, 80, 3},
	{"12x12-w6x4-perclass", conv.Shape{H: 12, W: 12, Planes: 1, WY: 6, WX: 4}, 2, 16, conv.PerClass, 4, 12, 4, 16, false, 100, 5},
	// one clause lane with several blocks per patch row: hw's Lane1 (rows
	// from the block of the first allowed column, moved image rows)
	{"11x13-w4x3-lane1-2planes", conv.Shape{H: 11, W: 13, Planes: 2, WY: 4, WX: 3}, 3, 9, conv.Coalesced, 1, 8, 4, 16, false, 100, 3},
}

// TestRandomShapes co-simulates random banks and random images on every
// shape with the range scan, at one patch per cycle and at tc.pn patches
// per cycle (whole patch rows, partial last blocks), with the compact scan
// (hw.ScanCompact) at 1 or tc.pn patches per cycle on every third shape
// (every shape with PTM_LONG_TESTS=1), and with the full scan
// at tc.pn patches per cycle on every third shape: 0 mismatches in every
// class-sum word.
func TestRandomShapes(t *testing.T) {
	needVerilator(t)
	testenv.Heartbeat(t, 0) // cold Verilator builds take minutes on a busy machine
	n := testenv.Size(12, 200)
	for i, tc := range shapeCases {
		runs := []struct {
			pn   int
			scan string
		}{{1, hw.ScanRange}, {tc.pn, hw.ScanRange}}
		// the compact scan (no row band, no include copy) at one patch per
		// cycle on even shapes and tc.pn on odd ones: on every third shape
		// (every shape with PTM_LONG_TESTS=1)
		if i%3 == 2 || testenv.Long() {
			runs = append(runs, struct {
				pn   int
				scan string
			}{[]int{1, tc.pn}[i%2], hw.ScanCompact})
		}
		if i%3 == 0 {
			runs = append(runs, struct {
				pn   int
				scan string
			}{tc.pn, hw.ScanFull})
		}
		for _, r := range runs {
			pn := r.pn
			t.Run(fmt.Sprintf("%s-pn%d-%s", tc.name, pn, r.scan), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(i)+1, 0xc0c0))
				h := RandomHead(tc.s, tc.nc, tc.c, tc.st, 40, conv.MaxWeight, rng)
				if i%2 == 1 && tc.st == conv.Coalesced {
					h = RandomHead(tc.s, tc.nc, tc.c, tc.st, 40, 3, rng)
				}
				b := RandomBank(h, tc.bits, rng)
				reqs := RandomRequests(tc.s, n, 6, rng)
				reqs = append(reqs, RandomRequests(tc.s, 2, 1, rng)...)
				res, err := Run(Options{Bank: b, Config: hw.Config{Bits: tc.bits, LFSRWidth: tc.lw, ClauseLanes: tc.lc, LiteralLanes: tc.ll, MaxK: 16, PatchLanes: pn, Scan: r.scan},
					Requests: reqs, LoadPorts: tc.ports, Ready: tc.ready, Seed: uint64(i)})
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%s: %d requests, %d samples, %d words (%d non-zero, %d distinct samples): %d mismatches; %.1f cycles per sample (%.1f clause-patch evaluations per sample in the golden scan); build %.1fs (cached %v), simulation %.2fs",
					tc.name, res.Requests, res.SamplesCompared, res.WordsCompared, res.NonZeroWords, res.DistinctSums, res.Mismatches, res.CyclesPerSample, res.PatchEvalsPerSample, res.BuildTime, res.BuildCached, res.SimTime)
				if res.Mismatches != 0 || res.FirstMismatch != nil {
					t.Fatalf("%d mismatches, first %+v", res.Mismatches, res.FirstMismatch)
				}
				if res.SamplesCompared == 0 || res.WordsCompared != res.SamplesCompared*tc.nc {
					t.Fatalf("compared %d samples, %d words", res.SamplesCompared, res.WordsCompared)
				}
				// Clauses must fire on some samples and not on all: else the
				// comparison says little.
				if res.NonZeroWords == 0 || res.DistinctSums < 2 {
					t.Errorf("%d of %d class sums non-zero, %d distinct samples: the random bank does not exercise the clauses", res.NonZeroWords, res.WordsCompared, res.DistinctSums)
				}
			})
		}
	}
}

// TestBadK: a request with K = 0 or K > MaxK is answered by one error
// word, and the requests around it by their class sums.
func TestBadK(t *testing.T) {
	needVerilator(t)
	testenv.Heartbeat(t, 0)
	// Shape 1's design, memories written through the ports: the
	// simulator TestRandomShapes built (no model in the files).
	tc := shapeCases[1]
	rng := rand.New(rand.NewPCG(11, 12))
	b := RandomBank(RandomHead(tc.s, tc.nc, tc.c, tc.st, 40, 1, rng), tc.bits, rng)
	reqs := RandomRequests(tc.s, 4, 3, rng)
	reqs[1].K = 0
	reqs[2].K = 17 // MaxK 16
	res, err := Run(Options{Bank: b, Config: hw.Config{Bits: tc.bits, LFSRWidth: tc.lw, ClauseLanes: tc.lc, LiteralLanes: tc.ll, MaxK: 16},
		Requests: reqs, LoadPorts: true, badK: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Mismatches != 0 || res.Requests != 4 || res.SamplesCompared != reqs[0].K+reqs[3].K {
		t.Fatalf("%+v, first mismatch %+v", res, res.FirstMismatch)
	}
}
