package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/hw/synth"
)

func init() {
	register("synth", "synthesize, place and route the board (or the core alone) for an iCE40 with yosys and nextpnr", cmdSynth)
}

func cmdSynth(args []string, stdout, stderr io.Writer) error {
	for _, a := range args {
		if a == "--trainer" || a == "-trainer" || a == "--trainer=true" || a == "-trainer=true" {
			return cmdSynthTrainer(args, stdout, stderr)
		}
		if a == "--" {
			break
		}
	}
	fs := newFlags("synth", "--model MODEL --device up5k|hx8k [--lanes L (none: the largest core that fits and meets timing)] [--bits B] [--freq MHz] [--seed S] [--core-only] [--json]\n       ptm synth --model CONV.ptm --device up5k [--clause-lanes LC --literal-lanes LL --patch-lanes PN --scan range|full (none: a search)] [--cycles-per-sample C] [--json]\n       ptm synth --table RESULTS.jsonl\n       ptm synth --trainer ... (ptm synth --trainer -h)", stderr)
	model := fs.String("model", "", "model `file`")
	shapeSpec := fs.String("random-shape", "", "synthesize an untrained shape (random bank) instead: classes=N,clauses=M,features=O,t=T[,binary]")
	device := fs.String("device", "up5k", "device: up5k (iCEBreaker) or hx8k (HX8K breakout board)")
	freq := fs.Float64("freq", synth.DefaultMHz, "target core clock in `MHz` (the PLL is set to it)")
	seed := fs.Int("seed", 1, "nextpnr placement seed")
	coreOnly := fs.Bool("core-only", false, "the core alone (out of context) instead of the full board top")
	noEth := fs.Bool("no-eth", false, "the UART-only board (no Ethernet MII link): smaller, for the UP5K")
	setsMax := fs.Int("sets-max", hw.DefaultSetsMax, "the board's MMAX, the most sets per INFER query (SETS_MAX, 1..255; 1 leaves the set loop out, the host then sends one request per set); a convolutional model's board defaults to the model's threshold sets")
	coreRatio := fs.Int("core-clock-ratio", 0, "1: one clock; 2: the core on the PLL's clock (--freq) and the board shell on half of it (board tops, not --core-only; docs/synthesis.md \"The dual-clock board\"); 0: chosen by the lane search without a lane count (both tried), else 1")
	maxFreq := fs.Float64("max-freq", 0, "the highest core clock in `MHz` the lane search tries (no lane count; 0: the device's, up5k 60, hx8k 108)")
	closeTiming := fs.Bool("close", false, "if timing fails, retry at the highest multiple of 3 MHz below the Fmax reached (up to 3 runs)")
	noPack := fs.Bool("no-pack", false, "one block RAM per lane (do not pack two 8-bit banks per block RAM)")
	noRelax := fs.Bool("no-relax", false, "keep yosys's read/write collision logic on the banks")
	out := fs.String("out", "", "build `directory` (default build/synth/<model>-<device>-...)")
	table := fs.String("table", "", "print the design-space table of a `file` of synth --json results and exit")
	asJSON := fs.Bool("json", false, "print the result as one JSON object")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr")
	cache := fs.String("cache", synth.DefaultCache(), "result cache `directory` (a run with the same design, sources, options and tools is not run again)")
	noCache := fs.Bool("no-cache", false, "run the tools even when the cache holds the result")
	toolchain := fs.String("toolchain", "", "`debian` (yosys, nextpnr-ice40, icepack on PATH) or yowasp (the npm WebAssembly builds, scripts/install-yowasp.sh); default $PTM_TOOLCHAIN, else debian")
	var hf hwFlags
	hf.addImage(fs)
	hf.addPatchLanes(fs)
	packOnly := fs.Bool("pack-only", false, "convolutional model with lanes: yosys and nextpnr-ice40 --pack-only only (seconds to a minute): the logic cells placement would need, no placement, no bitstream")
	cycles := fs.Float64("cycles-per-sample", 0, "convolutional model: the core's measured cycles per sample for the rates (ptm cosim --json's cycles_per_sample with the same lanes; 0: the schedule's longest sample)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *table != "" {
		return synthTable(*table, stdout)
	}
	if err := synth.UseToolchain(*toolchain); err != nil {
		return fmt.Errorf("%w: --toolchain: %w", errUsage, err)
	}
	if (*model == "") == (*shapeSpec == "") {
		return fmt.Errorf("%w: exactly one of --model or --random-shape is required", errUsage)
	}
	if err := checkDirOutput(pathFlag{"--out", *out}, pathFlag{"--model", *model}); err != nil {
		return err
	}
	if err := checkSetsMax(*setsMax); err != nil {
		return err
	}
	if *coreRatio < 0 || *coreRatio > 2 {
		return fmt.Errorf("%w: --core-clock-ratio %d, want 1 (one clock) or 2 (the core at the PLL's clock, the shell at half), or 0 (the lane search chooses)", errUsage, *coreRatio)
	}
	if *maxFreq < 0 {
		return fmt.Errorf("%w: --max-freq %g, want a clock in MHz (0: the device's)", errUsage, *maxFreq)
	}
	if _, err := synth.LookupDevice(*device); err != nil {
		return fmt.Errorf("%w: --device: %w", errUsage, err)
	}
	if *model != "" {
		_, cv, cvHash, err := readModelIfAny(*model)
		if err != nil {
			return err
		}
		if cv != nil {
			return synthConv(fs, convSynthArgs{model: *model, file: cv, hash: cvHash, hf: &hf, device: *device, freq: *freq, seed: *seed,
				setsMax: *setsMax, cycles: *cycles, packOnly: *packOnly, out: *out, cache: *cache, noCache: *noCache, asJSON: *asJSON, quiet: *quiet,
				other: []bool{*coreOnly, *coreRatio == 2, *closeTiming, *noPack, *noRelax, *maxFreq != 0}}, stdout, stderr)
		}
	}
	if isSet(fs, "patch-lanes") || isSet(fs, "scan") || isSet(fs, "cycles-per-sample") || *packOnly {
		return fmt.Errorf("%w: --patch-lanes, --scan, --cycles-per-sample and --pack-only are for a convolutional model", errUsage)
	}
	var (
		bank *fixed.Bank
		hash string
		sh   fixed.Shape
		name string
		err  error
	)
	if *model != "" {
		if _, bank, hash, err = loadBank(*model, hf.bits); err != nil {
			return err
		}
		sh = bank.Shape
		name = strings.TrimSuffix(filepath.Base(*model), filepath.Ext(*model))
	} else {
		if sh, err = parseShape(*shapeSpec); err != nil {
			return err
		}
		if bank, err = randomBank(sh, hf.bits, uint64(*seed)); err != nil {
			return err
		}
		name = "random"
	}
	// No lane count: Auto chooses the largest core that fits and meets
	// timing (docs/synthesis.md).
	auto := hf.lanes == 0 && hf.lc == 0 && hf.ll == 0
	gen := func(lanes int) (*hw.Design, error) {
		h := hf
		if lanes > 0 {
			h.lanes = lanes
		}
		cfg, err := h.config(sh)
		if err != nil {
			return nil, err
		}
		cfg.InitBanks = true
		return hw.Generate(cfg, sh, bank, hash)
	}
	d, err := gen(0)
	if err != nil {
		return err
	}
	cfg := d.Config
	lanesName := fmt.Sprintf("L%d", cfg.Lanes)
	if auto {
		lanesName = "Lauto"
	}
	dir := *out
	if dir == "" {
		top := "board"
		switch {
		case *coreOnly:
			top = "core"
		case *noEth:
			top = "uart"
		}
		if !*coreOnly && *setsMax != hw.DefaultSetsMax {
			top += fmt.Sprintf("-M%d", *setsMax)
		}
		if *coreRatio == 2 {
			top += "-2clk"
		}
		dir = filepath.Join("build", "synth", fmt.Sprintf("%s-%s-%s-%s-B%d-W%d-%gMHz-s%d",
			name, strings.ToLower(*device), top, lanesName, cfg.Bits, cfg.LFSRWidth, *freq, *seed))
	}
	opts := synth.Options{
		Design: d, Bank: bank, Model: *model, Device: *device, FreqMHz: *freq, Seed: *seed,
		MaxMHz: *maxFreq, CoreOnly: *coreOnly, NoEth: *noEth, SetsMax: *setsMax, CoreClockRatio: *coreRatio, NoPack: *noPack, NoRelax: *noRelax, Dir: dir, Cache: *cache,
	}
	if !*quiet {
		opts.Progress = stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *noCache {
		opts.Cache = ""
	}
	var res *synth.Result
	switch {
	case auto:
		var cands []synth.Candidate
		if cands, err = synth.Candidates(*device, autoMaxLanes(sh), *noPack, gen); err != nil {
			return err
		}
		res, err = synth.Auto(ctx, opts, cands)
	case *closeTiming:
		res, err = synth.Close(ctx, opts, 3*float64(max(1, *coreRatio)), 3)
	default:
		res, err = synth.Cached(ctx, opts)
	}
	if res != nil {
		if *asJSON {
			if jerr := writeJSON(stdout, res); jerr != nil {
				return jerr
			}
		} else {
			printSynth(stdout, res)
		}
		if err == nil {
			if werr := writeResultFile(res); werr != nil {
				return werr
			}
		}
	} else if err != nil && *asJSON {
		// A sweep keeps the configuration and the reason as its row.
		if jerr := writeJSON(stdout, synth.FailedRow(opts, err)); jerr != nil {
			return jerr
		}
	}
	if err != nil && errors.Is(err, synth.ErrOptions) {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	return err
}

// autoMaxLanes is the largest lane count Auto considers: one lane per
// literal and clause (more lanes than that leave lanes idle), at most 64.
func autoMaxLanes(sh fixed.Shape) int { return min(64, sh.Literals()*sh.TotalClauses()) }

// writeResultFile keeps the JSON result beside the bitstream.
func writeResultFile(res *synth.Result) error {
	return writeJSONFile(filepath.Join(res.BuildDir, "result.json"), res)
}

func printSynth(w io.Writer, r *synth.Result) {
	top := "board top (UART, Ethernet MII, protocol engine, core)"
	switch {
	case r.CoreOnly:
		top = "core alone"
	case !r.Ethernet:
		top = "board top (UART only, protocol engine, core)"
	}
	fmt.Fprintf(w, "%s on %s (%s): L=%d (%dx%d), B=%d, W=%d, D=%d\n", top, r.Device, r.Board, r.Lanes, r.ClauseLanes, r.LiteralLanes, r.Bits, r.LFSRWidth, r.Depth)
	fmt.Fprintf(w, "  logic cells %d/%d (%.0f%%; %d LUT4, %d FF, %d carry), block RAM %d/%d (%d pairs packed)\n",
		r.LUTs, r.LUTsAvailable, 100*float64(r.LUTs)/float64(r.LUTsAvailable), r.LUT4, r.FFs, r.Carry, r.BRAMs, r.BRAMsAvailable, r.BankPass.Packed)
	met := "met"
	if !r.TimingMet {
		met = "NOT met"
	}
	fmt.Fprintf(w, "  Fmax %.2f MHz, target %.2f MHz (PLL %.3f MHz): timing %s\n", r.FmaxMHz, r.TargetMHz, r.ClockMHz, met)
	if r.CoreClockRatio == 2 {
		fmt.Fprintf(w, "  dual clock: core clk_core %.3f MHz (Fmax %.2f), shell clk %.3f MHz (Fmax %.2f), UART %d clocks per bit\n",
			r.ClockMHz, r.CoreFmaxMHz, r.ShellClockMHz, r.ShellFmaxMHz, r.ClksPerBit)
	}
	fmt.Fprintf(w, "  %.2f cycles/sample: %.0f samples/s, %.0f queries/s at K=%d at the %.3f MHz clock (at Fmax: %.0f, %.0f)\n",
		r.CyclesPerSample, r.SamplesPerSAtClock, r.QueriesPerSAtClock, synth.QueryK, r.ClockMHz, r.SamplesPerS, r.QueriesPerSK100)
	for _, l := range r.Links {
		if r.CoreOnly {
			fmt.Fprint(w, "  (on a board) ")
		} else {
			fmt.Fprint(w, "  ")
		}
		fmt.Fprintf(w, "%s bound: %.0f queries/s (%d-byte request, %d-byte response), %.0f batched\n", l.Name, l.QueriesPerS, l.RequestBytes, l.ResponseBytes, l.BatchedQueriesPerS)
	}
	if len(r.Search) > 0 {
		cached := 0
		for _, st := range r.Search {
			if st.Cached {
				cached++
			}
		}
		clock := fmt.Sprintf("one clock at %.3f MHz", r.ClockMHz)
		if r.CoreClockRatio == 2 {
			clock = fmt.Sprintf("two clocks, core %.3f MHz and shell %.3f MHz", r.ClockMHz, r.ShellClockMHz)
		}
		fmt.Fprintf(w, "  lane search: %d steps (%d from the result cache), chose %d lanes, %s (docs/synthesis.md)\n", len(r.Search), cached, r.Lanes, clock)
	}
	bit := r.Bitstream
	if bit == "" {
		bit = "none (timing not met: no image to flash)"
	}
	fmt.Fprintf(w, "  binding: %s\n  bitstream: %s\n", r.Binding, bit)
}

// synthTable prints the design-space table of a file of JSON results.
func synthTable(path string, w io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	rows, err := synth.ReadRows(f)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, synth.Table(rows))
	return err
}
