package hw

import (
	"fmt"
	"math/rand/v2"
)

// ExpectedSampleCycles estimates the cycles per sample of the design on
// the model whose B-bit thresholds are thresh (conv.Bank's Thresh: clause
// c's literal i at c*Lit + i, B = p.Bits): the mean over draws samples of
// SampleCyclesMax's schedule with each group's scan cut to what the range
// scan visits.
//
// Every clause's include decisions are drawn as the core draws them in
// distribution (included with probability thresh / 2^B, always at
// threshold 2^B - 1) from a seeded generator, not from the core's LFSRs.
// A group of LC clause lanes scans the union of its lanes' thermometer
// rectangles, patch rows ylo..yhi, one block of PN patches per cycle
// (docs/conv-core.md section 3):
//   - the range scan: each row from column 0 to the last column xhi,
//     after 3 cycles (the take, the range, the load's start) and the
//     window's load from row ylo;
//   - at one clause lane (Lane1): each row from the block of the first
//     column xlo, after 1 cycle and the load (no range cycle; a scan that
//     does not fire ends with its last block);
//   - the compact scan: the window reloaded at every further row, and the
//     sampler waits for the scan, so a group costs both.
//
// A group none of whose lanes has an included literal and a non-empty
// rectangle scans for 2 cycles. A group costs the longest of its sampling
// (BT + 1), its scan and its weighing (LC + 2), as in SampleCyclesMax.
// The estimate ignores the scan's early end where every lane has fired
// (most clauses fire on no patch of an image), so it is an upper estimate
// of what the core measures on images (1.09-1.22 times on mnist-up5k,
// docs/synthesis-flow.md), and far below SampleCyclesMax for a trained
// model, whose clauses include position literals. The full scan has no
// rectangles: its estimate is SampleCyclesMax.
//
// AutoConv's search ranks its candidates by this estimate when the CLI
// gives it the model (ptm synth without lanes).
func (p *ConvParams) ExpectedSampleCycles(thresh []uint32, draws int, seed uint64) (float64, error) {
	if want := p.C * p.Lit; len(thresh) != want {
		return 0, fmt.Errorf("%w: %d thresholds, the design's %d clauses x %d literals need %d", ErrConfig, len(thresh), p.C, p.Lit, want)
	}
	if !p.Range || draws < 1 {
		return float64(p.SampleCyclesMax()), nil
	}
	always := uint32(1)<<uint(p.Bits) - 1
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	incl := func(th uint32) bool {
		return th == always || (th != 0 && rng.Uint32()>>uint(32-p.Bits) < th)
	}
	win := p.WinBits
	total := 0
	for s := 0; s < draws; s++ {
		for g := 0; g < p.G; g++ {
			ylo, yhi, xlo, xhi, ok := p.PY, -1, p.PX, -1, false
			for ci := 0; ci < p.LC; ci++ {
				c := g*p.LC + ci
				if c >= p.C {
					break
				}
				th := thresh[c*p.Lit : (c+1)*p.Lit]
				any := false
				for i := 0; i < win; i++ {
					if incl(th[i]) || incl(th[p.F+i]) {
						any = true
					}
				}
				lo, hi, xl, xh := 0, p.PY-1, 0, p.PX-1
				for k := 0; k < p.TY; k++ {
					if incl(th[win+k]) { // y > k
						lo, any = max(lo, k+1), true
					}
					if incl(th[p.F+win+k]) { // y <= k
						hi, any = min(hi, k), true
					}
				}
				for k := 0; k < p.TX; k++ {
					if incl(th[win+p.TY+k]) {
						xl, any = max(xl, k+1), true
					}
					if incl(th[p.F+win+p.TY+k]) {
						xh, any = min(xh, k), true
					}
				}
				if any && lo <= hi && xl <= xh {
					ok = true
					ylo, yhi, xlo, xhi = min(ylo, lo), max(yhi, hi), min(xlo, xl), max(xhi, xh)
				}
			}
			scan := 2
			if ok {
				rows := yhi - ylo + 1
				scan = 3 + p.LoadCycles(ylo) + rows*(xhi/p.PN+1)
				if p.Lane1 { // rows from the first column's block, no range cycle, the end at the last block
					scan = 1 + p.LoadCycles(ylo) + rows*((xhi-xlo/p.PN*p.PN)/p.PN+1)
				}
				if p.Compact { // the window reloaded at every further row
					scan = p.ScanOverhead() + rows*(xhi/p.PN+1) + (rows-1)*(p.NR+1)
				}
			}
			if p.Compact { // the sampler waits for the scan
				total += p.BT + 2 + scan
			} else {
				total += max(p.BT+1, scan, p.LC+2)
			}
		}
	}
	return float64(total)/float64(draws) + float64(p.LC+2+p.NC), nil
}
