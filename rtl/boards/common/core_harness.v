`default_nettype none
/*
 * core_harness - the generated inference core alone, for out-of-context
 *                synthesis on a device with few pins (ptm synth --core-only)
 *
 * Every input port of the core is driven by a flip-flop of one long shift
 * register fed from the pin sin, and every output port is registered and
 * folded by an XOR tree into the pin sout, so no logic of the core can be
 * optimised away and all its ports start and end at flip-flops: the
 * figures are those of the core, not of pins. The function is
 * meaningless; only resources and timing matter.
 *
 * The core is instantiated by name, like board_top: the macro PTM_CORE
 * (default ptm_core) names it.
 *
 * Parameters: the core's port widths (docs/core-interface.md).
 *
 * Ports:
 *   clk, rst     clock; synchronous active-high reset to the core
 *   sin          serial input of the stimulus shift register
 *   sout         XOR of all registered core outputs
 */
`ifndef PTM_CORE
`define PTM_CORE ptm_core
`endif
module core_harness #(
    parameter FEATURES = 16,
    parameter BITS     = 8,
    parameter LANE_W   = 5,
    parameter ADDR_W   = 6,
    parameter K_W      = 8
) (
    input  wire clk,
    input  wire rst,
    input  wire sin,
    output reg  sout
);

// Stimulus: {bank_wr_en, lane, addr, data, req_valid, features, k, seed,
// stats, more, res_ready, info_addr}.
localparam integer NIN = 1 + LANE_W + ADDR_W + BITS + 1 + FEATURES + K_W + 32 + 1 + 1 + 1 + 4;

reg [NIN-1:0] stim = {NIN{1'b0}};

always @(posedge clk)
    stim <= {stim[NIN-2:0], sin};

wire                bank_wr_en;
wire [LANE_W-1:0]   bank_wr_lane;
wire [ADDR_W-1:0]   bank_wr_addr;
wire [BITS-1:0]     bank_wr_data;
wire                req_valid;
wire [FEATURES-1:0] req_features;
wire [K_W-1:0]      req_k;
wire [31:0]         req_seed;
wire                req_stats;
wire                req_more;
wire                res_ready;
wire [3:0]          info_addr;

assign {bank_wr_en, bank_wr_lane, bank_wr_addr, bank_wr_data, req_valid,
        req_features, req_k, req_seed, req_stats, req_more, res_ready, info_addr} = stim;

wire        req_ready, res_valid, res_last, res_error, idle;
wire [31:0] res_data, info_data;

`PTM_CORE core (
    .clk(clk), .rst(rst),
    .bank_wr_en(bank_wr_en), .bank_wr_lane(bank_wr_lane), .bank_wr_addr(bank_wr_addr),
    .bank_wr_data(bank_wr_data),
    .req_valid(req_valid), .req_ready(req_ready), .req_features(req_features),
    .req_k(req_k), .req_seed(req_seed), .req_stats(req_stats), .req_more(req_more),
    .res_valid(res_valid), .res_ready(res_ready), .res_data(res_data),
    .res_last(res_last), .res_error(res_error),
    .idle(idle), .info_addr(info_addr), .info_data(info_data)
);

reg [68:0] outs = 69'd0;

initial sout = 1'b0;

always @(posedge clk) begin
    outs <= {req_ready, res_valid, res_last, res_error, idle, res_data, info_data};
    sout <= ^outs;
end

endmodule

`default_nettype wire
