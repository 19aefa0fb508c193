`default_nettype none
/*
 * proto_engine - command executor of the board protocol
 *
 * Executes the frames of docs/protocol.md (section 2) one at a time, in
 * arrival order, for both links (link_arb merges them), drives the
 * inference core (docs/core-interface.md) and hands the response words to
 * proto_tx with the link, source MAC and seq of the request.
 *
 *   INFO          18 words: magic, versions, the core's info ROM (shape,
 *                 parameters, hash), loaded flag, model CRC, UART_BAUD on
 *                 the UART link (0 on Ethernet).
 *   LOAD_BEGIN    W must be LANES*DEPTH; invalidates the model, next = 0.
 *   LOAD_DATA     offset == next and next + n <= W: the n words are
 *                 written through the core's bank write port, word
 *                 w = addr*LANES + lane in offset order (a lane and an
 *                 address counter follow next), and a running CRC-32 is
 *                 updated over their bytes; offset + n <= next: a
 *                 retransmission, acknowledged, not written; otherwise
 *                 ERROR 6 (detail next).
 *   LOAD_COMMIT   W == next == LANES*DEPTH and crc == the running CRC:
 *                 the model becomes valid; otherwise ERROR 7 (detail the
 *                 board's CRC).
 *   INFER         checks, in this order: model valid (4), mode 0/1 (2),
 *                 1 <= K <= KMAX (5), count >= 1 and len == 10 + count*FB
 *                 (3), count*words per vector <= 32768 (9, computed by a
 *                 serial shift-add multiplier). Then each feature vector is
 *                 read into a register and offered on the request stream;
 *                 the core's result words go straight to proto_tx (which
 *                 fragments them), the last word of the last vector with
 *                 tlast.
 *   STATUS        the 11 counters (each read when its word is written).
 *   RESET_STATUS  clears the counters; empty response.
 *   other types   ERROR 1. Wrong payload lengths: ERROR 3 with the
 *                 expected length as detail (0 for LOAD_DATA). A busy
 *                 descriptor (frame that did not fit in its link buffer):
 *                 ERROR 8.
 * Payload bytes a command does not use are read and discarded, so the
 * frame is always consumed whole.
 *
 * Counters (saturating u32, docs/protocol.md section 5): 0 executed frames
 * (descriptors taken, busy ones excepted), 1 ev_crc_error, 2
 * ev_framing_error, 3 ev_overrun, 4 unknown commands, 5 ERROR 3 answers,
 * 6 ev_fcs_error, 7 ev_eth_drop, 8 ev_frame_sent, 9 feature vectors whose
 * results were forwarded, 10 ERROR responses handed to proto_tx. The
 * ev_* inputs are 1-cycle pulses; the bits of a vector input are counted
 * separately (several may be high in one cycle). To save logic the events
 * first go into small per-counter pending counts, which one shared 32-bit
 * saturating adder folds into the counters round robin (every counter at
 * least once per 2*11 clocks); a STATUS word is the folded value of its
 * counter at the moment it is read, so no event is ever missed.
 *
 * The model state (loaded flag, next offset, running CRC, write counters)
 * is not reset by rst, like the bank it describes: it starts from
 * INIT_LOADED/INIT_CRC at configuration and survives a reset.
 *
 * Parameters (the core's, from its generator; see docs/core-interface.md):
 *   FEATURES, BITS, LANES, DEPTH, LANE_W, ADDR_W, K_W   core port widths/shape
 *   NT, NC, KMAX                TMs, classes, largest K
 *   GEN_VERSION                 generator version (major<<16|minor<<8|patch)
 *   UART_BAUD                   reported in INFO word 17 on the UART link
 *   INIT_LOADED, INIT_CRC       the banks hold a model at configuration
 *                               (Config.InitBanks) with this CRC-32
 *   LEN_W                       descriptor length width (11)
 *
 * Ports:
 *   clk, rst                    clock; synchronous active-high reset of the
 *                               control state and counters
 *   s_desc_*, s_axis_*          merged frames from link_arb
 *   r_type, r_seq, r_link, r_mac, r_axis_tdata/tvalid/tready/tlast/tuser
 *                               response words to proto_tx (tuser: empty);
 *                               the side band stays stable until proto_tx
 *                               has sent the whole response
 *   tx_busy                     proto_tx busy: no new frame is taken while
 *                               high (this keeps r_type..r_mac stable)
 *   bank_wr_*, req_*, res_*, info_addr/info_data   to the core
 *   ev_*                        event pulses counted in STATUS
 *   loaded                      a committed model is valid
 *   busy                        a frame is being executed
 *   error_sent                  1-cycle pulse: an ERROR response was queued
 *
 * Latency: a command's response starts a few clocks after its last payload
 * byte is read (INFER: with the core's first result word).
 */
module proto_engine #(
    parameter FEATURES    = 16,
    parameter BITS        = 8,
    parameter LANES       = 16,
    parameter DEPTH       = 120,
    parameter LANE_W      = 4,
    parameter ADDR_W      = 7,
    parameter K_W         = 8,
    parameter NT          = 3,
    parameter NC          = 3,
    parameter KMAX        = 255,
    parameter GEN_VERSION = 32'h00000100,
    parameter UART_BAUD   = 3000000,
    parameter INIT_LOADED = 0,
    parameter INIT_CRC    = 32'h00000000,
    parameter LEN_W       = 11
) (
    input  wire                clk,
    input  wire                rst,

    input  wire                s_desc_valid,
    output wire                s_desc_ready,
    input  wire [7:0]          s_desc_type,
    input  wire [15:0]         s_desc_seq,
    input  wire [LEN_W-1:0]    s_desc_len,
    input  wire                s_desc_busy,
    input  wire                s_desc_link,
    input  wire [47:0]         s_desc_mac,
    input  wire [7:0]          s_axis_tdata,
    input  wire                s_axis_tvalid,
    output wire                s_axis_tready,

    output wire [7:0]          r_type,
    output wire [15:0]         r_seq,
    output wire                r_link,
    output wire [47:0]         r_mac,
    output wire [31:0]         r_axis_tdata,
    output wire                r_axis_tvalid,
    input  wire                r_axis_tready,
    output wire                r_axis_tlast,
    output wire                r_axis_tuser,
    input  wire                tx_busy,

    output wire                bank_wr_en,
    output wire [LANE_W-1:0]   bank_wr_lane,
    output wire [ADDR_W-1:0]   bank_wr_addr,
    output wire [BITS-1:0]     bank_wr_data,
    output wire                req_valid,
    input  wire                req_ready,
    output wire [FEATURES-1:0] req_features,
    output wire [K_W-1:0]      req_k,
    output wire [31:0]         req_seed,
    output wire                req_stats,
    input  wire                res_valid,
    output wire                res_ready,
    input  wire [31:0]         res_data,
    input  wire                res_last,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire                res_error,       // never set: K is checked first
    /* verilator lint_on UNUSEDSIGNAL */
    output wire [3:0]          info_addr,
    input  wire [31:0]         info_data,

    input  wire [1:0]          ev_crc_error,
    input  wire [2:0]          ev_framing_error,
    input  wire [1:0]          ev_overrun,
    input  wire                ev_fcs_error,
    input  wire                ev_eth_drop,
    input  wire                ev_frame_sent,

    output wire                loaded,
    output wire                busy,
    output wire                error_sent
);

localparam integer FB      = (FEATURES + 7) / 8;      // bytes per feature vector
localparam integer FBI_W   = (FB > 1) ? $clog2(FB) : 1;
localparam integer TOTAL_I = LANES * DEPTH;            // bank words W
localparam integer NEXT_W  = $clog2(TOTAL_I + 1);
localparam integer SW      = ((NEXT_W > LEN_W) ? NEXT_W : LEN_W) + 1;
localparam [31:0]  TOTAL   = TOTAL_I;
localparam [NEXT_W-1:0] TOTAL_N = NEXT_W'(TOTAL_I);
localparam [15:0]  KMAX16  = 16'(KMAX);
localparam [31:0]  MAX_WORDS = 32768;                  // 128 fragments x 256 words
localparam [31:0]  MAGIC   = 32'h424D5450;             // "PTMB"
localparam [31:0]  PROTO_VER = 32'd1;
localparam [LANE_W-1:0] LANE_LAST = LANE_W'(LANES - 1);
localparam [20:0]  WPV_STATS = 21'(NC + 2 * NT);
localparam [4:0]   NT5 = 5'(NT);

localparam [7:0] T_INFO   = 8'h01;
localparam [7:0] T_BEGIN  = 8'h02;
localparam [7:0] T_DATA   = 8'h03;
localparam [7:0] T_COMMIT = 8'h04;
localparam [7:0] T_INFER  = 8'h10;
localparam [7:0] T_STATUS = 8'h20;
localparam [7:0] T_RESET  = 8'h21;
localparam [7:0] T_ERROR  = 8'hE0;

localparam [7:0] E_UNKNOWN = 8'd1;
localparam [7:0] E_PARAM   = 8'd2;
localparam [7:0] E_LENGTH  = 8'd3;
localparam [7:0] E_NOMODEL = 8'd4;
localparam [7:0] E_K       = 8'd5;
localparam [7:0] E_GAP     = 8'd6;
localparam [7:0] E_COMMIT  = 8'd7;
localparam [7:0] E_BUSY    = 8'd8;
localparam [7:0] E_TOOLONG = 8'd9;

localparam [3:0] S_IDLE   = 4'd0;
localparam [3:0] S_PARAM  = 4'd1;   // read the fixed leading fields
localparam [3:0] S_DECIDE = 4'd2;
localparam [3:0] S_SIZE   = 4'd3;   // INFER: count * words per vector
localparam [3:0] S_WRITE  = 4'd4;   // LOAD_DATA: bank writes
localparam [3:0] S_DRAIN  = 4'd5;   // discard unread payload bytes
localparam [3:0] S_RESP   = 4'd6;   // response words
localparam [3:0] S_INFER  = 4'd7;
localparam [3:0] S_POP    = 4'd8;   // response sent: take the descriptor

localparam [1:0] R_REGS   = 2'd0;   // rcount (0..2) words: word0, rw1
localparam [1:0] R_INFO   = 2'd1;   // 18 words
localparam [1:0] R_STATUS = 2'd2;   // 11 words, each staged in rw1

localparam integer NCNT = 11;

// ------------------------------------------------------------ frame state
reg [3:0]       state = S_IDLE;
// the frame's descriptor is used as offered (it is taken only at the end)
wire [7:0]       f_type = s_desc_type;
wire [LEN_W-1:0] f_len  = s_desc_len;
wire             f_link = s_desc_link;
reg [LEN_W-1:0] rem;                // payload bytes not read yet
reg [79:0]      par;                // leading payload fields, byte i at [8i+7:8i]
reg [3:0]       pidx;
reg [3:0]       pneed;

// response
reg [1:0]       r_kind;
reg [7:0]       r_rtype;
reg             r_err;
reg [7:0]       r_code;           // ERROR code (R_REGS, r_err)
reg [31:0]      rw1;              // word 1 of R_REGS, or the staged STATUS word
reg [4:0]       rcount;
reg [4:0]       ridx;
reg             staged;             // R_STATUS: rw1 holds word ridx

// model upload state (not reset: it describes the bank, which survives rst)
reg              m_loaded = (INIT_LOADED != 0);
reg [NEXT_W-1:0] next = (INIT_LOADED != 0) ? TOTAL_N : {NEXT_W{1'b0}};
reg [31:0]       lcrc = (INIT_LOADED != 0) ? ~INIT_CRC : 32'hFFFFFFFF;
reg [LANE_W-1:0] wl = {LANE_W{1'b0}};
reg [ADDR_W-1:0] wa = {ADDR_W{1'b0}};
reg [LEN_W-1:0]  wcnt;              // words left in this LOAD_DATA
reg              half;
reg [7:0]        lo;
reg              bw_en = 1'b0;
reg [LANE_W-1:0] bw_lane;
reg [ADDR_W-1:0] bw_addr;
reg [BITS-1:0]   bw_data;

// inference
/* verilator lint_off UNUSEDSIGNAL */
reg [FB*8-1:0]   feat;              // bits above FEATURES are ignored
/* verilator lint_on UNUSEDSIGNAL */
reg [FBI_W-1:0]  fbi;
reg              req_pend = 1'b0;
reg [LEN_W-1:0]  vec_left;          // vectors still to read
reg [LEN_W-1:0]  res_left;          // vectors whose results are still due
reg [16:0]       acc, mcand;        // serial multiplier (saturating)
reg              mc_big, too_big;
reg [LEN_W-1:0]  mplier;

reg              err_sent_reg = 1'b0;

// ------------------------------------------------------------ field decode
wire [7:0]  p_mode  = par[7:0];
wire [15:0] p_k     = par[31:16];
wire [31:0] p_seed  = par[63:32];
wire [15:0] p_count = par[79:64];
wire [31:0] p_w     = par[31:0];      // LOAD_BEGIN/COMMIT W, LOAD_DATA offset
wire [31:0] p_crc   = par[63:32];

// LOAD_DATA: n words, offset range checks on NEXT_W-bit quantities
wire [LEN_W-1:0] n_words = (f_len - LEN_W'(4)) >> 1;
wire             off_big = (p_w > {{(32-NEXT_W){1'b0}}, TOTAL_N});
wire [SW-1:0]    off_end = SW'(p_w[NEXT_W-1:0]) + SW'(n_words);
wire [SW-1:0]    nxt_end = SW'(next) + SW'(n_words);
wire             do_write = !off_big && (p_w[NEXT_W-1:0] == next) && (nxt_end <= SW'(TOTAL_N));
wire             retrans  = !off_big && (off_end <= SW'(next));

// INFER: length and words per vector
wire [31:0] infer_len = 32'(p_count) * FB + 32'd10;
wire        count_ok  = (p_count != 16'd0) && (infer_len == 32'(f_len));
wire [20:0] wpv       = p_mode[0] ? WPV_STATS : 21'(p_k) * 21'(NT5);
wire [17:0] msum      = {1'b0, acc} + {1'b0, mcand};
wire        infer_bad_len = (f_type == T_INFER) && m_loaded && (p_mode <= 8'd1) &&
                            (p_k != 16'd0) && (p_k <= KMAX16) && !count_ok;

wire [31:0] crc_next;
crc32 crc_inst (
    .crc_in(lcrc),
    .data_in(s_axis_tdata),
    .crc_out(crc_next)
);

// ------------------------------------------------------------ handshakes
wire take_desc = (state == S_IDLE) && !tx_busy && s_desc_valid;   // start a frame
wire feed_rdy  = (state == S_INFER) && (vec_left != {LEN_W{1'b0}}) && !req_pend;
assign s_desc_ready  = (state == S_POP) && !tx_busy;               // done with it
assign s_axis_tready = ((state == S_PARAM) && (pidx != pneed)) ||
                       ((state == S_WRITE) && (wcnt != {LEN_W{1'b0}})) ||
                       ((state == S_DRAIN) && (rem != {LEN_W{1'b0}})) ||
                       feed_rdy;
wire byte_in = s_axis_tvalid && s_axis_tready;

// ------------------------------------------------------------ frame decode
// parameter bytes, length rule and immediate error of the offered frame
reg [3:0]  d_need;
reg [7:0]  d_code;          // 0: no error
reg [31:0] d_detail;
always @* begin
    d_need   = 4'd0;
    d_code   = 8'd0;
    d_detail = 32'd0;
    case (s_desc_type)
        T_INFO, T_STATUS, T_RESET: begin
            if (s_desc_len != {LEN_W{1'b0}}) d_code = E_LENGTH;
        end
        T_BEGIN: begin
            d_need   = 4'd4;
            d_detail = 32'd4;
            if (s_desc_len != LEN_W'(4)) d_code = E_LENGTH;
        end
        T_DATA: begin
            d_need = 4'd4;
            if (s_desc_len < LEN_W'(6) || s_desc_len[0]) d_code = E_LENGTH;
        end
        T_COMMIT: begin
            d_need   = 4'd8;
            d_detail = 32'd8;
            if (s_desc_len != LEN_W'(8)) d_code = E_LENGTH;
        end
        T_INFER: begin
            d_need   = 4'd10;
            d_detail = 32'd10;
            if (s_desc_len < LEN_W'(10)) d_code = E_LENGTH;
        end
        default: d_code = E_UNKNOWN;
    endcase
    if (s_desc_busy) begin
        d_code = E_BUSY;
    end
    if (d_code != E_LENGTH) begin
        d_detail = 32'd0;
    end
end

// ------------------------------------------------------------ responses
reg [31:0] info_word;
always @* begin
    case (ridx)
        5'd0:    info_word = MAGIC;
        5'd1:    info_word = PROTO_VER;
        5'd2:    info_word = GEN_VERSION;
        5'd15:   info_word = {31'd0, m_loaded};
        5'd16:   info_word = m_loaded ? ~lcrc : 32'd0;
        5'd17:   info_word = f_link ? 32'd0 : UART_BAUD;
        default: info_word = info_data;               // words 3..14: ROM 1..12
    endcase
end
assign info_addr = 4'(ridx - 5'd2);

wire resp_empty = (rcount == 5'd0);
wire resp_last  = resp_empty || (ridx == rcount - 1'b1);
wire resp_valid = (state == S_RESP) && (r_kind != R_STATUS || staged);
wire resp_xfer  = resp_valid && r_axis_tready;
// R_REGS word 0: the ERROR code word, or the acknowledged W / offset
wire [31:0] word0     = r_err ? {16'd0, f_type, r_code} : p_w;
wire [31:0] resp_word = (r_kind == R_INFO) ? info_word : (ridx == 5'd0 && r_kind == R_REGS) ? word0 : rw1;
wire infer_xfer = (state == S_INFER) && res_valid && r_axis_tready;
wire infer_end  = infer_xfer && res_last && (res_left == {{(LEN_W-1){1'b0}}, 1'b1});

assign r_type        = r_rtype;
assign r_seq         = s_desc_seq;
assign r_link        = s_desc_link;
assign r_mac         = s_desc_mac;
assign r_axis_tdata  = (state == S_INFER) ? res_data : resp_word;
assign r_axis_tvalid = resp_valid || ((state == S_INFER) && res_valid);
assign r_axis_tlast  = (state == S_INFER) ? (res_last && res_left == {{(LEN_W-1){1'b0}}, 1'b1}) : resp_last;
assign r_axis_tuser  = (state == S_RESP) && resp_empty;

assign bank_wr_en   = bw_en;
assign bank_wr_lane = bw_lane;
assign bank_wr_addr = bw_addr;
assign bank_wr_data = bw_data;
assign req_valid    = req_pend;
assign req_features = feat[FEATURES-1:0];
assign req_k        = p_k[K_W-1:0];
assign req_seed     = p_seed;
assign req_stats    = p_mode[0];
assign res_ready    = (state == S_INFER) && r_axis_tready;

assign loaded     = m_loaded;
assign busy       = (state != S_IDLE);
assign error_sent = err_sent_reg;

// ------------------------------------------------------------ counters
// increments of the 11 counters this cycle, 2 bits each (counter i at [2i+1:2i])
wire [1:0] inc_crc   = {1'b0, ev_crc_error[0]} + {1'b0, ev_crc_error[1]};
wire [1:0] inc_frame = {1'b0, ev_framing_error[0]} + {1'b0, ev_framing_error[1]} + {1'b0, ev_framing_error[2]};
wire [1:0] inc_ovr   = {1'b0, ev_overrun[0]} + {1'b0, ev_overrun[1]};
wire       inc_len   = (take_desc && d_code == E_LENGTH) ||
                       (state == S_DECIDE && ((f_type == T_BEGIN && p_w != TOTAL) || infer_bad_len));
wire [2*NCNT-1:0] inc_vec = {
    1'b0, resp_xfer && resp_last && r_err,       // 10 ERROR responses
    1'b0, infer_xfer && res_last,                // 9  feature vectors
    1'b0, ev_frame_sent,                         // 8  response frames sent
    1'b0, ev_eth_drop,                           // 7  Ethernet frames dropped
    1'b0, ev_fcs_error,                          // 6  Ethernet FCS errors
    1'b0, inc_len,                               // 5  bad payload lengths
    1'b0, take_desc && d_code == E_UNKNOWN,      // 4  unknown commands
    inc_ovr,                                     // 3  UART overruns
    inc_frame,                                   // 2  framing errors
    inc_crc,                                     // 1  CRC errors
    1'b0, take_desc && !s_desc_busy              // 0  frames executed
};

wire        cclear    = (state == S_DECIDE) && (f_type == T_RESET);
wire        stage_now = (state == S_RESP) && (r_kind == R_STATUS) && !staged;
wire        cnt_valid;
wire [31:0] cnt_data;

stat_counters #(.NCNT(NCNT), .PEND_W(5)) u_counters (
    .clk(clk), .rst(rst),
    .inc(inc_vec), .clear(cclear),
    .rd_req(stage_now), .rd_idx(ridx[3:0]),
    .rd_valid(cnt_valid), .rd_data(cnt_data)
);

// ------------------------------------------------------------ feature bytes
// a shift register: feature byte 0 ends up in feat[7:0]
wire feat_shift = feed_rdy && byte_in;
generate
    if (FB == 1) begin : g_feat1
        always @(posedge clk) begin
            if (feat_shift) feat <= s_axis_tdata;
        end
    end else begin : g_featn
        always @(posedge clk) begin
            if (feat_shift) feat <= {s_axis_tdata, feat[FB*8-1:8]};
        end
    end
endgenerate

// ------------------------------------------------------------ main FSM
task automatic set_error(input [7:0] code, input [31:0] detail);
    begin
        r_kind  <= R_REGS;
        r_rtype <= T_ERROR;
        r_err   <= 1'b1;
        r_code  <= code;
        rw1     <= detail;
        rcount  <= 5'd2;
        state   <= S_DRAIN;
    end
endtask

integer j;
always @(posedge clk) begin
    bw_en        <= 1'b0;
    err_sent_reg <= 1'b0;

    if (byte_in) begin
        rem <= rem - 1'b1;
    end
    if (state == S_PARAM && byte_in) begin
        for (j = 0; j < 10; j = j + 1) begin
            if (pidx == 4'(j)) par[j*8 +: 8] <= s_axis_tdata;
        end
        pidx <= pidx + 1'b1;
    end

    case (state)
        S_IDLE: begin
            if (take_desc) begin
                rem    <= s_desc_busy ? {LEN_W{1'b0}} : s_desc_len;
                pidx   <= 4'd0;
                pneed  <= d_need;
                r_kind <= R_REGS;
                ridx   <= 5'd0;
                staged <= 1'b0;
                r_code <= d_code;
                rw1    <= d_detail;
                if (d_code != 8'd0) begin
                    // busy, unknown or bad length: drain, then ERROR
                    r_rtype <= T_ERROR;
                    r_err   <= 1'b1;
                    rcount  <= 5'd2;
                    state   <= S_DRAIN;
                end else begin
                    r_rtype <= s_desc_type | 8'h80;
                    r_err   <= 1'b0;
                    rcount  <= 5'd0;
                    state   <= S_PARAM;
                end
            end
        end

        S_PARAM: begin
            if (pidx == pneed) begin
                state <= S_DECIDE;
            end
        end

        S_DECIDE: begin
            state <= S_DRAIN;
            case (f_type)
                T_INFO: begin
                    r_kind <= R_INFO;
                    rcount <= 5'd18;
                end
                T_STATUS: begin
                    r_kind <= R_STATUS;
                    rcount <= 5'(NCNT);
                end
                T_RESET: begin
                    rcount <= 5'd0;
                end
                T_BEGIN: begin
                    if (p_w != TOTAL) begin
                        set_error(E_LENGTH, TOTAL);
                    end else begin
                        m_loaded <= 1'b0;
                        next     <= {NEXT_W{1'b0}};
                        lcrc     <= 32'hFFFFFFFF;
                        wl       <= {LANE_W{1'b0}};
                        wa       <= {ADDR_W{1'b0}};
                        rcount   <= 5'd1;
                    end
                end
                T_DATA: begin
                    rw1    <= 32'(n_words);
                    rcount <= 5'd2;
                    if (do_write) begin
                        wcnt  <= n_words;
                        half  <= 1'b0;
                        state <= S_WRITE;
                    end else if (!retrans) begin
                        set_error(E_GAP, 32'(next));
                    end
                end
                T_COMMIT: begin
                    if (p_w == TOTAL && next == TOTAL_N && p_crc == ~lcrc) begin
                        m_loaded <= 1'b1;
                        rw1      <= p_crc;
                        rcount   <= 5'd2;
                    end else begin
                        set_error(E_COMMIT, ~lcrc);
                    end
                end
                default: begin // T_INFER (no other type gets here)
                    if (!m_loaded) begin
                        set_error(E_NOMODEL, 32'd0);
                    end else if (p_mode > 8'd1) begin
                        set_error(E_PARAM, {24'd0, p_mode});
                    end else if (p_k == 16'd0 || p_k > KMAX16) begin
                        set_error(E_K, 32'(KMAX16));
                    end else if (!count_ok) begin
                        set_error(E_LENGTH, infer_len);
                    end else begin
                        acc     <= 17'd0;
                        mcand   <= wpv[16:0];
                        mc_big  <= (wpv[20:17] != 4'd0);
                        too_big <= 1'b0;
                        mplier  <= p_count[LEN_W-1:0];
                        state   <= S_SIZE;
                    end
                end
            endcase
        end

        S_SIZE: begin
            if (mplier != {LEN_W{1'b0}}) begin
                if (mplier[0]) begin
                    acc     <= msum[16:0];
                    too_big <= too_big || mc_big || msum[17];
                end
                mcand  <= mcand << 1;
                mc_big <= mc_big || mcand[16];
                mplier <= mplier >> 1;
            end else if (too_big || 32'(acc) > MAX_WORDS) begin
                set_error(E_TOOLONG, MAX_WORDS);
            end else begin
                vec_left <= p_count[LEN_W-1:0];
                res_left <= p_count[LEN_W-1:0];
                fbi      <= {FBI_W{1'b0}};
                req_pend <= 1'b0;
                state    <= S_INFER;
            end
        end

        S_WRITE: begin
            if (byte_in) begin
                lcrc <= crc_next;
                half <= !half;
                lo   <= s_axis_tdata;
                if (half) begin
                    bw_en   <= 1'b1;
                    bw_lane <= wl;
                    bw_addr <= wa;
                    bw_data <= BITS'({s_axis_tdata, lo});
                    next    <= next + 1'b1;
                    wcnt    <= wcnt - 1'b1;
                    if (wl == LANE_LAST) begin
                        wl <= {LANE_W{1'b0}};
                        wa <= wa + 1'b1;
                    end else begin
                        wl <= wl + 1'b1;
                    end
                end
            end
            if (wcnt == {LEN_W{1'b0}}) begin
                state <= S_DRAIN;
            end
        end

        S_DRAIN: begin
            if (rem == {LEN_W{1'b0}} || (byte_in && rem == {{(LEN_W-1){1'b0}}, 1'b1})) begin
                state <= S_RESP;
            end
        end

        S_RESP: begin
            if (stage_now && cnt_valid) begin
                rw1    <= cnt_data;
                staged <= 1'b1;
            end
            if (resp_xfer) begin
                ridx   <= ridx + 1'b1;
                staged <= 1'b0;
                if (resp_last) begin
                    state        <= S_POP;
                    err_sent_reg <= r_err;
                end
            end
        end

        S_INFER: begin
            if (feat_shift) begin
                if (fbi == FBI_W'(FB - 1)) begin
                    fbi      <= {FBI_W{1'b0}};
                    req_pend <= 1'b1;
                    vec_left <= vec_left - 1'b1;
                end else begin
                    fbi <= fbi + 1'b1;
                end
            end
            if (req_pend && req_ready) begin
                req_pend <= 1'b0;
            end
            if (infer_xfer && res_last) begin
                res_left <= res_left - 1'b1;
            end
            if (infer_end) begin
                state <= S_POP;
            end
        end

        S_POP: begin
            if (!tx_busy) begin
                state <= S_IDLE;
            end
        end

        default: begin
            state <= S_IDLE;
        end
    endcase

    if (rst) begin
        state        <= S_IDLE;
        req_pend     <= 1'b0;
        bw_en        <= 1'b0;
        err_sent_reg <= 1'b0;
    end
end

endmodule

`default_nettype wire
