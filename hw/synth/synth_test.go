package synth

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/internal/testenv"
)

// rng is a small deterministic generator for random banks.
func rng(seed uint64) func() uint64 {
	x := seed
	return func() uint64 {
		x = x*6364136223846793005 + 1442695040888963407
		return x ^ x>>31
	}
}

// design generates a core for a shape with a random bank (InitBanks).
func design(t *testing.T, sh fixed.Shape, cfg hw.Config) (*hw.Design, *fixed.Bank) {
	t.Helper()
	b, err := fixed.RandomBank(sh, cfg.Bits, rng(7))
	if err != nil {
		t.Fatal(err)
	}
	cfg.InitBanks = true
	if cfg.MaxK == 0 {
		cfg.MaxK = 255
	}
	if cfg.LFSRWidth == 0 {
		cfg.LFSRWidth = 16
	}
	d, err := hw.Generate(cfg, sh, b, "00c0ffee00c0ffee")
	if err != nil {
		t.Fatal(err)
	}
	return d, b
}

// Shapes of docs/cycles.md and the smallest board design.
var (
	irisLike = fixed.Shape{Classes: 3, TMs: 3, Clauses: 20, Features: 16, T: 10}
	xorLike  = fixed.Shape{Binary: true, Classes: 2, TMs: 1, Clauses: 10, Features: 2, T: 15}
	xorBoard = fixed.Shape{Binary: true, Classes: 2, TMs: 1, Clauses: 10, Features: 12, T: 15}
	tiny     = fixed.Shape{Classes: 3, TMs: 3, Clauses: 3, Features: 3, T: 2}
)

// progress is an Options.Progress that logs every flow step with the time
// since start ("[progress]" lines: go test -v and make test show them as
// they come).
type progress struct {
	t     *testing.T
	start time.Time
}

func newProgress(t *testing.T) *progress { return &progress{t: t, start: time.Now()} }

func (p *progress) Write(b []byte) (int, error) {
	p.t.Logf("[progress] %s at %.1f s: %s", p.t.Name(), time.Since(p.start).Seconds(), strings.TrimSpace(string(b)))
	return len(b), nil
}

func needTools(t *testing.T, names ...string) {
	t.Helper()
	if err := CheckTools(names...); err != nil {
		if testing.Short() {
			t.Skip(err)
		}
		t.Fatal(err)
	}
}

// TestRequestCycles checks the cycle formula against every row measured
// in docs/cycles.md (Verilator, res_ready high).
func TestRequestCycles(t *testing.T) {
	rows := []struct {
		sh                   fixed.Shape
		bits, lc, ll         int
		k1s, k1t, k64s, k64t int // K=1 samples/stats, K=64 samples/stats totals
	}{
		{irisLike, 8, 1, 1, 1936, 1947, 122896, 122907},
		{irisLike, 8, 1, 8, 263, 274, 15383, 15394},
		{irisLike, 8, 1, 32, 107, 118, 3887, 3898},
		{irisLike, 8, 15, 4, 108, 119, 2124, 2135},
		{irisLike, 8, 15, 16, 264, 275, 768, 779},
		{xorLike, 12, 1, 1, 54, 61, 2574, 2581},
		{xorLike, 12, 1, 4, 27, 34, 657, 664},
		{xorLike, 12, 5, 2, 27, 34, 279, 286},
		{xorLike, 12, 10, 4, 55, 62, 118, 125},
	}
	for _, r := range rows {
		d, _ := design(t, r.sh, hw.Config{Bits: r.bits, LFSRWidth: 32, ClauseLanes: r.lc, LiteralLanes: r.ll})
		p := &d.Params
		got := [4]int{RequestCycles(p, 1, false), RequestCycles(p, 1, true), RequestCycles(p, 64, false), RequestCycles(p, 64, true)}
		want := [4]int{r.k1s, r.k1t, r.k64s, r.k64t}
		if got != want {
			t.Errorf("%dx%d lanes, NC=%d: cycles (K=1 samples, stats, K=64 samples, stats) = %v, docs/cycles.md %v", r.lc, r.ll, r.sh.Classes, got, want)
		}
	}
}

func TestLinks(t *testing.T) {
	d, _ := design(t, fixed.Shape{Classes: 3, TMs: 3, Clauses: 20, Features: 24, T: 10}, hw.Config{Bits: 8, Lanes: 30})
	u := UARTLink(&d.Params, 3e6)
	// Iris: 24 features = 3 bytes; 3 + 6 result words.
	if u.RequestBytes != 11+10+3 || u.ResponseBytes != 11+36 {
		t.Errorf("UART request/response bytes = %d/%d, want 24/47", u.RequestBytes, u.ResponseBytes)
	}
	if q := 3e5 / 47; u.QueriesPerS < q*0.999 || u.QueriesPerS > q*1.001 {
		t.Errorf("UART queries/s = %.0f, want %.0f", u.QueriesPerS, q)
	}
	// votes mode: 3 u16 votes (17 bytes) answer a 24-byte request, so the
	// request binds
	if q := 3e5 / 24; u.VotesResponseBytes != 17 || u.VotesQueriesPerS < q*0.999 || u.VotesQueriesPerS > q*1.001 {
		t.Errorf("UART votes mode: %d-byte answers, %.0f queries/s, want 17 and %.0f", u.VotesResponseBytes, u.VotesQueriesPerS, q)
	}
	e := EthernetLink(&d.Params)
	if e.QueriesPerS < 100e3 || e.BatchedQueriesPerS < e.QueriesPerS {
		t.Errorf("Ethernet bound %+v: want > 100k queries/s and batching to help", e)
	}
}

func TestParsePLL(t *testing.T) {
	text := `
F_PLLIN:    12.000 MHz (given)
F_PLLOUT:   50.000 MHz (requested)
F_PLLOUT:   50.250 MHz (achieved)

FEEDBACK: SIMPLE
F_PFD:   12.000 MHz
F_VCO:  804.000 MHz

DIVR:  0 (4'b0000)
DIVF: 66 (7'b1000010)
DIVQ:  4 (3'b100)

FILTER_RANGE: 1 (3'b001)
`
	p, err := ParsePLL(text, 12)
	if err != nil {
		t.Fatal(err)
	}
	if p != (PLL{DIVR: 0, DIVF: 66, DIVQ: 4, FilterRange: 1, InMHz: 12, OutMHz: 50.25}) {
		t.Errorf("ParsePLL = %+v", p)
	}
	if _, err := ParsePLL("nothing", 12); !errors.Is(err, ErrTool) {
		t.Errorf("ParsePLL(garbage) = %v, want ErrTool", err)
	}
	for _, c := range []struct {
		mhz  float64
		want int
	}{{48, 16}, {36, 12}, {24, 8}, {21, 14}, {12, 8}, {16, 11}} {
		if got := ClksPerBit(c.mhz); got != c.want {
			t.Errorf("ClksPerBit(%g MHz) = %d, want %d", c.mhz, got, c.want)
		}
	}
}

func TestMinBRAMs(t *testing.T) {
	d, _ := design(t, fixed.Shape{Classes: 3, TMs: 3, Clauses: 20, Features: 24, T: 10}, hw.Config{Bits: 8, Lanes: 60})
	if got := MinBRAMs(&d.Params, true); got != 30 {
		t.Errorf("Iris L=60 B=8 packed: %d block RAMs, want 30", got)
	}
	if got := MinBRAMs(&d.Params, false); got != 60 {
		t.Errorf("Iris L=60 B=8 unpacked: %d block RAMs, want 60", got)
	}
}

// TestErrors: a bad device, a missing tool (PATH without the tools) and a
// design that cannot fit come back as one-line errors of their kind.
func TestErrors(t *testing.T) {
	d, b := design(t, xorBoard, hw.Config{Bits: 8, Lanes: 4})
	o := Options{Design: d, Bank: b, Device: "ecp5", Dir: t.TempDir()}
	if _, err := Run(testenv.Context(t), o); !errors.Is(err, ErrDevice) {
		t.Errorf("device ecp5: %v, want ErrDevice", err)
	}

	t.Run("missing tool", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		o := Options{Design: d, Bank: b, Device: "up5k", Dir: t.TempDir()}
		_, err := Run(testenv.Context(t), o)
		if !errors.Is(err, ErrToolMissing) || !strings.Contains(err.Error(), "scripts/install-deps.sh") {
			t.Errorf("empty PATH: %v, want ErrToolMissing naming scripts/install-deps.sh", err)
		}
	})

	t.Run("does not fit", func(t *testing.T) {
		needTools(t, Tools...)
		// 48 lanes of 12-bit thresholds cannot share block RAMs: 48 > 30.
		big, bb := design(t, xorBoard, hw.Config{Bits: 12, LFSRWidth: 24, Lanes: 48})
		o := Options{Design: big, Bank: bb, Device: "up5k", Dir: t.TempDir()}
		_, err := Run(testenv.Context(t), o)
		if !errors.Is(err, ErrNoFit) {
			t.Fatalf("48 lanes on up5k: %v, want ErrNoFit", err)
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") || !strings.Contains(msg, "block RAM") || !strings.Contains(msg, "18 over") {
			t.Errorf("no-fit message %q: want one line naming block RAM and 18 over", msg)
		}
	})
}

// TestBankPassSim simulates the mapped netlist of a small core whose banks
// went through the bank pass (collision checks dropped, lanes packed, one
// lane left single: B = 8 packs 3 lanes as a pair and a single, B = 4
// packs 5 lanes as four in one block RAM and a single) against the RTL,
// cycle by cycle, in Icarus Verilog:
// requests on the initial bank contents (INIT merging), then after
// rewriting every bank word. The core's class sums are 3 bits wide, so
// the clip comparisons are the kind yosys's cmp2lut gets wrong: this test
// also guards the flow's coarse step (CoarseScript).
func TestBankPassSim(t *testing.T) {
	t.Parallel() // single-threaded tools: the flows overlap on a 2-core machine
	needTools(t, "yosys", "iverilog", "vvp")
	if testing.Short() {
		t.Skip("simulation")
	}
	cells, err := CellsSim()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		bits, lanes, packed int
	}{{8, 3, 1}, {4, 5, 3}} {
		t.Run(fmt.Sprintf("B%d", tc.bits), func(t *testing.T) {
			t.Parallel()
			bankPassSim(t, cells, hw.Config{Bits: tc.bits, ClauseLanes: 1, LiteralLanes: tc.lanes, MaxK: 8}, tc.packed)
		})
	}
}

// bankPassSim is one TestBankPassSim case: cfg's banks must be packed
// into 2 block RAMs with packed banks merged into others.
func bankPassSim(t *testing.T, cells string, cfg hw.Config, packed int) {
	d, _ := design(t, tiny, cfg)
	dir := t.TempDir()
	coreDir := filepath.Join(dir, "core")
	if err := d.Write(coreDir); err != nil {
		t.Fatal(err)
	}
	var rtl []string
	for _, f := range d.VerilogFiles() {
		rtl = append(rtl, filepath.Join(coreDir, f))
	}
	job := YosysJob{Dir: dir, CoreDir: coreDir, Files: rtl, Top: d.Top(), CoreTop: d.Top(), Relax: true, Pack: true,
		Extra: []string{"rename " + d.Top() + " gl_core", "write_verilog -noattr " + filepath.Join(dir, "gl.v")}}
	st, bp, err := job.Run(testenv.Context(t))
	if err != nil {
		t.Fatal(err)
	}
	if l := cfg.LiteralLanes; bp.Banks != l || bp.Relaxed != l || bp.Packed != packed || st.BRAMs != 2 {
		t.Fatalf("bank pass %+v, %d block RAMs: want %d banks relaxed, %d packed into others, 2 block RAMs", bp, st.BRAMs, l, packed)
	}
	p := d.Params
	tb := fmt.Sprintf(benchText, p.LaneW, p.AddrW, p.Bits, p.O, p.KW, p.L, p.D, p.MaxK, d.Top())
	if err := os.WriteFile(filepath.Join(dir, "tb.v"), []byte(tb), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-g2012", "-DNO_ICE40_DEFAULT_ASSIGNMENTS", "-o", filepath.Join(dir, "sim"), filepath.Join(dir, "tb.v"), filepath.Join(dir, "gl.v"), cells}, rtl...)
	if out, err := exec.Command("iverilog", args...).CombinedOutput(); err != nil {
		t.Fatalf("iverilog: %v\n%s", err, out)
	}
	cmd := exec.Command("vvp", "-n", filepath.Join(dir, "sim"))
	cmd.Dir = coreDir // $readmemh of the bank images
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "PASS") {
		t.Fatalf("simulation: %v\n%s", err, out)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
}

// benchText drives the RTL core and the mapped netlist (gl_core) with the
// same stimulus and compares every output at every clock. Parameters:
// LANE_W, ADDR_W, BITS, FEATURES, K_W, L, D, MaxK, core module.
const benchText = "`timescale 1ns/1ps\n" + `
module tb;
localparam LANE_W = %d, ADDR_W = %d, BITS = %d, FEATURES = %d, K_W = %d, L = %d, D = %d, MAXK = %d;
reg clk = 0;
always #5 clk = ~clk;
reg rst = 1, bank_wr_en = 0, req_valid = 0, req_stats = 0, res_ready = 0;
reg [LANE_W-1:0] bank_wr_lane = 0;
reg [ADDR_W-1:0] bank_wr_addr = 0;
reg [BITS-1:0] bank_wr_data = 0;
reg [FEATURES-1:0] req_features = 0;
reg [K_W-1:0] req_k = 1;
reg [31:0] req_seed = 0;
reg [3:0] info_addr = 0;
wire a_req_ready, a_res_valid, a_res_last, a_res_error, a_idle;
wire b_req_ready, b_res_valid, b_res_last, b_res_error, b_idle;
wire [31:0] a_res_data, a_info, b_res_data, b_info;
%[9]s a (.clk(clk), .rst(rst), .bank_wr_en(bank_wr_en), .bank_wr_lane(bank_wr_lane), .bank_wr_addr(bank_wr_addr),
  .bank_wr_data(bank_wr_data), .req_valid(req_valid), .req_ready(a_req_ready), .req_features(req_features),
  .req_k(req_k), .req_seed(req_seed), .req_stats(req_stats), .req_more(1'b0), .res_valid(a_res_valid), .res_ready(res_ready),
  .res_data(a_res_data), .res_last(a_res_last), .res_error(a_res_error), .idle(a_idle), .info_addr(info_addr), .info_data(a_info));
gl_core b (.clk(clk), .rst(rst), .bank_wr_en(bank_wr_en), .bank_wr_lane(bank_wr_lane), .bank_wr_addr(bank_wr_addr),
  .bank_wr_data(bank_wr_data), .req_valid(req_valid), .req_ready(b_req_ready), .req_features(req_features),
  .req_k(req_k), .req_seed(req_seed), .req_stats(req_stats), .req_more(1'b0), .res_valid(b_res_valid), .res_ready(res_ready),
  .res_data(b_res_data), .res_last(b_res_last), .res_error(b_res_error), .idle(b_idle), .info_addr(info_addr), .info_data(b_info));
// res_data, res_last and res_error mean something only with res_valid.
wire [68:0] a_out = {a_req_ready, a_res_valid, a_idle, a_info, a_res_valid ? {a_res_last, a_res_error, a_res_data} : 34'd0};
wire [68:0] b_out = {b_req_ready, b_res_valid, b_idle, b_info, b_res_valid ? {b_res_last, b_res_error, b_res_data} : 34'd0};
integer mismatches = 0, cycles = 0, words = 0, seed = 1, i, n;
always @(negedge clk) begin
  cycles = cycles + 1;
  if (!rst && a_out !== b_out) begin
    mismatches = mismatches + 1;
    if (mismatches <= 5) $display("MISMATCH at cycle %%0d: rtl %%h gate %%h", cycles, a_out, b_out);
  end
  res_ready = ($random(seed) %% 4) != 0;
  info_addr = $random(seed);
end
always @(posedge clk) if (a_res_valid && res_ready) words = words + 1;
task request;
  begin
    @(negedge clk);
    req_valid = 1; req_features = $random(seed); req_k = 1 + ({$random(seed)} %% MAXK);
    req_seed = $random(seed); req_stats = $random(seed);
    @(posedge clk);
    while (!a_req_ready) @(posedge clk);
    #1 req_valid = 0;
    @(posedge clk);
    while (!(a_res_valid && res_ready && a_res_last)) @(posedge clk);
  end
endtask
initial begin
  repeat (4) @(negedge clk);
  rst = 0;
  for (n = 0; n < 12; n = n + 1) request;
  @(negedge clk);
  for (i = 0; i < L * D; i = i + 1) begin
    bank_wr_en = 1; bank_wr_lane = i %% L; bank_wr_addr = i / L; bank_wr_data = $random(seed);
    @(negedge clk);
  end
  bank_wr_en = 0;
  for (n = 0; n < 12; n = n + 1) request;
  repeat (4) @(negedge clk);
  if (mismatches == 0) $display("PASS %%0d cycles, %%0d result words, 0 mismatches", cycles, words);
  else $display("FAIL %%0d mismatches in %%0d cycles", mismatches, cycles);
  $finish;
end
initial begin
  #20000000 $display("FAIL timeout"); $finish;
end
endmodule
`

// TestLintTop: Verilator -Wall on both boards' full top and core_top with
// a generated core and yosys's iCE40 cell models; warnings are waived only
// inside the vendor file.
func TestLintTop(t *testing.T) {
	needTools(t, "verilator", "yosys")
	d, b := design(t, xorBoard, hw.Config{Bits: 8, Lanes: 4})
	for _, dev := range DeviceNames() {
		for _, v := range []struct {
			name                  string
			coreOnly, noEth, dual bool
		}{{"top", false, false, false}, {"top-uart-only", false, true, false}, {"core_top", true, false, false},
			{"top-uart-only-2clk", false, true, true}, {"top-2clk", false, false, true}} {
			t.Run(dev+"/"+v.name, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				if err := lintTop(testenv.Context(t), dev, v.coreOnly, v.noEth, v.dual, d, b, dir); err != nil {
					log, _ := os.ReadFile(filepath.Join(dir, "lint.log"))
					t.Fatalf("%v\n%s", err, log)
				}
			})
		}
	}
}

// TestFlow runs the whole flow (icepll, yosys, bank pass, nextpnr,
// icepack) on the smallest configuration, the core alone with 2 lanes on
// the UP5K, and checks the result's fields and the bitstream.
func TestFlow(t *testing.T) {
	t.Parallel() // single-threaded tools: the flows overlap on a 2-core machine
	needTools(t, Tools...)
	if testing.Short() {
		t.Skip("place and route")
	}
	d, b := design(t, xorBoard, hw.Config{Bits: 8, Lanes: 2})
	dir := t.TempDir()
	start := time.Now()
	// Through the result cache (DefaultCache): a later run of this test
	// reuses the result instead of running nextpnr again.
	o := Options{Design: d, Bank: b, Model: "xor.ptm", Device: "up5k", FreqMHz: 30, Seed: 1,
		CoreOnly: true, Dir: dir, Progress: newProgress(t), Cache: DefaultCache()}
	res, err := Cached(testenv.Context(t), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("from the cache: %v", res.Cached)
	// A second run is a cache hit with the same bitstream, in its own folder.
	o.Dir = t.TempDir()
	again, err := Cached(testenv.Context(t), o)
	if err != nil {
		t.Fatal(err)
	}
	b1, err1 := os.ReadFile(res.Bitstream)
	b2, err2 := os.ReadFile(again.Bitstream)
	if !again.Cached || err1 != nil || err2 != nil || !bytes.Equal(b1, b2) || filepath.Dir(again.Bitstream) != o.Dir ||
		again.FmaxMHz != res.FmaxMHz || again.LUTs != res.LUTs {
		t.Errorf("second run: cached %v, bitstream %s (%v, %v, equal %v), Fmax %.2f vs %.2f", again.Cached, again.Bitstream,
			err1, err2, bytes.Equal(b1, b2), again.FmaxMHz, res.FmaxMHz)
	}
	t.Logf("%.1f s: %d/%d LCs, %d/%d BRAMs, Fmax %.1f MHz, %.0f samples/s", time.Since(start).Seconds(),
		res.LUTs, res.LUTsAvailable, res.BRAMs, res.BRAMsAvailable, res.FmaxMHz, res.SamplesPerS)
	switch {
	case res.Device != "up5k" || res.LUTsAvailable != 5280 || res.BRAMsAvailable != 30:
		t.Errorf("device fields %s %d %d", res.Device, res.LUTsAvailable, res.BRAMsAvailable)
	case res.LUTs < 100 || res.LUTs > 2000 || res.FFs < 50 || res.LUT4 < 50:
		t.Errorf("logic cells %d, LUT4 %d, FFs %d: out of range for a 2-lane core", res.LUTs, res.LUT4, res.FFs)
	case res.BRAMs != 1 || res.BankPass.Packed != 1:
		t.Errorf("%d block RAMs, %d pairs packed: want the 2 banks in 1", res.BRAMs, res.BankPass.Packed)
	case !res.TimingMet || res.FmaxMHz < 30 || res.FmaxMHz > 300:
		t.Errorf("Fmax %.1f MHz, timing met %v at 30 MHz", res.FmaxMHz, res.TimingMet)
	case res.Depth != 120 || res.RequestCyclesK100 != RequestPeriod(&d.Params, 100):
		t.Errorf("D = %d, request cycles %d", res.Depth, res.RequestCyclesK100)
	}
	if want := res.FmaxMHz * 1e6 / res.CyclesPerSample; res.SamplesPerS != want || res.QueriesPerSK100 <= 0 {
		t.Errorf("samples/s %.0f, want fmax/cycles per sample = %.0f", res.SamplesPerS, want)
	}
	if fi, err := os.Stat(res.Bitstream); err != nil || fi.Size() < 100_000 {
		t.Errorf("bitstream %s: %v, want a file of at least 100 kB", res.Bitstream, err)
	}
	for name, l := range res.Logs {
		if _, err := os.Stat(l); err != nil {
			t.Errorf("log %s: %v", name, err)
		}
	}
}

func TestParseCoarse(t *testing.T) {
	help := `
    begin:
        read_verilog -D ICE40_HX -lib -specify +/ice40/cells_sim.v
        hierarchy -check -top <top>

    coarse:
        opt_expr
        opt_clean
        share
        techmap -map +/cmp2lut.v -D LUT_WIDTH=4
        memory_dff [-no-rw-check]
        ice40_dsp                         (if -dsp)
        alumacc
        memory -nomap [-no-rw-check]
        opt_clean

    map_ram:
        memory_libmap -lib +/ice40/brams.txt
`
	got, err := parseCoarse(help)
	want := []string{"opt_expr", "opt_clean", "share", "memory_dff", "alumacc", "memory -nomap", "opt_clean"}
	if err != nil || strings.Join(got, ";") != strings.Join(want, ";") {
		t.Errorf("parseCoarse = %q, %v; want %q", got, err, want)
	}
	if _, err := parseCoarse(strings.Replace(help, "cmp2lut", "other", 1)); !errors.Is(err, ErrTool) {
		t.Errorf("help without cmp2lut: %v, want ErrTool", err)
	}
	if err := CheckTools("yosys"); err == nil {
		cmds, err := CoarseScript(testenv.Context(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cmds {
			if strings.Contains(c, "cmp2lut") || strings.Contains(c, "[") {
				t.Errorf("coarse command %q", c)
			}
		}
	}
}

// TestFlowBoard runs the whole flow on the full HX8K board top (UART,
// Ethernet through mii_adapter, protocol engine) with the smallest core.
// A timing failure (the board's own logic may miss 48 MHz while it is
// being changed) is logged, not failed, as long as it comes back as an
// ErrTiming with the full Result.
func TestFlowBoard(t *testing.T) {
	t.Parallel() // single-threaded tools: the flows overlap on a 2-core machine
	needTools(t, Tools...)
	if testing.Short() {
		t.Skip("place and route")
	}
	d, b := design(t, xorBoard, hw.Config{Bits: 8, Lanes: 2})
	start := time.Now()
	res, err := Run(testenv.Context(t), Options{Design: d, Bank: b, Device: "hx8k", Dir: t.TempDir(),
		Progress: newProgress(t)})
	if err != nil && !errors.Is(err, ErrTiming) {
		t.Fatal(err)
	}
	if err != nil {
		if res == nil || strings.Contains(err.Error(), "\n") {
			t.Fatalf("timing failure without a result or on several lines: %v", err)
		}
		t.Logf("timing not met (tolerated): %v", err)
	}
	t.Logf("%.1f s: %d/%d LCs, %d/%d BRAMs, Fmax %.1f MHz, clocks %v", time.Since(start).Seconds(),
		res.LUTs, res.LUTsAvailable, res.BRAMs, res.BRAMsAvailable, res.FmaxMHz, res.Clocks)
	if !res.Ethernet || res.CoreOnly || len(res.Links) != 2 || res.UARTBaud != 3e6 || res.ClksPerBit != 16 {
		t.Errorf("board result: ethernet %v, links %d, baud %.0f, clks/bit %d", res.Ethernet, len(res.Links), res.UARTBaud, res.ClksPerBit)
	}
	if res.LUTs < 1000 || res.BRAMs < 8 || res.FmaxMHz <= 0 {
		t.Errorf("%d LCs, %d block RAMs, Fmax %.1f: a board top is larger", res.LUTs, res.BRAMs, res.FmaxMHz)
	}
	phy := 0
	for name, c := range res.Clocks {
		if strings.HasPrefix(name, "ETH_") {
			phy++
			if c.ConstraintMHz != 25 {
				t.Errorf("PHY clock %s constrained at %.1f MHz, want 25", name, c.ConstraintMHz)
			}
		}
	}
	if phy != 2 {
		t.Errorf("%d PHY clocks in the report (%v), want RX and TX", phy, res.Clocks)
	}
	if !res.TimingMet {
		// No image to flash: no bitstream, and none left from before.
		if _, serr := os.Stat(filepath.Join(res.BuildDir, "top.bin")); res.Bitstream != "" || serr == nil {
			t.Errorf("timing not met but bitstream %q written (%v)", res.Bitstream, serr)
		}
		return
	}
	if fi, err := os.Stat(res.Bitstream); err != nil || fi.Size() < 100_000 {
		t.Errorf("bitstream %s: %v, want a file of at least 100 kB", res.Bitstream, err)
	}
}

// TestMIIAdapterSim runs rtl/boards/common/tb/mii_adapter_tb.v in Icarus
// Verilog: frames both ways through mii_adapter with unrelated board, RX
// and TX clocks (board clock 48, 30, 60 and 26.3 MHz; TX clock off the RX
// clock by up to 200 ppm).
func TestMIIAdapterSim(t *testing.T) {
	needTools(t, "iverilog", "vvp")
	common := filepath.Join("..", "..", "rtl", "boards", "common")
	for _, c := range []struct{ clkPS, ppm int }{{20833, 100}, {33333, -100}, {16667, 200}, {38000, 0}} {
		t.Run(fmt.Sprintf("%.1fMHz%+dppm", 1e6/float64(c.clkPS), c.ppm), func(t *testing.T) {
			sim := filepath.Join(t.TempDir(), "sim")
			out, err := exec.Command("iverilog", "-g2012", "-o", sim,
				fmt.Sprintf("-Pmii_adapter_tb.CLK_PS=%d", c.clkPS), fmt.Sprintf("-Pmii_adapter_tb.TX_PPM=%d", c.ppm),
				filepath.Join(common, "tb", "mii_adapter_tb.v"), filepath.Join(common, "mii_adapter.v"),
				filepath.Join(common, "brd_cdc_fifo.v")).CombinedOutput()
			if err != nil {
				t.Fatalf("iverilog: %v\n%s", err, out)
			}
			out, err = exec.Command("vvp", "-n", sim).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "PASS") {
				t.Fatalf("simulation: %v\n%s", err, out)
			}
		})
	}
}

// TestSynthCore runs a plain yosys synth_ice40 on a generated core alone
// with its banks initialised: one SB_RAM40_4K per lane (the banks) and no
// latch. The default run synthesizes a small 8-lane design; make test-long
// (PTM_LONG_TESTS=1) adds a 16-lane design with 12-bit thresholds.
func TestSynthCore(t *testing.T) {
	needTools(t, "yosys")
	small, _ := design(t, tiny, hw.Config{Bits: 8, ClauseLanes: 2, LiteralLanes: 4, MaxK: 10})
	designs := map[string]*hw.Design{"small": small}
	if testenv.Long() {
		designs["xor-like"], _ = design(t, xorBoard, hw.Config{Bits: 12, LFSRWidth: 24, Lanes: 16})
	} else {
		t.Log("the 16-lane design is synthesized under make test-long (PTM_LONG_TESTS=1)")
	}
	for name, d := range designs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st, log, err := SynthCore(testenv.Context(t), t.TempDir(), d)
			if err != nil {
				t.Fatalf("%v\n%s", err, log)
			}
			if st.BRAMs != d.Params.L {
				t.Errorf("%d SB_RAM40_4K, want %d (one per lane)", st.BRAMs, d.Params.L)
			}
			if st.LUT4 == 0 || st.FFs == 0 || st.Cells < st.LUT4+st.FFs {
				t.Errorf("implausible synthesis result %+v", st)
			}
			if strings.Contains(log, "Latch inferred") || strings.Contains(log, "$dlatch") {
				t.Errorf("latch inferred:\n%s", log)
			}
			t.Logf("%s design: %+v", name, st)
		})
	}
}

// TestSetsMaxOption: Options.SetsMax reaches board_top's SETS_MAX (the
// default when 0), and only a non-default value changes the cache key, so
// results cached before the option existed still hit.
func TestSetsMaxOption(t *testing.T) {
	d, b := design(t, xorBoard, hw.Config{Bits: 8, Lanes: 4})
	pll := PLL{DIVF: 63, DIVQ: 4, FilterRange: 1, InMHz: 12, OutMHz: 48}
	setsParam := func(m int) string {
		ps, err := TopParams(d, b, pll, 16, false, true, m)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			if p.Name == "SETS_MAX" {
				return p.Value
			}
		}
		t.Fatalf("no SETS_MAX in %v", ps)
		return ""
	}
	if got := setsParam(0); got != strconv.Itoa(hw.DefaultSetsMax) {
		t.Errorf("SetsMax 0: SETS_MAX %s, want %d", got, hw.DefaultSetsMax)
	}
	if got := setsParam(1); got != "1" {
		t.Errorf("SetsMax 1: SETS_MAX %s", got)
	}
	if _, err := TopParams(d, b, pll, 16, false, true, 256); !errors.Is(err, ErrOptions) {
		t.Errorf("SetsMax 256: %v, want ErrOptions", err)
	}
	key := func(m int) string {
		k, err := cacheKey(Options{Design: d, Device: "up5k", NoEth: true, SetsMax: m})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	if key(0) != key(hw.DefaultSetsMax) || key(0) == key(1) {
		t.Errorf("cache keys: 0 %s, %d %s, 1 %s", key(0), hw.DefaultSetsMax, key(hw.DefaultSetsMax), key(1))
	}
	o := Options{NoEth: true, SetsMax: 1}
	if o.boardSetsMax() != 1 || (&Options{CoreOnly: true, SetsMax: 1}).boardSetsMax() != 0 {
		t.Errorf("boardSetsMax")
	}
}

// TestCoreClockRatio: the dual-clock board's options, parameters, cache key
// and clock checks (Options.CoreClockRatio 2: the core on the PLL's clock,
// the shell on half of it).
func TestCoreClockRatio(t *testing.T) {
	d, b := design(t, xorBoard, hw.Config{Bits: 8, Lanes: 4})
	pll := PLL{DIVF: 71, DIVQ: 4, FilterRange: 1, InMHz: 12, OutMHz: 54}
	params := func(dual bool) map[string]string {
		ps, err := topParams(d, b, pll, ClksPerBit(27), false, true, 1, dual)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, p := range ps {
			m[p.Name] = p.Value
		}
		return m
	}
	one, two := params(false), params(true)
	if _, ok := one["CORE_CLK"]; ok || one["CLK_HZ"] != "54000000" {
		t.Errorf("one clock: CORE_CLK %q, CLK_HZ %s (want none, 54000000)", one["CORE_CLK"], one["CLK_HZ"])
	}
	if two["CORE_CLK"] != "1" || two["CLK_HZ"] != "27000000" || two["CLKS_PER_BIT"] != "9" || two["DIVF"] != "7'd71" {
		t.Errorf("dual clock: CORE_CLK %s, CLK_HZ %s, CLKS_PER_BIT %s, DIVF %s (want 1, 27000000, 9, 7'd71)",
			two["CORE_CLK"], two["CLK_HZ"], two["CLKS_PER_BIT"], two["DIVF"])
	}
	key := func(r int) string {
		k, err := cacheKey(Options{Design: d, Device: "up5k", NoEth: true, CoreClockRatio: r})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	if key(0) != key(1) || key(1) == key(2) {
		t.Errorf("cache keys: ratio 0 %s, 1 %s, 2 %s (want 0 = 1 != 2)", key(0), key(1), key(2))
	}
	up5k, _ := LookupDevice("up5k")
	hx8k, _ := LookupDevice("hx8k")
	for _, c := range []struct {
		o   Options
		dev Device
		ok  bool
	}{
		{Options{CoreClockRatio: 0}, up5k, true},
		{Options{CoreClockRatio: 2}, up5k, true},
		{Options{CoreClockRatio: 3}, up5k, false},
		{Options{CoreClockRatio: 2, CoreOnly: true}, up5k, false},
		{Options{CoreClockRatio: 2}, hx8k, true},
		{Options{CoreClockRatio: 2, CoreOnly: true}, hx8k, false},
	} {
		if err := c.o.checkCoreClock(c.dev); (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrOptions)) {
			t.Errorf("ratio %d, core-only %v on %s: %v", c.o.CoreClockRatio, c.o.CoreOnly, c.dev.Name, err)
		}
	}
	clocks := func(core, shell float64) map[string]ClockFmax {
		return map[string]ClockFmax{"clk_core": {core, 54}, "clk": {shell, 27}}
	}
	for _, c := range []struct {
		core, shell, want float64
		name              string
		met               bool
	}{
		{58.4, 31.0, 58.4, "clk_core", true},
		{58.4, 28.0, 56.0, "clk (x2)", true},
		{53.0, 31.0, 53.0, "clk_core", false},
		{58.4, 26.5, 53.0, "clk (x2)", false},
	} {
		got, name, own, shell, err := dualClocks(clocks(c.core, c.shell), 54)
		if got.AchievedMHz != c.want || name != c.name || own.AchievedMHz != c.core || shell.AchievedMHz != c.shell ||
			(err == nil) != c.met || (err != nil && !errors.Is(err, ErrTiming)) {
			t.Errorf("core %.1f, shell %.1f: limit %.1f (%s), err %v; want %.1f (%s), met %v", c.core, c.shell, got.AchievedMHz, name, err, c.want, c.name, c.met)
		}
	}
	if _, _, _, _, err := dualClocks(map[string]ClockFmax{"clk": {30, 27}}, 54); !errors.Is(err, ErrTool) {
		t.Errorf("no clk_core: %v, want ErrTool", err)
	}
}
