`default_nettype none
/*
 * core_top - the generated inference core alone on the iCEBreaker
 *            (iCE40UP5K-SG48), for out-of-context figures
 *            (ptm synth --core-only)
 *
 * Same clock as top.v (12 MHz pin 35 -> SB_PLL40_PAD -> CLK_HZ) and the
 * same power-on reset; core_harness shifts the core's inputs in on the
 * UART RX pin and folds its outputs onto the UART TX pin, so the figures
 * are those of the core between flip-flops. The green LED shows PLL lock.
 * Not a usable board: use top.v for that.
 *
 * Parameters: the PLL (as top.v) and the core's port widths.
 */
module core_top #(
    parameter [3:0] DIVR         = 4'd0,
    parameter [6:0] DIVF         = 7'd63,
    parameter [2:0] DIVQ         = 3'd4,
    parameter [2:0] FILTER_RANGE = 3'd1,
    parameter FEATURES           = 16,
    parameter BITS               = 8,
    parameter LANE_W             = 5,
    parameter ADDR_W             = 6,
    parameter K_W                = 8
) (
    input  wire CLK,
    input  wire RX,
    output wire TX,
    output wire LEDG_N
);

wire clk, pll_lock, pll_core_unused, pll_sdo_unused;

SB_PLL40_PAD #(
    .FEEDBACK_PATH("SIMPLE"),
    .DIVR(DIVR),
    .DIVF(DIVF),
    .DIVQ(DIVQ),
    .FILTER_RANGE(FILTER_RANGE)
) u_pll (
    .PACKAGEPIN(CLK),
    .PLLOUTCORE(pll_core_unused),
    .PLLOUTGLOBAL(clk),
    .EXTFEEDBACK(1'b0),
    .DYNAMICDELAY(8'd0),
    .LOCK(pll_lock),
    .BYPASS(1'b0),
    .RESETB(1'b1),
    .LATCHINPUTVALUE(1'b0),
    .SDO(pll_sdo_unused),
    .SDI(1'b0),
    .SCLK(1'b0)
);

wire rst;

brd_por #(.CYCLES(4096)) u_por (
    .clk(clk), .hold(!pll_lock), .rst(rst)
);

core_harness #(
    .FEATURES(FEATURES), .BITS(BITS), .LANE_W(LANE_W), .ADDR_W(ADDR_W), .K_W(K_W)
) u_core (
    .clk(clk), .rst(rst), .sin(RX), .sout(TX)
);

assign LEDG_N = !pll_lock;

wire unused_ok = &{1'b0, pll_core_unused, pll_sdo_unused};

endmodule

`default_nettype wire
