package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/hw/synth"
)

// convSynthArgs are `ptm synth`'s flags for a convolutional model.
type convSynthArgs struct {
	model           string
	file            *modelfile.ConvFile
	hash            string
	hf              *hwFlags
	device          string
	freq            float64
	seed, setsMax   int
	cycles          float64
	packOnly        bool // yosys and nextpnr's packing only (explicit lanes)
	out, cache      string
	noCache, asJSON bool
	quiet           bool
	// other are the tabular-only options, in the order of otherNames.
	other []bool
}

var otherNames = []string{"--core-only", "--core-clock-ratio 2", "--close", "--no-pack", "--no-relax", "--max-freq"}

// synthConv is `ptm synth --model conv.ptm`: the UART-only convolutional
// board (protocol 7) with explicit lanes, or the fastest candidate that
// fits and meets timing (synth.AutoConv) without them.
func synthConv(fs *flag.FlagSet, a convSynthArgs, stdout, stderr io.Writer) error {
	for i, set := range a.other {
		if set {
			return fmt.Errorf("%w: %s: not available for a convolutional model (its board is the UART-only one at one clock)", errUsage, otherNames[i])
		}
	}
	if a.cycles < 0 {
		return fmt.Errorf("%w: --cycles-per-sample %g: want the measured cycles (0: the schedule's)", errUsage, a.cycles)
	}
	if isSet(fs, "lanes") {
		return fmt.Errorf("%w: --lanes: a convolutional core takes --clause-lanes, --literal-lanes and --patch-lanes", errUsage)
	}
	dev, err := synth.LookupDevice(a.device)
	if err != nil {
		return fmt.Errorf("%w: --device: %w", errUsage, err)
	}
	scan, err := a.hf.convScan()
	if err != nil {
		return err
	}
	f := a.file
	a.setsMax = convSetsMax(fs, a.setsMax, f)
	bits := f.BankBits
	if isSet(fs, "bits") {
		bits = a.hf.bits
	}
	bank, err := f.Bank(bits)
	if err != nil {
		return err
	}
	gen := func(lc, ll, pn int, scan string) (*hw.ConvDesign, error) {
		h := conv.HW{Bits: bits, LFSRWidth: a.hf.width, ClauseLanes: lc, LiteralLanes: ll}
		if err := conv.CheckHW(&f.Head, h); err != nil {
			return nil, fmt.Errorf("%w: %v", errUsage, err)
		}
		cfg := hw.Config{Bits: bits, LFSRWidth: a.hf.width, ClauseLanes: lc, LiteralLanes: ll, MaxK: a.hf.maxK, Prefix: a.hf.prefix, PatchLanes: pn, Scan: scan}
		return hw.GenerateConv(cfg, bank, a.hash)
	}
	explicit := isSet(fs, "clause-lanes") || isSet(fs, "literal-lanes") || isSet(fs, "patch-lanes") || isSet(fs, "scan")
	if a.packOnly && !explicit {
		return fmt.Errorf("%w: --pack-only: give the configuration (--clause-lanes, --literal-lanes, --patch-lanes, --scan); the search packs its smallest candidate itself", errUsage)
	}
	name := strings.TrimSuffix(filepath.Base(a.model), filepath.Ext(a.model))
	o := synth.ConvOptions{Model: a.model, Device: dev.Name, FreqMHz: a.freq, Seed: a.seed, SetsMax: a.setsMax,
		CyclesPerSample: a.cycles, Cache: a.cache}
	if a.noCache {
		o.Cache = ""
	}
	if !a.quiet {
		o.Progress = stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var res *synth.ConvResult
	if explicit {
		lc, ll, pn := 1, min(16, f.Head.Shape.Literals()), 1
		if isSet(fs, "clause-lanes") {
			lc = a.hf.lc
		}
		if isSet(fs, "literal-lanes") {
			ll = a.hf.ll
		}
		if isSet(fs, "patch-lanes") {
			pn = a.hf.pn
		}
		d, err := gen(lc, ll, pn, scan)
		if err != nil {
			return err
		}
		if err := synth.CheckConvFit(&d.Params, dev); err != nil {
			return err
		}
		o.Design = d
		o.SynthOnly, o.Pack = a.packOnly, a.packOnly
		o.Dir = a.out
		if o.Dir == "" {
			o.Dir = filepath.Join("build", "synth", fmt.Sprintf("%s-%s-conv-%dx%d-pn%d-%s-B%d-W%d-%gMHz-s%d",
				name, dev.Name, lc, ll, d.Params.PN, d.Params.Scan, bits, a.hf.width, a.freq, a.seed))
		}
		res, err = synth.CachedConv(ctx, o)
		return reportConv(res, err, a.asJSON, convFailedRow{Kind: "conv", Device: dev.Name, Model: a.model,
			ClauseLanes: lc, LiteralLanes: ll, PatchLanes: d.Params.PN, Scan: d.Params.Scan, FreqMHz: a.freq}, stdout)
	}
	var cands []synth.ConvCandidate
	var fitErr error
	// expected ranks the candidates by the cycles their scan takes on
	// this model (hw.ConvParams.ExpectedSampleCycles: 200 draws of every
	// clause's include decisions from the bank, a fixed seed), not by the
	// schedule's bound, which assumes every clause scans every patch.
	expected := func(d *hw.ConvDesign) float64 {
		e, err := d.Params.ExpectedSampleCycles(bank.Thresh, searchDraws, 1)
		if err != nil {
			return 0 // ranked by the bound (OrderConvCandidates)
		}
		return e
	}
	for _, g := range synth.ConvCandidateGrid {
		if g.LC > f.Head.Clauses || g.LL > f.Head.Shape.Literals() {
			continue
		}
		d, err := gen(g.LC, g.LL, g.PN, scan)
		if err != nil {
			return err
		}
		if err := synth.CheckConvFit(&d.Params, dev); err != nil {
			// refused before any tool runs; no candidate: the first's reason
			if fitErr == nil {
				fitErr = err
			}
			continue
		}
		cands = append(cands, synth.ConvCandidate{ClauseLanes: g.LC, LiteralLanes: g.LL, PatchLanes: d.Params.PN, Scan: d.Params.Scan,
			Design: d, ScheduleCycles: synth.ConvScheduleCycles(&d.Params), ExpectedCycles: expected(d)})
		if scan == "" {
			// the compact scan of the same lanes: the search's fallback
			// when the smallest range-scan candidate does not fit
			dc, err := gen(g.LC, g.LL, g.PN, hw.ScanCompact)
			if err != nil {
				return err
			}
			if dc.Params.Compact {
				cands = append(cands, synth.ConvCandidate{ClauseLanes: g.LC, LiteralLanes: g.LL, PatchLanes: dc.Params.PN, Scan: dc.Params.Scan,
					Design: dc, ScheduleCycles: synth.ConvScheduleCycles(&dc.Params), ExpectedCycles: expected(dc)})
			}
		}
	}
	if len(cands) == 0 {
		if fitErr == nil {
			fitErr = fmt.Errorf("%w: no candidate lanes for %d clauses of %d literals", errUsage, f.Head.Clauses, f.Head.Shape.Literals())
		}
		return fitErr
	}
	synth.OrderConvCandidates(cands)
	o.Dir = a.out
	if o.Dir == "" {
		o.Dir = filepath.Join("build", "synth", fmt.Sprintf("%s-%s-conv-auto-B%d-W%d-%gMHz-s%d", name, dev.Name, bits, a.hf.width, a.freq, a.seed))
	}
	res, err = synth.AutoConv(ctx, o, cands)
	return reportConv(res, err, a.asJSON, convFailedRow{Kind: "conv", Device: dev.Name, Model: a.model, Search: true, FreqMHz: a.freq}, stdout)
}

// searchDraws is the samples of every clause's include decisions the
// search's estimate of a candidate's cycles averages (0.1 s for the
// 128-clause MNIST model and its 13 candidates).
const searchDraws = 200

// convFailedRow is --json's row when no result came back: the
// configuration and the reason.
type convFailedRow struct {
	Kind         string  `json:"kind"`
	Device       string  `json:"device"`
	Model        string  `json:"model"`
	Search       bool    `json:"search,omitempty"`
	ClauseLanes  int     `json:"clause_lanes,omitempty"`
	LiteralLanes int     `json:"literal_lanes,omitempty"`
	PatchLanes   int     `json:"patch_lanes,omitempty"`
	Scan         string  `json:"scan,omitempty"`
	FreqMHz      float64 `json:"target_mhz"`
	Error        string  `json:"error"`
}

// reportConv prints a convolutional board's result (text or JSON) and
// keeps result.json beside the bitstream; with --json a failure without
// a result prints failed with its error.
func reportConv(r *synth.ConvResult, err error, asJSON bool, failed convFailedRow, w io.Writer) error {
	if r == nil && err != nil && asJSON {
		failed.Error = err.Error()
		if jerr := writeJSON(w, failed); jerr != nil {
			return jerr
		}
	}
	if r != nil {
		if asJSON {
			if jerr := writeJSON(w, r); jerr != nil {
				return jerr
			}
		} else {
			printConvSynth(w, r)
		}
		if err == nil && !r.SynthOnly {
			if ferr := writeJSONFile(filepath.Join(r.BuildDir, "result.json"), r); ferr != nil {
				return ferr
			}
		}
	}
	if err != nil && errors.Is(err, synth.ErrOptions) {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	return err
}

func printConvSynth(w io.Writer, r *synth.ConvResult) {
	fmt.Fprintf(w, "convolutional board (UART only, protocol 7, conv core) on %s (%s): %d x %d lanes, %d patches per cycle, %s scan, B=%d, W=%d\n",
		r.Device, r.Board, r.ClauseLanes, r.LiteralLanes, r.PatchLanes, r.Scan, r.Bits, r.LFSRWidth)
	mem := "block RAM"
	if r.ThreshSPRAM {
		mem = "SPRAM"
	}
	fmt.Fprintf(w, "  model: %dx%d x %d images, %d clauses, %d classes, %.1f kbit of thresholds (in %s)\n", r.ImageH, r.ImageW, r.Planes, r.Clauses, r.Classes, r.ModelKbits, mem)
	packed := ""
	if r.SynthOnly {
		packed = " packed (nextpnr-ice40 --pack-only; not placed)"
	}
	fmt.Fprintf(w, "  logic cells %d/%d%s (%.0f%%; %d LUT4, %d FF, %d carry), block RAM %d/%d, SPRAM %d/4\n",
		r.LUTs, r.LUTsAvailable, packed, 100*float64(r.LUTs)/float64(r.LUTsAvailable), r.LUT4, r.FFs, r.Carry, r.BRAMs, r.BRAMsAvailable, r.SPRAMs)
	if r.SynthOnly {
		return
	}
	met := "met"
	if !r.TimingMet {
		met = "NOT met"
	}
	fmt.Fprintf(w, "  Fmax %.2f MHz, target %.2f MHz (PLL %.3f MHz): timing %s\n", r.FmaxMHz, r.TargetMHz, r.ClockMHz, met)
	fmt.Fprintf(w, "  %.1f cycles/sample (%s; the schedule's longest %d): %.0f samples/s, %.1f queries/s at K=%d at the %.3f MHz clock (at Fmax: %.0f, %.1f)\n",
		r.CyclesPerSample, r.CyclesSource, r.ScheduleCycles, r.SamplesPerSAtClock, r.QueriesPerSK16AtClock, synth.ConvQueryK, r.ClockMHz, r.SamplesPerS, r.QueriesPerSK16)
	fmt.Fprintf(w, "  UART bound at %.0f baud: %.0f queries/s (votes), %.0f (stats); %d-byte requests\n", r.UARTBaud, r.UART.VotesQueriesPerS, r.UART.StatsQueriesPerS, r.UART.RequestBytes)
	for _, st := range r.Search {
		fmt.Fprintf(w, "  search: %d x %d lanes, %d patches, %s scan at %.1f MHz (schedule %d): %s (%d LCs, Fmax %.1f)\n",
			st.ClauseLanes, st.LiteralLanes, st.PatchLanes, st.Scan, st.FreqMHz, st.Schedule, st.Outcome, st.LUTs, st.FmaxMHz)
	}
	bit := r.Bitstream
	if bit == "" {
		bit = "none (timing not met: no image to flash)"
	}
	fmt.Fprintf(w, "  binding: %s\n  bitstream: %s\n", r.Binding, bit)
}

// convSetsMax is the conv board's SETS_MAX: --sets-max when given, else
// the model's threshold sets (its queries carry no more, and every set
// the loop could hold beyond them costs the board logic cells: about 120
// at the MNIST board's lanes, docs/synthesis-flow.md).
func convSetsMax(fs *flag.FlagSet, given int, f *modelfile.ConvFile) int {
	if isSet(fs, "sets-max") {
		return given
	}
	return max(1, f.JitterSets)
}
