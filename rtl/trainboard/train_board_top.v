`default_nettype none
/*
 * train_board_top - PTM training board: UART, framed protocol, the TRAIN
 *                   commands' engine and the generated on-chip trainer
 *
 *   uart_rxd -> uart_rx -> proto_rx (frame queue, idle timeout) -> train_proto <-> <trainer>
 *   uart_txd <- uart_tx <- proto_tx <-----------------------------/
 *
 * docs/protocol.md section 8 is the protocol (TRAIN_INFO, TRAIN_INIT,
 * TRAIN_SEED, TRAIN_ROWS, TRAIN_READ over the frames of section 1),
 * docs/fixed-point-training.md section 11 the trainer. The trainer is the
 * generated thin top of hw.GenerateTrainer, instantiated by module name:
 * the macro PTM_TRAINER (default ptm_trainer) names it; its parameters
 * below must match the generated design (hw.TrainerParams; sim/board sets
 * them). The ports are those of board_top, so the Verilated board's C++
 * main drives either; the GMII pins are unused (UART only).
 *
 * Parameters:
 *   CLKS_PER_BIT      UART bit time in clocks
 *   UART_BAUD         bit rate reported by TRAIN_INFO (word 20)
 *   UART_FIFO_DEPTH   proto_rx queue bytes (2048)
 *   NT, NC, M, O, T   the trainer's shape
 *   N, B, LL, UP, DOWN, PAPER, BINARY
 *                     its training parameters (hw.TrainerParams)
 *   SPV_DEPTH, INC_DEPTH   words per literal lane of its SPV and include RAMs
 *   CW, YW, KW, SAW   widths of its seed_idx, ex_y, dbg_lane, dbg_addr ports
 *
 * Ports: as board_top (clk, rst, UART pins, GMII pins tied off, LEDs, idle);
 *   led_loaded is lit once the SPVs are initialised (TRAIN_INIT).
 */
`ifndef PTM_TRAINER
`define PTM_TRAINER ptm_trainer
`endif
module train_board_top #(
    parameter CLKS_PER_BIT    = 16,
    parameter UART_BAUD       = 3000000,
    parameter UART_FIFO_DEPTH = 2048,
    parameter NT              = 3,
    parameter NC              = 3,
    parameter M               = 4,
    parameter O               = 4,
    parameter T               = 4,
    parameter N               = 8,
    parameter B               = 12,
    parameter LL              = 4,
    parameter UP              = 48732,
    parameter DOWN            = 16804,
    parameter PAPER           = 0,
    parameter BINARY          = 0,
    parameter SPV_DEPTH       = 1024,
    parameter INC_DEPTH       = 64,
    parameter CW              = 4,
    parameter YW              = 2,
    parameter KW              = 2,
    parameter SAW             = 10
) (
    input  wire       clk,
    input  wire       rst,

    input  wire       uart_rxd,
    output wire       uart_txd,

    input  wire       eth_clk_en,
    input  wire [7:0] gmii_rxd,
    input  wire       gmii_rx_dv,
    input  wire       gmii_rx_er,
    output wire [7:0] gmii_txd,
    output wire       gmii_tx_en,
    output wire       gmii_tx_er,

    output wire       led_heartbeat,
    output wire       led_loaded,
    output wire       led_activity,
    output wire       led_error,
    output wire       idle
);

localparam integer MAX_PAYLOAD = 1024;
localparam integer LEN_W       = 11;
localparam integer IDLE_CYCLES = 160 * CLKS_PER_BIT;   // 16 byte times

// ------------------------------------------------------------ UART in
wire [7:0] urx_data;
wire       urx_valid, urx_ready, urx_busy, urx_ferr, urx_ovr, urx_bstep, urx_bd;

uart_rx #(.CLKS_PER_BIT(CLKS_PER_BIT)) u_uart_rx (
    .clk(clk), .rst(rst), .rxd(uart_rxd),
    .m_axis_tdata(urx_data), .m_axis_tvalid(urx_valid), .m_axis_tready(urx_ready),
    .busy(urx_busy), .frame_error(urx_ferr), .overrun(urx_ovr),
    .bit_step(urx_bstep), .bit_d(urx_bd)
);
wire unused_bits = &{1'b0, urx_bstep, urx_bd};

wire             dvalid, dready, dbusy;
wire [7:0]       dtype, pdata;
wire [15:0]      dseq;
wire [LEN_W-1:0] dlen;
wire             pvalid, pready, inframe, good, crc_err, ferr, ovf;

proto_rx #(
    .MAX_PAYLOAD(MAX_PAYLOAD), .FIFO_DEPTH(UART_FIFO_DEPTH), .FRAMES(4),
    .IDLE_CYCLES(IDLE_CYCLES)
) u_proto_rx (
    .clk(clk), .rst(rst), .idle_tick(1'b0), .crc_step(1'b0), .crc_d(1'b0),
    .s_axis_tdata(urx_data), .s_axis_tvalid(urx_valid), .s_axis_tready(urx_ready),
    .m_desc_valid(dvalid), .m_desc_ready(dready), .m_desc_type(dtype),
    .m_desc_seq(dseq), .m_desc_len(dlen), .m_desc_busy(dbusy),
    .m_axis_tdata(pdata), .m_axis_tvalid(pvalid), .m_axis_tready(pready),
    .in_frame(inframe), .ev_good(good), .ev_crc_error(crc_err),
    .ev_frame_error(ferr), .ev_overflow(ovf)
);

// ------------------------------------------------------------ engine + trainer
wire [7:0]      r_type, r_data;
wire [15:0]     r_seq;
wire            r_valid, r_ready, r_last;
wire            t_busy, t_init, t_seed_we, t_ex_valid, t_dbg_sel;
wire [CW-1:0]   t_seed_idx;
wire [63:0]     t_seed_data;
wire [O-1:0]    t_ex_x;
wire [YW-1:0]   t_ex_y;
wire [KW-1:0]   t_dbg_lane;
wire [SAW-1:0]  t_dbg_addr;
wire [15:0]     t_dbg_data, t_dbg_thresh;
wire            engine_busy, frame_sent, tx_busy;

train_proto #(
    .NT(NT), .NC(NC), .M(M), .O(O), .T(T), .N(N), .B(B), .LL(LL),
    .UP(UP), .DOWN(DOWN), .PAPER(PAPER), .BINARY(BINARY),
    .SPV_DEPTH(SPV_DEPTH), .INC_DEPTH(INC_DEPTH),
    .CW(CW), .YW(YW), .KW(KW), .SAW(SAW),
    .UART_BAUD(UART_BAUD), .LEN_W(LEN_W), .MAX_PAYLOAD(MAX_PAYLOAD)
) u_engine (
    .clk(clk), .rst(rst),
    .s_desc_valid(dvalid), .s_desc_ready(dready), .s_desc_type(dtype),
    .s_desc_seq(dseq), .s_desc_len(dlen), .s_desc_busy(dbusy),
    .s_axis_tdata(pdata), .s_axis_tvalid(pvalid), .s_axis_tready(pready),
    .r_type(r_type), .r_seq(r_seq),
    .r_axis_tdata(r_data), .r_axis_tvalid(r_valid), .r_axis_tready(r_ready),
    .r_axis_tlast(r_last),
    .t_busy(t_busy), .t_init(t_init),
    .t_seed_we(t_seed_we), .t_seed_idx(t_seed_idx), .t_seed_data(t_seed_data),
    .t_ex_valid(t_ex_valid), .t_ex_x(t_ex_x), .t_ex_y(t_ex_y),
    .t_dbg_sel(t_dbg_sel), .t_dbg_lane(t_dbg_lane), .t_dbg_addr(t_dbg_addr),
    .t_dbg_data(t_dbg_data), .t_dbg_thresh(t_dbg_thresh),
    .ev_crc_error(crc_err), .ev_frame_error(ferr || urx_ferr),
    .ev_frame_sent(frame_sent), .busy(engine_busy)
);

`PTM_TRAINER trainer (
    .clk(clk), .rst(rst), .busy(t_busy), .init_start(t_init),
    .seed_we(t_seed_we), .seed_idx(t_seed_idx), .seed_data(t_seed_data),
    .ex_valid(t_ex_valid), .ex_x(t_ex_x), .ex_y(t_ex_y),
    .dbg_sel(t_dbg_sel), .dbg_lane(t_dbg_lane), .dbg_addr(t_dbg_addr),
    .dbg_data(t_dbg_data), .dbg_thresh(t_dbg_thresh)
);

// ------------------------------------------------------------ responses
wire [7:0]  t_data;
wire        t_valid, t_ready, t_last, t_link;
wire [47:0] t_mac;
wire        utx_busy, utx_bstep, utx_bd;

proto_tx #(.FRAG_BYTES(MAX_PAYLOAD)) u_proto_tx (
    .clk(clk), .rst(rst), .crc_step(1'b0), .crc_d(1'b0),
    .s_type(r_type), .s_seq(r_seq), .s_link(1'b0), .s_mac(48'd0),
    .s_axis_tdata(r_data), .s_axis_tvalid(r_valid), .s_axis_tready(r_ready),
    .s_axis_tlast(r_last), .s_axis_tuser(1'b0),
    .m_axis_tdata(t_data), .m_axis_tvalid(t_valid), .m_axis_tready(t_ready),
    .m_axis_tlast(t_last), .m_link(t_link), .m_mac(t_mac),
    .busy(tx_busy), .frame_sent(frame_sent)
);

uart_tx #(.CLKS_PER_BIT(CLKS_PER_BIT)) u_uart_tx (
    .clk(clk), .rst(rst), .tick(1'b0),
    .s_axis_tdata(t_data), .s_axis_tvalid(t_valid), .s_axis_tready(t_ready),
    .txd(uart_txd), .busy(utx_busy), .bit_step(utx_bstep), .bit_d(utx_bd)
);
wire unused_tx_bits = &{1'b0, utx_bstep, utx_bd};

assign gmii_txd   = 8'd0;
assign gmii_tx_en = 1'b0;
assign gmii_tx_er = 1'b0;

// ------------------------------------------------------------ LEDs, idle
reg [23:0] beat = 24'd0;
reg        inited = 1'b0;
reg [15:0] act_hold = 16'd0;
reg [15:0] err_hold = 16'd0;
always @(posedge clk) begin
    beat <= beat + 1'b1;
    if (t_init) inited <= 1'b1;
    if ((urx_valid && urx_ready) || frame_sent) act_hold <= 16'hFFFF;
    else if (act_hold != 16'd0) act_hold <= act_hold - 1'b1;
    if (crc_err || ferr || ovf || urx_ferr || urx_ovr) err_hold <= 16'hFFFF;
    else if (err_hold != 16'd0) err_hold <= err_hold - 1'b1;
    if (rst) begin
        beat     <= 24'd0;
        act_hold <= 16'd0;
        err_hold <= 16'd0;
    end
end
assign led_heartbeat = beat[23];
assign led_loaded    = inited;
assign led_activity  = act_hold != 16'd0;
assign led_error     = err_hold != 16'd0;

assign idle = !urx_busy && !urx_valid && !inframe && !dvalid &&
              !engine_busy && !tx_busy && !utx_busy;

wire unused_ok = &{1'b0, good, t_last, t_link, t_mac, eth_clk_en, gmii_rxd, gmii_rx_dv, gmii_rx_er};

endmodule

`default_nettype wire
