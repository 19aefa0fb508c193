package hw

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/internal/testenv"
)

// convHarness is a top for out-of-context place and route of a conv core
// on a device with few pins (like rtl/boards/common/core_harness.v for the
// tabular core): every input port is a flip-flop of one shift register fed
// from pin sin, every output is registered and folded by XOR into sout.
// It returns the Verilog and the harness's own flip-flops.
func convHarness(d *ConvDesign) (string, int) {
	p := d.Params
	ports := []struct {
		name string
		w    int
	}{
		{"bank_wr_en", 1}, {"bank_wr_mask", p.L}, {"bank_wr_addr", p.AddrW}, {"bank_wr_data", p.L * p.Bits},
		{"wt_wr_en", 1}, {"wt_wr_clause", p.WAddrW}, {"wt_wr_data", p.NC * ConvWeightBits},
		{"img_wr_en", 1}, {"img_wr_data", p.W}, {"req_valid", 1}, {"req_k", p.KW}, {"req_seed", 32}, {"res_ready", 1},
	}
	nin := 0
	var decl, names, conns []string
	for _, q := range ports {
		nin += q.w
		decl = append(decl, fmt.Sprintf("wire [%d:0] %s;", q.w-1, q.name))
		names = append(names, q.name)
		conns = append(conns, fmt.Sprintf(".%s(%s)", q.name, q.name))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "`default_nettype none\nmodule conv_harness (input wire clk, input wire rst, input wire sin, output reg sout);\n")
	fmt.Fprintf(&b, "reg [%d:0] stim = %d'd0;\nalways @(posedge clk) stim <= {stim[%d:0], sin};\n", nin-1, nin, nin-2)
	fmt.Fprintf(&b, "%s\nassign {%s} = stim;\n", strings.Join(decl, "\n"), strings.Join(names, ", "))
	fmt.Fprintf(&b, "wire req_ready, res_valid, res_last, res_error, idle;\nwire [31:0] res_data;\n")
	fmt.Fprintf(&b, "%s core (.clk(clk), .rst(rst), %s, .req_ready(req_ready), .res_valid(res_valid), .res_data(res_data), .res_last(res_last), .res_error(res_error), .idle(idle));\n",
		d.Top(), strings.Join(conns, ", "))
	fmt.Fprintf(&b, "reg [36:0] outs = 37'd0;\ninitial sout = 1'b0;\nalways @(posedge clk) begin\n    outs <= {req_ready, res_valid, res_last, res_error, idle, res_data};\n    sout <= ^outs;\nend\nendmodule\n`default_nettype wire\n")
	return b.String(), nin + 37 + 1
}

// TestConvSynthUP5K places and routes the conv core of a 128-clause model
// of MNIST's geometry (the thresholds and weights are loaded through the
// write ports, so the netlist does not depend on their values) on the
// UP5K, out of context, and logs logic cells, RAMs and Fmax.
//
//	PTM_LONG_TESTS=1 go test ./hw -run TestConvSynthUP5K -v
//
// Routing a large configuration takes nextpnr longer than go test's
// default 10-minute timeout on a loaded machine (1x16 lanes at 7 patches
// per cycle: 18 minutes at load 8-11): add -timeout 60m.
//
// PTM_CONV_SYNTH_LANES=LCxLL chooses the lanes (default 4x4),
// PTM_CONV_SYNTH_PATCHES the patches per scan cycle (Config.PatchLanes,
// default 1), PTM_CONV_SYNTH_SCAN the scan (Config.Scan, default range).
func TestConvSynthUP5K(t *testing.T) {
	testenv.SkipUnlessLong(t, "yosys and nextpnr on a 128-clause conv core")
	needTool(t, "yosys")
	needTool(t, "nextpnr-ice40")
	testenv.Heartbeat(t, 0)
	lc, ll := 4, 4
	if v := os.Getenv("PTM_CONV_SYNTH_LANES"); v != "" {
		if _, err := fmt.Sscanf(v, "%dx%d", &lc, &ll); err != nil {
			t.Fatalf("PTM_CONV_SYNTH_LANES=%q: %v", v, err)
		}
	}
	pn := 1
	if v := os.Getenv("PTM_CONV_SYNTH_PATCHES"); v != "" {
		if _, err := fmt.Sscanf(v, "%d", &pn); err != nil {
			t.Fatalf("PTM_CONV_SYNTH_PATCHES=%q: %v", v, err)
		}
	}
	scan := os.Getenv("PTM_CONV_SYNTH_SCAN")
	rng := rand.New(rand.NewPCG(1, 2))
	h := testConvHead(conv.Shape{H: 28, W: 28, Planes: 1, WY: 10, WX: 10}, 10, 128, conv.Coalesced, rng)
	d, err := GenerateConv(Config{Bits: 4, LFSRWidth: 16, ClauseLanes: lc, LiteralLanes: ll, MaxK: 255, PatchLanes: pn, Scan: scan}, testConvBank(h, 4, rng), "")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := d.Write(dir); err != nil {
		t.Fatal(err)
	}
	top, own := convHarness(d)
	if err := os.WriteFile(filepath.Join(dir, "conv_harness.v"), []byte(top), 0o644); err != nil {
		t.Fatal(err)
	}
	files := append(d.VerilogFiles(), "conv_harness.v")
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			o := string(out)
			if len(o) > 3000 {
				o = o[len(o)-3000:]
			}
			t.Fatalf("%s: %v\n%s", name, err, o)
		}
		return string(out)
	}
	ys := run("yosys", "-q", "-p", fmt.Sprintf("read_verilog %s; synth_ice40 -spram -top conv_harness -json core.json; tee -o stat.txt stat", strings.Join(files, " ")))
	_ = ys
	stat, _ := os.ReadFile(filepath.Join(dir, "stat.txt"))
	t.Logf("yosys (harness: %d flip-flops of its own):\n%s", own, stat)
	pnr := run("nextpnr-ice40", "--up5k", "--package", "sg48", "--json", "core.json", "--pcf-allow-unconstrained",
		"--freq", "20", "--seed", "1", "--report", "report.json")
	// The critical path as nextpnr reports it, for whoever speeds it up.
	if i := strings.Index(pnr, "Critical path report for clock"); i >= 0 {
		crit := pnr[i:]
		if j := strings.Index(crit, "Max frequency for clock"); j >= 0 {
			crit = crit[:j]
		}
		lines := strings.Split(crit, "\n")
		if len(lines) > 60 {
			lines = append(lines[:10], lines[len(lines)-40:]...)
		}
		t.Logf("%s", strings.Join(lines, "\n"))
	}
	rep, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Fmax        map[string]struct{ Achieved, Constraint float64 } `json:"fmax"`
		Utilization map[string]struct{ Used, Available int }          `json:"utilization"`
	}
	if err := json.Unmarshal(rep, &r); err != nil {
		t.Fatal(err)
	}
	p := d.Params
	t.Logf("UP5K, %d clause x %d literal lanes, %s scan, %d patches per cycle, B=4, W=16: ICESTORM_LC %d/%d, ICESTORM_RAM %d/%d, ICESTORM_SPRAM %d/%d; Fmax %v",
		lc, ll, p.Scan, p.PN, r.Utilization["ICESTORM_LC"].Used, r.Utilization["ICESTORM_LC"].Available, r.Utilization["ICESTORM_RAM"].Used,
		r.Utilization["ICESTORM_RAM"].Available, r.Utilization["ICESTORM_SPRAM"].Used, r.Utilization["ICESTORM_SPRAM"].Available, r.Fmax)
	t.Logf("schedule: G=%d groups, each max(BT+1 = %d sampling, %d + up to %d scan, LC+2 = %d weighing) cycles: at most %d cycles per sample", p.G, p.BT+1, p.ScanOverhead(), p.ScanCycles(), p.LC+2, p.SampleCyclesMax())
}
