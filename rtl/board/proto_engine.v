`default_nettype none
/*
 * proto_engine - command executor of the board protocol
 *
 * Executes the frames of docs/protocol.md (section 2) one at a time, in
 * arrival order, for both links (link_arb merges them), drives the
 * inference core (docs/core-interface.md) and hands the response to
 * proto_tx as a byte stream (every protocol word least significant byte
 * first) with the link, source MAC and seq of the request. Everything is
 * byte-serial: the leading payload fields are checked as they arrive (LSB
 * first) against TOTAL, next, next - n and the running CRC, and response
 * bytes are selected from their sources, so no 32-bit comparator or
 * 32-bit response multiplexer is needed.
 *
 *   INFO          20 words: magic, versions, the core's info ROM (shape,
 *                 parameters, hash), loaded flag, model CRC, UART_BAUD on
 *                 the UART link (0 on Ethernet), the link's receive buffer
 *                 depth in frames (RX_FRAMES_UART / RX_FRAMES_ETH), MMAX
 *                 (SETS_MAX).
 *   LOAD_BEGIN    W must be LANES*DEPTH (else ERROR 3, detail LANES*DEPTH);
 *                 invalidates the model, next = 0, a load is in progress.
 *   LOAD_DATA     offset + n <= next: a retransmission, acknowledged, not
 *                 written. Otherwise, with no load in progress: ERROR 9
 *                 (detail next); offset == next: the n words are written
 *                 through the core's bank write port, word
 *                 w = addr*LANES + lane in offset order (a lane and an
 *                 address counter follow next), and a running CRC-32 is
 *                 updated over their bytes, unless they would run past W
 *                 (ERROR 3, detail 4 + 2*(W - next)); anything else is a gap
 *                 or an overlap: ERROR 6 (detail next).
 *   LOAD_COMMIT   W == next == LANES*DEPTH (else ERROR 6, detail next) and
 *                 crc == the running CRC (else ERROR 7, detail the board's
 *                 CRC): the model becomes valid, the load is over. With a
 *                 valid model and no load in progress, anything but its own
 *                 W and CRC gets ERROR 7 (a repeated commit is acknowledged).
 *   INFER         (protocol version 3) checks, in this order: mode <= 3
 *                 and sets <= SETS_MAX (ERROR 3, detail 0), count >= 1 and
 *                 len == 10 + count*M*FB, M = max(1, sets) (ERROR 3, detail
 *                 the expected length, count 1 for count = 0), 1 <= K <=
 *                 KMAX (ERROR 5, detail KMAX), model valid (ERROR 4), and
 *                 count * result bytes per query <= 131072 (ERROR 3,
 *                 detail 10 + c*M*FB for the largest such count c, found by
 *                 a serial divider). The expected length 10 + n*M*FB is
 *                 accumulated by repeated addition (M*FB clocks), and K/M,
 *                 K mod M by a serial divider, so no multiplier is needed.
 *                 Then the set loop: query i, set m = 0..M-1 reads its
 *                 feature vector into a register and, when
 *                 K_m = K/M + (m < K mod M) >= 1, offers it on the request
 *                 stream with K_m, seed (seed + i) + m*0x9E3779B9 and
 *                 req_more = 1 unless no later set of the query runs (sets
 *                 with K_m = 0, K < M, are read and dropped). The core
 *                 chains the runs of a query (docs/core-interface.md), so
 *                 each query gives one response with res_last at its end.
 *                 The core's result words go to proto_tx (which fragments
 *                 them), the last byte of the last query's last item with
 *                 tlast (the last query's trailing skipped sets may be
 *                 read after it). Modes 1 and 2 run the core in stats mode, modes 0
 *                 and 3 in samples mode; mode 2 (votes) forwards only the
 *                 NC vote words, as u16 when K <= KV (bytes 0..1) and as
 *                 u32 otherwise, and skips the 2*NT sums; mode 3 (sums)
 *                 sends every word clipped to [-T, T] as an i8 when
 *                 T <= 127, else as an i16 (docs/protocol.md section 4).
 *   STATUS        the 13 counters (each read when its word is sent).
 *   RESET_STATUS  clears the counters; empty response.
 *   other types   ERROR 1. Wrong payload lengths: ERROR 3 with the
 *                 expected length as detail (LOAD_DATA: 6 when shorter,
 *                 else the length minus one; INFER count = 0: 10 + FB;
 *                 INFO, STATUS, RESET_STATUS: 0). A busy
 *                 descriptor (frame that did not fit in its link buffer):
 *                 ERROR 8, in arrival order.
 * Payload bytes a command does not use are read and discarded, so the
 * frame is always consumed whole. The descriptor is taken when the last
 * byte of its response has been handed to proto_tx, so its fields are used
 * as offered, without copies, and stay stable for proto_tx, which latches
 * them per fragment. The next frame is then executed while proto_tx is
 * still sending (its response waits for r_axis_tready): on a slow link the
 * core computes during the previous answer's transmission.
 *
 * Counters (saturating u32, docs/protocol.md section 5): 0 executed frames
 * (descriptors started, busy ones excepted), 1 ev_crc_error, 2
 * ev_framing_error, 3 ev_overrun, 4 unknown commands and 5 ERROR 3
 * answers and 10 ERROR responses (each counted when the response has been
 * handed to proto_tx), 6 ev_fcs_error, 7 ev_eth_drop, 8 ev_frame_sent, 9
 * core runs (requests accepted by the core), 11 ev_uart_byte (bytes
 * the UART receiver finished, whatever became of them), 12 ev_bit_tick
 * (UART bit times elapsed). The
 * ev_* inputs are 1-cycle pulses; the bits of a vector input are counted
 * separately (several may be high in one cycle). To save logic the events
 * first go into small per-counter pending counts, which one shared 32-bit
 * saturating adder folds into the counters round robin (every counter at
 * least once per 2*4*13 clocks); a STATUS word is the folded value of its
 * counter at the moment it is read, so no event is ever missed.
 *
 * The model state (loaded flag, load in progress, next offset, running CRC,
 * write counters) is not reset by rst, like the bank it describes: it
 * starts from INIT_LOADED/INIT_CRC (no load in progress) at configuration
 * and survives a reset.
 *
 * Parameters (the core's, from its generator; see docs/core-interface.md):
 *   FEATURES, BITS, LANES, DEPTH, LANE_W, ADDR_W, K_W   core port widths/shape
 *   NT, NC, KMAX                TMs, classes, largest K (KV, the
 *                               largest K whose votes, at most
 *                               K * lcm(1..NC), fit in 16 bits, is derived)
 *   CLIP_T                      the model's threshold T, 1..32767 (mode 3 clips
 *                               the samples to [-T, T])
 *   SETS_MAX                    MMAX: the most sets an INFER query may
 *                               carry (1..255, INFO word 19); 1 leaves
 *                               the set loop and its K / M divider out
 *                               (about 150 logic cells less)
 *   GEN_VERSION                 generator version (major<<16|minor<<8|patch)
 *   UART_BAUD                   reported in INFO word 17 on the UART link
 *   INIT_LOADED, INIT_CRC       the banks hold a model at configuration
 *                               (Config.InitBanks) with this CRC-32
 *   RX_FRAMES_UART, RX_FRAMES_ETH  frames each link buffers while one is
 *                               executed (INFO word 18)
 *   LEN_W                       descriptor length width (11)
 *   ETH_COUNTERS                1: STATUS counters 6 and 7 (Ethernet FCS
 *                               errors, frames dropped) are kept; 0 (a
 *                               board without Ethernet): they always read
 *                               0 and take no counter storage (about 60
 *                               logic cells less)
 *
 * Ports:
 *   clk, rst                    clock; synchronous active-high reset of the
 *                               control state and counters
 *   s_desc_*, s_axis_*          merged frames from link_arb
 *   r_type, r_seq, r_link, r_mac, r_axis_tdata/tvalid/tready/tlast/tuser
 *                               response bytes to proto_tx (tuser: empty
 *                               response); the side band stays stable
 *                               until proto_tx has sent the whole response
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
    parameter CLIP_T      = 10,
    parameter SETS_MAX    = 8,
    parameter GEN_VERSION = 32'h00000100,
    parameter UART_BAUD   = 3000000,
    parameter INIT_LOADED = 0,
    parameter INIT_CRC    = 32'h00000000,
    parameter RX_FRAMES_UART = 3,
    parameter RX_FRAMES_ETH  = 1,
    parameter LEN_W       = 11,
    parameter ETH_COUNTERS = 1
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
    output wire [7:0]          r_axis_tdata,
    output wire                r_axis_tvalid,
    input  wire                r_axis_tready,
    output wire                r_axis_tlast,
    output wire                r_axis_tuser,

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
    output wire                req_more,
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
    input  wire [1:0]          ev_uart_byte,
    input  wire                ev_bit_tick,

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
localparam [31:0]  MAGIC   = 32'h424D5450;             // "PTMB"
localparam [31:0]  PROTO_VER = 32'd3;
localparam [LANE_W-1:0] LANE_LAST = LANE_W'(LANES - 1);
localparam [20:0]  WPV_STATS = 21'(NC + 2 * NT);
localparam [20:0]  WPV_VOTES = 21'(NC);

// U = lcm(1..NC), the core's vote unit (docs/core-interface.md)
function automatic integer vote_unit(input integer n);
    integer u, i, a, b, t;
    begin
        u = 1;
        for (i = 2; i <= n; i = i + 1) begin
            a = u;
            b = i;
            while (b != 0) begin
                t = a % b;
                a = b;
                b = t;
            end
            u = (u / a) * i;
        end
        vote_unit = u;
    end
endfunction
localparam integer VOTE_U  = vote_unit(NC);
localparam [15:0]  KV16    = 16'(65535 / VOTE_U);
localparam [5:0]   NC6     = 6'(NC);
localparam [4:0]   NT5 = 5'(NT);
localparam integer SETS_W  = $clog2(SETS_MAX + 1);            // M = 1..SETS_MAX
localparam         SETS1   = (SETS_MAX == 1);                  // no set loop: M = 1, K_0 = K
localparam integer FBW     = $clog2(FB + 1);
localparam integer VLW     = 16 + SETS_W + FBW;                // 10 + count*M*FB
localparam [7:0]   SETS_MAX8 = 8'(SETS_MAX);
localparam [31:0]  SET_SEED_STEP = 32'h9E3779B9;
localparam         T_NARROW = (CLIP_T <= 127);                      // mode 3 items are i8
localparam [15:0]  T16     = 16'(CLIP_T);
localparam integer TW      = $clog2(CLIP_T + 1);               // 0 <= T < 2^TW
localparam [TW:0]  TW1_T   = (TW+1)'(CLIP_T);                  // T and -T in TW+1 bits
localparam [TW:0]  TW1_NT  = (TW+1)'(-CLIP_T);
// bit of 2^17 / (item bytes) for the size check's dividend (131072 bytes)
localparam [4:0]   P_U32   = 5'd15;
localparam [4:0]   P_U16   = 5'd16;
localparam [4:0]   P_SUMS  = T_NARROW ? 5'd17 : 5'd16;

localparam [7:0] T_INFO   = 8'h01;
localparam [7:0] T_BEGIN  = 8'h02;
localparam [7:0] T_DATA   = 8'h03;
localparam [7:0] T_COMMIT = 8'h04;
localparam [7:0] T_INFER  = 8'h10;
localparam [7:0] T_STATUS = 8'h20;
localparam [7:0] T_RESET  = 8'h21;
localparam [7:0] T_ERROR  = 8'hE0;

localparam [3:0] E_UNKNOWN = 4'd1;
localparam [3:0] E_LENGTH  = 4'd3;
localparam [3:0] E_NOMODEL = 4'd4;
localparam [3:0] E_K       = 4'd5;
localparam [3:0] E_GAP     = 4'd6;
localparam [3:0] E_COMMIT  = 4'd7;
localparam [3:0] E_BUSY    = 4'd8;
localparam [3:0] E_NOLOAD  = 4'd9;

localparam [3:0] S_IDLE   = 4'd0;
localparam [3:0] S_PARAM  = 4'd1;   // read and check the leading fields
localparam [3:0] S_DECIDE = 4'd2;
localparam [3:0] S_SIZE   = 4'd3;   // INFER: 131072 / bytes per query, K / M
localparam [3:0] S_WRITE  = 4'd4;   // LOAD_DATA: bank writes
localparam [3:0] S_DRAIN  = 4'd5;   // discard unread payload bytes
localparam [3:0] S_RESP   = 4'd6;   // response bytes
localparam [3:0] S_INFER  = 4'd7;
localparam [3:0] S_POP    = 4'd8;   // response sent: take the descriptor
localparam [3:0] S_MUL    = 4'd9;   // INFER: 10 + n*M*FB by M*FB additions
localparam [3:0] S_FLUSH  = 4'd10;  // INFER answered: drop the last query's skipped sets

localparam [1:0] R_REGS   = 2'd0;   // rcount (0..2) words: word 0, word 1
localparam [1:0] R_INFO   = 2'd1;   // 20 words
localparam [1:0] R_STATUS = 2'd2;   // 11 words from stat_counters

// ERROR 3 detail: the expected length by type, TOTAL, 10 + n*M*FB (the
// request's count, 1 for 0, or the largest count that fits), 0, or the
// longest LOAD_DATA payload that fits (4 + 2*(W - next))
localparam [2:0] D_TYPE   = 3'd0;
localparam [2:0] D_TOTAL  = 3'd1;
localparam [2:0] D_INFER  = 3'd2;
localparam [2:0] D_ZERO   = 3'd3;
localparam [2:0] D_ROOM   = 3'd4;

localparam integer NCNT = 13;                              // STATUS words
localparam integer NSTORE = (ETH_COUNTERS != 0) ? 13 : 11; // counters kept

// ------------------------------------------------------------ frame state
// the frame's descriptor is used as offered (it is taken only at the end)
wire [7:0]       f_type = s_desc_type;
wire [LEN_W-1:0] f_len  = s_desc_len;
wire             f_link = s_desc_link;

reg [3:0]        state = S_IDLE;
reg [LEN_W-1:0]  rem;               // payload bytes not read yet
reg [3:0]        pidx;              // leading field byte index
reg [3:0]        pneed;

// leading fields (stored only where needed)
reg [1:0]        p_mode;
reg              mode_bad;          // INFER mode > 3
reg              sets_bad;          // INFER sets > SETS_MAX
reg [SETS_W-1:0] p_m;               // M = max(1, sets)
reg [15:0]       p_k;
reg [31:0]       p_seed;
reg [15:0]       p_count;
reg [NEXT_W-1:0] p_off;             // LOAD_DATA offset, low bits (for the ack)
reg              eq_w;              // W == TOTAL (LOAD_BEGIN, LOAD_COMMIT)
reg              eq_off;            // offset == next (LOAD_DATA)
reg              le_off;            // offset <= next - n (LOAD_DATA)
reg              eq_c;              // crc == the running CRC (LOAD_COMMIT)

// response
reg [1:0]        r_kind;
reg [7:0]        r_rtype;
reg              r_err;
reg [3:0]        r_code;
reg [2:0]        r_dsel;
reg [4:0]        rcount;
reg [4:0]        ridx;              // word
reg [1:0]        rb;                // byte within the word
reg              gap;               // R_STATUS: one idle clock between reads

// model upload state (not reset: it describes the bank, which survives rst)
reg              m_loaded = (INIT_LOADED != 0);
reg              load_active = 1'b0; // LOAD_BEGIN seen, no successful commit since
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
reg [LEN_W-1:0]  q_left;            // queries whose vectors are still to read
reg [LEN_W-1:0]  res_left;          // queries whose results are still due
reg [SETS_W-1:0] sm;                // set m of the query (S_INFER), or M*FB counter (S_MUL)
reg [VLW-1:0]    vlen;              // 10 + n*M*FB (S_MUL)
reg              sz_err;            // too many result bytes: vlen for the largest count
reg [20:0]       drem;              // serial division 2^P / wpv (remainder < wpv)
reg [17:0]       quot;
reg [4:0]        dstep;
reg              size_done;
reg [K_W-1:0]    kq;                // K / M (serial division, shares dstep)
reg [SETS_W-1:0] kr;                // K mod M
reg [5:0]        wi;                // result word of the query (mode 2)

reg              err_sent_reg = 1'b0;

// ------------------------------------------------------------ derived values
wire [31:0]      not_crc   = ~lcrc;
// LOAD_DATA word count n, registered from the offered descriptor (stable
// from the clock that takes it), so the comparisons below start from a
// register rather than from the length subtraction
reg  [LEN_W-1:0] n_words;
wire [SW-1:0]    nxt_end   = SW'(next) + SW'(n_words);
wire             fits      = (nxt_end <= SW'(TOTAL_N));
reg              fits_r;                                               // fits, a clock later (S_DECIDE)
wire [SW-1:0]    lim       = SW'(next) - SW'(n_words);                 // next - n
wire             lim_neg   = (SW'(n_words) > SW'(next));
// the n of the expected INFER length 10 + n*M*FB: the request's count (1
// for count = 0, the shortest valid request), or the largest count that
// fits (too many result bytes, quot < count <= 65535)
wire [15:0]      len_cnt   = sz_err ? quot[15:0] : (p_count == 16'd0) ? 16'd1 : p_count;
wire             count_ok  = (p_count != 16'd0) && (vlen == VLW'(f_len));
// wpv_r: registered for timing (p_k and p_mode are final one clock before
// S_SIZE), so the divider reads a register instead of the K x NT product.
reg [20:0]       wpv_r;
wire             vmode     = p_mode == 2'd2;                           // mode 2: votes
wire             smode     = p_mode == 2'd3;                           // mode 3: clipped sums
wire             vwide     = (p_k > KV16);                             // mode 2 votes as u32
wire [20:0]      wpv       = vmode ? WPV_VOTES : (p_mode == 2'd1) ? WPV_STATS : 21'(p_k) * 21'(NT5);
// the dividend 2^17 / item bytes has its one bit at dpos
wire [4:0]       dpos      = smode ? P_SUMS : (vmode && !vwide) ? P_U16 : P_U32;
wire [21:0]      dtry      = {drem[20:0], dstep == dpos};     // next partial remainder
wire             dge       = (dtry >= 22'(wpv_r));
// K / M: restoring division, one quotient bit per clock (remainder < M)
wire [SETS_W:0]  ktry      = {kr, kq[K_W-1]};
wire             kge       = (ktry >= {1'b0, p_m});
// the set loop: set sm runs K_m = kq + (sm < kr) samples (none: skipped)
wire             sm_lo     = (sm < kr);
wire             set_last  = SETS1 || (sm == p_m - 1'b1);
wire             set_runs  = (kq != {K_W{1'b0}}) || sm_lo;
wire             more_runs = !set_last && ((kq != {K_W{1'b0}}) || ((SETS_W+1)'(sm) + 1'b1 < (SETS_W+1)'(kr)));
// 1 - (M-1)*SET_SEED_STEP: the seed step from a query's last set to the
// next query (a function of M alone: a LUT per bit)
reg [31:0] seed_wrap;
integer mi;
always @* begin
    seed_wrap = 32'd1;
    for (mi = 2; mi <= SETS_MAX; mi = mi + 1) begin
        if (p_m == SETS_W'(mi)) seed_wrap = 32'd1 - 32'(mi - 1) * SET_SEED_STEP;
    end
end
// mode 3: the sample word clipped to [-T, T]
// v is in [-2^TW, 2^TW) when bits 31..TW all equal its sign; then its low
// TW+1 bits are compared with +-T, else it is clipped by its sign alone
wire             c_neg     = res_data[31];
wire             c_fits    = c_neg ? (&res_data[31:TW]) : !(|res_data[31:TW]);
wire [TW:0]      c_low     = res_data[TW:0];
wire             clip_hi   = !c_neg && (!c_fits || c_low > TW1_T);
wire             clip_lo   = c_neg && (!c_fits || c_low < TW1_NT);
wire [15:0]      clip      = clip_hi ? T16 : clip_lo ? -T16 : 16'($signed(c_low));
wire [7:0]       clip_b    = T_NARROW ? clip[7:0] : clip[8*rb[0] +: 8];
wire [31:0]      room_len  = 32'd4 + {{(31-NEXT_W){1'b0}}, TOTAL_N - next, 1'b0};

// byte pidx of the values the leading fields are compared with
wire [1:0]  pb       = pidx[1:0];
wire [7:0]  total_b  = TOTAL[8*pb +: 8];
wire [31:0] next32   = 32'(next);
wire [31:0] lim32    = lim_neg ? 32'd0 : 32'(lim);
wire [7:0]  next_b   = next32[8*pb +: 8];
wire [7:0]  lim_b    = lim32[8*pb +: 8];
wire [7:0]  crc_b    = not_crc[8*pb +: 8];

wire [31:0] crc_next;
crc32 crc_inst (
    .crc_in(lcrc),
    .data_in(s_axis_tdata),
    .crc_out(crc_next)
);

// ------------------------------------------------------------ handshakes
wire take_desc = (state == S_IDLE) && s_desc_valid;               // start a frame
wire feed_rdy  = (state == S_INFER) && (q_left != {LEN_W{1'b0}}) && !req_pend;
assign s_desc_ready  = (state == S_POP);                           // done with it
assign s_axis_tready = ((state == S_PARAM) && (pidx != pneed)) ||
                       ((state == S_WRITE) && (wcnt != {LEN_W{1'b0}})) ||
                       ((state == S_DRAIN || state == S_FLUSH) && (rem != {LEN_W{1'b0}})) ||
                       feed_rdy;
wire byte_in   = s_axis_tvalid && s_axis_tready;
// the payload is read whole at this edge
wire payload_end = rem == {LEN_W{1'b0}} || (byte_in && rem == {{(LEN_W-1){1'b0}}, 1'b1});
wire param_in  = (state == S_PARAM) && byte_in;

// ------------------------------------------------------------ frame decode
// parameter bytes, length rule and immediate error of the offered frame
reg [3:0] d_need;
reg [3:0] d_code;           // 0: no error
always @* begin
    d_need = 4'd0;
    d_code = 4'd0;
    case (s_desc_type)
        T_INFO, T_STATUS, T_RESET: begin
            if (s_desc_len != {LEN_W{1'b0}}) d_code = E_LENGTH;
        end
        T_BEGIN: begin
            d_need = 4'd4;
            if (s_desc_len != LEN_W'(4)) d_code = E_LENGTH;
        end
        T_DATA: begin
            d_need = 4'd4;
            if (s_desc_len < LEN_W'(6) || s_desc_len[0]) d_code = E_LENGTH;
        end
        T_COMMIT: begin
            d_need = 4'd8;
            if (s_desc_len != LEN_W'(8)) d_code = E_LENGTH;
        end
        T_INFER: begin
            d_need = 4'd10;
            if (s_desc_len < LEN_W'(10)) d_code = E_LENGTH;
        end
        default: d_code = E_UNKNOWN;
    endcase
    if (s_desc_busy) begin
        d_code = E_BUSY;
    end
end

// ------------------------------------------------------------ response bytes
wire        stat_req;
wire        cnt_valid;
wire [31:0] cnt_data;

// ERROR detail (word 1)
reg [31:0] detail;
always @* begin
    case (r_code)
        E_LENGTH: begin
            case (r_dsel)
                D_TOTAL: detail = TOTAL;
                D_INFER: detail = 32'(vlen);
                D_ZERO:  detail = 32'd0;
                D_ROOM:  detail = room_len;
                default: detail = (f_type == T_BEGIN) ? 32'd4 : (f_type == T_COMMIT) ? 32'd8 :
                                  (f_type == T_INFER) ? 32'd10 :
                                  (f_type == T_DATA) ? ((f_len < LEN_W'(6)) ? 32'd6 : 32'(f_len) - 32'd1) :
                                  32'd0;
            endcase
        end
        E_K:       detail = 32'(KMAX16);
        E_GAP:     detail = next32;
        E_NOLOAD:  detail = next32;
        E_COMMIT:  detail = not_crc;
        default:   detail = 32'd0;
    endcase
end

// the current word; its byte rb is sent
reg [31:0] word;
always @* begin
    case (r_kind)
        R_INFO: begin
            case (ridx)
                5'd0:    word = MAGIC;
                5'd1:    word = PROTO_VER;
                5'd2:    word = GEN_VERSION;
                5'd15:   word = {31'd0, m_loaded};
                5'd16:   word = m_loaded ? not_crc : 32'd0;
                5'd17:   word = f_link ? 32'd0 : UART_BAUD;
                5'd18:   word = f_link ? 32'(RX_FRAMES_ETH) : 32'(RX_FRAMES_UART);
                5'd19:   word = 32'(SETS_MAX);
                default: word = info_data;            // words 3..14: ROM 1..12
            endcase
        end
        R_STATUS: word = cnt_none ? 32'd0 : cnt_data;
        default: begin
            if (r_err) begin
                word = (ridx == 5'd0) ? {16'd0, f_type, 4'd0, r_code} : detail;
            end else if (f_type == T_DATA) begin
                word = (ridx == 5'd0) ? 32'(p_off) : 32'(n_words);
            end else begin                            // LOAD_BEGIN, LOAD_COMMIT
                word = (ridx == 5'd0) ? TOTAL : not_crc;
            end
        end
    endcase
end
assign info_addr = 4'(ridx - 5'd2);

wire resp_empty = (rcount == 5'd0);
wire word_last  = (ridx == rcount - 1'b1);
wire resp_last  = resp_empty || (word_last && rb == 2'd3);
// without ETH_COUNTERS, STATUS words 6 and 7 are constant 0 (no counter read)
wire cnt_none   = (ETH_COUNTERS == 0) && (ridx == 5'd6 || ridx == 5'd7);
wire resp_valid = (state == S_RESP) && (r_kind != R_STATUS || cnt_none || (cnt_valid && stat_req));
wire resp_xfer  = resp_valid && r_axis_tready;
// mode 2 sends bytes 0..1 of the NC vote words and skips the other words
wire vskip      = vmode && (wi >= NC6);
wire infer_send = (state == S_INFER) && res_valid && !vskip;
wire infer_xfer = infer_send && r_axis_tready;
// last byte of a result item (u32, u16 votes, i8 or i16 sums)
wire item_end   = vmode ? (vwide ? (rb == 2'd3) : rb[0]) : smode ? (T_NARROW || rb[0]) : (rb == 2'd3);
wire last_vec   = (res_left == {{(LEN_W-1){1'b0}}, 1'b1});
wire word_done  = (infer_xfer && item_end) ||             // core word sent (or skipped)
                  ((state == S_INFER) && res_valid && vskip);
wire infer_end  = word_done && res_last && last_vec;
wire infer_tlast = last_vec && item_end && (vmode ? (wi == NC6 - 6'd1) : res_last);

// a counter read starts only while proto_tx takes bytes (not while it
// sends the previous response), so it is held for the 4 bytes of its word
// only and the counters' pending counts cannot overflow meanwhile
assign stat_req = (state == S_RESP) && (r_kind == R_STATUS) && !cnt_none && !gap && (r_axis_tready || cnt_valid);

assign r_type        = r_rtype;
assign r_seq         = s_desc_seq;
assign r_link        = s_desc_link;
assign r_mac         = s_desc_mac;
assign r_axis_tdata  = (state != S_INFER) ? word[8*rb +: 8] : smode ? clip_b : res_data[8*rb +: 8];
assign r_axis_tvalid = resp_valid || infer_send;
assign r_axis_tlast  = (state == S_INFER) ? infer_tlast : resp_last;
assign r_axis_tuser  = (state == S_RESP) && resp_empty;

assign bank_wr_en   = bw_en;
assign bank_wr_lane = bw_lane;
assign bank_wr_addr = bw_addr;
assign bank_wr_data = bw_data;
assign req_valid    = req_pend;
assign req_features = feat[FEATURES-1:0];
assign req_k        = kq + {{(K_W-1){1'b0}}, sm_lo};
assign req_seed     = p_seed;
assign req_stats    = p_mode[0] ^ p_mode[1];                   // modes 1 and 2
assign req_more     = more_runs;
assign res_ready    = word_done;

assign loaded     = m_loaded;
assign busy       = (state != S_IDLE);
assign error_sent = err_sent_reg;

// ------------------------------------------------------------ counters
// increments of the 13 counters this cycle, 2 bits each (counter i at [2i+1:2i])
wire [1:0] inc_crc   = {1'b0, ev_crc_error[0]} + {1'b0, ev_crc_error[1]};
wire [1:0] inc_frame = {1'b0, ev_framing_error[0]} + {1'b0, ev_framing_error[1]} + {1'b0, ev_framing_error[2]};
wire [1:0] inc_ovr   = {1'b0, ev_overrun[0]} + {1'b0, ev_overrun[1]};
wire err_done = resp_xfer && resp_last && r_err;         // an ERROR response handed over
wire [2*NCNT-1:0] inc_all = {
    1'b0, ev_bit_tick,                           // 12 UART bit times
    ev_uart_byte,                                // 11 UART bytes received
    1'b0, err_done,                              // 10 ERROR responses
    1'b0, req_pend && req_ready,                 // 9  core runs
    1'b0, ev_frame_sent,                         // 8  response frames sent
    1'b0, ev_eth_drop,                           // 7  Ethernet frames dropped
    1'b0, ev_fcs_error,                          // 6  Ethernet FCS errors
    1'b0, err_done && r_code == E_LENGTH,        // 5  bad payload lengths (ERROR 3)
    1'b0, err_done && r_code == E_UNKNOWN,       // 4  unknown commands
    inc_ovr,                                     // 3  UART overruns
    inc_frame,                                   // 2  framing errors
    inc_crc,                                     // 1  CRC errors
    1'b0, take_desc && !s_desc_busy              // 0  frames executed
};
wire cclear = (state == S_DECIDE) && (f_type == T_RESET);
// the stored counters: all 13, or without ETH_COUNTERS 0..5 and 8..12
// (stored as 6..10)
wire [2*NSTORE-1:0] inc_vec;
wire [3:0]          cnt_idx;
generate
    if (ETH_COUNTERS != 0) begin : g_cnt_all
        assign inc_vec = inc_all;
        assign cnt_idx = ridx[3:0];
    end else begin : g_cnt_lean
        assign inc_vec = {inc_all[2*NCNT-1:16], inc_all[11:0]};
        assign cnt_idx = (ridx[3:0] >= 4'd8) ? ridx[3:0] - 4'd2 : ridx[3:0];
        wire unused_eth_inc = &{1'b0, inc_all[15:12]};
    end
endgenerate

stat_counters #(.NCNT(NSTORE), .PEND_W(5)) u_counters (
    .clk(clk), .rst(rst),
    .inc(inc_vec), .clear(cclear),
    .rd_req(stat_req), .rd_idx(cnt_idx),
    .rd_valid(cnt_valid), .rd_data(cnt_data)
);

// ------------------------------------------------------------ feature bytes
// a shift register: feature byte 0 ends up in feat[7:0]
wire feat_shift = feed_rdy && byte_in;
wire vec_done  = feat_shift && (fbi == FBI_W'(FB - 1));              // a set's vector is in feat
wire set_end   = (req_pend && req_ready) || (vec_done && !set_runs);  // a set ran or was skipped
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

// ------------------------------------------------------------ leading fields
// checked and stored byte by byte as they arrive (pidx = byte index)
integer bi;
always @(posedge clk) begin
    if (take_desc) begin
        eq_w   <= 1'b1;
        eq_off <= 1'b1;
        le_off <= 1'b1;
        eq_c   <= 1'b1;
    end
    if (param_in) begin
        case (f_type)
            T_BEGIN: begin
                if (s_axis_tdata != total_b) eq_w <= 1'b0;
            end
            T_DATA: begin
                if (s_axis_tdata != next_b) eq_off <= 1'b0;
                // offset <= next - n, compared from the least significant byte
                if (s_axis_tdata < lim_b) le_off <= 1'b1;
                else if (s_axis_tdata > lim_b) le_off <= 1'b0;
                for (bi = 0; bi < NEXT_W; bi = bi + 1) begin
                    if (pidx == 4'(bi / 8)) p_off[bi] <= s_axis_tdata[bi % 8];
                end
            end
            T_COMMIT: begin
                if (pidx < 4'd4) begin
                    if (s_axis_tdata != total_b) eq_w <= 1'b0;
                end else begin
                    if (s_axis_tdata != crc_b) eq_c <= 1'b0;
                end
            end
            default: begin // T_INFER
                case (pidx)
                    4'd0: begin
                        p_mode   <= s_axis_tdata[1:0];
                        mode_bad <= (s_axis_tdata[7:2] != 6'd0);
                    end
                    4'd1: begin
                        /* verilator lint_off CMPCONST */
                        sets_bad <= (s_axis_tdata > SETS_MAX8);   // constant for SETS_MAX = 255
                        /* verilator lint_on CMPCONST */
                        p_m      <= (SETS1 || s_axis_tdata == 8'd0) ? SETS_W'(1) : SETS_W'(s_axis_tdata);
                    end
                    4'd2: p_k[7:0] <= s_axis_tdata;
                    4'd3: p_k[15:8] <= s_axis_tdata;
                    4'd4: p_seed[7:0] <= s_axis_tdata;
                    4'd5: p_seed[15:8] <= s_axis_tdata;
                    4'd6: p_seed[23:16] <= s_axis_tdata;
                    4'd7: p_seed[31:24] <= s_axis_tdata;
                    4'd8: p_count[7:0] <= s_axis_tdata;
                    4'd9: p_count[15:8] <= s_axis_tdata;
                    default: ;
                endcase
            end
        endcase
    end
    // set m of query i runs with seed + i + m*SET_SEED_STEP: p_seed steps
    // by SET_SEED_STEP after each set, and from the last set of query i
    // (seed + i + (M-1)*SET_SEED_STEP) to seed + i + 1
    if (set_end) begin
        p_seed <= p_seed + (set_last ? seed_wrap : SET_SEED_STEP);
    end
end

always @(posedge clk) begin
    wpv_r      <= wpv;
    n_words    <= (s_desc_len - LEN_W'(4)) >> 1;
    fits_r     <= fits;
end

// ------------------------------------------------------------ main FSM
task automatic set_error(input [3:0] code, input [2:0] dsel);
    begin
        r_kind  <= R_REGS;
        r_rtype <= T_ERROR;
        r_err   <= 1'b1;
        r_code  <= code;
        r_dsel  <= dsel;
        rcount  <= 5'd2;
        state   <= S_DRAIN;
    end
endtask

always @(posedge clk) begin
    bw_en        <= 1'b0;
    err_sent_reg <= 1'b0;

    if (byte_in) begin
        rem <= rem - 1'b1;
    end
    if (param_in) begin
        pidx <= pidx + 1'b1;
    end

    case (state)
        S_IDLE: begin
            if (take_desc) begin
                rem    <= s_desc_busy ? {LEN_W{1'b0}} : s_desc_len;
                pidx   <= 4'd0;
                pneed  <= d_need;
                r_kind <= R_REGS;
                r_code <= d_code;
                r_dsel <= D_TYPE;
                ridx   <= 5'd0;
                rb     <= 2'd0;
                gap    <= 1'b0;
                if (d_code != 4'd0) begin
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
            vlen   <= VLW'(10);
            fbi    <= {FBI_W{1'b0}};
            sm     <= {SETS_W{1'b0}};
            sz_err <= 1'b0;
            if (pidx == pneed) begin
                state <= (f_type == T_INFER) ? S_MUL : S_DECIDE;
            end
        end

        S_MUL: begin
            // vlen = 10 + len_cnt*M*FB: M*FB additions, counted by fbi and sm
            vlen <= vlen + VLW'(len_cnt);
            if (fbi == FBI_W'(FB - 1)) begin
                fbi <= {FBI_W{1'b0}};
                sm  <= sm + 1'b1;
                if (set_last) begin
                    sm <= {SETS_W{1'b0}};
                    if (sz_err) begin
                        set_error(E_LENGTH, D_INFER);   // detail: 10 + c*M*FB
                    end else begin
                        state <= S_DECIDE;
                    end
                end
            end else begin
                fbi <= fbi + 1'b1;
            end
        end

        S_DECIDE: begin
            state <= S_DRAIN;
            case (f_type)
                T_INFO: begin
                    r_kind <= R_INFO;
                    rcount <= 5'd20;
                end
                T_STATUS: begin
                    r_kind <= R_STATUS;
                    rcount <= 5'(NCNT);
                end
                T_RESET: begin
                    rcount <= 5'd0;
                end
                T_BEGIN: begin
                    if (!eq_w) begin
                        set_error(E_LENGTH, D_TOTAL);
                    end else begin
                        m_loaded    <= 1'b0;
                        load_active <= 1'b1;
                        next        <= {NEXT_W{1'b0}};
                        lcrc     <= 32'hFFFFFFFF;
                        wl       <= {LANE_W{1'b0}};
                        wa       <= {ADDR_W{1'b0}};
                        rcount   <= 5'd1;
                    end
                end
                T_DATA: begin
                    rcount <= 5'd2;
                    if (le_off && !lim_neg) begin
                        // a retransmission: acknowledged, not rewritten
                    end else if (!load_active) begin
                        set_error(E_NOLOAD, D_TYPE);
                    end else if (eq_off && fits_r) begin
                        wcnt  <= n_words;
                        half  <= 1'b0;
                        state <= S_WRITE;
                    end else if (eq_off) begin
                        set_error(E_LENGTH, D_ROOM);
                    end else begin
                        set_error(E_GAP, D_TYPE);
                    end
                end
                T_COMMIT: begin
                    if (m_loaded && !load_active && !(eq_w && eq_c)) begin
                        set_error(E_COMMIT, D_TYPE);    // not the valid model's W and CRC
                    end else if (!(eq_w && next == TOTAL_N)) begin
                        set_error(E_GAP, D_TYPE);       // short load (or a wrong W)
                    end else if (!eq_c) begin
                        set_error(E_COMMIT, D_TYPE);
                    end else begin
                        m_loaded    <= 1'b1;
                        load_active <= 1'b0;
                        rcount      <= 5'd2;
                    end
                end
                default: begin // T_INFER (no other type gets here)
                    if (mode_bad || sets_bad) begin
                        set_error(E_LENGTH, D_ZERO);
                    end else if (!count_ok) begin
                        set_error(E_LENGTH, D_INFER);
                    end else if (p_k == 16'd0 || p_k > KMAX16) begin
                        set_error(E_K, D_TYPE);
                    end else if (!m_loaded) begin
                        set_error(E_NOMODEL, D_TYPE);
                    end else begin
                        drem  <= 21'd0;
                        quot  <= 18'd0;
                        dstep <= 5'd17;
                        kq    <= p_k[K_W-1:0];
                        kr    <= {SETS_W{1'b0}};
                        size_done <= 1'b0;
                        state <= S_SIZE;
                    end
                end
            endcase
        end

        S_SIZE: begin
            // restoring division of 2^dpos by wpv, one quotient bit per
            // clock; K / M in the last K_W clocks
            if (!size_done) begin
                drem  <= 21'(dge ? dtry - 22'(wpv_r) : dtry);
                quot  <= {quot[16:0], dge};
                dstep <= dstep - 1'b1;
                size_done <= (dstep == 5'd0);
                if (!SETS1 && dstep < 5'(K_W)) begin
                    kr <= SETS_W'(kge ? ktry - {1'b0, p_m} : ktry);
                    kq <= K_W'({kq, kge});
                end
            end else if (18'(p_count) > quot) begin
                sz_err <= 1'b1;                 // detail: 10 + quot*M*FB
                vlen   <= VLW'(10);
                state  <= S_MUL;
            end else begin
                q_left   <= p_count[LEN_W-1:0];
                res_left <= p_count[LEN_W-1:0];
                fbi      <= {FBI_W{1'b0}};
                sm       <= {SETS_W{1'b0}};
                wi       <= 6'd0;
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
            if (payload_end) begin
                state <= S_RESP;
            end
        end

        S_RESP: begin
            gap <= 1'b0;
            if (resp_xfer) begin
                rb <= rb + 1'b1;
                if (rb == 2'd3) begin
                    ridx <= ridx + 1'b1;
                    gap  <= 1'b1;                   // release the counter read
                end
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
                    req_pend <= set_runs;       // a set with K_m = 0 is dropped
                end else begin
                    fbi <= fbi + 1'b1;
                end
            end
            if (req_pend && req_ready) begin
                req_pend <= 1'b0;
            end
            if (set_end) begin
                sm    <= sm + 1'b1;
                if (set_last) begin
                    sm     <= {SETS_W{1'b0}};
                    q_left <= q_left - 1'b1;
                end
            end
            if (infer_xfer) begin
                rb <= item_end ? 2'd0 : rb + 1'b1;
            end
            if (word_done) begin
                wi <= res_last ? 6'd0 : wi + 1'b1;
            end
            if (word_done && res_last) begin
                res_left <= res_left - 1'b1;
            end
            if (infer_end) begin
                // the last query's last sets may have K_m = 0 and not be read yet
                state <= payload_end ? S_POP : S_FLUSH;
            end
        end

        S_FLUSH: begin
            if (payload_end) begin
                state <= S_POP;
            end
        end

        S_POP: begin
            state <= S_IDLE;
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
