`default_nettype none
/*
 * board_top - PTM inference board: UART and Ethernet links, framed
 *             protocol, protocol engine and the generated inference core
 *
 *   uart_rxd -> uart_rx -> proto_rx (frame queue, idle timeout) -\
 *                                                          link_arb -> proto_engine <-> <core>
 *   GMII rx -> eth_mac_rx -> proto_rx_eth -----------------/                  |
 *                                                                            v
 *   uart_txd <- uart_tx <------------- link 0 ---------------------- proto_tx
 *   GMII tx <- eth_mac_tx (dest = request's source MAC) <- link 1 -------/
 *
 * docs/protocol.md is the wire protocol, docs/core-interface.md the core's
 * ports. Frames from both links are executed one at a time by the single
 * engine, a whole frame at a time in round-robin order; each response goes
 * back to the link (and for Ethernet, the source MAC) of its request.
 *
 * The core is instantiated by module name: the macro PTM_CORE (default
 * ptm_core, i.e. hw.Config.Prefix "ptm") names it; compile the generated
 * files (and their bank images, when generated with InitBanks) with this
 * design, e.g. `verilator -DPTM_CORE=iris_core ...` or
 * `yosys read_verilog -DPTM_CORE=iris_core ...`. The core parameters below
 * must match the generated design (hw.Design.Params; sim/board sets them).
 *
 * Block RAM (iCE40 SB_RAM40_4K), besides the core's one per lane:
 * UART_FIFO_DEPTH/512 (4) + eth_mac_rx 5 (2048 x 9) + ETH_FIFO_DEPTH/512
 * (2) + proto_tx 2 + STATUS counters 1 = 14 with the defaults (7 with
 * ETH_ENABLE = 0).
 *
 * Parameters:
 *   CLK_HZ            clock frequency, for the LED timing (48 MHz)
 *   CLKS_PER_BIT      UART bit time in clocks (16: 3 Mbaud at 48 MHz)
 *   UART_BAUD         bit rate reported by INFO (CLK_HZ / CLKS_PER_BIT)
 *   BOARD_MAC         the board's Ethernet address (02:50:54:4D:00:01)
 *   UART_FIFO_DEPTH   UART frame queue bytes (2048: one maximal frame
 *                     executing and one arriving, or up to 32 small ones)
 *   ETH_FIFO_DEPTH    Ethernet frame FIFO bytes (1024; the MAC's buffer
 *                     holds the next frames)
 *   ETH_BUFFER_DEPTH  eth_mac_rx store-and-forward buffer (2048)
 *   FEATURES, BITS, LANES, DEPTH, LANE_W, ADDR_W, K_W, NT, NC, KMAX
 *                     the core's shape and port widths (docs/core-interface.md)
 *   CLIP_T            the model's threshold T (INFER mode 3 clips to [-T, T])
 *   SETS_MAX          MMAX, the most sets an INFER query may carry (8); 1
 *                     also leaves INFER_WINDOW out (protocol version 5)
 *   KIND              0: the tabular core (PTM_CORE; protocol 6, or 5 with
 *                     SETS_MAX 1); 1: a convolutional board (protocol 7,
 *                     docs/protocol.md section 4 "Image queries"):
 *                     rtl/board/conv_query.v around the generated
 *                     convolutional core PTM_CONV_CORE (default
 *                     ptm_conv_core). BITS is then 16 (an upload word),
 *                     FEATURES P*H*W, LANES L, DEPTH the threshold rows D,
 *                     ADDR_W holds every upload word's address
 *                     (ceil((L*D + NC*CLAUSES)/L)), KMAX the core's MaxK
 *   IMG_H, IMG_W, PLANES, WIN_Y, WIN_X
 *                     KIND 1: the image and window shape (INFO words 21-25)
 *   CLAUSES, TBITS, CADDR_W, WADDR_W, LFSR_W, LC, LL, GROUPS, BEATS,
 *   HASH32, INFO_VER  KIND 1: the convolutional core's clauses C, threshold
 *                     width B, threshold and weight row address widths,
 *                     LFSR width, lanes LC x LL, groups G, beats BT, model
 *                     hash prefix and info version word (conv_query's
 *                     info ROM; hw.ConvDesign.BoardParams sets them all)
 *   WT_BITS           KIND 1: the width of the core's stored weights
 *                     (hw.ConvParams.WB): proto_engine refuses an uploaded
 *                     weight word outside it (ERROR 3, the load ends)
 *   STATUS_ALL        1: every STATUS counter is kept; 0: the optional
 *                     counters 0, 8, 9, 10 (frames executed and sent, core
 *                     runs, ERRORs) read 0 (docs/protocol.md section 5).
 *                     Default: ETH_ENABLE (the UART-only board, the UP5K
 *                     image, keeps the error and line counters alone)
 *   GEN_VERSION       generator version (major<<16 | minor<<8 | patch)
 *   INIT_LOADED       1 when the core was generated with its banks
 *                     initialised (hw.Config.InitBanks): INFER works at once
 *   INIT_CRC          the CRC-32 of those bank words (LOAD_COMMIT's CRC)
 *   CORE_CLK          0: the core runs on clk (default); 1: the core runs on
 *                     clk_core, at least twice clk (one PLL's GENCLK and
 *                     GENCLK_HALF), through core_xing; CLK_HZ and
 *                     CLKS_PER_BIT stay clk's
  *   ETH_ENABLE        1: both links (default); 0: UART only, the Ethernet
 *                     MACs, parser and buffers are left out (about 800
 *                     logic cells and 7 SB_RAM40_4K less; the GMII outputs
 *                     are constant, its inputs ignored) and so is link_arb:
 *                     the UART's frames go to the engine directly; STATUS
 *                     counters 6 and 7 (Ethernet) then read 0 and are not
 *                     stored
 *
 * Ports:
 *   clk, rst          clock; synchronous active-high reset (control state
 *                     only; the bank, the model-valid state and the LEDs'
 *                     time base and hold times survive)
 *   clk_core          the core's clock when CORE_CLK = 1 (unused otherwise;
 *                     tie it low); rst reaches the core through core_xing
 *   uart_rxd, uart_txd                 8N1 UART pins (idle high)
 *   eth_clk_en        byte strobe of the GMII interfaces (tie high for
 *                     GMII at clk; see eth_mac_rx for MII)
 *   gmii_rxd, gmii_rx_dv, gmii_rx_er   receive byte interface
 *   gmii_txd, gmii_tx_en, gmii_tx_er   transmit byte interface
 *   led_heartbeat     toggles every 31 LED ticks (2^k - 1 UART bit times
 *                     each, about CLK_HZ/64 to CLK_HZ/32 clocks:
 *                     21.8 ms at 48 MHz and 3 Mbaud; a 0.74 Hz blink)
 *   led_loaded        a committed model is valid
 *   led_activity      lit for 2 to 3 ticks after any received byte or
 *                     sent frame
 *   led_error         lit for 8 to 9 ticks after any dropped frame, line
 *                     error or ERROR response
 *   idle              nothing in flight: no frame being received, buffered,
 *                     executed or sent, UART lines idle (for simulators and
 *                     power management; eth_mac_rx's buffer is not covered,
 *                     a frame appears at its output within ~20 clocks)
 */
`ifndef PTM_CORE
`define PTM_CORE ptm_core
`endif
module board_top #(
    parameter CLK_HZ           = 48000000,
    parameter CLKS_PER_BIT     = 16,
    parameter UART_BAUD        = CLK_HZ / CLKS_PER_BIT,
    parameter [47:0] BOARD_MAC = 48'h02_50_54_4D_00_01,
    parameter UART_FIFO_DEPTH  = 2048,
    parameter ETH_FIFO_DEPTH   = 1024,
    parameter ETH_BUFFER_DEPTH = 2048,
    parameter FEATURES         = 16,
    parameter BITS             = 8,
    parameter LANES            = 32,
    parameter DEPTH            = 60,
    parameter LANE_W           = 5,
    parameter ADDR_W           = 6,
    parameter K_W              = 8,
    parameter NT               = 3,
    parameter NC               = 3,
    parameter KMAX             = 255,
    parameter CLIP_T           = 10,
    parameter SETS_MAX         = 8,
    parameter GEN_VERSION      = 32'h00000100,
    parameter INIT_LOADED      = 0,
    parameter INIT_CRC         = 32'h00000000,
    parameter ETH_ENABLE       = 1,
    parameter CORE_CLK         = 0,
    parameter STATUS_ALL       = ETH_ENABLE,
    // A convolutional board (KIND = 1, protocol version 7): the engine
    // drives rtl/board/conv_query.v, which wraps the generated
    // convolutional core (macro PTM_CONV_CORE, default ptm_conv_core); BITS
    // is then 16 (an upload word: thresholds, then weights), FEATURES P*H*W,
    // LANES L, DEPTH the threshold rows D, ADDR_W wide enough for every
    // upload word's address (ceil((L*D + NC*CLAUSES)/L)), K_W the core's;
    // the others are the core's shape for INFO (hw.ConvDesign.BoardParams)
    parameter KIND             = 0,
    parameter IMG_H            = 0,
    parameter IMG_W            = 0,
    parameter PLANES           = 0,
    parameter WIN_Y            = 0,
    parameter WIN_X            = 0,
    /* verilator lint_off UNUSEDPARAM */
    // (read by the KIND = 1 branch only)
    parameter CLAUSES          = 0,
    parameter TBITS            = 4,
    parameter CADDR_W          = 1,
    parameter WADDR_W          = 1,
    parameter LFSR_W           = 16,
    parameter LC               = 1,
    parameter LL               = 1,
    parameter GROUPS           = 1,
    parameter BEATS            = 1,
    parameter WT_BITS          = 16,    // KIND 1: the core's stored weight width (uploaded weights outside it are refused)
    parameter [31:0] HASH32    = 32'h00000000,
    parameter [31:0] INFO_VER  = 32'h50540002
    /* verilator lint_on UNUSEDPARAM */
) (
    input  wire       clk,
    input  wire       rst,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire       clk_core,        // unused when CORE_CLK = 0
    /* verilator lint_on UNUSEDSIGNAL */

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
localparam [15:0]  ETHERTYPE   = 16'h88B5;
localparam integer IDLE_CYCLES = 160 * CLKS_PER_BIT;   // 16 byte times
// UART frames held (the one executing included; INFO word 18 reports one
// less): enough small requests in flight to keep a 3 Mbaud line busy
// across the host's round trip (docs/synthesis.md, "The line at 3 Mbaud")
localparam integer UART_FRAMES = 32;

`include "../lib/lfsr_taps.vh"

// The LFSRs below shift towards the MSB and shift in the XNOR of the
// tapped bits, from the seed 0 (the flip-flops' power-up value, so they
// need no reset; all ones is the state they never reach): the complement
// of the XOR LFSR from all ones, with the same period 2^n - 1.
// lfsr_after is an n-bit one's state k steps after the seed.
function automatic [23:0] lfsr_after(input integer n, input integer k);
    integer i;
    reg [23:0] x;
    reg [23:0] t;
    begin
        t = lfsr_taps(n);
        x = 24'd0;
        for (i = 0; i < k; i = i + 1) x = ((x << 1) | {23'd0, ~^(x & t)}) & ((24'd1 << n) - 24'd1);
        lfsr_after = x;
    end
endfunction

// ------------------------------------------------------------ UART link
wire [7:0] urx_data;
wire       urx_valid, urx_ready, urx_busy, urx_ferr, urx_ovr, urx_bstep, urx_bd;

// no output buffer: proto_rx takes every byte in the clock it is offered
uart_rx #(.CLKS_PER_BIT(CLKS_PER_BIT), .BUFFER(0)) u_uart_rx (
    .clk(clk), .rst(rst), .rxd(uart_rxd),
    .m_axis_tdata(urx_data), .m_axis_tvalid(urx_valid), .m_axis_tready(urx_ready),
    .busy(urx_busy), .frame_error(urx_ferr), .overrun(urx_ovr),
    .bit_step(urx_bstep), .bit_d(urx_bd)
);

// Receive-line accounting for STATUS counters 11 and 12: every byte the
// receiver finishes (taken, dropped for a bad stop bit, or overrun) and
// every UART bit time elapsed; 10 x bytes / bit times is the fraction of
// time the receive line carried data.
// The bit timer is an LFSR (no carry chain; see lfsr_after) of BT_W bits,
// period 2^BT_W - 1 >= CLKS_PER_BIT, restarted from its seed at its state
// CLKS_PER_BIT - 1 steps on.
localparam integer BT_W = ($clog2(CLKS_PER_BIT + 1) < 2) ? 2 : $clog2(CLKS_PER_BIT + 1);
localparam [BT_W-1:0] BT_TAPS = BT_W'(lfsr_taps(BT_W));
localparam [BT_W-1:0] BT_SEED = {BT_W{1'b0}};
localparam [BT_W-1:0] BT_LAST = BT_W'(lfsr_after(BT_W, CLKS_PER_BIT - 1));
reg  [BT_W-1:0] bt_cnt = BT_SEED;
wire            bit_tick = (bt_cnt == BT_LAST);
// (the three pulses never coincide: a character ends with one of them,
// characters end at least 9 bit times apart, and proto_rx always takes
// the byte, s_axis_tready = 1, so it is taken in the clock it is offered)
wire [1:0]      urx_bytes = {1'b0, urx_valid || urx_ferr || urx_ovr};
always @(posedge clk) begin
    bt_cnt <= bit_tick ? BT_SEED : {bt_cnt[BT_W-2:0], ~^(bt_cnt & BT_TAPS)};
end

wire             u_dvalid, u_dready, u_dbusy;
wire [7:0]       u_dtype, u_data;
wire [15:0]      u_dseq;
wire [LEN_W-1:0] u_dlen;
wire             u_valid, u_ready, u_inframe, u_good, u_crc, u_ferr, u_ovf;

proto_rx #(
    .MAX_PAYLOAD(MAX_PAYLOAD), .FIFO_DEPTH(UART_FIFO_DEPTH), .FRAMES(UART_FRAMES),
    // UART only: the bit-serial CRC stepped by uart_rx's data bits as they
    // are sampled; with Ethernet the byte-wide one, as proto_rx_eth's
    .IDLE_CYCLES(IDLE_CYCLES), .CRC_SERIAL(ETH_ENABLE == 0 ? 2 : 0),
    .TICK_CLKS(CLKS_PER_BIT),          // the idle timer steps on bit times
    .PREFETCH(0)                       // proto_engine asks for payload bytes only while it needs them
) u_proto_rx (
    .clk(clk), .rst(rst), .idle_tick(bit_tick), .crc_step(urx_bstep), .crc_d(urx_bd),
    .s_axis_tdata(urx_data), .s_axis_tvalid(urx_valid), .s_axis_tready(urx_ready),
    .m_desc_valid(u_dvalid), .m_desc_ready(u_dready), .m_desc_type(u_dtype),
    .m_desc_seq(u_dseq), .m_desc_len(u_dlen), .m_desc_busy(u_dbusy),
    .m_axis_tdata(u_data), .m_axis_tvalid(u_valid), .m_axis_tready(u_ready),
    .in_frame(u_inframe), .ev_good(u_good), .ev_crc_error(u_crc),
    .ev_frame_error(u_ferr), .ev_overflow(u_ovf)
);

// ------------------------------------------------------------ Ethernet link
wire [7:0]       e_dtype, e_data;
wire [15:0]      e_dseq;
wire [LEN_W-1:0] e_dlen;
wire [47:0]      e_dmac;
wire             e_dvalid, e_dready, e_dbusy, e_valid, e_ready;
wire             e_inframe, e_crc, e_ferr;
wire             erx_active, erx_crc, erx_drop;

generate
    if (ETH_ENABLE != 0) begin : g_eth_rx
        wire [7:0]  erx_data;
        wire        erx_valid, erx_ready, erx_last;
        wire [47:0] erx_src;
        wire        erx_good, erx_ferr, erx_filt, erx_ovf, e_good;
        wire [15:0] erx_ovf_count;

        eth_mac_rx #(
            .ETHERTYPE(ETHERTYPE), .MAX_FRAME(1518), .BUFFER_DEPTH(ETH_BUFFER_DEPTH)
        ) u_eth_rx (
            .clk(clk), .rst(rst), .clk_en(eth_clk_en),
            .gmii_rxd(gmii_rxd), .gmii_rx_dv(gmii_rx_dv), .gmii_rx_er(gmii_rx_er),
            .local_mac(BOARD_MAC),
            .m_axis_tdata(erx_data), .m_axis_tvalid(erx_valid), .m_axis_tready(erx_ready),
            .m_axis_tlast(erx_last), .m_src_mac(erx_src),
            .rx_good(erx_good), .crc_error(erx_crc), .frame_error(erx_ferr),
            .rx_filtered(erx_filt), .rx_overflow(erx_ovf), .overflow_count(erx_ovf_count)
        );

        proto_rx_eth #(
            .MAX_PAYLOAD(MAX_PAYLOAD), .FIFO_DEPTH(ETH_FIFO_DEPTH), .DESC_DEPTH(0)
        ) e_proto_rx (
            .clk(clk), .rst(rst),
            .s_axis_tdata(erx_data), .s_axis_tvalid(erx_valid), .s_axis_tready(erx_ready),
            .s_axis_tlast(erx_last), .s_mac(erx_src),
            .m_desc_valid(e_dvalid), .m_desc_ready(e_dready), .m_desc_type(e_dtype),
            .m_desc_seq(e_dseq), .m_desc_len(e_dlen), .m_desc_busy(e_dbusy), .m_desc_mac(e_dmac),
            .m_axis_tdata(e_data), .m_axis_tvalid(e_valid), .m_axis_tready(e_ready),
            .in_frame(e_inframe), .ev_good(e_good), .ev_crc_error(e_crc),
            .ev_frame_error(e_ferr)
        );

        assign erx_active = erx_valid;
        assign erx_drop   = erx_ferr || erx_filt || erx_ovf;
        wire unused_eth = &{1'b0, erx_good, erx_ovf_count, e_good};
    end else begin : g_no_eth_rx
        assign e_dvalid = 1'b0;
        assign e_dtype = 8'd0;
        assign e_dseq = 16'd0;
        assign e_dlen = {LEN_W{1'b0}};
        assign e_dbusy = 1'b0;
        assign e_dmac = 48'd0;
        assign e_data = 8'd0;
        assign e_valid = 1'b0;
        assign e_inframe = 1'b0;
        assign e_crc = 1'b0;
        assign e_ferr = 1'b0;
        assign erx_active = 1'b0;
        assign erx_crc = 1'b0;
        assign erx_drop = 1'b0;
        wire unused_eth = &{1'b0, gmii_rxd, gmii_rx_dv, gmii_rx_er, e_dready, e_ready};
    end
endgenerate

// ------------------------------------------------------------ arbitration
wire             a_dvalid, a_dready, a_dbusy, a_dlink, a_valid, a_ready, a_active;
wire [7:0]       a_dtype, a_data;
wire [15:0]      a_dseq;
wire [LEN_W-1:0] a_dlen;
wire [47:0]      a_dmac;

generate
    if (ETH_ENABLE != 0) begin : g_arb
        link_arb #(.LEN_W(LEN_W)) u_arb (
            .clk(clk), .rst(rst),
            .s0_desc_valid(u_dvalid), .s0_desc_ready(u_dready), .s0_desc_type(u_dtype),
            .s0_desc_seq(u_dseq), .s0_desc_len(u_dlen), .s0_desc_busy(u_dbusy), .s0_desc_mac(48'd0),
            .s0_axis_tdata(u_data), .s0_axis_tvalid(u_valid), .s0_axis_tready(u_ready),
            .s1_desc_valid(e_dvalid), .s1_desc_ready(e_dready), .s1_desc_type(e_dtype),
            .s1_desc_seq(e_dseq), .s1_desc_len(e_dlen), .s1_desc_busy(e_dbusy), .s1_desc_mac(e_dmac),
            .s1_axis_tdata(e_data), .s1_axis_tvalid(e_valid), .s1_axis_tready(e_ready),
            .m_desc_valid(a_dvalid), .m_desc_ready(a_dready), .m_desc_type(a_dtype),
            .m_desc_seq(a_dseq), .m_desc_len(a_dlen), .m_desc_busy(a_dbusy), .m_desc_mac(a_dmac),
            .m_desc_link(a_dlink),
            .m_axis_tdata(a_data), .m_axis_tvalid(a_valid), .m_axis_tready(a_ready),
            .active(a_active)
        );
    end else begin : g_no_arb
        // UART only: one link, nothing to arbitrate; its frames go to the
        // engine directly (link 0, no MAC).
        assign a_dvalid = u_dvalid;
        assign u_dready = a_dready;
        assign a_dtype  = u_dtype;
        assign a_dseq   = u_dseq;
        assign a_dlen   = u_dlen;
        assign a_dbusy  = u_dbusy;
        assign a_dmac   = 48'd0;
        assign a_dlink  = 1'b0;
        assign a_data   = u_data;
        assign a_valid  = u_valid;
        assign u_ready  = a_ready;
        assign a_active = 1'b0;    // u_dvalid is in idle already
        assign e_dready = 1'b0;
        assign e_ready  = 1'b0;
        wire unused_arb = &{1'b0, e_dtype, e_data, e_dseq, e_dlen, e_dmac, e_dbusy};
    end
endgenerate

// ------------------------------------------------------------ engine + core
wire [7:0]          r_type;
wire [15:0]         r_seq;
wire                r_link;
wire [47:0]         r_mac;
wire [7:0]          r_data;
wire                r_valid, r_ready, r_last, r_user;
wire                bank_wr_en;
wire [LANE_W-1:0]   bank_wr_lane;
wire [ADDR_W-1:0]   bank_wr_addr;
wire [BITS-1:0]     bank_wr_data;
wire                req_valid, req_ready, req_stats, req_more;
wire [FEATURES-1:0] req_features;
wire                img_wr_en;
wire [(KIND != 0 ? IMG_W : 1)-1:0] img_wr_data;
wire [K_W-1:0]      req_k;
wire [31:0]         req_seed;
wire                res_valid, res_ready, res_last, res_error;
wire [31:0]         res_data;
wire [3:0]          info_addr;
wire [31:0]         info_data;
wire                core_idle;
wire                model_loaded, engine_busy, error_sent, frame_sent;
wire                t_busy;

proto_engine #(
    .FEATURES(FEATURES), .BITS(BITS), .LANES(LANES), .DEPTH(DEPTH),
    .LANE_W(LANE_W), .ADDR_W(ADDR_W), .K_W(K_W), .NT(NT), .NC(NC), .KMAX(KMAX),
    .CLIP_T(CLIP_T), .SETS_MAX(SETS_MAX), .GEN_VERSION(GEN_VERSION), .UART_BAUD(UART_BAUD),
    .INIT_LOADED(INIT_LOADED), .INIT_CRC(INIT_CRC), .LEN_W(LEN_W),
    .ETH_COUNTERS(ETH_ENABLE), .STATUS_ALL(STATUS_ALL), .RX_FRAMES_UART(UART_FRAMES - 1),
    // INFER_WINDOW (protocol version 6) with the set loop; the lean engine
    // (SETS_MAX 1, issue 12's 1,000-cell shell) stays at version 5; a
    // convolutional board (protocol version 7) has it at any SETS_MAX
    .WINDOWS((SETS_MAX > 1 || KIND != 0) ? 1 : 0),
    .KIND(KIND), .IMG_H(IMG_H), .IMG_W(IMG_W), .PLANES(PLANES), .WIN_Y(WIN_Y), .WIN_X(WIN_X),
    .EXTRA_WORDS((KIND != 0) ? NC * CLAUSES : 0), .WT_BITS(WT_BITS)
) u_engine (
    .clk(clk), .rst(rst),
    .s_desc_valid(a_dvalid), .s_desc_ready(a_dready), .s_desc_type(a_dtype),
    .s_desc_seq(a_dseq), .s_desc_len(a_dlen), .s_desc_busy(a_dbusy),
    .s_desc_link(a_dlink), .s_desc_mac(a_dmac),
    .s_axis_tdata(a_data), .s_axis_tvalid(a_valid), .s_axis_tready(a_ready),
    .r_type(r_type), .r_seq(r_seq), .r_link(r_link), .r_mac(r_mac),
    .r_axis_tdata(r_data), .r_axis_tvalid(r_valid), .r_axis_tready(r_ready),
    .r_axis_tlast(r_last), .r_axis_tuser(r_user),
    .bank_wr_en(bank_wr_en), .bank_wr_lane(bank_wr_lane), .bank_wr_addr(bank_wr_addr),
    .bank_wr_data(bank_wr_data),
    .req_valid(req_valid), .req_ready(req_ready), .req_features(req_features),
    .img_wr_en(img_wr_en), .img_wr_data(img_wr_data),
    .req_k(req_k), .req_seed(req_seed), .req_stats(req_stats), .req_more(req_more),
    .res_valid(res_valid), .res_ready(res_ready), .res_data(res_data),
    .res_last(res_last), .res_error(res_error),
    .info_addr(info_addr), .info_data(info_data),
    .ev_crc_error({e_crc, u_crc}),
    .ev_framing_error({urx_ferr, e_ferr, u_ferr}),
    .ev_overrun({urx_ovr, u_ovf}),
    .ev_fcs_error(erx_crc),
    .ev_eth_drop(erx_drop),
    .ev_frame_sent(frame_sent),
    .ev_uart_byte(urx_bytes),
    .ev_bit_tick(bit_tick),
    .loaded(model_loaded), .busy(engine_busy), .error_sent(error_sent)
);

generate
    if (KIND == 0) begin : g_noimg
        wire unused_img = &{1'b0, img_wr_en, img_wr_data};
    end else begin : g_nofeat
        wire unused_feat = &{1'b0, req_features};   // the image goes through img_wr_*
    end
    if (CORE_CLK == 0 && KIND == 0) begin : g_core
        `PTM_CORE core (
            .clk(clk), .rst(rst),
            .bank_wr_en(bank_wr_en), .bank_wr_lane(bank_wr_lane), .bank_wr_addr(bank_wr_addr),
            .bank_wr_data(bank_wr_data),
            .req_valid(req_valid), .req_ready(req_ready), .req_features(req_features),
            .req_k(req_k), .req_seed(req_seed), .req_stats(req_stats), .req_more(req_more),
            .res_valid(res_valid), .res_ready(res_ready), .res_data(res_data),
            .res_last(res_last), .res_error(res_error),
            .idle(core_idle), .info_addr(info_addr), .info_data(info_data)
        );
    end else if (KIND == 0) begin : g_core_xing
        // the core on clk_core; the request and result fields cross on
        // their own wires, held stable, the bank word through core_xing's
        // register
        wire c_rst, c_bank_wr_en, c_req_valid, c_req_ready, c_res_valid, c_res_ready, c_idle;
        wire [LANE_W-1:0] c_bank_wr_lane;
        wire [ADDR_W-1:0] c_bank_wr_addr;
        wire [BITS-1:0]   c_bank_wr_data;

        core_xing #(.BANK_W(LANE_W + ADDR_W + BITS)) u_xing (
            .clk(clk), .rst(rst), .clk_core(clk_core), .rst_core(c_rst),
            .s_bank_wr_en(bank_wr_en), .s_bank_wr_word({bank_wr_lane, bank_wr_addr, bank_wr_data}),
            .c_bank_wr_en(c_bank_wr_en), .c_bank_wr_word({c_bank_wr_lane, c_bank_wr_addr, c_bank_wr_data}),
            .s_req_valid(req_valid), .s_req_ready(req_ready),
            .c_req_valid(c_req_valid), .c_req_ready(c_req_ready),
            .c_res_valid(c_res_valid), .c_res_ready(c_res_ready),
            .s_res_valid(res_valid), .s_res_ready(res_ready),
            .c_idle(c_idle), .s_core_idle(core_idle)
        );

        `PTM_CORE core (
            .clk(clk_core), .rst(c_rst),
            .bank_wr_en(c_bank_wr_en), .bank_wr_lane(c_bank_wr_lane), .bank_wr_addr(c_bank_wr_addr),
            .bank_wr_data(c_bank_wr_data),
            .req_valid(c_req_valid), .req_ready(c_req_ready), .req_features(req_features),
            .req_k(req_k), .req_seed(req_seed), .req_stats(req_stats), .req_more(req_more),
            .res_valid(c_res_valid), .res_ready(c_res_ready), .res_data(res_data),
            .res_last(res_last), .res_error(res_error),
            .idle(c_idle), .info_addr(info_addr), .info_data(info_data)
        );
    end else if (CORE_CLK == 0) begin : g_conv_core
        // the convolutional query path and core on clk
        conv_query #(
            .FEATURES(FEATURES), .IMG_W(IMG_W), .BITS(BITS), .TBITS(TBITS),
            .LANES(LANES), .LANE_W(LANE_W), .DEPTH(DEPTH), .ADDR_W(ADDR_W), .CADDR_W(CADDR_W),
            .NC(NC), .CLAUSES(CLAUSES), .WADDR_W(WADDR_W), .K_W(K_W), .CLIP_T(CLIP_T),
            .INFO_VER(INFO_VER), .LFSR_W(LFSR_W), .LC(LC), .LL(LL), .MAXK(KMAX), .HASH32(HASH32),
            .GROUPS(GROUPS), .BEATS(BEATS), .WT_BITS(WT_BITS)
        ) core (
            .clk(clk), .rst(rst),
            .bank_wr_en(bank_wr_en), .bank_wr_lane(bank_wr_lane), .bank_wr_addr(bank_wr_addr),
            .bank_wr_data(bank_wr_data),
            .img_wr_en(img_wr_en), .img_wr_data(img_wr_data),
            .req_valid(req_valid), .req_ready(req_ready),
            .req_k(req_k), .req_seed(req_seed), .req_stats(req_stats), .req_more(req_more),
            .res_valid(res_valid), .res_ready(res_ready), .res_data(res_data),
            .res_last(res_last), .res_error(res_error),
            .idle(core_idle), .info_addr(info_addr), .info_data(info_data)
        );
    end else begin : g_conv_xing
        // the same on clk_core, through core_xing like the tabular core;
        // an image row crosses as a bank word marked by its top bit
        // (rows come at most every IMG_W >= 2 clocks, bank words every
        // second clock, never both at once: LOAD_DATA and INFER)
        wire c_rst, c_x_en, c_req_valid, c_req_ready, c_res_valid, c_res_ready, c_idle;
        wire              c_x_img;
        wire [IMG_W-1:0]  c_img_wr_data;
        wire [LANE_W-1:0] c_bank_wr_lane;
        wire [ADDR_W-1:0] c_bank_wr_addr;
        wire [BITS-1:0]   c_bank_wr_data;
        wire              c_bank_wr_en = c_x_en && !c_x_img;
        wire              c_img_wr_en  = c_x_en && c_x_img;

        core_xing #(.BANK_W(1 + IMG_W + LANE_W + ADDR_W + BITS)) u_xing (
            .clk(clk), .rst(rst), .clk_core(clk_core), .rst_core(c_rst),
            .s_bank_wr_en(bank_wr_en || img_wr_en),
            .s_bank_wr_word({img_wr_en, img_wr_data, bank_wr_lane, bank_wr_addr, bank_wr_data}),
            .c_bank_wr_en(c_x_en),
            .c_bank_wr_word({c_x_img, c_img_wr_data, c_bank_wr_lane, c_bank_wr_addr, c_bank_wr_data}),
            .s_req_valid(req_valid), .s_req_ready(req_ready),
            .c_req_valid(c_req_valid), .c_req_ready(c_req_ready),
            .c_res_valid(c_res_valid), .c_res_ready(c_res_ready),
            .s_res_valid(res_valid), .s_res_ready(res_ready),
            .c_idle(c_idle), .s_core_idle(core_idle)
        );

        conv_query #(
            .FEATURES(FEATURES), .IMG_W(IMG_W), .BITS(BITS), .TBITS(TBITS),
            .LANES(LANES), .LANE_W(LANE_W), .DEPTH(DEPTH), .ADDR_W(ADDR_W), .CADDR_W(CADDR_W),
            .NC(NC), .CLAUSES(CLAUSES), .WADDR_W(WADDR_W), .K_W(K_W), .CLIP_T(CLIP_T),
            .INFO_VER(INFO_VER), .LFSR_W(LFSR_W), .LC(LC), .LL(LL), .MAXK(KMAX), .HASH32(HASH32),
            .GROUPS(GROUPS), .BEATS(BEATS), .WT_BITS(WT_BITS)
        ) core (
            .clk(clk_core), .rst(c_rst),
            .bank_wr_en(c_bank_wr_en), .bank_wr_lane(c_bank_wr_lane), .bank_wr_addr(c_bank_wr_addr),
            .bank_wr_data(c_bank_wr_data),
            .img_wr_en(c_img_wr_en), .img_wr_data(c_img_wr_data),
            .req_valid(c_req_valid), .req_ready(c_req_ready),
            .req_k(req_k), .req_seed(req_seed), .req_stats(req_stats), .req_more(req_more),
            .res_valid(c_res_valid), .res_ready(c_res_ready), .res_data(res_data),
            .res_last(res_last), .res_error(res_error),
            .idle(c_idle), .info_addr(info_addr), .info_data(info_data)
        );
    end
endgenerate

// ------------------------------------------------------------ responses
wire [7:0]  t_data;
wire        t_valid, t_ready, t_last, t_link;
wire [47:0] t_mac;

wire utx_bstep, utx_bd;

// UART only: the bit-serial CRC stepped by uart_tx's data bits as they go
// onto the line; with Ethernet a byte per clock for the MAC
proto_tx #(.FRAG_BYTES(MAX_PAYLOAD), .CRC_SERIAL(ETH_ENABLE == 0 ? 2 : 0)) u_proto_tx (
    .clk(clk), .rst(rst), .crc_step(utx_bstep), .crc_d(utx_bd),
    .s_type(r_type), .s_seq(r_seq), .s_link(r_link), .s_mac(r_mac),
    .s_axis_tdata(r_data), .s_axis_tvalid(r_valid), .s_axis_tready(r_ready),
    .s_axis_tlast(r_last), .s_axis_tuser(r_user),
    .m_axis_tdata(t_data), .m_axis_tvalid(t_valid), .m_axis_tready(t_ready),
    .m_axis_tlast(t_last), .m_link(t_link), .m_mac(t_mac),
    .busy(t_busy), .frame_sent(frame_sent)
);

wire utx_ready, utx_busy, etx_ready, etx_busy, etx_underflow;
assign t_ready = t_link ? etx_ready : utx_ready;

// bit times from bit_tick (no timer of its own)
uart_tx #(.CLKS_PER_BIT(CLKS_PER_BIT), .EXT_TICK(1)) u_uart_tx (
    .clk(clk), .rst(rst), .tick(bit_tick),
    .s_axis_tdata(t_data), .s_axis_tvalid(t_valid && !t_link), .s_axis_tready(utx_ready),
    .txd(uart_txd), .busy(utx_busy), .bit_step(utx_bstep), .bit_d(utx_bd)
);

generate
    if (ETH_ENABLE != 0) begin : g_eth_tx
        eth_mac_tx u_eth_tx (
            .clk(clk), .rst(rst), .clk_en(eth_clk_en),
            .local_mac(BOARD_MAC), .s_dest_mac(t_mac), .s_ethertype(ETHERTYPE),
            .s_axis_tdata(t_data), .s_axis_tvalid(t_valid && t_link), .s_axis_tready(etx_ready),
            .s_axis_tlast(t_last),
            .gmii_txd(gmii_txd), .gmii_tx_en(gmii_tx_en), .gmii_tx_er(gmii_tx_er),
            .busy(etx_busy), .underflow(etx_underflow)
        );
    end else begin : g_no_eth_tx
        // link 1 never occurs; drain anything addressed to it
        assign etx_ready = 1'b1;
        assign etx_busy = 1'b0;
        assign etx_underflow = 1'b0;
        assign gmii_txd = 8'd0;
        assign gmii_tx_en = 1'b0;
        assign gmii_tx_er = 1'b0;
        wire unused_etx = &{1'b0, eth_clk_en, t_mac, t_last};
    end
endgenerate

// ------------------------------------------------------------ LEDs, idle
// The LEDs' time base is two maximal-length LFSRs (shift registers with an
// XNOR feedback, see lfsr_after: no carry chain), the first stepped on
// bit_tick (a UART bit time, already made for STATUS), the second on the
// first's ticks. A LED tick is the first LFSR's return to its seed, every
// 2^TICK_W - 1 bit times (TICK_W: the power of two at or above CLK_HZ/64
// clocks, so about 1/64 to 1/32 s); the heartbeat toggles when the second
// (5 bits) returns to its seed, every 31 ticks. The LED state has no
// reset (rst leaves it running; the LFSRs start from their power-up 0).
localparam integer TICK_BITS = CLK_HZ / 64 / CLKS_PER_BIT;
localparam integer TICK_LOG  = (TICK_BITS > 4) ? $clog2(TICK_BITS) : 2;
localparam integer TICK_W    = (TICK_LOG > 24) ? 24 : TICK_LOG;      // 2..24

localparam [TICK_W-1:0] TICK_TAPS = TICK_W'(lfsr_taps(TICK_W));
localparam [TICK_W-1:0] TICK_SEED = {TICK_W{1'b0}};
localparam [4:0]        HB_TAPS   = 5'(lfsr_taps(5));

reg [TICK_W-1:0] tick_lfsr = TICK_SEED;
reg [4:0]        hb_lfsr = 5'd0;
reg              hb = 1'b0;
// activity and error hold times: LFSRs (3 and 4 bits) restarted from
// their seed by the event and stepped on LED ticks up to a stop state, 3
// and 9 steps on (the LED is lit until then)
localparam [2:0] ACT_TAPS = 3'(lfsr_taps(3));
localparam [2:0] ACT_STOP = 3'(lfsr_after(3, 3));
localparam [3:0] ERR_TAPS = 4'(lfsr_taps(4));
localparam [3:0] ERR_STOP = 4'(lfsr_after(4, 9));
reg [2:0]        act_hold = ACT_STOP;
reg [3:0]        err_hold = ERR_STOP;
wire             act_on = (act_hold != ACT_STOP);
wire             err_on = (err_hold != ERR_STOP);
wire             tick = bit_tick && (tick_lfsr == TICK_SEED);

wire activity = urx_valid || (e_valid && e_ready) || frame_sent;   // urx_ready is 1
wire error_ev = u_crc || u_ferr || u_ovf || e_crc || e_ferr || urx_ferr || urx_ovr ||
                erx_crc || erx_drop || etx_underflow || error_sent;

always @(posedge clk) begin
    if (bit_tick) begin
        tick_lfsr <= {tick_lfsr[TICK_W-2:0], ~^(tick_lfsr & TICK_TAPS)};
    end
    if (tick) begin
        hb_lfsr <= {hb_lfsr[3:0], ~^(hb_lfsr & HB_TAPS)};
        if (hb_lfsr == 5'd0) hb <= !hb;
        if (act_on) act_hold <= {act_hold[1:0], ~^(act_hold & ACT_TAPS)};
        if (err_on) err_hold <= {err_hold[2:0], ~^(err_hold & ERR_TAPS)};
    end
    if (activity) act_hold <= 3'd0;
    if (error_ev) err_hold <= 4'd0;
    // no reset: the LEDs' time base and hold times run on through rst
    // (their power-up values are the initial ones above)
end

assign led_heartbeat = hb;
assign led_loaded    = model_loaded;
assign led_activity  = act_on;
assign led_error     = err_on;

assign idle = !urx_busy && !urx_valid && !u_inframe && !u_dvalid &&
              !erx_active && !e_inframe && !e_dvalid &&
              !a_active && !engine_busy && core_idle &&
              !t_busy && !utx_busy && !etx_busy;

// Status outputs not used here (kept on the blocks for benches and debug).
wire unused_ok = &{1'b0, u_good};

endmodule

`default_nettype wire
