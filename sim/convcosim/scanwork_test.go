package convcosim

import (
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/lfsr"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/hw"
)

// thermRange is the range scan's rectangle for one clause's include
// words (hw conv_range): the patch rows lo..hi and columns xl..xh that its
// included position-thermometer literals allow.
func thermRange(s conv.Shape, inc []uint64) (lo, hi, xl, xh int) {
	bit := func(i int) bool { return inc[i/64]>>uint(i%64)&1 == 1 }
	f, win, ty, tx := s.Features(), s.WindowBits(), s.H-s.WY, s.W-s.WX
	hi, xh = s.PY()-1, s.PX()-1
	for k := 0; k < ty; k++ {
		if bit(win + k) {
			lo = k + 1
		}
		if bit(f+win+k) && k < hi {
			hi = k
		}
	}
	for k := 0; k < tx; k++ {
		if bit(win + ty + k) {
			xl = k + 1
		}
		if bit(f+win+ty+k) && k < xh {
			xh = k
		}
	}
	return lo, hi, xl, xh
}

// drawClause draws one clause's include decisions as conv.Core does
// (fixed-point-conv.md 4): beat b's lane l draws for literal b*LL + l,
// len(lanes) = LL, the literal is included when its threshold th (of
// thresh, the clause's) is always (2^B - 1) or above the draw. inc gets
// the decisions (cleared first); the result says whether any literal is
// included.
func drawClause(lanes []*lfsr.LFSR, thresh []uint32, always uint32, BT int, inc []uint64) bool {
	clear(inc)
	any := false
	for b := 0; b < BT; b++ {
		for li, ln := range lanes {
			d := uint32(ln.Next())
			i := b*len(lanes) + li
			if i >= len(thresh) {
				continue
			}
			if th := thresh[i]; th == always || d < th {
				inc[i/64] |= 1 << uint(i%64)
				any = true
			}
		}
	}
	return any
}

// TestScanWork measures what a scan of a trained model's clauses costs,
// on one clause lane of 16 literal lanes (the UP5K's core): it draws every
// TA as conv.Core does (golden/lfsr lanes, fixed-point-conv.md 4; the
// class sums of the replica must equal conv.Core's), checks that every
// patch a clause fires on lies in the rectangle its included thermometer
// literals allow (the premise of the range scan), and logs the included
// literals per clause, the rectangle's rows and columns, and the cycles per
// sample of schedules: the full scan and the range scan with the image in
// a rotating register (hw 0.2.2), the range scan as built in hw 0.2.3-0.2.4,
// the image in block RAM and the sampling overlapped with the scan, and as
// built since hw 0.2.5 at one clause lane (hw.ConvParams.Lane1: no range
// cycle, rows from the block of the first allowed column, the end seen at
// the last block), and since hw 0.2.6 with the clause AND pipelined (a
// fired clause seen two cycles after its firing block).
//
//	PTM_CONV_MODEL=mnist128.ptm go test ./sim/convcosim -run TestScanWork -v
//
// PTM_CONV_MODEL is a convolutional model file of MNIST's geometry (the
// test is skipped without it); 200 test images at K = 16, seed = row;
// PTM_CONV_PN the patches per cycle (7 when unset).
func TestScanWork(t *testing.T) {
	path := os.Getenv("PTM_CONV_MODEL")
	if path == "" {
		t.Skip("PTM_CONV_MODEL (a convolutional model file) not set")
	}
	f, _, err := modelfile.ReadConv(path)
	if err != nil {
		t.Fatal(err)
	}
	const bits, W, LL, K, n = 4, 16, 16, 16, 200
	PN := 7
	if v := os.Getenv("PTM_CONV_PN"); v != "" {
		if PN, err = strconv.Atoi(v); err != nil || PN < 1 {
			t.Fatalf("PTM_CONV_PN=%q: want a positive integer", v)
		}
	}
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
	hwc := conv.HW{Bits: bits, LFSRWidth: W, ClauseLanes: 1, LiteralLanes: LL}
	core, err := conv.NewCore(bank, hwc)
	if err != nil {
		t.Fatal(err)
	}
	nl, nw, C, NC := s.Literals(), s.Words(), bank.Clauses, bank.Classes
	BT := (nl + LL - 1) / LL
	PY, PX, H := s.PY(), s.PX(), s.H
	nb := (PX + PN - 1) / PN
	always := uint32(1)<<bits - 1
	pt := conv.NewPatches(s)
	inc := make([]uint64, nw)
	var fired []int32
	out := make([]bool, C)
	var nInc, nRows, nCols, nFire, nIn, clauses float64
	var cycFull, cycRange, cycNext, cycLane1, cycLane2, nIn1 float64
	var nScanBound, nLoaded float64 // clauses whose scan outlasts their sampling; clauses with a window load
	for r, img := range Xt {
		planes, err := sets[0].Booleanize(s, img, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := pt.Fill(planes); err != nil {
			t.Fatal(err)
		}
		q := uint32(r)
		want, _, err := core.Run(pt, K, q, nil)
		if err != nil {
			t.Fatal(err)
		}
		lanes := make([]*lfsr.LFSR, LL)
		for l := range lanes {
			if lanes[l], err = lfsr.New(W, bits, lfsr.LaneSeed(q, l, W)); err != nil {
				t.Fatal(err)
			}
		}
		rot := 0 // the range scan's image rotation at the end of a group
		// The built schedule's units (cycles from the first beat): the
		// sampler's next first beat, the scan unit's last handover (and
		// the weigh unit's take), the weigh unit's earliest next take.
		beat0, hand, wfree := 0, -1<<30, -1<<30
		lane1 := lane1Replay{hand: -1 << 30, wfree: -1 << 30}         // the same for hw 0.2.5's one-lane scan
		lane2 := lane1Replay{hand: -1 << 30, wfree: -1 << 30, lag: 1} // ... and hw 0.2.6's (the clause AND pipelined: the output a cycle later)
		for k := 0; k < K; k++ {
			for c := 0; c < C; c++ {
				any := drawClause(lanes, bank.Thresh[c*nl:(c+1)*nl], always, BT, inc)
				clauses++
				for _, w := range inc {
					for ; w != 0; w &= w - 1 {
						nInc++
					}
				}
				fired = pt.Firing(inc, fired[:0])
				out[c] = any && len(fired) > 0
				lo, hi, xl, xh := thermRange(s, inc)
				ok := any && lo <= hi && xl <= xh
				for _, p := range fired {
					if y, x := int(p)/PX, int(p)%PX; any && (!ok || y < lo || y > hi || x < xl || x > xh) {
						t.Fatalf("image %d sample %d clause %d fires on patch (%d, %d) outside rows %d..%d, columns %d..%d", r, k, c, y, x, lo, hi, xl, xh)
					}
				}
				// Blocks of PN patches a scan evaluates, with early exit
				// at the first firing block (raster order).
				first := -1
				if out[c] {
					first = int(slices.Min(fired))
				}
				full := PY * nb
				if !any {
					full = 0
				} else if first >= 0 {
					full = first/PX*nb + first%PX/PN + 1
				}
				rangeBlocks, inRange, inRange1, all1 := 0, 0, 0, 0
				if ok {
					// hw 0.2.5 (Lane1): every row from the block holding xl
					xs := xl / PN * PN
					per1 := (xh-xs)/PN + 1
					last1 := hi
					if first >= 0 {
						last1 = first / PX
					}
					inRange1 = (last1 - lo + 1) * per1
					all1 = (hi - lo + 1) * per1
					if first >= 0 {
						inRange1 -= per1 - ((first%PX-xs)/PN + 1)
					}
					nRows += float64(hi - lo + 1)
					nCols += float64(xh - xl + 1)
					last := hi
					if first >= 0 {
						last = first / PX
					}
					per := xh/PN + 1
					rangeBlocks = lo + (last-lo+1)*per
					inRange = (last - lo + 1) * per
					if first >= 0 {
						rangeBlocks -= per - (first%PX/PN + 1)
						inRange -= per - (first%PX/PN + 1)
					}
					if rangeBlocks > full {
						t.Fatalf("range scan %d blocks > full scan %d", rangeBlocks, full)
					}
				}
				if out[c] {
					nFire++
				}
				nIn += float64(inRange)
				nIn1 += float64(inRange1)
				cycFull += float64(BT + 1 + full + 1 + 2)
				// The range scan of hw 0.2.2: the image rotates back to row
				// 0 during the weighing, the beats, the drain and the
				// range cycle; rows below lo pass one per cycle.
				wait := (H-rot)%H - (2 + BT + 2)
				cycRange += float64(BT + 2 + rangeBlocks + 1 + 2 + max(wait, 0))
				rot = 0
				if ok {
					rot = hi
					if first >= 0 {
						rot = first / PX
					}
				}
				// As built since hw 0.2.3: the image in block RAM and the
				// sampling of the next clause overlapped with the scan of
				// this one. The scan unit takes the clause (1 cycle),
				// registers its rectangle (1), starts the window's load
				// (1), loads it two rows per cycle (hw.LoadCycles), scans
				// inRange blocks and sees the end a cycle later; a clause
				// with an empty rectangle takes 2 cycles, the weighing at
				// least LC + 2 = 3 and the sampler BT + 1 (its first beat
				// waits for the previous clause's take).
				scan := 2
				if ok {
					scan = 3 + hw.LoadCycles(s.WY, lo) + inRange
				}
				last := beat0 + BT - 1      // the clause's last beat
				take := max(last+2, hand)   // its decisions complete, the scan free
				if BT > 1 && hand <= last { // the scan waits: the next first beat comes early
					beat0 = last + 1
				} else {
					beat0 = take
				}
				if take > last+2 {
					nScanBound++
				}
				hand = max(take+scan, wfree)
				wfree = hand + 3 // LC + 2
				if c == C-1 {
					wfree += NC // the sample's result words
				}
				if ok {
					nLoaded++
				}
				// hw 0.2.5 (Lane1): the load starts the cycle after the
				// take, and a scan that evaluates its last block ends with
				// it (a fired clause is seen a cycle later, as before).
				scan1 := 2
				if ok {
					scan1 = 2 + hw.LoadCycles(s.WY, lo) + inRange1
					if first < 0 {
						scan1--
					}
				}
				lane1.step(BT, scan1, c == C-1, NC)
				// hw 0.2.6 (Lane1, the clause AND pipelined): a fired
				// clause is seen two cycles after its firing block (two
				// more blocks, at most to the rectangle's last), and its
				// output reaches the weigh unit a cycle later.
				scan2 := 2
				if ok {
					scan2 = 1 + hw.LoadCycles(s.WY, lo) + inRange1
					if first >= 0 {
						scan2 = 1 + hw.LoadCycles(s.WY, lo) + min(inRange1+2, all1)
					}
				}
				lane2.step(BT, scan2, c == C-1, NC)
			}
			if k == K-1 {
				cycNext += float64(hand + 3 + NC + LL + 3) // the last weighing, the words, the seeding
				cycLane1 += float64(lane1.hand + 3 + NC + LL + 3)
				cycLane2 += float64(lane2.hand + lane2.lag + 3 + NC + LL + 3)
			}
			for kk := 0; kk < NC; kk++ {
				var v int32
				for c, o := range out {
					if o {
						v += bank.Weights[kk*C+c]
					}
				}
				if v != want[k*NC+kk] {
					t.Fatalf("image %d sample %d class %d: the replica's sum %d, conv.Core's %d", r, k, kk, v, want[k*NC+kk])
				}
			}
		}
	}
	N := clauses
	samples := float64(n * K)
	t.Logf("%s: %d test images, K = %d, 1 x %d lanes, %d patches per block: %.1f of %d literals included per clause and sample; %.1f%% of the clauses fire; the thermometer rectangle allows %.1f of %d patch rows and %.1f of %d columns (clauses with a non-empty one); the range scan evaluates %.1f blocks in it per clause",
		path, n, K, LL, PN, nInc/N, nl, 100*nFire/N, nRows/N, PY, nCols/N, PX, nIn/N)
	t.Logf("cycles per sample: full scan %.0f, range scan (rotating image, hw 0.2.2) %.0f, block-RAM image with overlapped sampling (hw 0.2.3) %.0f; the sampling alone %d",
		cycFull/samples+float64(NC), cycRange/samples+float64(NC), cycNext/samples, C*BT)
	t.Logf("block-RAM schedule: %.1f%% of the clauses load a window; the sampler waits for the scan to take %.1f%% of the clauses", 100*nLoaded/N, 100*nScanBound/N)
	t.Logf("one-lane scan (hw 0.2.5: rows from the block of the first allowed column, no range cycle, the end at the last block): %.1f blocks per clause, %.0f cycles per sample", nIn1/N, cycLane1/samples)
	t.Logf("one-lane scan with the clause AND pipelined (hw 0.2.6: a fired clause seen 2 cycles after its block): %.0f cycles per sample", cycLane2/samples)
}

// lane1Replay replays the one-lane scan's schedule clause by clause
// (TestScanWork): the sampler's next beat, the cycle the scan hands its
// clause to the weigh unit, and the cycle the weigh unit is free.
type lane1Replay struct {
	beat, hand, wfree int
	lag               int // cycles from the scan's end to the weigh queue beyond 0.2.5's
}

// step replays one clause group: its BT sampling beats, the take, a scan
// of scan cycles and the weighing (3 cycles, and the sample's NC result
// words after its last clause).
func (r *lane1Replay) step(BT, scan int, lastClause bool, NC int) {
	last := r.beat + BT - 1
	take := max(last+2, r.hand)
	if BT > 1 && r.hand <= last {
		r.beat = last + 1
	} else {
		r.beat = take
	}
	r.hand = max(take+scan, r.wfree)
	r.wfree = r.hand + r.lag + 3
	if lastClause {
		r.wfree += NC
	}
}
