package synth

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sort"

	"github.com/ptmhw/ptm/hw"
)

// AutoFill is the share of the device's logic cells a candidate's yosys
// LUT4 count may reach for Auto to place it. nextpnr needs more logic
// cells than yosys's LUT4s (flip-flops and carries without a LUT of their
// own): the Iris UART board with 15 lanes has 4,144 LUT4 and places in
// 5,245 of the UP5K's 5,280 logic cells (1.27x), 16 lanes do not fit.
const AutoFill = 0.80

// SearchStep is one step of Auto: a candidate lane count, how it was
// tried (a yosys-only estimate or a full place and route) and what came of
// it.
type SearchStep struct {
	Lanes     int     `json:"lanes"`
	Depth     int     `json:"depth"`
	Stage     string  `json:"stage"` // "estimate" or "place"
	LUT4      int     `json:"lut4,omitempty"`
	LUTs      int     `json:"luts,omitempty"`
	TargetMHz float64 `json:"target_mhz,omitempty"`
	FmaxMHz   float64 `json:"fmax_mhz,omitempty"`
	Cached    bool    `json:"cached,omitempty"`
	Outcome   string  `json:"outcome"`
}

// Candidate is one lane count Auto may choose, with its design.
type Candidate struct {
	Lanes  int
	Design *hw.Design
}

// Candidates generates the designs Auto chooses from: for every lane
// count from 1 to maxLanes whose banks fit the device's block RAMs, the
// design gen makes, keeping of several lane counts with the same bank
// depth D only the smallest (more lanes at the same D are not faster).
// The result is ordered by lane count.
func Candidates(device string, maxLanes int, noPack bool, gen func(lanes int) (*hw.Design, error)) ([]Candidate, error) {
	dev, err := LookupDevice(device)
	if err != nil {
		return nil, err
	}
	byDepth := map[int]Candidate{}
	for l := 1; l <= maxLanes; l++ {
		d, err := gen(l)
		if err != nil {
			continue // a lane count the shape cannot split
		}
		if MinBRAMs(&d.Params, !noPack) > dev.BRAMs {
			continue
		}
		if c, ok := byDepth[d.Params.D]; !ok || d.Params.L < c.Lanes {
			byDepth[d.Params.D] = Candidate{Lanes: d.Params.L, Design: d}
		}
	}
	var out []Candidate
	for _, c := range byDepth {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Lanes < out[j].Lanes })
	if len(out) == 0 {
		return nil, fmt.Errorf("%w on %s: no lane count up to %d has banks that fit %d block RAMs", ErrNoFit, dev.Name, maxLanes, dev.BRAMs)
	}
	return out, nil
}

// Auto chooses the fastest core that fits the device and meets timing,
// among cands (Candidates, ascending lanes), and builds it. The search
// (docs/synthesis.md):
//
//  1. Estimate: yosys only (Options.SynthOnly), binary search for the
//     largest candidate whose LUT4 count is at most AutoFill of the
//     device's logic cells.
//  2. Place and route that candidate at the target clock (o.FreqMHz); if
//     it does not fit, the next smaller candidate, and so on.
//  3. If timing is not met, one more run of the same candidate with the
//     PLL at the highest multiple of 3 MHz (the 3 Mbaud UART stays exact;
//     6 MHz for the dual-clock board, Options.CoreClockRatio)
//     at or below the Fmax reached, placed with the same --freq
//     (Options.PlaceMHz) and seed: nextpnr's constraint comes from --freq
//     alone, so the placer aims as before at a netlist that differs only
//     in the PLL's dividers and the UART divider constant. Its Fmax moves
//     a little (Iris, 15 lanes: 20.0 MHz at the 48 MHz PLL, 21.6 MHz with
//     the 18 MHz PLL); a miss is an ErrTiming like any other. The board's
//     own logic, not the core's size, sets that clock, so fewer lanes
//     would be slower.
//
// Every run goes through Cached (o.Cache), so a repeated search runs no
// tool. Each run's folder is o.Dir/L<lanes>[-<MHz>MHz][-estimate]; the
// Result is the chosen run's, with Search recording every step.
func Auto(ctx context.Context, o Options, cands []Candidate) (*Result, error) {
	if len(cands) == 0 {
		return nil, fmt.Errorf("%w: no candidate designs", ErrOptions)
	}
	dev, err := LookupDevice(o.Device)
	if err != nil {
		return nil, err
	}
	if o.FreqMHz == 0 {
		o.FreqMHz = DefaultMHz
	}
	var steps []SearchStep
	run := func(c Candidate, synthOnly bool, mhz float64) (*Result, error) {
		ro := o
		ro.Design, ro.SynthOnly, ro.FreqMHz, ro.PlaceMHz = c.Design, synthOnly, mhz, o.FreqMHz
		name := fmt.Sprintf("L%d", c.Lanes)
		if mhz != o.FreqMHz {
			name += fmt.Sprintf("-%gMHz", mhz)
		}
		if synthOnly {
			name += "-estimate"
		}
		ro.Dir = filepath.Join(o.Dir, name)
		r, err := Cached(ctx, ro)
		st := SearchStep{Lanes: c.Lanes, Depth: c.Design.Params.D, Stage: "place", TargetMHz: mhz}
		if synthOnly {
			st.Stage, st.TargetMHz = "estimate", 0
		}
		if r != nil {
			st.LUT4, st.LUTs, st.FmaxMHz, st.Cached = r.LUT4, r.LUTs, r.FmaxMHz, r.Cached
		}
		switch {
		case err == nil && synthOnly:
			st.Outcome = fmt.Sprintf("%d LUT4 (%.0f%% of %d)", r.LUT4, 100*float64(r.LUT4)/float64(dev.LCs), dev.LCs)
		case err == nil:
			st.Outcome = "fits, timing met"
		case errors.Is(err, ErrNoFit):
			st.Outcome = "does not fit"
		case errors.Is(err, ErrTiming):
			st.Outcome = "timing not met"
		default:
			st.Outcome = "error: " + err.Error()
		}
		steps = append(steps, st)
		o.step("search: %d lanes (D=%d), %s: %s", c.Lanes, c.Design.Params.D, st.Stage, st.Outcome)
		return r, err
	}
	fits := func(r *Result) bool { return float64(r.LUT4) <= AutoFill*float64(dev.LCs) && r.BRAMs <= dev.BRAMs }

	// 1. Estimate: the largest candidate whose estimate fits, by binary
	// search (the cell count grows with the lanes).
	lo, hi := 0, len(cands)-1 // answer in [-1, hi]
	best := -1
	for lo <= hi {
		mid := (lo + hi) / 2
		r, err := run(cands[mid], true, o.FreqMHz)
		switch {
		case err == nil && fits(r):
			best, lo = mid, mid+1
		case err == nil || errors.Is(err, ErrNoFit):
			hi = mid - 1
		default:
			return nil, err
		}
	}
	if best < 0 {
		return nil, fmt.Errorf("%w on %s: even %d lanes need more than %.0f%% of the %d logic cells (yosys estimate)",
			ErrNoFit, dev.Name, cands[0].Lanes, 100*AutoFill, dev.LCs)
	}

	// 2. Place and route, stepping down while it does not fit.
	for i := best; i >= 0; i-- {
		r, err := run(cands[i], false, o.FreqMHz)
		if errors.Is(err, ErrNoFit) {
			continue
		}
		if err != nil && !errors.Is(err, ErrTiming) {
			return nil, err
		}
		if err != nil { // 3. timing: the clock the placed design reaches
			next := math.Floor(r.FmaxMHz/o.clockStep()) * o.clockStep()
			if next < 16 || next >= o.FreqMHz {
				r.Search = steps
				return r, err
			}
			o.step("search: timing not met at %.1f MHz (Fmax %.2f MHz): %d lanes at %.0f MHz", o.FreqMHz, r.FmaxMHz, cands[i].Lanes, next)
			r, err = run(cands[i], false, next)
		}
		if r != nil {
			r.Search = steps
		}
		if err == nil {
			err = r.keepBitstream(o.Dir)
		}
		return r, err
	}
	return nil, fmt.Errorf("%w on %s: no candidate up to %d lanes placed", ErrNoFit, dev.Name, cands[best].Lanes)
}

// clockStep is the PLL clock step that keeps the 3 Mbaud UART exact: 3
// MHz, or 6 MHz for the dual-clock board (its UART runs at half the PLL
// clock).
func (o *Options) clockStep() float64 {
	if o.CoreClockRatio == 2 {
		return 6
	}
	return 3
}

// keepBitstream copies the chosen run's bitstream to dir/top.bin (the
// image Auto built) and points Bitstream at it.
func (r *Result) keepBitstream(dir string) error {
	if r.Bitstream == "" {
		return nil
	}
	to, err := filepath.Abs(filepath.Join(dir, "top.bin"))
	if err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	if err := copyFile(r.Bitstream, to); err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	r.Bitstream = to
	return nil
}
