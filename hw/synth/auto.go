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

// AutoClockStep is the step of the core clocks Auto tries above the
// target clock: 6 MHz keeps the 3 Mbaud UART exact at the dual-clock
// board's shell clock (half the core's) as well as on one clock.
const AutoClockStep = 6

// AutoTimingRuns is the most place-and-route runs that place but miss
// timing one Auto search makes (each takes 5-25 minutes on the
// development machine); when they are spent, Auto returns the last
// failure. Runs that do not fit are bounded by the candidates (each
// removes its lane count and every larger one).
const AutoTimingRuns = 8

// AutoFmaxMargin is how far above a failed run's Fmax Auto still tries
// other lane counts of the same clock ratio: nextpnr's Fmax moves by
// 10-15% with the seed and a little with the lane count, so a clock more
// than 10% above an Fmax reached is not tried again on that ratio.
const AutoFmaxMargin = 0.10

// AutoSeeds is how many nextpnr placement seeds Auto tries for one image
// (Options.Seed, then the next ones) when its runs miss timing by less
// than AutoSeedMargin. Seeds 1-4 of the 60-lane Iris UART board at a 54
// MHz core clock (generator 0.2.2) reached 51.4, 55.2, 54.3 and 54.9 MHz:
// the first seed alone would give the clock up for a seed's luck.
const AutoSeeds = 3

// AutoSeedMargin is how close below its core clock a run's Fmax must be
// for Auto to try the image again with the next seed (AutoSeeds).
const AutoSeedMargin = 0.06

// SearchStep is one step of Auto: a candidate image (lane count, clock
// ratio, core clock), how it was tried (a yosys-only estimate or a full
// place and route) and what came of it.
type SearchStep struct {
	Lanes int    `json:"lanes"`
	Depth int    `json:"depth"`
	Stage string `json:"stage"` // "estimate" or "place"
	// CoreClockRatio is 2 for the dual-clock board (core at TargetMHz,
	// shell at ShellMHz, half of it), 1 for one clock.
	CoreClockRatio int     `json:"core_clock_ratio"`
	LUT4           int     `json:"lut4,omitempty"`
	LUTs           int     `json:"luts,omitempty"`
	TargetMHz      float64 `json:"target_mhz,omitempty"`
	ShellMHz       float64 `json:"shell_mhz,omitempty"`
	PlaceMHz       float64 `json:"place_mhz,omitempty"`
	// Seed is the nextpnr placement seed of a place step.
	Seed int `json:"seed,omitempty"`
	// SamplesPerS is what the image computes at TargetMHz if it meets
	// timing there (the order Auto places in).
	SamplesPerS float64 `json:"samples_per_s,omitempty"`
	FmaxMHz     float64 `json:"fmax_mhz,omitempty"`
	Cached      bool    `json:"cached,omitempty"`
	Outcome     string  `json:"outcome"`
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

// Image is one configuration Auto may build: a candidate core, the clock
// ratio (1: one clock; 2: the dual-clock board, the shell at half the
// core's clock) and the core clock (the PLL's) with the clock nextpnr
// places for.
type Image struct {
	Candidate
	Ratio    int
	MHz      float64
	PlaceMHz float64
	// Seed is nextpnr's placement seed; 0 is Options.Seed's.
	Seed int
}

// seed is the placement seed the image is placed with under o.
func (im Image) seed(o Options) int {
	switch {
	case im.Seed > 0:
		return im.Seed
	case o.Seed > 0:
		return o.Seed
	}
	return 1
}

// SamplesPerS is the image's rate at its core clock (Fmax permitting):
// MHz / cycles per sample at K = 100.
func (im Image) SamplesPerS() float64 {
	return im.MHz * 1e6 * QueryK / float64(RequestPeriod(&im.Design.Params, QueryK))
}

// ShellMHz is the clock of the board shell and its UART: the core's, or
// half of it on the dual-clock board.
func (im Image) ShellMHz() float64 { return im.MHz / float64(max(1, im.Ratio)) }

// exactUART reports whether the image's shell clock runs the 3 Mbaud
// UART exactly with at least MinClksPerBit clocks per bit (a multiple of
// 3 MHz, 24 MHz or more).
func (im Image) exactUART() bool {
	n := im.ShellMHz() * 1e6 / UARTBaud
	return n >= MinClksPerBit && math.Abs(n-math.Round(n)) < 1e-9
}

// autoRatios are the clock ratios Auto searches: the one asked for
// (Options.CoreClockRatio 1 or 2), else both where the device top has the
// dual-clock board (not the core-only top).
func autoRatios(o Options, dev Device) []int {
	switch {
	case o.CoreOnly:
		return []int{1}
	case o.CoreClockRatio == 1 || o.CoreClockRatio == 2:
		return []int{o.CoreClockRatio}
	case dev.DualClock:
		return []int{2, 1}
	}
	return []int{1}
}

// autoClocks are the core clocks Auto tries: the target (o.FreqMHz) and
// every multiple of AutoClockStep above it up to the highest (o.MaxMHz,
// else the device's AutoMaxMHz).
func autoClocks(o Options, dev Device) []float64 {
	top := o.MaxMHz
	if top == 0 {
		top = dev.AutoMaxMHz
	}
	out := []float64{o.FreqMHz}
	for f := (math.Floor(o.FreqMHz/AutoClockStep) + 1) * AutoClockStep; f <= top; f += AutoClockStep {
		out = append(out, f)
	}
	return out
}

// sortImages orders images by samples/s at their core clock, highest
// first; on a tie the dual-clock image first (its shell has to meet only
// half the clock), then fewer lanes (fewer cells).
func sortImages(ims []Image) {
	sort.SliceStable(ims, func(i, j int) bool {
		a, b := ims[i], ims[j]
		if sa, sb := a.SamplesPerS(), b.SamplesPerS(); math.Abs(sa-sb) > 1e-6*math.Max(sa, sb) {
			return sa > sb
		}
		if a.Ratio != b.Ratio {
			return a.Ratio > b.Ratio
		}
		return a.Lanes < b.Lanes
	})
}

// runImage is one run of the flow for Auto: an estimate (synthOnly) or a
// place and route of the image. Auto runs the real flow (Cached); the
// tests give the search a model of it.
type runImage func(im Image, synthOnly bool) (*Result, error)

// Auto chooses the fastest image that fits the device and meets timing,
// among the candidates cands (Candidates, ascending lanes) on one clock
// and, for a board top that has it, on the dual-clock board, at the
// target clock and above, and builds it. The search (docs/synthesis.md
// "Choosing the core"):
//
//  1. Estimate: yosys only (Options.SynthOnly), per clock ratio a binary
//     search for the largest candidate whose LUT4 count is at most
//     AutoFill of the device's logic cells.
//  2. Images: every candidate up to that one, on each clock ratio
//     (autoRatios), at the target clock o.FreqMHz and every multiple of
//     AutoClockStep above it up to o.MaxMHz or the device's AutoMaxMHz
//     (above the target only clocks whose shell runs the 3 Mbaud UART
//     exactly, MinClksPerBit or more clocks per bit), ordered by
//     samples/s at the core clock (sortImages).
//  3. Place and route the first image. It meets timing: it is the
//     choice (every image left computes no more). It does not fit: every
//     image of that ratio with as many lanes or more goes. Timing is not
//     met: the images of that ratio above its Fmax (other lane counts:
//     more than AutoFmaxMargin above) go, and the same core joins the
//     order at the highest multiple of 3 MHz (6 on the dual-clock board,
//     keeping the UART exact) at or below the Fmax reached, placed with
//     the same --freq (PlaceMHz) and seed: nextpnr's constraint comes
//     from --freq alone, so the placer aims as before at a netlist that
//     differs only in the PLL's dividers and the UART divider constant.
//     Its Fmax moves a little (Iris, 15 lanes: 20.0 MHz at the 48 MHz
//     PLL, 21.6 MHz with the 18 MHz PLL).
//     A dual-clock run also removes the one-clock images above its
//     shell's Fmax (the one-clock shell runs at the core's clock).
//  4. At most AutoTimingRuns runs that miss timing; then the last
//     failure is returned.
//
// Every run goes through Cached (o.Cache), so a repeated search runs no
// tool. Each run's folder is o.Dir/L<lanes>[-2clk]-<MHz>MHz[-p<place
// MHz>] (or L<lanes>[-2clk]-estimate); the Result is the chosen run's,
// with Search recording every step.
func Auto(ctx context.Context, o Options, cands []Candidate) (*Result, error) {
	if o.FreqMHz == 0 {
		o.FreqMHz = DefaultMHz
	}
	run := func(im Image, synthOnly bool) (*Result, error) {
		ro := o
		ro.Design, ro.SynthOnly, ro.FreqMHz, ro.PlaceMHz, ro.CoreClockRatio = im.Design, synthOnly, im.MHz, im.PlaceMHz, im.Ratio
		if !synthOnly {
			ro.Seed = im.seed(o)
		}
		ro.Dir = filepath.Join(o.Dir, imageDir(im, synthOnly))
		return Cached(ctx, ro)
	}
	r, err := autoSearch(o, cands, run)
	if err == nil {
		err = r.keepBitstream(o.Dir)
	}
	return r, err
}

// imageDir is the build folder of one of Auto's runs.
func imageDir(im Image, synthOnly bool) string {
	name := fmt.Sprintf("L%d", im.Lanes)
	if im.Ratio == 2 {
		name += "-2clk"
	}
	if synthOnly {
		return name + "-estimate"
	}
	name += fmt.Sprintf("-%gMHz", im.MHz)
	if im.PlaceMHz != im.MHz {
		name += fmt.Sprintf("-p%g", im.PlaceMHz)
	}
	if im.Seed > 1 {
		name += fmt.Sprintf("-s%d", im.Seed)
	}
	return name
}

// autoSearch is Auto's search with the runs made by run.
func autoSearch(o Options, cands []Candidate, run runImage) (*Result, error) {
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
	if o.CoreOnly && o.CoreClockRatio == 2 {
		return nil, fmt.Errorf("%w: core clock ratio 2 is a board top's (the core-only top has one clock)", ErrOptions)
	}
	var steps []SearchStep
	record := func(im Image, synthOnly bool, r *Result, err error) {
		st := SearchStep{Lanes: im.Lanes, Depth: im.Design.Params.D, Stage: "place", CoreClockRatio: im.Ratio,
			TargetMHz: im.MHz, PlaceMHz: im.PlaceMHz, Seed: im.seed(o), SamplesPerS: math.Round(im.SamplesPerS())}
		if im.Ratio == 2 {
			st.ShellMHz = im.ShellMHz()
		}
		if synthOnly {
			st = SearchStep{Lanes: im.Lanes, Depth: im.Design.Params.D, Stage: "estimate", CoreClockRatio: im.Ratio}
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
		clock := "one clock"
		if im.Ratio == 2 {
			clock = "two clocks"
		}
		if synthOnly {
			o.step("search: %d lanes (D=%d), %s, estimate: %s", im.Lanes, im.Design.Params.D, clock, st.Outcome)
		} else {
			o.step("search: %d lanes (D=%d), %s, core %g MHz (placed for %g, seed %d), %.0f samples/s if met: %s",
				im.Lanes, im.Design.Params.D, clock, im.MHz, im.PlaceMHz, im.seed(o), im.SamplesPerS(), st.Outcome)
		}
	}
	fits := func(r *Result) bool { return float64(r.LUT4) <= AutoFill*float64(dev.LCs) && r.BRAMs <= dev.BRAMs }

	// 1. Estimate, per ratio: the largest candidate whose estimate fits,
	// by binary search (the cell count grows with the lanes). The
	// one-clock board is the dual-clock one without the crossing, so
	// what the latter fits the former fits too.
	ratios := autoRatios(o, dev)
	largest := map[int]int{} // ratio -> index into cands of the largest that fits
	floor := -1
	for _, ratio := range ratios {
		lo, hi := floor+1, len(cands)-1
		best := floor
		for lo <= hi {
			mid := (lo + hi) / 2
			im := Image{Candidate: cands[mid], Ratio: ratio, MHz: o.FreqMHz, PlaceMHz: o.FreqMHz}
			r, err := run(im, true)
			record(im, true, r, err)
			switch {
			case err == nil && fits(r):
				best, lo = mid, mid+1
			case err == nil || errors.Is(err, ErrNoFit):
				hi = mid - 1
			default:
				return nil, err
			}
		}
		if best >= 0 {
			largest[ratio] = best
		}
		if ratio == 2 {
			floor = best
		}
	}
	if len(largest) == 0 {
		return nil, fmt.Errorf("%w on %s: even %d lanes need more than %.0f%% of the %d logic cells (yosys estimate)",
			ErrNoFit, dev.Name, cands[0].Lanes, 100*AutoFill, dev.LCs)
	}

	// 2. The images, in the order of their samples/s.
	var order []Image
	for _, ratio := range ratios {
		best, ok := largest[ratio]
		if !ok {
			continue
		}
		for i := 0; i <= best; i++ {
			for k, mhz := range autoClocks(o, dev) {
				im := Image{Candidate: cands[i], Ratio: ratio, MHz: mhz, PlaceMHz: mhz}
				if k > 0 && !o.CoreOnly && !im.exactUART() {
					continue
				}
				order = append(order, im)
			}
		}
	}
	sortImages(order)

	// 3. Place and route, best first.
	var last *Result
	var lastErr error
	tried := map[string]bool{}
	for misses := 0; len(order) > 0 && misses < AutoTimingRuns; {
		im := order[0]
		order = order[1:]
		if key := imageDir(im, false); tried[key] {
			continue
		} else {
			tried[key] = true
		}
		r, err := run(im, false)
		record(im, false, r, err)
		if r != nil {
			r.Search = steps
		}
		switch {
		case err == nil:
			return r, nil
		case errors.Is(err, ErrNoFit):
			// The two boards differ by the crossing's few cells: a
			// lane count that does not place on one is not tried on
			// the other.
			order = drop(order, func(x Image) bool { return x.Lanes >= im.Lanes })
			last, lastErr = r, err
		case errors.Is(err, ErrTiming) && r != nil:
			misses++
			fmax, shell := r.FmaxMHz, r.ShellFmaxMHz
			order = drop(order, func(x Image) bool {
				if x.Ratio != im.Ratio {
					// The one-clock board's shell runs at the core's
					// clock: not above the dual-clock shell's Fmax.
					return x.Ratio == 1 && shell > 0 && x.MHz > shell*(1+AutoFmaxMargin)
				}
				// The same core: not above what another seed may reach.
				return x.Lanes == im.Lanes && x.MHz > fmax*(1+AutoSeedMargin) || x.MHz > fmax*(1+AutoFmaxMargin)
			})
			step := float64(3 * max(1, im.Ratio))
			next := math.Floor(fmax/step) * step
			queued := false
			for _, x := range order {
				queued = queued || x.Ratio == im.Ratio && x.Lanes == im.Lanes && x.MHz == next
			}
			if next >= 16 && next < im.MHz && !queued {
				order = append(order, Image{Candidate: im.Candidate, Ratio: im.Ratio, MHz: next, PlaceMHz: im.PlaceMHz, Seed: im.Seed})
			}
			// A near miss: the same image with the next seed, ahead of
			// everything slower.
			first := Image{}.seed(o) // the search's own seed
			if seed := im.seed(o); seed < first+AutoSeeds-1 && fmax >= im.MHz*(1-AutoSeedMargin) {
				again := im
				again.Seed = seed + 1
				order = append(order, again)
			}
			sortImages(order)
			last, lastErr = r, err
		default:
			return nil, err
		}
	}
	if last != nil {
		last.Search = steps
		return last, lastErr
	}
	if lastErr != nil {
		return nil, lastErr
	}
	return nil, fmt.Errorf("%w on %s: no image placed", ErrNoFit, dev.Name)
}

// drop returns ims without the images gone says.
func drop(ims []Image, gone func(Image) bool) []Image {
	out := ims[:0]
	for _, im := range ims {
		if !gone(im) {
			out = append(out, im)
		}
	}
	return out
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
