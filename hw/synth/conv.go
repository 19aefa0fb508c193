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
	"strconv"
	"strings"
	"time"

	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/internal/buildcache"
	"github.com/ptmhw/ptm/rtl"
)

// ConvQueryK is the number of samples per query of a convolutional
// board's queries/s figures (the MNIST recipe's K = 16).
const ConvQueryK = 16

// ConvOptions configure one synthesis of the UART-only convolutional
// board (board_top KIND = 1 around a generated conv core, protocol 7).
type ConvOptions struct {
	// Design is the generated conv core (hw.GenerateConv, without
	// InitBanks: the host uploads thresholds and weights, so the netlist
	// does not depend on the model's values).
	Design *hw.ConvDesign
	// Model is the model file (recorded only).
	Model string
	// Device is "up5k" or "hx8k".
	Device string
	// FreqMHz is the target clock (PLL and nextpnr --freq); 0: DefaultMHz.
	FreqMHz float64
	// Seed is nextpnr's placement seed; 0 means 1.
	Seed int
	// SetsMax is the board's SETS_MAX; 0 means hw.DefaultSetsMax.
	SetsMax int
	// CyclesPerSample is the core's measured cost of one sample (ptm
	// cosim --json's cycles_per_sample on this model and configuration);
	// 0 uses ConvScheduleCycles, the schedule's longest sample (every
	// group scanning every patch block).
	CyclesPerSample float64
	// SynthOnly stops after yosys (cell counts only, no place and route).
	SynthOnly bool
	// Pack, with SynthOnly, also packs the netlist (nextpnr-ice40
	// --pack-only, seconds): the result's LUTs and BRAMs are then the
	// packed logic cells and block RAMs, what placement would need.
	Pack bool
	// Cache is the result cache folder (as Options.Cache); empty: none.
	Cache string
	// Dir is the build folder (created).
	Dir string
	// Progress, when not nil, gets one line per step.
	Progress io.Writer
}

// ConvResult is what a convolutional board's synthesis produced and
// measured, in the units of Result.
type ConvResult struct {
	Device string `json:"device"`
	Board  string `json:"board"`
	Top    string `json:"top"`
	Kind   string `json:"kind"` // "conv"

	Model      string  `json:"model,omitempty"`
	ModelHash  string  `json:"model_hash,omitempty"`
	Classes    int     `json:"classes"`
	Clauses    int     `json:"clauses"`
	ImageH     int     `json:"image_h"`
	ImageW     int     `json:"image_w"`
	Planes     int     `json:"planes"`
	TAs        int     `json:"tas"`
	ModelKbits float64 `json:"model_kbits"` // TAs x B / 1024

	Bits         int    `json:"bits"`
	LFSRWidth    int    `json:"lfsr_width"`
	Lanes        int    `json:"lanes"`
	ClauseLanes  int    `json:"clause_lanes"`
	LiteralLanes int    `json:"literal_lanes"`
	PatchLanes   int    `json:"patch_lanes"`
	Scan         string `json:"scan"`
	Depth        int    `json:"depth"`
	// ThreshSPRAM is true when the threshold memory is in SPRAM.
	ThreshSPRAM bool `json:"thresh_spram"`

	// LUTs are the placed logic cells (ICESTORM_LC); LUT4, FFs, Carry
	// yosys's counts; BRAMs, SPRAMs and DSPs the placed block RAMs,
	// SPRAMs and DSPs (SB_MAC16, the UP5K's).
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

	// CyclesPerSample is the cost of one sample the rates use, from
	// CyclesSource: "cosim" (ConvOptions.CyclesPerSample), "estimate"
	// (AutoConv's choice without a measured figure: its
	// ConvCandidate.ExpectedCycles, an upper estimate) or "schedule"
	// (ConvScheduleCycles, the longest sample). ScheduleCycles is the
	// schedule's longest sample either way.
	CyclesPerSample float64 `json:"cycles_per_sample"`
	CyclesSource    string  `json:"cycles_source"`
	ScheduleCycles  int     `json:"schedule_cycles_per_sample"`
	// SamplesPerS and QueriesPerSK16 are the core's rates at Fmax;
	// the AtClock ones at the PLL clock (0 when timing is not met).
	SamplesPerS           float64 `json:"samples_per_s"`
	QueriesPerSK16        float64 `json:"queries_per_s_k16"`
	SamplesPerSAtClock    float64 `json:"samples_per_s_at_clock"`
	QueriesPerSK16AtClock float64 `json:"queries_per_s_k16_at_clock"`
	// UARTBaud is CLK_HZ / CLKS_PER_BIT; UART the line's bound at K = 16.
	UARTBaud   float64  `json:"uart_baud"`
	ClksPerBit int      `json:"clks_per_bit"`
	UART       ConvLink `json:"uart"`
	// Binding names the limit that binds.
	Binding string `json:"binding"`

	SynthOnly bool   `json:"synth_only,omitempty"`
	Cached    bool   `json:"cached,omitempty"`
	NoFit     string `json:"no_fit,omitempty"`
	// Search is what AutoConv tried before this result.
	Search []ConvStep `json:"search,omitempty"`

	Toolchain    string            `json:"toolchain,omitempty"`
	ToolVersions map[string]string `json:"tool_versions,omitempty"`
	Bitstream    string            `json:"bitstream"`
	BuildDir     string            `json:"build_dir"`
	Logs         map[string]string `json:"logs,omitempty"`
	Seconds      float64           `json:"seconds"`
}

// ConvLink is a UART's bound on a convolutional board's image queries at
// K = ConvQueryK, one image per INFER frame (docs/protocol.md section 4,
// "Image queries"): request 11 + 10 + FB bytes per threshold set.
type ConvLink struct {
	BitRate            float64 `json:"bit_rate"`
	RequestBytes       int     `json:"request_bytes"`
	VotesResponseBytes int     `json:"votes_response_bytes"`
	StatsResponseBytes int     `json:"stats_response_bytes"`
	// VotesQueriesPerS and StatsQueriesPerS: rate / max(request, answer).
	VotesQueriesPerS float64 `json:"votes_queries_per_s"`
	StatsQueriesPerS float64 `json:"stats_queries_per_s"`
}

// ConvUARTLink is the UART bound at baud bit/s for images of p, one set.
func ConvUARTLink(p *hw.ConvParams, baud float64) ConvLink {
	fb := (p.ImgBits + 7) / 8
	l := ConvLink{BitRate: baud, RequestBytes: frame(10 + fb), StatsResponseBytes: frame(3 * 4 * p.NC)}
	vb := 4
	if lcm := lcmTo(p.NC); ConvQueryK*lcm <= 0xffff {
		vb = 2
	}
	l.VotesResponseBytes = frame(vb * p.NC)
	byteRate := baud / 10
	l.VotesQueriesPerS = byteRate / float64(max(l.RequestBytes, l.VotesResponseBytes))
	l.StatsQueriesPerS = byteRate / float64(max(l.RequestBytes, l.StatsResponseBytes))
	return l
}

// lcmTo is lcm(1..n), the vote unit of n classes.
func lcmTo(n int) int {
	l := 1
	for i := 2; i <= n; i++ {
		a, b := l, i
		for b != 0 {
			a, b = b, a%b
		}
		l = l / a * i
	}
	return l
}

// ConvScheduleCycles is the conv core's longest sample by its schedule
// (docs/conv-core.md 3): hw.ConvParams.SampleCyclesMax, every group
// scanning every patch block. The range scan visits fewer blocks on a
// trained model, so this bounds the measured cost from above.
func ConvScheduleCycles(p *hw.ConvParams) int {
	return p.SampleCyclesMax()
}

// ConvMemoryBits is the model's threshold memory: D rows of L x B bits.
func ConvMemoryBits(p *hw.ConvParams) int { return p.D * p.L * p.Bits }

// SPRAMBits is the UP5K's SPRAM: 4 x 256 kbit.
const SPRAMBits = 4 * 256 * 1024

// CheckConvFit refuses, before any tool runs, a convolutional design the
// device cannot hold: its threshold memory must fit the SPRAM (UP5K,
// when the generator marked it so) or the block RAM (every SB_RAM40_4K
// is 4 kbit: the HX8K's 32 hold 128 kbit), together with the weights.
// The error wraps ErrNoFit and gives the numbers.
func CheckConvFit(p *hw.ConvParams, dev Device) error {
	bits := ConvMemoryBits(p)
	wbits := p.WDepth * p.NC * hw.ConvWeightBits
	if dev.Name != "up5k" {
		if have := dev.BRAMs * 4096; bits+wbits > have {
			return fmt.Errorf("%w on %s: the threshold memory (%.1f kbit) and class weights (%.1f kbit) need %.1f kbit of block RAM; the %s has %d x 4 kbit = %d kbit and no SPRAM",
				ErrNoFit, dev.Name, float64(bits)/1024, float64(wbits)/1024, float64(bits+wbits)/1024, dev.Name, dev.BRAMs, have/1024)
		}
		if p.ThreshSPRAM {
			return fmt.Errorf("%w on %s: the %.1f-kbit threshold memory is above %d kbit, which the generator puts in SPRAM; the %s has none",
				ErrNoFit, dev.Name, float64(bits)/1024, hw.SPRAMThreshold/1024, dev.Name)
		}
		return nil
	}
	if p.ThreshSPRAM {
		if bits > SPRAMBits {
			return fmt.Errorf("%w on %s: the threshold memory is %.1f kbit, the SPRAM holds %d kbit", ErrNoFit, dev.Name, float64(bits)/1024, SPRAMBits/1024)
		}
		return nil
	}
	if have := dev.BRAMs * 4096; bits+wbits > have {
		why := ""
		if bits > hw.SPRAMThreshold && p.L*p.Bits > 64 {
			why = fmt.Sprintf(" (not in SPRAM: its rows of %d lanes x %d bits are wider than the 4 SPRAMs' 64; at most %d lanes)", p.L, p.Bits, 64/p.Bits)
		} else if bits > hw.SPRAMThreshold && p.Bits%4 != 0 {
			why = fmt.Sprintf(" (not in SPRAM: its %d-bit lanes are not whole nibbles of the SPRAMs' 4-bit write masks)", p.Bits)
		}
		return fmt.Errorf("%w on %s: the threshold memory (%.1f kbit) and class weights (%.1f kbit) need %.1f kbit of block RAM, the device has %d x 4 kbit = %d kbit%s",
			ErrNoFit, dev.Name, float64(bits)/1024, float64(wbits)/1024, float64(bits+wbits)/1024, dev.BRAMs, have/1024, why)
	}
	return nil
}

// convTopParams are the device top's parameters (PLL, then those of
// hw.ConvDesign.BoardParams that the device top passes on) and the
// parameters only board_top has (KIND and the conv core's), which the
// yosys script sets on board_top itself.
func convTopParams(d *hw.ConvDesign, pll PLL, cpb, setsMax int) (top, board []hw.Param, err error) {
	bp, err := d.BoardParams(hw.Board{ClockHz: int(math.Round(pll.OutMHz * 1e6)), ClksPerBit: cpb, SetsMax: setsMax})
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	top = []hw.Param{
		{Name: "DIVR", Value: fmt.Sprintf("4'd%d", pll.DIVR)}, {Name: "DIVF", Value: fmt.Sprintf("7'd%d", pll.DIVF)},
		{Name: "DIVQ", Value: fmt.Sprintf("3'd%d", pll.DIVQ)}, {Name: "FILTER_RANGE", Value: fmt.Sprintf("3'd%d", pll.FilterRange)},
	}
	for _, q := range bp {
		if deviceTopParams[q.Name] {
			top = append(top, q)
		} else {
			board = append(board, q)
		}
	}
	return top, board, nil
}

// deviceTopParams are the parameters rtl/boards/*/top.v (and brd_board)
// pass on to board_top.
var deviceTopParams = map[string]bool{
	"CLK_HZ": true, "CLKS_PER_BIT": true, "BOARD_MAC": true, "FEATURES": true, "BITS": true, "LANES": true, "DEPTH": true,
	"LANE_W": true, "ADDR_W": true, "K_W": true, "NT": true, "NC": true, "KMAX": true, "CLIP_T": true, "SETS_MAX": true,
	"GEN_VERSION": true, "INIT_LOADED": true, "INIT_CRC": true, "ETH_ENABLE": true, "CORE_CLK": true,
}

// ConvScript is the yosys script of a convolutional board: read the
// sources with PTM_CONV_CORE naming the generated core, set board_top's
// own parameters on it (the device top does not carry them; chparam
// before elaboration changes the defaults the device top's instance
// takes), the device top's, then synth_ice40 with SPRAM inference.
func ConvScript(files []string, coreTop string, top, board []hw.Param, json string, synthOnly, dsp bool) (string, error) {
	q, err := hw.ScriptPaths(files)
	if err != nil {
		return "", err
	}
	qj, err := hw.ScriptPath(json)
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "read_verilog -sv -DPTM_CONV_CORE=%s %s\n", coreTop, q)
	sb.WriteString("chparam")
	for _, p := range board {
		fmt.Fprintf(&sb, " -set %s %s", p.Name, p.Value)
	}
	sb.WriteString(" board_top\nchparam")
	for _, p := range top {
		fmt.Fprintf(&sb, " -set %s %s", p.Name, p.Value)
	}
	sb.WriteString(" top\n")
	flags := "-spram"
	if dsp {
		flags += " -dsp"
	}
	if synthOnly {
		fmt.Fprintf(&sb, "synth_ice40 %s -top top\n", flags)
	} else {
		fmt.Fprintf(&sb, "synth_ice40 %s -top top -json %s\n", flags, qj)
	}
	return sb.String(), nil
}

// RunConv synthesizes, places and routes the UART-only convolutional
// board (rtl/boards/<board>/top.v with ETH_ENABLE = 0, board_top KIND =
// 1, rtl/board/conv_query.v, the generated conv core) and packs the
// bitstream when timing is met. On a timing failure it returns the
// result with an error wrapping ErrTiming; a design the device cannot
// hold is refused with ErrNoFit before any tool runs when its memories
// alone are too large.
func RunConv(ctx context.Context, o ConvOptions) (*ConvResult, error) {
	start := time.Now()
	if o.Design == nil {
		return nil, fmt.Errorf("%w: no convolutional design", ErrOptions)
	}
	d := o.Design
	p := &d.Params
	dev, err := LookupDevice(o.Device)
	if err != nil {
		return nil, err
	}
	if err := CheckConvFit(p, dev); err != nil {
		return nil, err
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
	coreDir := filepath.Join(dir, "core")
	if err := d.Write(coreDir); err != nil {
		return nil, err
	}
	names, err := rtl.TopSources(dev.Board)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	topFiles, err := rtl.Write(filepath.Join(dir, "rtl"), append(names, rtl.ConvSources()...))
	if err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	var files []string
	for _, f := range d.VerilogFiles() {
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
	cpb := ClksPerBit(pll.OutMHz)
	topPs, boardPs, err := convTopParams(d, pll, cpb, o.SetsMax)
	if err != nil {
		return nil, err
	}
	// The UP5K's DSPs (SB_MAC16) take conv_query's square of a clipped
	// class sum: in LUTs it was the critical path.
	dsp := dev.Name == "up5k"
	script, err := ConvScript(files, d.Top(), topPs, boardPs, path("top.json"), o.SynthOnly && !o.Pack, dsp)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	// The core's $readmemh files (none without InitBanks) are read from
	// the core folder.
	if err := os.WriteFile(path("synth.ys"), []byte(script), 0o644); err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	so.step("yosys synth_ice40 -spram (dsp %v; top, board_top KIND=1, %s)", dsp, d.Top())
	logs["yosys"] = path("yosys.log")
	stop := so.heartbeat("yosys")
	err = runTool(ctx, coreDir, path("yosys.out"), "yosys", "-q", "-l", logs["yosys"], "-s", path("synth.ys"))
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
	r := &ConvResult{
		Device: dev.Name, Board: dev.Board, Top: "top", Kind: "conv", Model: o.Model, ModelHash: p.Hash,
		Classes: p.NC, Clauses: p.C, ImageH: p.H, ImageW: p.W, Planes: p.P, TAs: p.C * p.Lit,
		ModelKbits: float64(p.C*p.Lit*p.Bits) / 1024,
		Bits:       p.Bits, LFSRWidth: p.LW, Lanes: p.L, ClauseLanes: p.LC, LiteralLanes: p.LL, PatchLanes: p.PN, Scan: p.Scan,
		Depth: p.D, ThreshSPRAM: p.ThreshSPRAM,
		LUTsAvailable: dev.LCs, LUT4: cells.LUT4, FFs: cells.FFs, Carry: cells.Carry, BRAMs: cells.BRAMs, BRAMsAvailable: dev.BRAMs,
		TargetMHz: so.FreqMHz, ClockMHz: pll.OutMHz, PLL: pll, Seed: so.Seed,
		UARTBaud: pll.OutMHz * 1e6 / float64(cpb), ClksPerBit: cpb, BuildDir: dir, Logs: logs,
		Toolchain: string(ActiveToolchain()), ToolVersions: toolVersions().named,
	}
	if o.SynthOnly {
		r.SynthOnly = true
		so.step("yosys only: %d LUT4, %d FF, %d carry, %d block RAM", cells.LUT4, cells.FFs, cells.Carry, cells.BRAMs)
		if o.Pack {
			so.step("nextpnr-ice40 %s --pack-only", dev.nextpnrFlag())
			util, err := packConv(ctx, dir, dev, logs)
			if err != nil {
				return nil, err
			}
			r.LUTs, r.BRAMs, r.SPRAMs, r.DSPs, r.Utilization = util["ICESTORM_LC"].Used, util["ICESTORM_RAM"].Used, util["ICESTORM_SPRAM"].Used, util["ICESTORM_DSP"].Used, util
			so.step("packed: %d/%d logic cells, %d/%d block RAMs", r.LUTs, dev.LCs, r.BRAMs, dev.BRAMs)
		}
		r.Seconds = time.Since(start).Seconds()
		return r, nil
	}
	switch {
	case cells.BRAMs > dev.BRAMs:
		return nil, noFit(dev, "SB_RAM40_4K", Use{cells.BRAMs, dev.BRAMs}, logs["yosys"])
	case cells.LUT4 > dev.LCs:
		return nil, noFit(dev, "ICESTORM_LC", Use{cells.LUT4, dev.LCs}, logs["yosys"])
	case cells.FFs > dev.LCs:
		return nil, noFit(dev, "ICESTORM_LC", Use{cells.FFs, dev.LCs}, logs["yosys"])
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
	util := pl.util
	r.LUTs, r.BRAMs, r.SPRAMs, r.DSPs, r.Utilization = util["ICESTORM_LC"].Used, util["ICESTORM_RAM"].Used, util["ICESTORM_SPRAM"].Used, util["ICESTORM_DSP"].Used, util
	if a := util["ICESTORM_LC"].Available; a > 0 {
		r.LUTsAvailable = a
	}
	if a := util["ICESTORM_RAM"].Available; a > 0 {
		r.BRAMsAvailable = a
	}
	r.FmaxMHz, r.TimingMet = pl.core.AchievedMHz, pl.timingErr == nil
	if r.TimingMet {
		r.Bitstream = path("top.bin")
	}
	fillConvThroughput(r, p, o.CyclesPerSample)
	r.Seconds = time.Since(start).Seconds()
	so.step("%s: %d/%d LCs, %d/%d BRAMs, %d SPRAMs, Fmax %.1f MHz (%s), target %.1f MHz", dev.Name, r.LUTs, r.LUTsAvailable,
		r.BRAMs, r.BRAMsAvailable, r.SPRAMs, r.FmaxMHz, pl.coreName, r.TargetMHz)
	if pl.timingErr != nil {
		return r, fmt.Errorf("%w (log: %s; no bitstream written)", pl.timingErr, logs["nextpnr"])
	}
	return r, nil
}

// packConv packs dir/top.json for dev (nextpnr-ice40 --pack-only, no
// placement: seconds) and returns the utilization it logs, every
// resource's use against the device's, over or not.
func packConv(ctx context.Context, dir string, dev Device, logs map[string]string) (map[string]Use, error) {
	path := func(name string) string { return filepath.Join(dir, name) }
	pcf, err := rtl.PCF(dev.Board)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	if err := os.WriteFile(path("build.pcf"), pcf, 0o644); err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	logs["nextpnr-pack"] = path("nextpnr-pack.log")
	if err := runTool(ctx, dir, path("nextpnr-pack.out"), "nextpnr-ice40", dev.nextpnrFlag(), "--package", dev.Package,
		"--json", path("top.json"), "--pcf", path("build.pcf"), "--pack-only", "--log", logs["nextpnr-pack"], "-q"); err != nil {
		return nil, err
	}
	plog, err := os.ReadFile(logs["nextpnr-pack"])
	if err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	util := map[string]Use{}
	for _, line := range strings.Split(string(plog), "\n") {
		if m := utilLine.FindStringSubmatch(line); m != nil {
			used, _ := strconv.Atoi(m[2])
			avail, _ := strconv.Atoi(m[3])
			util[m[1]] = Use{Used: used, Available: avail}
		}
	}
	if _, ok := util["ICESTORM_LC"]; !ok {
		return nil, fmt.Errorf("%w: nextpnr-ice40 --pack-only logged no logic cell count (log: %s)", ErrTool, logs["nextpnr-pack"])
	}
	return util, nil
}

// fillConvThroughput computes r's rates and binding limit.
func fillConvThroughput(r *ConvResult, p *hw.ConvParams, measured float64) {
	r.ScheduleCycles = ConvScheduleCycles(p)
	r.CyclesPerSample, r.CyclesSource = float64(r.ScheduleCycles), "schedule"
	if measured > 0 {
		r.CyclesPerSample, r.CyclesSource = measured, "cosim"
	}
	r.SamplesPerS = r.FmaxMHz * 1e6 / r.CyclesPerSample
	r.QueriesPerSK16 = r.SamplesPerS / ConvQueryK
	if r.TimingMet {
		r.SamplesPerSAtClock = r.ClockMHz * 1e6 / r.CyclesPerSample
		r.QueriesPerSK16AtClock = r.SamplesPerSAtClock / ConvQueryK
	}
	r.UART = ConvUARTLink(p, r.UARTBaud)
	r.Binding = convBinding(r)
}

func convBinding(r *ConvResult) string {
	if !r.TimingMet {
		return fmt.Sprintf("timing (%.1f < %.1f MHz)", r.FmaxMHz, r.TargetMHz)
	}
	if r.UART.StatsQueriesPerS < r.QueriesPerSK16AtClock {
		return fmt.Sprintf("UART link (%.0f stats queries/s)", r.UART.StatsQueriesPerS)
	}
	lc := float64(r.LUTs) / float64(r.LUTsAvailable)
	if lc > 0.85 {
		return fmt.Sprintf("core cycles per sample; logic cells (%.0f%%) stop more lanes", 100*lc)
	}
	return "core cycles per sample (more lanes may fit)"
}

// convCacheKey is the hash of what a conv run's result depends on.
func convCacheKey(o ConvOptions) (string, error) {
	k := buildcache.NewHasher()
	k.Add("conv-synth-cache-2", toolVersions().key, o.Device, strconv.FormatFloat(o.FreqMHz, 'g', -1, 64),
		strconv.Itoa(o.Seed), strconv.Itoa(o.SetsMax), fmt.Sprint(o.SynthOnly), fmt.Sprint(o.Pack))
	for _, f := range o.Design.Files {
		k.Add(f.Name, string(f.Data))
	}
	if err := fsWalk(func(name string, data []byte) { k.Add(name, string(data)) }); err != nil {
		return "", err
	}
	for _, n := range rtl.ConvSources() {
		data, err := rtl.FS.ReadFile(n)
		if err != nil {
			return "", fmt.Errorf("synth: %w", err)
		}
		k.Add(n, string(data))
	}
	return k.Key(), nil
}

// CachedConv is RunConv through the result cache o.Cache (as Cached): a
// stored result is returned with Cached set and its bitstream copied into
// o.Dir; timing failures and no-fit results are stored too. The rates are
// recomputed with o.CyclesPerSample (it does not enter the key).
func CachedConv(ctx context.Context, o ConvOptions) (*ConvResult, error) {
	if o.Cache == "" || o.Design == nil || o.Dir == "" {
		return RunConv(ctx, o)
	}
	if o.FreqMHz == 0 {
		o.FreqMHz = DefaultMHz
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	so := Options{Progress: o.Progress}
	key, err := convCacheKey(o)
	if err != nil {
		return nil, err
	}
	stored, entry, cached, err := cachedResult(o.Cache, "conv-"+key,
		func() (*ConvResult, error) { return RunConv(ctx, o) },
		func(msg string) ConvResult { return ConvResult{NoFit: msg} },
		func(r *ConvResult) string { return r.Bitstream })
	if !cached {
		return stored, err
	}
	r := *stored
	if r.NoFit != "" {
		so.step("cached result (%s): does not fit", entry)
		return nil, fmt.Errorf("%w (cached result %s)", errNoFitText{r.NoFit}, entry)
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	r.Cached, r.BuildDir, r.Logs, r.Model = true, dir, nil, o.Model
	if !r.SynthOnly {
		fillConvThroughput(&r, &o.Design.Params, o.CyclesPerSample)
	}
	bin := filepath.Join(dir, "top.bin")
	os.Remove(bin)
	if r.Bitstream != "" {
		if err := copyFile(filepath.Join(entry, "top.bin"), bin); err != nil {
			return nil, fmt.Errorf("synth: result cache: %w", err)
		}
		r.Bitstream = bin
	}
	so.step("cached result (%s): %dx%d lanes, %d patches, %d/%d LCs, Fmax %.1f MHz", entry, r.ClauseLanes, r.LiteralLanes, r.PatchLanes, r.LUTs, r.LUTsAvailable, r.FmaxMHz)
	if !r.TimingMet && !r.SynthOnly {
		return &r, fmt.Errorf("%w: clock %.2f MHz below the %.2f MHz target (cached result %s; no bitstream written)",
			ErrTiming, r.FmaxMHz, r.TargetMHz, entry)
	}
	return &r, nil
}

// ConvCandidate is one configuration AutoConv may try: the lanes, the
// patches per cycle and the scan, its design, and the model's estimate.
type ConvCandidate struct {
	ClauseLanes, LiteralLanes, PatchLanes int
	Scan                                  string
	Design                                *hw.ConvDesign
	// ScheduleCycles is ConvScheduleCycles of the design: its bound
	// when every group scans all of its blocks.
	ScheduleCycles int
	// ExpectedCycles is the design's cycles per sample expected on the
	// model (hw.ConvParams.ExpectedSampleCycles; 0: not estimated). The
	// candidates are ordered by it when every candidate has one, else by
	// ScheduleCycles (fewest first: fastest at a given clock).
	ExpectedCycles float64
}

// cyclesText is the candidate's cycles per sample for the search's
// progress lines.
func (c ConvCandidate) cyclesText() string {
	if c.ExpectedCycles > 0 {
		return fmt.Sprintf("about %.0f cycles/sample expected on the model, schedule bound %d", c.ExpectedCycles, c.ScheduleCycles)
	}
	return fmt.Sprintf("schedule %d cycles/sample", c.ScheduleCycles)
}

// ConvStep is one step of AutoConv.
type ConvStep struct {
	ClauseLanes  int     `json:"clause_lanes"`
	LiteralLanes int     `json:"literal_lanes"`
	PatchLanes   int     `json:"patch_lanes"`
	Scan         string  `json:"scan"`
	FreqMHz      float64 `json:"freq_mhz"`
	Schedule     int     `json:"schedule_cycles_per_sample"`
	Expected     float64 `json:"expected_cycles_per_sample,omitempty"`
	LUTs         int     `json:"luts,omitempty"`
	FmaxMHz      float64 `json:"fmax_mhz,omitempty"`
	Outcome      string  `json:"outcome"`
	Cached       bool    `json:"cached,omitempty"`
}

// ConvCandidateGrid is the configurations AutoConv considers: clause
// lanes x literal lanes x patches per cycle, the range scan, in the order
// given by OrderConvCandidates.
// At B = 4 the threshold memory of a large model is in SPRAM only with at
// most 16 lanes (rows of at most 64 bits). The 8- and 4-lane candidates
// (fewer LFSR lanes and include registers, more beats per clause group:
// slower by the schedule than 16 lanes at the same patches per cycle) are
// there for when no 16-lane design fits.
var ConvCandidateGrid = []struct{ LC, LL, PN int }{
	{1, 16, 7}, {1, 16, 4}, {2, 8, 4}, {4, 4, 2}, {1, 16, 2}, {4, 4, 1}, {1, 16, 1}, {2, 8, 1},
	{1, 8, 4}, {1, 8, 2}, {1, 8, 1}, {2, 4, 1}, {1, 4, 1},
}

// OrderConvCandidates sorts candidates by their cycles per sample, fewest
// first: ExpectedCycles when every candidate has one (the range scan
// visits only its clauses' rectangles, so its bound ScheduleCycles ranks
// a trained model's candidates wrongly: 1 x 16 lanes at 7 patches per
// cycle is bounded by 8,333 cycles and takes about 2,600 on MNIST, 4 x 4
// lanes at 2 patches by 6,384 and takes more), else ScheduleCycles. Ties
// (the longest scan, the same for every lane count at the same patches
// per cycle, hides the sampling): the fewer sampling cycles per sample
// (G x BT: more literal lanes first, which the range scan's measured
// cycles follow, docs/conv-core.md 6), then fewer lanes x patches (the
// smaller design).
func OrderConvCandidates(c []ConvCandidate) {
	sampling := func(k ConvCandidate) int {
		if k.Design == nil {
			return 0
		}
		return k.Design.Params.G * k.Design.Params.BT
	}
	expected := len(c) > 0
	for _, k := range c {
		expected = expected && k.ExpectedCycles > 0
	}
	sort.SliceStable(c, func(i, j int) bool {
		if expected && c[i].ExpectedCycles != c[j].ExpectedCycles {
			return c[i].ExpectedCycles < c[j].ExpectedCycles
		}
		if c[i].ScheduleCycles != c[j].ScheduleCycles {
			return c[i].ScheduleCycles < c[j].ScheduleCycles
		}
		if si, sj := sampling(c[i]), sampling(c[j]); si != sj {
			return si < sj
		}
		return c[i].ClauseLanes*c[i].LiteralLanes*c[i].PatchLanes < c[j].ClauseLanes*c[j].LiteralLanes*c[j].PatchLanes
	})
}

// AutoConv first synthesizes the smallest candidate (fewest lanes x
// patches) with yosys and packs it (nextpnr-ice40 --pack-only, no
// placement) and refuses (ErrNoFit) when its LUT4, flip-flops or packed
// logic cells exceed the device's logic cells, or its block RAMs the
// device's; otherwise it tries the
// candidates in order (OrderConvCandidates) at
// o.FreqMHz, each through the result cache, and returns the first that
// fits and meets timing, with the steps it took. A candidate whose
// timing fails is retried once at the highest multiple of 3 MHz below its
// Fmax (at least 16 MHz), and when that run's Fmax clears a higher
// multiple, once more there (closeConvClock), before the next is tried.
// When no range-scan
// candidate places (the estimate passed, but each was refused at packing
// or by the placer, which needs a margin below the device's logic cells),
// the compact candidates are tried the same way, fastest first. The error
// of the last step when none succeeds.
func AutoConv(ctx context.Context, o ConvOptions, cands []ConvCandidate) (*ConvResult, error) {
	if len(cands) == 0 {
		return nil, fmt.Errorf("%w: no candidate configurations", ErrOptions)
	}
	if o.FreqMHz == 0 {
		o.FreqMHz = DefaultMHz
	}
	so := Options{Progress: o.Progress}
	var steps []ConvStep
	var lastErr error
	base := o.Dir
	// The smallest candidate first, through yosys alone: when even its
	// netlist has more LUT4 or flip-flops than the device has logic
	// cells, no candidate of its scan fits and none is placed. Candidates
	// of the compact scan (hw.ScanCompact) are the fallback: when the
	// smallest of the others does not fit, the smallest compact one is
	// estimated, and only the compact candidates of its lanes x patches
	// are tried.
	dev, err := LookupDevice(o.Device)
	if err != nil {
		return nil, err
	}
	prod := func(c ConvCandidate) int { return c.ClauseLanes * c.LiteralLanes * c.PatchLanes }
	smallest := func(cs []ConvCandidate) ConvCandidate {
		small := cs[0]
		for _, c := range cs[1:] {
			if prod(c) < prod(small) || (prod(c) == prod(small) && c.ScheduleCycles > small.ScheduleCycles) {
				small = c
			}
		}
		return small
	}
	estimate := func(small ConvCandidate) error {
		est := o
		est.Design, est.SynthOnly, est.Pack = small.Design, true, true
		est.Dir = filepath.Join(base, fmt.Sprintf("estimate-%dx%d-pn%d-%s", small.ClauseLanes, small.LiteralLanes, small.PatchLanes, small.Scan))
		so.step("search: the smallest candidate (%d x %d lanes, %d patches per cycle, %s scan) through yosys and packing first", small.ClauseLanes, small.LiteralLanes, small.PatchLanes, small.Scan)
		if r, err := CachedConv(ctx, est); err != nil {
			if !errors.Is(err, ErrNoFit) {
				return err
			}
			lastErr = err
		} else if need := max(r.LUT4, r.FFs, r.LUTs); need > dev.LCs || r.BRAMs > dev.BRAMs {
			return fmt.Errorf("%w on %s: the smallest candidate, %d x %d lanes with %d patch per cycle (%s scan), needs %d LUT4 and %d flip-flops (yosys), %d logic cells and %d block RAMs (packed), the device has %d logic cells and %d block RAMs: no candidate fits (build: %s)",
				ErrNoFit, dev.Name, small.ClauseLanes, small.LiteralLanes, small.PatchLanes, small.Scan, r.LUT4, r.FFs, r.LUTs, r.BRAMs, dev.LCs, dev.BRAMs, r.BuildDir)
		}
		return nil
	}
	var normal, compact []ConvCandidate
	for _, c := range cands {
		if c.Scan == hw.ScanCompact {
			compact = append(compact, c)
		} else {
			normal = append(normal, c)
		}
	}
	err = nil
	if len(normal) > 0 {
		err = estimate(smallest(normal))
		if err == nil {
			cands = normal
		} else if !errors.Is(err, ErrNoFit) || len(compact) == 0 {
			return nil, err
		}
	}
	if len(normal) == 0 || err != nil {
		small := smallest(compact)
		if cerr := estimate(small); cerr != nil {
			if err != nil && errors.Is(cerr, ErrNoFit) {
				return nil, fmt.Errorf("%w; with the compact scan: %w", err, cerr)
			}
			return nil, cerr
		}
		cands = nil
		for _, c := range compact {
			if prod(c) == prod(small) {
				cands = append(cands, c)
			}
		}
	}
	// place tries list in order; nil, nil when none fits and meets timing
	place := func(list []ConvCandidate) (*ConvResult, error) {
		for _, c := range list {
			dir := filepath.Join(base, fmt.Sprintf("%dx%d-pn%d-%s", c.ClauseLanes, c.LiteralLanes, c.PatchLanes, c.Scan))
			run := func(freq float64, probe bool) (*ConvResult, error) {
				oc := o
				oc.Design, oc.FreqMHz, oc.Dir = c.Design, freq, dir
				if probe {
					// its own folder: the bitstream met below stays if this one misses
					oc.Dir = fmt.Sprintf("%s-%gmhz", dir, freq)
				}
				so.step("search: %d x %d lanes, %d patches per cycle, %s scan (%s) at %.1f MHz",
					c.ClauseLanes, c.LiteralLanes, c.PatchLanes, c.Scan, c.cyclesText(), freq)
				r, err := CachedConv(ctx, oc)
				st := ConvStep{ClauseLanes: c.ClauseLanes, LiteralLanes: c.LiteralLanes, PatchLanes: c.PatchLanes, Scan: c.Scan,
					FreqMHz: freq, Schedule: c.ScheduleCycles, Expected: math.Round(c.ExpectedCycles*10) / 10}
				if r != nil {
					st.LUTs, st.FmaxMHz, st.Cached = r.LUTs, r.FmaxMHz, r.Cached
				}
				switch {
				case err == nil:
					st.Outcome = "fits, timing met"
				case errors.Is(err, ErrTiming) && r != nil:
					st.Outcome = "timing not met"
				case errors.Is(err, ErrNoFit):
					st.Outcome = "does not fit"
				default:
					return nil, err
				}
				steps = append(steps, st)
				return r, err
			}
			r, err := closeConvClock(o.FreqMHz, run)
			switch {
			case err == nil:
				if o.CyclesPerSample == 0 && c.ExpectedCycles > 0 {
					// the model's estimate, closer than the bound
					fillConvThroughput(r, &c.Design.Params, c.ExpectedCycles)
					r.CyclesSource = "estimate"
				}
				r.Search = steps
				return r, nil
			case errors.Is(err, ErrTiming), errors.Is(err, ErrNoFit):
				lastErr = err
			default:
				return nil, err
			}
		}
		return nil, nil
	}
	r, err := place(cands)
	if r != nil || err != nil {
		return r, err
	}
	// No range-scan candidate placed although the smallest packed within
	// the device (the placer needs a margin: the 128-clause MNIST board
	// finds no legal placement at 88.8% of the logic cells): the compact
	// candidates, smaller and slower, fastest first.
	if len(compact) > 0 && len(normal) > 0 && cands[0].Scan != hw.ScanCompact {
		so.step("search: no range-scan candidate placed; the compact scan's candidates")
		if r, err := place(compact); r != nil || err != nil {
			return r, err
		}
	}
	return nil, fmt.Errorf("no candidate fits and meets timing (%d steps): %w", len(steps), lastErr)
}

// closeConvClock runs one candidate at freq (run(freq, false)). When its
// timing fails it is run once more at the highest multiple of 3 MHz below
// the Fmax reached (at least 16 MHz; multiples of 3 MHz keep the UART's
// 3 Mbaud exact). When that run meets timing with an Fmax a multiple of
// 3 MHz higher still (the placer reaches more at a lower target), one
// more run probes that clock (run(f, true): in its own folder, so the
// met build's bitstream stays when the probe misses), below freq. It
// returns the fastest run that met timing, else the last run and its
// error; an error that is neither ErrTiming nor ErrNoFit at once.
func closeConvClock(freq float64, run func(freq float64, probe bool) (*ConvResult, error)) (*ConvResult, error) {
	r, err := run(freq, false)
	if err == nil || !errors.Is(err, ErrTiming) || r == nil {
		return r, err
	}
	next := math.Floor(r.FmaxMHz/3) * 3
	if next < 16 || next >= freq {
		return r, err
	}
	met, err := run(next, false)
	if err != nil {
		return met, err
	}
	up := math.Floor(met.FmaxMHz/3) * 3
	if up <= next || up >= freq {
		return met, nil
	}
	probe, err := run(up, true)
	switch {
	case err == nil:
		return probe, nil
	case errors.Is(err, ErrTiming), errors.Is(err, ErrNoFit):
		return met, nil
	default:
		return nil, err
	}
}
