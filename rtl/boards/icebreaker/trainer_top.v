`default_nettype none
/*
 * trainer_top - the on-chip PTM trainer alone on the iCEBreaker
 *               (iCE40UP5K-SG48), for out-of-context figures
 *               (ptm synth --trainer)
 *
 * Same clock as top.v (12 MHz pin 35 -> SB_PLL40_PAD) and the same
 * power-on reset. Like core_harness for the inference core, every input
 * port of the trainer is driven by a flip-flop of one long shift register
 * fed from the UART RX pin, and its outputs are registered and folded by
 * XOR onto the TX pin, so no logic is optimised away and every port starts
 * and ends at a flip-flop: the figures are those of the trainer with its
 * SPRAM, not of pins. The function is meaningless; only resources and
 * timing matter. The green LED shows PLL lock.
 *
 * The trainer is instantiated by name: the macro PTM_TRAINER (default
 * ptm_trainer) names the generated top (hw.GenerateTrainer).
 *
 * Parameters: the PLL (as top.v) and the trainer's port widths.
 */
`ifndef PTM_TRAINER
`define PTM_TRAINER ptm_trainer
`endif
module trainer_top #(
    parameter [3:0] DIVR         = 4'd0,
    parameter [6:0] DIVF         = 7'd63,
    parameter [2:0] DIVQ         = 3'd4,
    parameter [2:0] FILTER_RANGE = 3'd1,
    parameter FEATURES           = 24,
    parameter SEED_W             = 6,
    parameter LABEL_W            = 2,
    parameter LANE_W             = 2,
    parameter ADDR_W             = 14
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

// Stimulus: {init_start, seed_we, seed_idx, seed_data, ex_valid, ex_x,
// ex_y, dbg_sel, dbg_lane, dbg_addr}.
localparam integer NIN = 1 + 1 + SEED_W + 64 + 1 + FEATURES + LABEL_W + 1 + LANE_W + ADDR_W;

reg [NIN-1:0] stim = {NIN{1'b0}};

always @(posedge clk)
    stim <= {stim[NIN-2:0], RX};

wire                init_start, seed_we, ex_valid, dbg_sel;
wire [SEED_W-1:0]   seed_idx;
wire [63:0]         seed_data;
wire [FEATURES-1:0] ex_x;
wire [LABEL_W-1:0]  ex_y;
wire [LANE_W-1:0]   dbg_lane;
wire [ADDR_W-1:0]   dbg_addr;

assign {init_start, seed_we, seed_idx, seed_data, ex_valid, ex_x, ex_y, dbg_sel, dbg_lane, dbg_addr} = stim;

wire        busy;
wire [15:0] dbg_data, dbg_thresh;

`PTM_TRAINER trainer (
    .clk(clk), .rst(rst), .busy(busy), .init_start(init_start),
    .seed_we(seed_we), .seed_idx(seed_idx), .seed_data(seed_data),
    .ex_valid(ex_valid), .ex_x(ex_x), .ex_y(ex_y),
    .dbg_sel(dbg_sel), .dbg_lane(dbg_lane), .dbg_addr(dbg_addr), .dbg_data(dbg_data),
    .dbg_thresh(dbg_thresh)
);

reg [32:0] outs = 33'd0;
reg        sout = 1'b0;

always @(posedge clk) begin
    outs <= {busy, dbg_data, dbg_thresh};
    sout <= ^outs;
end

assign TX = sout;
assign LEDG_N = !pll_lock;

wire unused_ok = &{1'b0, pll_core_unused, pll_sdo_unused};

endmodule

`default_nettype wire
