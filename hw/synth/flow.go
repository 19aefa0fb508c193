package synth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/rtl"
)

// DefaultMHz is the default core clock (PLL output).
const DefaultMHz = 48

// Options configure one run of the flow.
type Options struct {
	// Design is the generated core (hw.Generate). With Bank it should be
	// generated with InitBanks, so the bitstream boots with the model.
	Design *hw.Design
	// Bank is the model the banks hold at configuration: the board top
	// then reports it loaded (INIT_LOADED) with its CRC. May be nil.
	Bank *fixed.Bank
	// Model is the model file the bank came from (recorded only).
	Model string
	// Device is "up5k" (iCEBreaker) or "hx8k" (HX8K breakout board).
	Device string
	// FreqMHz is the target core clock: the PLL is set to it (icepll) and
	// nextpnr is asked to meet it. 0 means DefaultMHz. Auto tries it and
	// the clocks above it up to MaxMHz.
	FreqMHz float64
	// MaxMHz is the highest core clock Auto tries (0: the device's
	// AutoMaxMHz); Run ignores it.
	MaxMHz float64
	// PlaceMHz is the clock nextpnr's timing-driven placement aims at
	// (--freq); 0 means FreqMHz. nextpnr takes its clock constraint from
	// --freq alone (the PLL's setting does not enter), so a run with
	// PlaceMHz above FreqMHz places as a run at PlaceMHz would, and its
	// Fmax is checked against the PLL clock.
	PlaceMHz float64
	// Seed is nextpnr's placement seed (results move by 10-15% with it;
	// fixed for reproducible builds). 0 means 1.
	Seed int
	// CoreOnly builds the core alone (rtl/boards/<board>/core_top.v)
	// instead of the full board top with UART, Ethernet and protocol
	// engine.
	CoreOnly bool
	// NoEth builds the UART-only board (ETH_ENABLE = 0: no MII adapter,
	// no Ethernet MACs, parser and buffers; the PHY pins stay idle).
	NoEth bool
	// SetsMax is the board's MMAX, the most sets per INFER query
	// (SETS_MAX, hw.Board.SetsMax): 0 means hw.DefaultSetsMax; 1 leaves
	// the protocol engine's set loop out (the host then sends one request
	// per set). Ignored for a core-only build.
	SetsMax int
	// CoreClockRatio 2 runs the core on its own clock, the PLL's output
	// (FreqMHz), and the board shell on half of it (the iCEBreaker top's
	// SB_PLL40_2F_PAD, the HX8K top's SB_PLL40_2F_CORE, GENCLK and
	// GENCLK_HALF; rtl/board/core_xing.v crosses between them): the UART
	// divider is the shell clock's, nextpnr constrains both clocks, and
	// both must meet their clock. 0 or 1: one clock. Board tops only (not
	// core-only). For Auto, 0 searches both where the device top has the
	// dual-clock board (Device.DualClock), 1 or 2 only that one.
	CoreClockRatio int
	// SynthOnly stops after yosys: the Result has yosys's cell counts
	// only (the estimate Auto searches with); no place and route.
	SynthOnly bool
	// Cache is a folder of earlier results (Cached): a run with the same
	// design, board sources, options and tool versions is not run again.
	// Empty: no cache.
	Cache string
	// NoPack keeps one block RAM per lane; NoRelax keeps yosys's
	// read/write collision logic on the banks (see PassBanks).
	NoPack, NoRelax bool
	// Dir is the build folder (created); every file and log goes there,
	// the board's Verilog too (written from rtl.FS).
	Dir string
	// Progress, when not nil, gets one line per step.
	Progress io.Writer
}

// Result is what a run produced and measured.
type Result struct {
	Device   string `json:"device"`
	Board    string `json:"board"`
	Top      string `json:"top"`
	CoreOnly bool   `json:"core_only"`
	// Ethernet is true when the board top has its Ethernet link.
	Ethernet bool `json:"ethernet"`
	// SetsMax is the board's SETS_MAX (MMAX) when it is not the default
	// (0: hw.DefaultSetsMax, or a core-only build).
	SetsMax int `json:"sets_max,omitempty"`

	Model     string `json:"model,omitempty"`
	ModelHash string `json:"model_hash,omitempty"`
	TMs       int    `json:"tms"`
	Classes   int    `json:"classes"`
	Clauses   int    `json:"clauses"`
	Features  int    `json:"features"`
	TAs       int    `json:"tas"`

	Bits         int `json:"bits"`
	LFSRWidth    int `json:"lfsr_width"`
	Lanes        int `json:"lanes"`
	ClauseLanes  int `json:"clause_lanes"`
	LiteralLanes int `json:"literal_lanes"`
	Depth        int `json:"depth"`

	// LUTs are the placed logic cells (ICESTORM_LC: one LUT4, its
	// flip-flop and carry), the resource that binds on iCE40;
	// LUTsAvailable the device's. LUT4, FFs and Carry are yosys's cell
	// counts.
	LUTs           int            `json:"luts"`
	LUTsAvailable  int            `json:"luts_available"`
	LUT4           int            `json:"lut4"`
	FFs            int            `json:"ffs"`
	Carry          int            `json:"carry"`
	BRAMs          int            `json:"brams"`
	BRAMsAvailable int            `json:"brams_available"`
	BankPass       BankPass       `json:"bank_pass"`
	Utilization    map[string]Use `json:"utilization,omitempty"`

	FmaxMHz   float64 `json:"fmax_mhz"`
	TargetMHz float64 `json:"target_mhz"`
	// PlaceMHz is the clock nextpnr placed for (Options.PlaceMHz).
	PlaceMHz  float64              `json:"place_mhz"`
	ClockMHz  float64              `json:"clock_mhz"`
	TimingMet bool                 `json:"timing_met"`
	Clocks    map[string]ClockFmax `json:"clocks,omitempty"`
	PLL       PLL                  `json:"pll"`
	Seed      int                  `json:"seed"`
	// CoreClockRatio is 2 for a dual-clock board (Options.CoreClockRatio;
	// 0 otherwise): ClockMHz is then the core's clock (clk_core) and
	// FmaxMHz the highest PLL clock both domains meet, the smaller of the
	// core clock's Fmax and twice the shell clock's; ShellClockMHz and
	// ShellFmaxMHz are the shell clock (clk, half the PLL's) and its Fmax,
	// CoreFmaxMHz the core clock's own.
	CoreClockRatio int     `json:"core_clock_ratio,omitempty"`
	ShellClockMHz  float64 `json:"shell_clock_mhz,omitempty"`
	ShellFmaxMHz   float64 `json:"shell_fmax_mhz,omitempty"`
	CoreFmaxMHz    float64 `json:"core_fmax_mhz,omitempty"`

	// CyclesPerSample is the cost of one sample in a stream of K = 100
	// stats-mode requests: (RequestPeriod at K = 100) / 100, that is D
	// plus the per-request overhead spread over the samples.
	CyclesPerSample   float64 `json:"cycles_per_sample"`
	RequestCyclesK100 int     `json:"request_cycles_k100"`
	// SamplesPerS and QueriesPerSK100 are the core's rates at Fmax
	// (Fmax / cycles per sample; a query is one K = 100 stats request).
	SamplesPerS     float64 `json:"samples_per_s"`
	QueriesPerSK100 float64 `json:"queries_per_s_k100"`
	// SamplesPerSAtClock and QueriesPerSAtClock are the rates at the PLL
	// clock the bitstream runs at; 0 when timing is not met there.
	SamplesPerSAtClock float64 `json:"samples_per_s_at_clock"`
	QueriesPerSAtClock float64 `json:"queries_per_s_k100_at_clock"`
	// UARTBaud is CLK_HZ / CLKS_PER_BIT; Links are the host links' bounds
	// on queries/s (the UART, and Ethernet when the board has it).
	UARTBaud   float64 `json:"uart_baud"`
	ClksPerBit int     `json:"clks_per_bit"`
	Links      []Link  `json:"links"`
	// BRAMBoundSamplesPerS is the device's block-RAM read bandwidth
	// bound at Fmax: BRAMs x 16 bits per clock / (TAs x B bits per sample).
	BRAMBoundSamplesPerS float64 `json:"bram_bound_samples_per_s"`
	// Binding names the limit that binds (timing, UART link, BRAM ports,
	// LUTs, or the configuration when more lanes would fit).
	Binding string `json:"binding"`

	// SynthOnly marks a yosys-only estimate (Options.SynthOnly); Cached a
	// result taken from Options.Cache instead of running the tools.
	SynthOnly bool `json:"synth_only,omitempty"`
	Cached    bool `json:"cached,omitempty"`
	// NoFit is a cached no-fit error's text (a cache entry only).
	NoFit string `json:"no_fit,omitempty"`
	// Search is what Auto tried before this result (empty otherwise).
	Search []SearchStep `json:"search,omitempty"`

	// Attempts are the clocks tried by Close (empty for a single Run).
	Attempts []Attempt `json:"attempts,omitempty"`

	// Bitstream is the packed image, written only when timing is met
	// (empty otherwise: a clock above Fmax is no image to flash).
	// Toolchain is the toolchain that built the result (debian or
	// yowasp) and ToolVersions its yosys's and nextpnr-ice40's version
	// lines (and the npm packages' for yowasp).
	Toolchain    string            `json:"toolchain,omitempty"`
	ToolVersions map[string]string `json:"tool_versions,omitempty"`

	Bitstream string            `json:"bitstream"`
	BuildDir  string            `json:"build_dir"`
	Logs      map[string]string `json:"logs"`
	Seconds   float64           `json:"seconds"`
}

// sources returns the device top's module name and its Verilog files
// (rtl.TopSources, with rtl.DualClockSources for the dual-clock board, or
// rtl.CoreTopSources with coreOnly), written into dir/rtl from the
// embedded copy.
func sources(dir string, dev Device, coreOnly, dual bool) (string, []string, error) {
	top, names, err := "top", []string(nil), error(nil)
	if coreOnly {
		top = "core_top"
		names, err = rtl.CoreTopSources(dev.Board)
	} else {
		names, err = rtl.TopSources(dev.Board)
		if dual {
			names = append(names, rtl.DualClockSources()...)
		}
	}
	if err != nil {
		return "", nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	files, err := rtl.Write(filepath.Join(dir, "rtl"), names)
	if err != nil {
		return "", nil, fmt.Errorf("synth: %w", err)
	}
	return top, files, nil
}

// TopParams returns the parameters of the device top for a design, PLL
// and UART divider: the PLL setting, then hw.Design.BoardParams (the core's
// alone, CoreParams, for a core-only top). noEth selects the UART-only
// board, setsMax its SETS_MAX (0: hw.DefaultSetsMax); bank, when not nil,
// is the model the banks hold at configuration.
func TopParams(d *hw.Design, bank *fixed.Bank, pll PLL, clksPerBit int, coreOnly, noEth bool, setsMax int) ([]hw.Param, error) {
	return topParams(d, bank, pll, clksPerBit, coreOnly, noEth, setsMax, false)
}

// topParams is TopParams with the dual-clock board (dual: the core on the
// PLL's clock, the shell and its CLK_HZ on half of it, CORE_CLK = 1).
func topParams(d *hw.Design, bank *fixed.Bank, pll PLL, clksPerBit int, coreOnly, noEth bool, setsMax int, dual bool) ([]hw.Param, error) {
	ps := []hw.Param{
		{Name: "DIVR", Value: fmt.Sprintf("4'd%d", pll.DIVR)}, {Name: "DIVF", Value: fmt.Sprintf("7'd%d", pll.DIVF)},
		{Name: "DIVQ", Value: fmt.Sprintf("3'd%d", pll.DIVQ)}, {Name: "FILTER_RANGE", Value: fmt.Sprintf("3'd%d", pll.FilterRange)},
	}
	if coreOnly {
		return append(ps, d.CoreParams()...), nil
	}
	b := hw.Board{ClockHz: int(math.Round(pll.OutMHz * 1e6)), ClksPerBit: clksPerBit, Ethernet: !noEth, SetsMax: setsMax}
	if dual {
		b.ClockHz, b.CoreClock = int(math.Round(pll.OutMHz*1e6/2)), true
	}
	if d.Config.InitBanks {
		b.Preload = bank
	}
	bp, err := d.BoardParams(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	return append(ps, bp...), nil
}

// MinBRAMs is the number of block RAMs the core's banks need: a bank of D
// words of B bits takes ceil(D/256) SB_RAM40_4K (256 x 16), or
// ceil(D/512) when B <= 8 (512 x 8); with packing, two banks of B <= 8 and
// D <= 256 share one.
func MinBRAMs(p *hw.Params, pack bool) int {
	if pack && p.Bits <= 8 && p.D <= 256 {
		return (p.L + 1) / 2
	}
	words := 256
	if p.Bits <= 8 {
		words = 512
	}
	return p.L * ((p.D + words - 1) / words)
}

// MinClksPerBit is the shortest UART bit the board's receiver takes
// (uart_rx samples every bit three times; sim/board refuses less).
const MinClksPerBit = 8

// ClksPerBit is the UART divider at clkMHz: the one closest to UARTBaud
// (3 Mbaud) when that is at least MinClksPerBit clocks (a clock of 24 MHz
// or more), else the one closest to the highest of UARTBaud/2, /4, ...
// that leaves MinClksPerBit clocks (1.5 Mbaud from 12 MHz): rates the
// iCEBreaker's FT2232H generates exactly (12 MHz / n).
func ClksPerBit(clkMHz float64) int {
	baud := float64(UARTBaud)
	for baud > 9600 && clkMHz*1e6/baud < MinClksPerBit-0.5 {
		baud /= 2
	}
	return max(MinClksPerBit, int(math.Round(clkMHz*1e6/baud)))
}

// boardSetsMax is SETS_MAX as Result reports it: 0 for the default or a
// core-only build.
func (o *Options) boardSetsMax() int {
	if o.CoreOnly || o.SetsMax == hw.DefaultSetsMax {
		return 0
	}
	return o.SetsMax
}

// defaults fills in the zero clock, placement clock and seed.
func (o *Options) defaults() {
	if o.FreqMHz == 0 {
		o.FreqMHz = DefaultMHz
	}
	if o.PlaceMHz == 0 {
		o.PlaceMHz = o.FreqMHz
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
}

// HeartbeatEvery is how often a long tool run (yosys, nextpnr) reports
// that it is still running on Options.Progress.
var HeartbeatEvery = 20 * time.Second

// heartbeat prints "<tool> still running" lines on o.Progress every
// HeartbeatEvery until the returned stop is called.
func (o *Options) heartbeat(tool string) (stop func()) {
	if o.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(finished)
		t := time.NewTicker(HeartbeatEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				o.step("%s still running (%s)", tool, time.Since(start).Round(time.Second))
			}
		}
	}()
	return func() { close(done); <-finished }
}

func (o *Options) step(format string, args ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "synth: "+format+"\n", args...)
	}
}

// Run synthesizes, places and routes the design for the device and packs
// the bitstream. On a timing failure it returns the Result together with
// an error wrapping ErrTiming; on any other failure a nil Result.
func Run(ctx context.Context, o Options) (*Result, error) {
	start := time.Now()
	if o.Design == nil {
		return nil, fmt.Errorf("%w: no design", ErrOptions)
	}
	dev, err := LookupDevice(o.Device)
	if err != nil {
		return nil, err
	}
	o.defaults()
	if o.Dir == "" {
		return nil, fmt.Errorf("%w: no build folder", ErrOptions)
	}
	if err := checkScriptPaths(o.Dir); err != nil {
		return nil, err
	}
	if err := o.checkCoreClock(dev); err != nil {
		return nil, err
	}
	if err := CheckTools(Tools...); err != nil {
		return nil, err
	}
	if need := MinBRAMs(&o.Design.Params, !o.NoPack); need > dev.BRAMs {
		return nil, fmt.Errorf("%w on %s: %s: the %d lanes' banks alone need %d, %d available (%d over)",
			ErrNoFit, dev.Name, resourceName("SB_RAM40_4K"), o.Design.Params.L, need, dev.BRAMs, need-dev.BRAMs)
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	coreDir := filepath.Join(dir, "core")
	if err := os.MkdirAll(coreDir, 0o755); err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	d := o.Design
	if err := d.Write(coreDir); err != nil {
		return nil, err
	}
	topMod, files, err := sources(dir, dev, o.CoreOnly, o.CoreClockRatio == 2)
	if err != nil {
		return nil, err
	}
	logs := map[string]string{}
	path := func(name string) string { return filepath.Join(dir, name) }

	// PLL and UART divider.
	o.step("icepll %.2f MHz from %.0f MHz", o.FreqMHz, dev.RefMHz)
	logs["icepll"] = path("icepll.log")
	pll, err := FindPLL(ctx, dev.RefMHz, o.FreqMHz, logs["icepll"])
	if err != nil {
		return nil, err
	}
	dual := o.CoreClockRatio == 2
	shellMHz := pll.OutMHz // the board shell's clock (the UART's)
	if dual {
		shellMHz = pll.OutMHz / 2
	}
	cpb := ClksPerBit(shellMHz)
	params, err := topParams(d, o.Bank, pll, cpb, o.CoreOnly, o.NoEth, o.SetsMax, dual)
	if err != nil {
		return nil, err
	}

	var vfiles []string
	for _, f := range d.VerilogFiles() {
		vfiles = append(vfiles, filepath.Join(coreDir, f))
	}
	o.step("yosys (%s, %s)", topMod, d.Top())
	ys := YosysJob{
		Dir: dir, CoreDir: coreDir, Files: append(vfiles, files...), Top: topMod, CoreTop: d.Top(),
		Params: params, Relax: !o.NoRelax, Pack: !o.NoPack,
	}
	stop := o.heartbeat("yosys")
	cells, bp, err := ys.Run(ctx)
	stop()
	logs["yosys1"], logs["yosys2"] = path("yosys1.log"), path("yosys2.log")
	if err != nil {
		return nil, err
	}
	o.step("bank pass: %d banks, %d collision checks dropped, %d banks packed into others' block RAMs", bp.Banks, bp.Relaxed, bp.Packed)
	if o.SynthOnly {
		r := &Result{Device: dev.Name, Board: dev.Board, Top: topMod, CoreOnly: o.CoreOnly, Ethernet: !o.CoreOnly && !o.NoEth, SetsMax: o.boardSetsMax(),
			Model: o.Model, ModelHash: d.Params.Hash, Bits: d.Params.Bits, LFSRWidth: d.Params.W, Lanes: d.Params.L,
			ClauseLanes: d.Params.LC, LiteralLanes: d.Params.LL, Depth: d.Params.D, LUTsAvailable: dev.LCs,
			LUT4: cells.LUT4, FFs: cells.FFs, Carry: cells.Carry, BRAMs: cells.BRAMs, BRAMsAvailable: dev.BRAMs,
			BankPass: bp, TargetMHz: o.FreqMHz, ClockMHz: pll.OutMHz, PLL: pll, Seed: o.Seed, SynthOnly: true,
			BuildDir: dir, Logs: logs, Seconds: time.Since(start).Seconds(),
			Toolchain: string(ActiveToolchain()), ToolVersions: toolVersions().named}
		o.step("yosys only: %d LUT4, %d FF, %d carry, %d block RAM (%d lanes)", cells.LUT4, cells.FFs, cells.Carry, cells.BRAMs, d.Params.L)
		return r, nil
	}
	// Early fit checks: a netlist with more of a cell than the device
	// has never places.
	switch {
	case cells.BRAMs > dev.BRAMs:
		return nil, noFit(dev, "SB_RAM40_4K", Use{cells.BRAMs, dev.BRAMs}, logs["yosys2"])
	case cells.LUT4 > dev.LCs:
		return nil, noFit(dev, "ICESTORM_LC", Use{cells.LUT4, dev.LCs}, logs["yosys2"])
	case cells.FFs > dev.LCs:
		return nil, noFit(dev, "ICESTORM_LC", Use{cells.FFs, dev.LCs}, logs["yosys2"])
	}

	// nextpnr.
	pcf, err := rtl.PCF(dev.Board)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	if !o.CoreOnly && !o.NoEth {
		pcf = append(pcf, "\n# Added by hw/synth: the PHY's MII clocks (100 Mb/s).\n"...)
		for _, c := range dev.MIIClocks {
			pcf = append(pcf, fmt.Sprintf("set_frequency %s 25\n", c)...)
		}
	}
	if dual {
		// Both clocks of the dual-clock top (rtl/boards/*/top.v's
		// nets): nextpnr times each domain against its own clock; paths
		// between them are not constrained (core_xing synchronises them).
		pcf = append(pcf, fmt.Sprintf("\n# Added by hw/synth: the dual-clock board's clocks.\nset_frequency clk_core %g\nset_frequency clk %g\n",
			o.PlaceMHz, o.PlaceMHz/2)...)
	}
	if err := os.WriteFile(path("build.pcf"), pcf, 0o644); err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	pl, err := o.placeAndPack(ctx, dir, dev, o.PlaceMHz, pll.OutMHz, dual, logs)
	if err != nil {
		return nil, err
	}
	util, clocks, core, coreName, timingErr := pl.util, pl.clocks, pl.core, pl.coreName, pl.timingErr

	r := &Result{
		Device: dev.Name, Board: dev.Board, Top: topMod, CoreOnly: o.CoreOnly, Ethernet: !o.CoreOnly && !o.NoEth, SetsMax: o.boardSetsMax(),
		Model: o.Model, ModelHash: d.Params.Hash,
		TMs: d.Shape.TMs, Classes: d.Shape.Classes, Clauses: d.Shape.Clauses, Features: d.Shape.Features, TAs: d.Shape.TAs(),
		Bits: d.Params.Bits, LFSRWidth: d.Params.W, Lanes: d.Params.L, ClauseLanes: d.Params.LC, LiteralLanes: d.Params.LL, Depth: d.Params.D,
		LUTs: util["ICESTORM_LC"].Used, LUTsAvailable: dev.LCs,
		LUT4: cells.LUT4, FFs: cells.FFs, Carry: cells.Carry,
		BRAMs: util["ICESTORM_RAM"].Used, BRAMsAvailable: dev.BRAMs, BankPass: bp, Utilization: util,
		TargetMHz: o.FreqMHz, PlaceMHz: o.PlaceMHz, ClockMHz: pll.OutMHz, Clocks: clocks, PLL: pll, Seed: o.Seed,
		UARTBaud: shellMHz * 1e6 / float64(cpb), ClksPerBit: cpb,
		BuildDir: dir, Logs: logs,
		Toolchain: string(ActiveToolchain()), ToolVersions: toolVersions().named,
	}
	if a := util["ICESTORM_LC"].Available; a > 0 {
		r.LUTsAvailable = a
	}
	if a := util["ICESTORM_RAM"].Available; a > 0 {
		r.BRAMsAvailable = a
	}
	if timingErr == nil {
		r.Bitstream = path("top.bin")
	}
	r.FmaxMHz = core.AchievedMHz
	if dual {
		r.CoreClockRatio, r.ShellClockMHz = 2, shellMHz
		r.CoreFmaxMHz, r.ShellFmaxMHz = pl.coreOwn.AchievedMHz, pl.shell.AchievedMHz
	}
	r.TimingMet = timingErr == nil
	fillThroughput(r, &d.Params)
	r.Binding = binding(r)
	r.Seconds = time.Since(start).Seconds()
	o.step("%s: %d/%d LCs, %d/%d BRAMs, Fmax %.1f MHz (%s), target %.1f MHz", dev.Name, r.LUTs, r.LUTsAvailable,
		r.BRAMs, r.BRAMsAvailable, r.FmaxMHz, coreName, r.TargetMHz)
	if timingErr != nil {
		return r, fmt.Errorf("%w (log: %s; no bitstream written)", timingErr, logs["nextpnr"])
	}
	return r, nil
}

// YosysJob is the two-stage yosys synthesis of a design with the bank
// pass between the stages:
//
//	stage 1 (Dir/synth1.ys, yosys1.log): read, chparam, synth_ice40 up to
//	        map_ram (flattened, coarse, generic memories) -> coarse.json
//	bank pass (PassBanks)                               -> banks.json
//	stage 2 (Dir/synth2.ys, yosys2.log): synth_ice40 from map_ram on
//	        -> top.json (iCE40 cells), statistics
type YosysJob struct {
	// Dir gets the scripts, netlists and logs; yosys runs in CoreDir (the
	// bank images are read from there).
	Dir, CoreDir string
	// Files are the Verilog files (read with -sv and -DPTM_CORE=CoreTop).
	Files   []string
	Top     string
	CoreTop string
	// Params are set on Top (chparam) before synthesis.
	Params []hw.Param
	// Relax and Pack select the bank pass's steps.
	Relax, Pack bool
	// Extra are yosys commands run at the end of stage 2 (tests write a
	// Verilog netlist with them).
	Extra []string
}

// Run runs the job and returns the cell counts of the mapped netlist.
func (j YosysJob) Run(ctx context.Context) (CellStats, BankPass, error) {
	var bp BankPass
	path := func(name string) string { return filepath.Join(j.Dir, name) }
	// Every path goes into the scripts quoted (hw.ScriptPath); one that
	// cannot be quoted is refused before yosys runs.
	qpath := func(name string) string { q, _ := hw.ScriptPath(path(name)); return q }
	files, err := hw.ScriptPaths(j.Files)
	if err == nil {
		_, err = hw.ScriptPath(j.Dir)
	}
	if err != nil {
		return CellStats{}, bp, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "read_verilog -sv -DPTM_CORE=%s %s\n", j.CoreTop, files)
	if len(j.Params) > 0 {
		sb.WriteString("chparam")
		for _, p := range j.Params {
			fmt.Fprintf(&sb, " -set %s %s", p.Name, p.Value)
		}
		fmt.Fprintf(&sb, " %s\n", j.Top)
	}
	coarse, err := CoarseScript(ctx)
	if err != nil {
		return CellStats{}, bp, err
	}
	fmt.Fprintf(&sb, "synth_ice40 -top %s -run :coarse\n", j.Top)
	sb.WriteString("# synth_ice40's coarse step without cmp2lut (see synth.CoarseScript)\n")
	for _, c := range coarse {
		sb.WriteString(c + "\n")
	}
	// The coarse netlist still has the "x unless write-enabled" muxes
	// proc puts in front of every memory write port; removing them now
	// (as synth_ice40 does later anyway) shows the banks' shared write
	// address to the bank pass.
	fmt.Fprintf(&sb, "opt_expr -mux_undef\nopt_clean\n")
	if ActiveToolchain() != Debian {
		// Current yosys keeps the processes of the cell library's
		// whiteboxes (read -lib -specify), which write_json refuses; the
		// bank pass skips the library modules and stage 2 reads them
		// again, so they go. (Debian's yosys 0.23 writes them; its
		// script stays as it was, so its cached results stay valid.)
		sb.WriteString("delete =A:blackbox =A:whitebox %u\n")
	}
	fmt.Fprintf(&sb, "write_json %s\n", qpath("coarse.json"))
	if err := os.WriteFile(path("synth1.ys"), []byte(sb.String()), 0o644); err != nil {
		return CellStats{}, bp, fmt.Errorf("synth: %w", err)
	}
	if err := runToolIn(ctx, j.CoreDir, j.Dir, path("yosys1.log"), "yosys", "-q", "-l", path("yosys1.log"), "-s", path("synth1.ys")); err != nil {
		return CellStats{}, bp, err
	}
	netlist, err := os.ReadFile(path("coarse.json"))
	if err != nil {
		return CellStats{}, bp, fmt.Errorf("synth: %w", err)
	}
	packed, bp, err := PassBanks(netlist, j.Top, j.Relax, j.Pack)
	if err != nil {
		return CellStats{}, bp, fmt.Errorf("%w: %w", ErrTool, err)
	}
	if err := os.WriteFile(path("banks.json"), packed, 0o644); err != nil {
		return CellStats{}, bp, fmt.Errorf("synth: %w", err)
	}
	// synth_ice40 reads the cell library with -D ICE40_HX (the default
	// device's timings); current yosys's abc9 needs the timings its
	// specify blocks give then. Debian's 0.23 maps with abc and its
	// script stays as it was.
	define := ""
	if ActiveToolchain() != Debian {
		define = "-D ICE40_HX "
	}
	script2 := fmt.Sprintf("read_verilog %s-lib -specify +/ice40/cells_sim.v\nread_json %s\nsynth_ice40 -top %s -run map_ram: -json %s\n",
		define, qpath("banks.json"), j.Top, qpath("top.json"))
	for _, c := range j.Extra {
		script2 += c + "\n"
	}
	if err := os.WriteFile(path("synth2.ys"), []byte(script2), 0o644); err != nil {
		return CellStats{}, bp, fmt.Errorf("synth: %w", err)
	}
	if err := runTool(ctx, j.Dir, path("yosys2.log"), "yosys", "-q", "-l", path("yosys2.log"), "-s", path("synth2.ys")); err != nil {
		return CellStats{}, bp, err
	}
	ylog, err := os.ReadFile(path("yosys2.log"))
	if err != nil {
		return CellStats{}, bp, fmt.Errorf("synth: %w", err)
	}
	cells, ok := parseStat(string(ylog))
	if !ok {
		return cells, bp, fmt.Errorf("%w: yosys printed no statistics (log: %s)", ErrTool, path("yosys2.log"))
	}
	return cells, bp, nil
}

// coreClock picks the core clock among nextpnr's clocks (every clock that
// is not a PHY clock; the slowest if several) and checks all of them.
func coreClock(clocks map[string]ClockFmax, dev Device, target float64) (ClockFmax, string, error) {
	var core ClockFmax
	name := ""
	var fails []string
	names := make([]string, 0, len(clocks))
	for k := range clocks {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		c := clocks[k]
		phy := false
		for _, m := range dev.MIIClocks {
			if strings.HasPrefix(k, m) {
				phy = true
			}
		}
		// A PHY clock's constraint is its real rate (the PCF); the core
		// clock's is nextpnr's --freq, and it is checked against the
		// PLL's clock below.
		if phy && c.AchievedMHz < c.ConstraintMHz {
			fails = append(fails, fmt.Sprintf("%s reaches %.2f MHz, needs %.2f MHz", k, c.AchievedMHz, c.ConstraintMHz))
		}
		if !phy && (name == "" || c.AchievedMHz < core.AchievedMHz) {
			core, name = c, k
		}
	}
	if name == "" {
		return core, "", fmt.Errorf("%w: nextpnr reported no core clock", ErrTool)
	}
	if core.AchievedMHz < target {
		fails = append(fails, fmt.Sprintf("core clock %s reaches %.2f MHz, below the %.2f MHz PLL clock", name, core.AchievedMHz, target))
	}
	if len(fails) > 0 {
		return core, name, fmt.Errorf("%w: %s", ErrTiming, strings.Join(fails, "; "))
	}
	return core, name, nil
}

// dualClocks checks the two clocks of a dual-clock board: clk_core
// against the PLL clock and clk (the shell) against half of it. core is
// the PLL clock's limit, min(core Fmax, 2 x shell Fmax), named after the
// clock that sets it; own and shell are the two clocks' own timings.
func dualClocks(clocks map[string]ClockFmax, target float64) (core ClockFmax, name string, own, shell ClockFmax, err error) {
	var okCore, okShell bool
	own, okCore = clocks["clk_core"]
	shell, okShell = clocks["clk"]
	if !okCore || !okShell {
		names := make([]string, 0, len(clocks))
		for k := range clocks {
			names = append(names, k)
		}
		sort.Strings(names)
		return core, "", own, shell, fmt.Errorf("%w: nextpnr reported clocks %v, want clk_core and clk", ErrTool, names)
	}
	core, name = own, "clk_core"
	if 2*shell.AchievedMHz < own.AchievedMHz {
		core, name = ClockFmax{AchievedMHz: 2 * shell.AchievedMHz, ConstraintMHz: 2 * shell.ConstraintMHz}, "clk (x2)"
	}
	var fails []string
	if own.AchievedMHz < target {
		fails = append(fails, fmt.Sprintf("core clock clk_core reaches %.2f MHz, below the %.2f MHz PLL clock", own.AchievedMHz, target))
	}
	if shell.AchievedMHz < target/2 {
		fails = append(fails, fmt.Sprintf("shell clock clk reaches %.2f MHz, below its %.2f MHz (half the PLL clock)", shell.AchievedMHz, target/2))
	}
	if len(fails) > 0 {
		err = fmt.Errorf("%w: %s", ErrTiming, strings.Join(fails, "; "))
	}
	return core, name, own, shell, err
}

// checkCoreClock refuses a CoreClockRatio the flow cannot build.
func (o *Options) checkCoreClock(dev Device) error {
	switch o.CoreClockRatio {
	case 0, 1:
		return nil
	case 2:
	default:
		return fmt.Errorf("%w: core clock ratio %d: want 1 (one clock) or 2 (the core at the PLL's clock, the shell at half)", ErrOptions, o.CoreClockRatio)
	}
	if o.CoreOnly {
		return fmt.Errorf("%w: core clock ratio 2 is a board top's (the core-only top has one clock)", ErrOptions)
	}
	return nil
}

// fillThroughput computes the throughput figures of r from its Fmax and
// PLL clock.
func fillThroughput(r *Result, p *hw.Params) {
	period := RequestPeriod(p, QueryK)
	r.RequestCyclesK100 = period
	r.CyclesPerSample = float64(period) / QueryK
	r.SamplesPerS = r.FmaxMHz * 1e6 / r.CyclesPerSample
	r.QueriesPerSK100 = r.FmaxMHz * 1e6 / float64(period)
	if r.TimingMet { // a clock above Fmax is no working bitstream
		r.SamplesPerSAtClock = r.ClockMHz * 1e6 / r.CyclesPerSample
		r.QueriesPerSAtClock = r.ClockMHz * 1e6 / float64(period)
	}
	r.Links = []Link{UARTLink(p, r.UARTBaud)}
	if r.Ethernet {
		r.Links = append(r.Links, EthernetLink(p))
	}
	// Block-RAM read bandwidth: every block RAM delivers 16 bits per
	// clock; a sample needs TAs x B bits.
	r.BRAMBoundSamplesPerS = float64(r.BRAMsAvailable) * 16 / float64(r.TAs*r.Bits) * r.FmaxMHz * 1e6
}

// binding names the limit that stops a configuration from going faster.
func binding(r *Result) string {
	if !r.TimingMet {
		return fmt.Sprintf("timing (%.1f < %.1f MHz)", r.FmaxMHz, r.TargetMHz)
	}
	q := r.QueriesPerSAtClock
	if !r.CoreOnly && len(r.Links) > 0 && r.Links[0].QueriesPerS < q {
		return fmt.Sprintf("UART link (%.0f queries/s)", r.Links[0].QueriesPerS)
	}
	lc := float64(r.LUTs) / float64(r.LUTsAvailable)
	switch {
	case r.BRAMs >= r.BRAMsAvailable:
		return fmt.Sprintf("BRAM ports (%d/%d)", r.BRAMs, r.BRAMsAvailable)
	case lc > 0.85:
		return fmt.Sprintf("LUTs (%.0f%%)", 100*lc)
	}
	return "configuration (more lanes fit)"
}

// Attempt is one run of Close: its target clock and the Fmax reached.
type Attempt struct {
	TargetMHz float64 `json:"target_mhz"`
	FmaxMHz   float64 `json:"fmax_mhz"`
}

// Close runs the flow and, while timing is not met, runs it again with the
// clock lowered to the highest multiple of stepMHz (3 keeps the 3 Mbaud
// UART exact) below the Fmax just reached, at most tries runs in all,
// each placed for the first run's clock (Options.PlaceMHz; see Auto), and
// each through the result cache (Cached). The Result of the last run
// records every attempt. It gives up (returning
// the ErrTiming of the last run) when the next clock would be below the
// PLL's 16 MHz or no lower than the current target.
func Close(ctx context.Context, o Options, stepMHz float64, tries int) (*Result, error) {
	if o.FreqMHz == 0 {
		o.FreqMHz = DefaultMHz
	}
	if o.PlaceMHz == 0 {
		o.PlaceMHz = o.FreqMHz // every retry places as the first run (see Auto)
	}
	var attempts []Attempt
	for n := 1; ; n++ {
		r, err := Cached(ctx, o)
		if r != nil {
			attempts = append(attempts, Attempt{TargetMHz: o.FreqMHz, FmaxMHz: r.FmaxMHz})
			r.Attempts = attempts
		}
		if err == nil || !errors.Is(err, ErrTiming) || n >= tries {
			return r, err
		}
		next := math.Floor(r.FmaxMHz/stepMHz) * stepMHz
		if next < 16 || next >= o.FreqMHz {
			return r, err
		}
		o.step("timing not met at %.2f MHz (Fmax %.2f): trying %.2f MHz", o.FreqMHz, r.FmaxMHz, next)
		o.FreqMHz = next
	}
}

// checkScriptPaths refuses, before anything is created or run, a build
// folder that cannot be written into a yosys script (hw.ScriptPath: a
// double quote or a control character such as a newline). Spaces and
// other characters are quoted.
func checkScriptPaths(dir string) error {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if _, err := hw.ScriptPath(dir); err != nil {
		return fmt.Errorf("%w: build folder (--out): %w", ErrOptions, err)
	}
	return nil
}
