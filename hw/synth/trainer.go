package synth

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/rtl"
)

// TrainerOptions configure one synthesis of the on-chip trainer
// (hw.GenerateTrainer, with SPRAM) out of context on a device.
type TrainerOptions struct {
	// Design is the generated trainer; it must use SPRAM (TrainParams.SPRAM).
	Design *hw.TrainerDesign
	// Device is "up5k" (the only device with SPRAM).
	Device string
	// FreqMHz is the target clock (PLL and nextpnr --freq); 0: DefaultMHz.
	FreqMHz float64
	// Seed is nextpnr's placement seed; 0 means 1.
	Seed int
	// CyclesPerExample is the engine's measured cost of one example (from
	// the co-simulation); the result's examples/s are derived from it.
	CyclesPerExample float64
	// Dir is the build folder (created).
	Dir string
	// Progress, when not nil, gets one line per step.
	Progress io.Writer
}

// TrainerResult is what a trainer synthesis produced and measured.
type TrainerResult struct {
	Device   string `json:"device"`
	Board    string `json:"board"`
	Top      string `json:"top"`
	NT       int    `json:"tms"`
	Classes  int    `json:"classes"`
	Clauses  int    `json:"clauses"`
	Features int    `json:"features"`
	N        int    `json:"n"`
	Bits     int    `json:"bits"`
	Lanes    int    `json:"literal_lanes"`
	// SPVWordsPerLane is the depth each literal lane's SPRAM holds.
	SPVWordsPerLane int `json:"spv_words_per_lane"`

	// LUTs are the placed logic cells (ICESTORM_LC); LUT4, FFs, Carry
	// yosys's cell counts; BRAMs, SPRAMs, DSPs the placed block RAMs,
	// SPRAMs and DSPs.
	LUTs           int            `json:"luts"`
	LUTsAvailable  int            `json:"luts_available"`
	LUT4           int            `json:"lut4"`
	FFs            int            `json:"ffs"`
	Carry          int            `json:"carry"`
	BRAMs          int            `json:"brams"`
	BRAMsAvailable int            `json:"brams_available"`
	SPRAMs         int            `json:"sprams"`
	DSPs           int            `json:"dsps"`
	Utilization    map[string]Use `json:"utilization,omitempty"`

	FmaxMHz   float64 `json:"fmax_mhz"`
	TargetMHz float64 `json:"target_mhz"`
	ClockMHz  float64 `json:"clock_mhz"`
	TimingMet bool    `json:"timing_met"`
	PLL       PLL     `json:"pll"`
	Seed      int     `json:"seed"`

	// CyclesPerExample is Options.CyclesPerExample; ExamplesPerSAtClock
	// the examples trained per second at the PLL clock (0 when timing is
	// not met there), ExamplesPerSAtFmax at the Fmax reached.
	CyclesPerExample    float64 `json:"cycles_per_example"`
	ExamplesPerSAtClock float64 `json:"examples_per_s_at_clock"`
	ExamplesPerSAtFmax  float64 `json:"examples_per_s_at_fmax"`

	// Toolchain and ToolVersions are as in Result.
	Toolchain    string            `json:"toolchain,omitempty"`
	ToolVersions map[string]string `json:"tool_versions,omitempty"`

	Bitstream string            `json:"bitstream"`
	BuildDir  string            `json:"build_dir"`
	Logs      map[string]string `json:"logs"`
	Seconds   float64           `json:"seconds"`
}

// RunTrainer synthesizes, places and routes the trainer in its
// out-of-context device top (rtl/boards/icebreaker/trainer_top.v: PLL,
// power-on reset, a stimulus shift register on the RX pin, outputs folded
// onto TX) with `yosys synth_ice40 -dsp` and nextpnr-ice40, and packs the
// bitstream when timing is met. On a timing failure it returns the Result
// with an error wrapping ErrTiming.
func RunTrainer(ctx context.Context, o TrainerOptions) (*TrainerResult, error) {
	start := time.Now()
	if o.Design == nil {
		return nil, fmt.Errorf("%w: no trainer design", ErrOptions)
	}
	p := o.Design.Params
	if !p.SPRAM {
		return nil, fmt.Errorf("%w: the trainer must be generated with SPRAM for synthesis", ErrOptions)
	}
	dev, err := LookupDevice(o.Device)
	if err != nil {
		return nil, err
	}
	names, err := rtl.TrainerTopSources(dev.Board)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	so := Options{FreqMHz: o.FreqMHz, Seed: o.Seed, Progress: o.Progress}
	so.defaults()
	if o.Dir == "" {
		return nil, fmt.Errorf("%w: no build folder", ErrOptions)
	}
	if err := checkScriptPaths(o.Dir); err != nil {
		return nil, err
	}
	if err := CheckTools(Tools...); err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	coreDir := filepath.Join(dir, "trainer")
	if err := (&hw.Design{Files: o.Design.Files}).Write(coreDir); err != nil {
		return nil, err
	}
	topFiles, err := rtl.Write(filepath.Join(dir, "rtl"), names)
	if err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	var files []string
	for _, f := range o.Design.VerilogFiles() {
		files = append(files, filepath.Join(coreDir, f))
	}
	files = append(files, topFiles...)
	path := func(name string) string { return filepath.Join(dir, name) }
	logs := map[string]string{}

	so.step("icepll %.2f MHz from %.0f MHz", so.FreqMHz, dev.RefMHz)
	logs["icepll"] = path("icepll.log")
	pll, err := FindPLL(ctx, dev.RefMHz, so.FreqMHz, logs["icepll"])
	if err != nil {
		return nil, err
	}
	qfiles, err := hw.ScriptPaths(files)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	qjson, err := hw.ScriptPath(path("top.json"))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	params := []hw.Param{
		{Name: "DIVR", Value: fmt.Sprintf("4'd%d", pll.DIVR)}, {Name: "DIVF", Value: fmt.Sprintf("7'd%d", pll.DIVF)},
		{Name: "DIVQ", Value: fmt.Sprintf("3'd%d", pll.DIVQ)}, {Name: "FILTER_RANGE", Value: fmt.Sprintf("3'd%d", pll.FilterRange)},
		{Name: "FEATURES", Value: strconv.Itoa(p.O)}, {Name: "SEED_W", Value: strconv.Itoa(p.SeedW)},
		{Name: "LABEL_W", Value: strconv.Itoa(p.LabelW)}, {Name: "LANE_W", Value: strconv.Itoa(p.LaneW)},
		{Name: "ADDR_W", Value: strconv.Itoa(p.SPVAddrW)},
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "read_verilog -sv -DICE40 -DPTM_TRAINER=%s %s\nchparam", o.Design.Top(), qfiles)
	for _, q := range params {
		fmt.Fprintf(&sb, " -set %s %s", q.Name, q.Value)
	}
	fmt.Fprintf(&sb, " trainer_top\nsynth_ice40 -dsp -top trainer_top -json %s\n", qjson)
	if err := os.WriteFile(path("synth.ys"), []byte(sb.String()), 0o644); err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	so.step("yosys synth_ice40 -dsp (trainer_top, %s)", o.Design.Top())
	logs["yosys"] = path("yosys.log")
	stop := so.heartbeat("yosys")
	err = runTool(ctx, dir, path("yosys.out"), "yosys", "-q", "-l", logs["yosys"], "-s", path("synth.ys"))
	stop()
	if err != nil {
		return nil, err
	}
	ylog, err := os.ReadFile(logs["yosys"])
	if err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	cells, ok := parseStat(string(ylog))
	if !ok {
		return nil, fmt.Errorf("%w: yosys printed no statistics (log: %s)", ErrTool, logs["yosys"])
	}
	pcf, err := rtl.PCF(dev.Board)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	if err := os.WriteFile(path("build.pcf"), pcf, 0o644); err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	pl, err := so.placeAndPack(ctx, dir, dev, so.FreqMHz, pll.OutMHz, false, logs)
	if err != nil {
		return nil, err
	}
	util, core, coreName, timingErr := pl.util, pl.core, pl.coreName, pl.timingErr
	r := &TrainerResult{
		Device: dev.Name, Board: dev.Board, Top: o.Design.Top(), NT: p.NT, Classes: p.NC, Clauses: p.M, Features: p.O,
		N: p.N, Bits: p.Bits, Lanes: p.LL, SPVWordsPerLane: p.SPVDepth,
		LUTs: util["ICESTORM_LC"].Used, LUTsAvailable: dev.LCs, LUT4: cells.LUT4, FFs: cells.FFs, Carry: cells.Carry,
		BRAMs: util["ICESTORM_RAM"].Used, BRAMsAvailable: dev.BRAMs, SPRAMs: util["ICESTORM_SPRAM"].Used, DSPs: util["ICESTORM_DSP"].Used,
		Utilization: util, FmaxMHz: core.AchievedMHz, TargetMHz: so.FreqMHz, ClockMHz: pll.OutMHz, TimingMet: timingErr == nil,
		PLL: pll, Seed: so.Seed, CyclesPerExample: o.CyclesPerExample, BuildDir: dir, Logs: logs,
		Toolchain: string(ActiveToolchain()), ToolVersions: toolVersions().named,
	}
	if a := util["ICESTORM_LC"].Available; a > 0 {
		r.LUTsAvailable = a
	}
	if o.CyclesPerExample > 0 {
		r.ExamplesPerSAtFmax = r.FmaxMHz * 1e6 / o.CyclesPerExample
		if r.TimingMet {
			r.ExamplesPerSAtClock = pll.OutMHz * 1e6 / o.CyclesPerExample
		}
	}
	if timingErr == nil {
		r.Bitstream = path("top.bin")
	}
	r.Seconds = time.Since(start).Seconds()
	so.step("%s: %d/%d LCs, %d BRAMs, %d SPRAMs, %d DSPs, Fmax %.1f MHz (%s), target %.1f MHz", dev.Name, r.LUTs, r.LUTsAvailable,
		r.BRAMs, r.SPRAMs, r.DSPs, r.FmaxMHz, coreName, r.TargetMHz)
	if timingErr != nil {
		return r, fmt.Errorf("%w (log: %s; no bitstream written)", timingErr, logs["nextpnr"])
	}
	return r, nil
}
