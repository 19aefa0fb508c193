package hw

import (
	"errors"
	"math"
	"testing"

	"github.com/ptmhw/ptm/golden/conv"
)

// mnistBank is a 128-clause bank of MNIST's geometry (one plane, 10 x 10
// window: 19 x 19 patches, 100 window bits, 18 + 18 thermometer bits),
// every threshold th.
func mnistBank(th uint32) *conv.Bank {
	h := conv.Head{Shape: conv.Shape{H: 28, W: 28, Planes: 1, WY: 10, WX: 10}, Structure: conv.Coalesced, Classes: 10, Clauses: 128, T: 1000}
	h.Weights = make([]int32, h.Classes*h.Clauses)
	b := &conv.Bank{Head: h, Bits: 4, Thresh: make([]uint32, h.TAs())}
	for i := range b.Thresh {
		b.Thresh[i] = th
	}
	return b
}

func mnistDesign(t *testing.T, b *conv.Bank, lc, ll, pn int, scan string) *ConvParams {
	t.Helper()
	d, err := GenerateConv(Config{Bits: 4, LFSRWidth: 16, ClauseLanes: lc, LiteralLanes: ll, PatchLanes: pn, Scan: scan, MaxK: 255}, b, "")
	if err != nil {
		t.Fatal(err)
	}
	return &d.Params
}

// TestExpectedSampleCycles pins the estimate on banks whose rectangles
// are known: no literal included (every group costs its sampling), every
// window literal and no thermometer (every clause scans all 19 x 19
// patches: the schedule's bound), thermometers that cut the rectangle to
// rows 5..18 and columns 0..3, and one thermometer included with
// probability 1/2 (the mean of the two rectangles).
func TestExpectedSampleCycles(t *testing.T) {
	const always = 15
	est := func(p *ConvParams, b *conv.Bank, seed uint64) float64 {
		t.Helper()
		e, err := p.ExpectedSampleCycles(b.Thresh, 200, seed)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	// nothing included: BT + 1 = 18 cycles a group (1 x 16 lanes), then
	// the last weighing and the 10 result words
	none := mnistBank(0)
	p := mnistDesign(t, none, 1, 16, 7, ScanRange)
	if got, want := est(p, none, 1), float64(128*18+3+10); got != want {
		t.Errorf("no literal included: %.1f cycles, want %.1f", got, want)
	}
	// every window literal, no thermometer: the whole image, the bound
	full := mnistBank(always)
	for i := range full.Thresh {
		if i%p.Lit >= p.WinBits && i%p.Lit < p.F || i%p.Lit >= p.F+p.WinBits {
			full.Thresh[i] = 0
		}
	}
	for _, c := range []struct {
		lc, ll, pn int
		scan       string
	}{{1, 16, 7, ScanRange}, {1, 16, 4, ScanRange}, {4, 4, 2, ScanRange}, {1, 16, 4, ScanCompact}, {1, 16, 4, ScanFull}} {
		q := mnistDesign(t, full, c.lc, c.ll, c.pn, c.scan)
		want := float64(q.SampleCyclesMax())
		if q.Lane1 { // the bound's scans end on a firing last block, a cycle late
			want -= float64(q.G)
		}
		if got := est(q, full, 1); got != want {
			t.Errorf("%d x %d lanes, %d patches, %s scan, every patch scanned: %.1f cycles, want the bound %.1f", c.lc, c.ll, c.pn, c.scan, got, want)
		}
	}
	// "y > 4" and "x <= 3" always included: rows 5..18 (the load from
	// row 5 reads 11 rows: 6 cycles), columns 0..3: one block of 7; one
	// clause lane at 3 blocks per row is Lane1 (docs/conv-core.md 3): the
	// take, the load, the blocks
	cut := mnistBank(0)
	for c := 0; c < 128; c++ {
		cut.Thresh[c*p.Lit] = always                      // a window literal
		cut.Thresh[c*p.Lit+p.WinBits+4] = always          // y > 4
		cut.Thresh[c*p.Lit+p.F+p.WinBits+p.TY+3] = always // x <= 3
	}
	if !p.Lane1 {
		t.Fatal("1 x 16 lanes at 7 patches per cycle: want Lane1")
	}
	scan := 1 + LoadCycles(10, 5) + 14*1
	if got, want := est(p, cut, 1), float64(128*max(18, scan)+3+10); got != want {
		t.Errorf("rows 5..18, columns 0..3: %.1f cycles, want %.1f", got, want)
	}
	// Lane1's rows start at the block of the first column: "x > 8" and
	// "x <= 15" give columns 9..15, the blocks of columns 7..13 and
	// 14..20, two a row (from column 0 it would be three)
	mid := mnistBank(0)
	for c := 0; c < 128; c++ {
		mid.Thresh[c*p.Lit] = always
		mid.Thresh[c*p.Lit+p.WinBits+4] = always           // y > 4
		mid.Thresh[c*p.Lit+p.WinBits+p.TY+8] = always      // x > 8
		mid.Thresh[c*p.Lit+p.F+p.WinBits+p.TY+15] = always // x <= 15
	}
	if got, want := est(p, mid, 1), float64(128*(1+6+14*2)+3+10); got != want {
		t.Errorf("rows 5..18, columns 9..15: %.1f cycles, want %.1f", got, want)
	}
	// at 1 patch per cycle (not Lane1: 19 blocks a row) the same
	// rectangle takes 14 x 4 blocks after the take, the range, the load's
	// start, the load and the end
	p1 := mnistDesign(t, cut, 1, 16, 1, ScanRange)
	if got, want := est(p1, cut, 1), float64(128*(3+6+14*4)+3+10); got != want {
		t.Errorf("1 patch per cycle: %.1f cycles, want %.1f", got, want)
	}
	// "x <= 3" included with probability 8/16: half the clauses scan
	// columns 0..3 at one patch per cycle (65 cycles), half all 19 (3 + 6
	// + 14 x 19 = 275); the mean of 200 x 128 draws is 170 per group
	// within 3 standard errors (105 / sqrt(25,600) = 0.66)
	half := mnistBank(0)
	for c := 0; c < 128; c++ {
		half.Thresh[c*p.Lit] = always
		half.Thresh[c*p.Lit+p.WinBits+4] = always
		half.Thresh[c*p.Lit+p.F+p.WinBits+p.TY+3] = 8
	}
	got := (est(p1, half, 1) - 13) / 128
	if math.Abs(got-170) > 3*0.66 {
		t.Errorf("x <= 3 at probability 1/2: %.2f cycles per group, want 170 +- 2", got)
	}
	if a, b := est(p1, half, 7), est(p1, half, 7); a != b {
		t.Errorf("seed 7 twice: %.3f and %.3f", a, b)
	}
	if _, err := p.ExpectedSampleCycles(half.Thresh[1:], 10, 1); !errors.Is(err, ErrConfig) {
		t.Errorf("a short bank: %v, want ErrConfig", err)
	}
}
