package synth

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptmhw/ptm/internal/testenv"
)

// TestConvSPRAMLaneWrites maps the threshold memory of the 128-clause
// MNIST core at 1 x 16 lanes (2,176 rows of 16 lanes x 4 bits, in the
// UP5K's SPRAM) with yosys (synth_ice40 -spram, as the flow does) and
// simulates the netlist with yosys's SB_SPRAM256KA model in Icarus
// Verilog: rows cleared whole, then 2,000 random one-lane writes (the
// board's upload: the word replicated on every lane, one mask bit set)
// and every row read back against a model of the lanes. It fails unless
// the lane enables reach the SPRAMs' 4-bit write masks (MASKWREN) in
// order: a netlist that wrote whole rows would leave 40 of 40 rows wrong.
func TestConvSPRAMLaneWrites(t *testing.T) {
	t.Parallel()
	needTools(t, "yosys", "iverilog", "vvp")
	if testing.Short() {
		t.Skip("synthesis and simulation")
	}
	cells, err := CellsSim()
	if err != nil {
		t.Fatal(err)
	}
	d := mnistConvDesign(t, 128, 1, 16, 1)
	p := &d.Params
	if !p.ThreshSPRAM || p.L != 16 || p.Bits != 4 {
		t.Fatalf("threshold memory: SPRAM %v, %d lanes x %d bits; want SPRAM, 16 x 4", p.ThreshSPRAM, p.L, p.Bits)
	}
	dir := t.TempDir()
	if err := d.Write(dir); err != nil {
		t.Fatal(err)
	}
	mod := p.Prefix + "_conv_spram"
	src := filepath.Join(dir, mod+".v")
	gl := filepath.Join(dir, "gl.v")
	script := fmt.Sprintf("read_verilog -sv %s\nchparam -set LANES %d -set LB %d -set ADDR_W %d -set DEPTH %d %s\nsynth_ice40 -spram -top %s\nrename %s gl_spram\nstat\nwrite_verilog -noattr %s\n",
		src, p.L, p.Bits, p.AddrW, p.D, mod, mod, mod, gl)
	ys := filepath.Join(dir, "spram.ys")
	if err := os.WriteFile(ys, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(testenv.Context(t), "yosys", "-q", "-l", filepath.Join(dir, "yosys.log"), "-s", ys).CombinedOutput()
	if err != nil {
		t.Fatalf("yosys: %v\n%s", err, out)
	}
	net, err := os.ReadFile(gl)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(net), "SB_SPRAM256KA "); n != 4 {
		t.Fatalf("%d SB_SPRAM256KA in the netlist, want 4 (64-bit rows)", n)
	}
	tb := filepath.Join(dir, "tb.v")
	if err := os.WriteFile(tb, []byte(fmt.Sprintf(spramBench, p.AddrW, p.D)), 0o644); err != nil {
		t.Fatal(err)
	}
	sim := filepath.Join(dir, "sim")
	if out, err := exec.Command("iverilog", "-g2012", "-DNO_ICE40_DEFAULT_ASSIGNMENTS", "-o", sim, tb, gl, cells).CombinedOutput(); err != nil {
		t.Fatalf("iverilog: %v\n%s", err, out)
	}
	out, err = exec.CommandContext(testenv.Context(t), "vvp", "-n", sim).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "PASS") {
		t.Fatalf("simulation: %v\n%s", err, out)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
}

// spramBench drives gl_spram (16 lanes x 4 bits): 40 rows spread over
// the depth cleared, 2,000 random lane writes, every row read back.
// Parameters: ADDR_W, DEPTH.
const spramBench = "`timescale 1ns/1ps\n" + `
module tb;
localparam ADDR_W = %d, DEPTH = %d, ROWS = 40;
reg clk = 0;
always #5 clk = ~clk;
reg wr_en = 0, rd_en = 0;
reg [15:0] wr_mask = 0;
reg [ADDR_W-1:0] wr_addr = 0, rd_addr = 0;
reg [63:0] wr_data = 0;
wire [63:0] rd_data;
gl_spram dut (.clk(clk), .wr_en(wr_en), .wr_mask(wr_mask), .wr_addr(wr_addr), .wr_data(wr_data),
              .rd_en(rd_en), .rd_addr(rd_addr), .rd_data(rd_data));
reg [63:0] model [0:ROWS-1];
integer i, r, l, errs;
reg [3:0] v;
initial begin
    errs = 0;
    @(negedge clk);
    for (r = 0; r < ROWS; r = r + 1) begin
        model[r] = 64'd0;
        wr_en = 1; wr_mask = 16'hFFFF; wr_addr = ADDR_W'(r * (DEPTH / ROWS)); wr_data = 64'd0;
        @(negedge clk);
    end
    for (i = 0; i < 2000; i = i + 1) begin
        r = $urandom %% ROWS; l = $urandom %% 16; v = $urandom;
        wr_en = 1; wr_mask = 16'd1 << l; wr_addr = ADDR_W'(r * (DEPTH / ROWS)); wr_data = {16{v}};
        model[r][l*4 +: 4] = v;
        @(negedge clk);
    end
    wr_en = 0;
    for (r = 0; r < ROWS; r = r + 1) begin
        rd_en = 1; rd_addr = ADDR_W'(r * (DEPTH / ROWS));
        @(negedge clk);
        rd_en = 0;
        @(negedge clk);
        if (rd_data !== model[r]) begin
            errs = errs + 1;
            $display("row %%0d: %%h, want %%h", r * (DEPTH / ROWS), rd_data, model[r]);
        end
    end
    if (errs == 0) $display("PASS: %%0d rows after 2000 one-lane writes equal the model", ROWS);
    else $display("FAIL: %%0d of %%0d rows differ", errs, ROWS);
    $finish;
end
endmodule
`
