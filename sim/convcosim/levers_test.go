package convcosim

import (
	"os"
	"slices"
	"testing"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/lfsr"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/hw"
)

// TestScanLevers replays the one-clause-lane range scan's schedule (as
// TestScanWork does, 1 x 16 lanes, the same draws) under changes to its
// per-clause costs, built or not, and logs the cycles per sample of each
// at 3 to 7 patches per cycle: the schedule of hw 0.2.4 ("base"); without
// the range cycle ("norange": the load starts the cycle after the take);
// every patch row from the block holding the clause's first allowed
// column ("skip") or from that column itself ("skipX"); the end seen as
// the last block is evaluated ("endlast"); the window loaded in 3 cycles
// (rows in four block RAMs by row mod 4, "load3"); the load started at
// the take itself ("take"); the load hidden behind the previous scan
// ("hideload": a second band and window). hw 0.2.5's Lane1 is
// "skip+norange+endlast". Each lever can only shorten the schedule,
// which the test checks.
//
//	PTM_CONV_MODEL=mnist-up5k.ptm go test ./sim/convcosim -run TestScanLevers -v
func TestScanLevers(t *testing.T) {
	path := os.Getenv("PTM_CONV_MODEL")
	if path == "" {
		t.Skip("PTM_CONV_MODEL (a convolutional model file) not set")
	}
	f, _, err := modelfile.ReadConv(path)
	if err != nil {
		t.Fatal(err)
	}
	const bits, W, LL, K, n = 4, 16, 16, 16, 200
	bank, err := f.Bank(bits)
	if err != nil {
		t.Fatal(err)
	}
	sets, err := f.Sets()
	if err != nil {
		t.Fatal(err)
	}
	s := f.Head.Shape
	Xt, _ := mnistFirst(t, "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte", n)
	nl, nw, C, NC := s.Literals(), s.Words(), bank.Clauses, bank.Classes
	BT := (nl + LL - 1) / LL
	PX := s.PX()
	always := uint32(1)<<bits - 1
	pt := conv.NewPatches(s)
	inc := make([]uint64, nw)
	var fired []int32
	type lever struct {
		name    string
		pn      int
		over    int // cycles besides the load and the blocks: take, range, start
		load3   bool
		hide    bool
		skip    int // 0: rows from column 0; 1: from the first column's block; 2: from the first column
		endlast bool
		cyc, bl float64
		beat0   int
		hand    int
		wfree   int
	}
	var ls []*lever
	for pn := 3; pn <= 7; pn++ {
		ls = append(ls,
			&lever{name: "base", pn: pn, over: 3},
			&lever{name: "norange", pn: pn, over: 2},
			&lever{name: "skip", pn: pn, over: 3, skip: 1},
			&lever{name: "skipX", pn: pn, over: 3, skip: 2},
			&lever{name: "skip+norange", pn: pn, over: 2, skip: 1},
			&lever{name: "skip+norange+endlast", pn: pn, over: 2, skip: 1, endlast: true},
			&lever{name: "skip+take+endlast", pn: pn, over: 1, skip: 1, endlast: true},
			&lever{name: "load3", pn: pn, over: 3, load3: true},
			&lever{name: "skip+load3", pn: pn, over: 3, skip: 1, load3: true},
			&lever{name: "hideload", pn: pn, over: 1, hide: true},
			&lever{name: "skip+hideload", pn: pn, over: 1, skip: 1, hide: true},
		)
	}
	for r, img := range Xt {
		planes, err := sets[0].Booleanize(s, img, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := pt.Fill(planes); err != nil {
			t.Fatal(err)
		}
		q := uint32(r)
		lanes := make([]*lfsr.LFSR, LL)
		for l := range lanes {
			if lanes[l], err = lfsr.New(W, bits, lfsr.LaneSeed(q, l, W)); err != nil {
				t.Fatal(err)
			}
		}
		for _, v := range ls {
			v.beat0, v.hand, v.wfree = 0, -1<<30, -1<<30
		}
		for k := 0; k < K; k++ {
			for c := 0; c < C; c++ {
				any := drawClause(lanes, bank.Thresh[c*nl:(c+1)*nl], always, BT, inc)
				fired = pt.Firing(inc, fired[:0])
				first := -1
				if any && len(fired) > 0 {
					first = int(slices.Min(fired))
				}
				lo, hi, xl, xh := thermRange(s, inc)
				ok := any && lo <= hi && xl <= xh
				for _, v := range ls {
					PN := v.pn
					blocks := 0
					if ok {
						xs := 0
						switch v.skip {
						case 1:
							xs = xl / PN * PN
						case 2:
							xs = xl
						}
						per := (xh-xs)/PN + 1
						last := hi
						if first >= 0 {
							last = first / PX
						}
						blocks = (last - lo + 1) * per
						if first >= 0 {
							blocks -= per - ((first%PX-xs)/PN + 1)
						}
					}
					v.bl += float64(blocks)
					scan := 2
					if ok {
						load := hw.LoadCycles(s.WY, lo)
						if v.load3 {
							load = 3
						} else if v.hide {
							load = 0
						}
						scan = v.over + load + blocks
						if v.endlast && first < 0 {
							scan--
						}
					}
					last := v.beat0 + BT - 1
					take := max(last+2, v.hand)
					if v.hand <= last {
						v.beat0 = last + 1
					} else {
						v.beat0 = take
					}
					v.hand = max(take+scan, v.wfree)
					v.wfree = v.hand + 3
					if c == C-1 {
						v.wfree += NC
					}
				}
			}
			if k == K-1 {
				for _, v := range ls {
					v.cyc += float64(v.hand + 3 + NC + LL + 3)
				}
			}
		}
	}
	samples := float64(n * K)
	var base *lever
	for _, v := range ls {
		if v.name == "base" {
			base = v
		}
		cps := v.cyc / samples
		t.Logf("PN %d %-22s %7.1f cycles per sample, %5.2f blocks per clause: %6.0f samples/s at 30 MHz", v.pn, v.name, cps, v.bl/(samples*float64(C)), 30e6/cps)
		if v.cyc > base.cyc || v.bl > base.bl {
			t.Errorf("PN %d %s: %.0f cycles, %.0f blocks, more than the base's %.0f, %.0f", v.pn, v.name, v.cyc, v.bl, base.cyc, base.bl)
		}
	}
}
