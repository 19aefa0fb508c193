`default_nettype none
/*
 * proto_engine - command executor of the board protocol (version 5, lean)
 *
 * Executes the frames of docs/protocol.md (section 2) one at a time, in
 * arrival order, for both links (link_arb merges them), drives the
 * inference core (docs/core-interface.md) and hands the response to
 * proto_tx as a byte stream (every protocol word least significant byte
 * first) with the link, source MAC and seq of the request.
 *
 * Protocol version 5 keeps in hardware only what protects the board (the
 * bank bounds, the K range, the CRC of an upload, the stream of payload
 * bytes) and leaves every other check to the host, which validates each
 * request before sending it (host/frame, host/driver; docs/protocol.md
 * section 2 lists both sides); it echoes nothing the host already knows
 * (LOAD_BEGIN and LOAD_COMMIT answers are empty, LOAD_DATA's is the next
 * offset alone). Response bytes are produced byte by byte, never as
 * 32-bit words, by response programs: a ROM in one block RAM
 * (SB_RAM40_4K, 256 x 16) holds a word per response byte of every
 * answer but INFER's (INFO, STATUS, the LOAD_DATA answer, the empty
 * answer, each ERROR code), naming the byte's source (a constant, a byte
 * of the core's info word, of the model CRC, of a STATUS counter, of
 * next, the command type, the loaded flag; for the info word, a counter
 * and next also the byte within the word) and marking the last byte; the
 * engine picks a program (rsel) and steps through it (pc, an 8-bit LFSR:
 * a program's bytes lie at successive LFSR states, so pc needs no
 * incrementer), so the INFO constants, the response lengths and the
 * per-word source decode cost no logic:
 *
 *   INFO          20 words: magic, versions, the core's info ROM (shape,
 *                 parameters, hash), loaded flag, model CRC, UART_BAUD on
 *                 the UART link (0 on Ethernet), the link's receive buffer
 *                 depth in frames (RX_FRAMES_UART / RX_FRAMES_ETH), MMAX
 *                 (SETS_MAX).
 *   LOAD_BEGIN    (W not checked: the host checks W = L*D from INFO)
 *                 invalidates the model, next = 0, a load is in progress;
 *                 an empty answer.
 *   LOAD_DATA     no load in progress: ERROR 9 (detail next); offset !=
 *                 next: ERROR 6 (detail next; a retransmission of words
 *                 already written is answered so too, with next past its
 *                 end); offset == next: the n words are written through
 *                 the core's bank write port, word w = addr*LANES + lane in
 *                 offset order, a running CRC-32 is updated over their
 *                 bytes, and the answer is the new next (offset + n). Words that would land past W are neither written
 *                 nor counted in the CRC and the chunk is answered ERROR 3
 *                 (the words before W are written). KIND 1: a clause
 *                 weight word outside WT_BITS bits (two's complement) is
 *                 not written, next stays at it, the chunk's later words
 *                 are not written, the chunk is answered ERROR 3 and the
 *                 load ends (load_active cleared).
 *   LOAD_COMMIT   next == LANES*DEPTH (else ERROR 6, detail next) and crc
 *                 == the running CRC (else ERROR 7, detail 0): the model
 *                 becomes valid, the load is over (W not checked), an
 *                 empty answer. A repeated commit of the valid model is
 *                 acknowledged again (next and the CRC are unchanged).
 *   INFER         mode > 3 or sets > SETS_MAX: ERROR 3; K = 0 or K > KMAX:
 *                 ERROR 5; no valid model: ERROR 4; fewer than M*FB
 *                 feature bytes: ERROR 3. The count field is not read: the
 *                 board runs one query per whole M*FB bytes of the payload
 *                 (the host sends exactly count of them) and drains the
 *                 rest; it does not check the 131,072-byte result limit
 *                 (the host does). Query by query: set m = 0..M-1 reads
 *                 its feature vector into a register (KIND 1: no
 *                 register; the image's rows go to the core one by one as
 *                 its bytes arrive, img_wr_*, see g_img) and, when K_m =
 *                 K/M + (m < K mod M) >= 1, offers it on the request stream with
 *                 K_m, seed (seed + i) + m*0x9E3779B9 and req_more = 1
 *                 unless no later set of the query runs (sets with K_m = 0
 *                 are read and dropped); the next query starts when the
 *                 query's result is through. Modes 1 and 2 run the core in
 *                 stats mode, modes 0 and 3 in samples mode; mode 2 (votes)
 *                 forwards only the NC vote words, as u16 when K <= KV
 *                 (bytes 0..1) and as u32 otherwise; mode 3 (sums) sends
 *                 every word clipped to [-T, T] as an i8 when T <= 127,
 *                 else as an i16.
 *   INFER_WINDOW  (0x11, version 6, WINDOWS = 1) INFER's 10-byte header,
 *                 u16 first, u16 count, then INFER's feature vectors:
 *                 shorter than 14 bytes: ERROR 3; else INFER's checks and
 *                 run, but only
 *                 the result items first .. first+count-1 of the answer
 *                 (every query's items, counted from 0) are sent: the
 *                 others are taken from the core and dropped (wskip counts
 *                 the items still to skip, wtake those still to send; the
 *                 item that brings wtake to 0 carries tlast), and an
 *                 answer that selects no item is the empty answer.
 *   STATUS        13 words; counters 4 and 5 (unknown commands, bad
 *                 lengths) are not kept since version 4 and read 0, nor
 *                 are 6, 7 without ETH_COUNTERS and 0, 8, 9, 10 without
 *                 STATUS_ALL.
 *   RESET_STATUS  clears the counters; empty response.
 *   other types   ERROR 1. Fixed-length commands with another payload
 *                 length (INFO, STATUS, RESET_STATUS: 0; LOAD_BEGIN 4;
 *                 LOAD_COMMIT 8; LOAD_DATA < 6; INFER < 10): ERROR 3. A
 *                 busy descriptor (frame that did not fit in its link
 *                 buffer): ERROR 8, in arrival order.
 * ERROR details: next (codes 6, 9), 0 otherwise. Payload bytes a command does not use are read and
 * discarded, so the frame is always consumed whole. The descriptor is
 * taken when the last byte of its response has been handed to proto_tx,
 * so its fields are used as offered, and stay stable for proto_tx, which
 * latches them per fragment. The next frame is then executed while
 * proto_tx is still sending.
 *
 * Bit-serial unit (to save logic; the link is far slower): the running
 * CRC and the seed are shift registers stepped one bit per clock. A
 * LOAD_DATA byte takes 8 clocks (the CRC of its bits), a LOAD_COMMIT CRC
 * byte is compared with lcrc[7:0] and lcrc then rotated by 8 (four such
 * rotations restore it), a response byte of the CRC (INFO word 16)
 * likewise; INFER's seed
 * is shifted in over 32 clocks, and after each set the core has taken, the
 * seed steps to the next set's or query's by a 32-clock serial addition
 * (the next request waits for it; a query at K = 100 takes thousands of
 * clocks).
 *
 * Counters (u32, wrapping, docs/protocol.md section 5), kept in
 * stat_counters: 0 executed frames (descriptors started, busy ones
 * excepted; STATUS_ALL only), 1 ev_crc_error, 2 ev_framing_error, 3
 * ev_overrun, 6 ev_fcs_error and 7 ev_eth_drop (ETH_COUNTERS only), 8
 * ev_frame_sent, 9 core runs (requests accepted by the core), 10 ERROR
 * responses (8-10: STATUS_ALL only), 11 ev_uart_byte, 12 ev_bit_tick. A STATUS word is the counter's value at
 * the moment it is read (every event before it counted).
 *
 * Bank writes: word next goes to lane next mod LANES, address next /
 * LANES; with LANES a power of two these are next's own bits, else a lane
 * and an address counter step beside next. The write is made the clock
 * after the word's second byte, from those registers themselves (next
 * steps on after it) and the word's first byte's register (BITS <= 8; the
 * register also holds INFER's K low byte, req_k, never needed at once).
 *
 * A STATUS counter word's four bytes come from one snapshot of the
 * counter in stat_counters' block RAM, each offered in the clock the
 * counters' sweep shows it (once every 4 * counters clocks: a STATUS
 * response of 13 words takes a few hundred clocks to hand over).
 *
 * The model state (loaded flag, load in progress, next offset, running CRC,
 * write counters) is not reset by rst, like the bank it describes: it
 * starts from INIT_LOADED/INIT_CRC (no load in progress) at configuration
 * and survives a reset.
 *
 * Parameters (the core's, from its generator; see docs/core-interface.md):
 *   FEATURES, BITS, LANES, DEPTH, LANE_W, ADDR_W, K_W   core port widths/shape
 *   NT, NC, KMAX                TMs, classes, largest K (KV, the largest K
 *                               whose votes, at most K * lcm(1..NC), fit
 *                               in 16 bits, is derived)
 *   CLIP_T                      the model's threshold T, 1..32767 (mode 3
 *                               clips the samples to [-T, T])
 *   SETS_MAX                    MMAX: the most sets an INFER query may
 *                               carry (1..255, INFO word 19); 1 leaves the
 *                               set loop and its K / M divider out
 *   GEN_VERSION                 generator version (major<<16|minor<<8|patch)
 *   UART_BAUD                   reported in INFO word 17 on the UART link
 *   INIT_LOADED, INIT_CRC       the banks hold a model at configuration
 *                               (Config.InitBanks) with this CRC-32
 *   RX_FRAMES_UART, RX_FRAMES_ETH  frames each link buffers while one is
 *                               executed (INFO word 18)
 *   LEN_W                       descriptor length width (11)
 *   ETH_COUNTERS                1: STATUS counters 6 and 7 (Ethernet FCS
 *                               errors, frames dropped) are kept; 0 (a
 *                               board without Ethernet): they read 0
 *   WINDOWS                     1: INFER_WINDOW (protocol version 6); 0:
 *                               answered as an unknown command, INFO
 *                               reports version 5 (board_top: with the set
 *                               loop only, SETS_MAX > 1)
 *   KIND                        0: a tabular core; 1: a convolutional
 *                               board (conv_query): protocol version 7,
 *                               INFO 26 words (20: KIND, 21-25: IMG_H,
 *                               IMG_W, PLANES, WIN_Y, WIN_X, sent after the
 *                               ROM's 20 words by a 5-bit byte counter:
 *                               the ROM has no room for 24 more bytes)
 *   IMG_H, IMG_W, PLANES, WIN_Y, WIN_X  KIND 1: INFO words 21-25
 *   EXTRA_WORDS                 upload words after the LANES*DEPTH
 *                               thresholds (KIND 1: the NC*C clause
 *                               weights, written through bank_wr_* at
 *                               addresses DEPTH and up); W = LANES*DEPTH +
 *                               EXTRA_WORDS
 *   STATUS_ALL                  1: the optional STATUS counters 0, 8, 9,
 *                               10 (frames executed and sent, core runs,
 *                               ERRORs) are kept; 0: they read 0 (the
 *                               error counters 1-3 and the line counters
 *                               11-12 are always kept)
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
 * byte is read (INFER: with the core's first result word), its bytes
 * (INFER's result excepted) at most one per 2 clocks; LOAD_DATA reads
 * a payload byte per 9 clocks, LOAD_COMMIT's CRC bytes likewise, and the
 * CRC bytes of a response leave one per 9 clocks.
 */
module proto_engine #(
    parameter FEATURES    = 16,
    parameter BITS        = 8,
    parameter LANES       = 16,
    parameter DEPTH       = 120,
    parameter LANE_W      = 4,
    parameter ADDR_W      = 7,
    parameter K_W         = 8,
    /* verilator lint_off UNUSEDPARAM */
    parameter NT          = 3,            // not used by version 5 (the host checks result sizes)
    /* verilator lint_on UNUSEDPARAM */
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
    parameter ETH_COUNTERS = 1,
    parameter STATUS_ALL  = 1,
    parameter WINDOWS     = 1,
    // a convolutional board (protocol version 7, conv_query around the
    // generated convolutional core): KIND 1, the image words of INFO
    // (20-25) and the clause weights uploaded after the thresholds
    parameter KIND        = 0,
    parameter IMG_H       = 0,
    parameter IMG_W       = 0,
    parameter PLANES      = 0,
    parameter WIN_Y       = 0,
    parameter WIN_X       = 0,
    parameter EXTRA_WORDS = 0,
    // KIND 1: the width of the core's stored weights (2..16); an uploaded
    // weight word outside -2^(WT_BITS-1) .. 2^(WT_BITS-1)-1 is refused
    parameter WT_BITS     = 16
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
    output wire [FEATURES-1:0] req_features,   // KIND 0 (KIND 1: 0, the image goes through img_wr_*)
    output wire                img_wr_en,      // KIND 1: the next image row ...
    output wire [(KIND != 0 ? IMG_W : 1)-1:0] img_wr_data,   // ... (pixel x in bit x)
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
localparam integer TOTAL_I = LANES * DEPTH + EXTRA_WORDS;   // bank words W (conv: thresholds, then weights)
localparam         CONV    = (KIND != 0);
localparam integer NEXT_W  = $clog2(TOTAL_I + 1);
localparam [NEXT_W-1:0] TOTAL_N = NEXT_W'(TOTAL_I);
localparam [15:0]  KMAX16  = 16'(KMAX);
localparam [31:0]  MAGIC   = 32'h424D5450;             // "PTMB"
localparam [31:0]  PROTO_VER = CONV ? 32'd7 : (WINDOWS != 0) ? 32'd6 : 32'd5;   // version 5: no INFER_WINDOW
// INFO words 20-25 of a convolutional board (version 7): kind, H, W, P,
// WY, WX, sent after the ROM's 20 words (the ROM has no room for them)
localparam [191:0] INFO_EXT = (192'(WIN_X) << 160) | (192'(WIN_Y) << 128) | (192'(PLANES) << 96) |
                              (192'(IMG_W) << 64) | (192'(IMG_H) << 32) | 192'(KIND);
localparam [LANE_W-1:0] LANE_LAST = LANE_W'(LANES - 1);

`include "../lib/const_cmp.vh"

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
localparam integer KV_I    = 65535 / VOTE_U;
localparam         V_NARROW = (KMAX <= KV_I);                      // votes always u16
localparam [K_W-1:0] KV_K  = (KV_I >= (1 << K_W)) ? {K_W{1'b1}} : K_W'(KV_I);
localparam integer WI_W    = $clog2(NC + 1);               // wi counts 0..NC
localparam [WI_W-1:0] NC_WI = WI_W'(NC);
localparam integer SETS_W  = $clog2(SETS_MAX + 1);            // M = 1..SETS_MAX
localparam         SETS1   = (SETS_MAX == 1);                  // no set loop: M = 1, K_0 = K
localparam [7:0]   SETS_MAX8 = 8'(SETS_MAX);
localparam [31:0]  SET_SEED_STEP = 32'h9E3779B9;
localparam         T_NARROW = (CLIP_T <= 127);                      // mode 3 items are i8
localparam [15:0]  T16     = 16'(CLIP_T);
localparam integer TW      = $clog2(CLIP_T + 1);               // 0 <= T < 2^TW
localparam [TW:0]  TW1_T   = (TW+1)'(CLIP_T);                  // T and -T in TW+1 bits
localparam [TW:0]  TW1_NT  = (TW+1)'(-CLIP_T);

localparam [7:0] T_INFO   = 8'h01;
localparam [7:0] T_BEGIN  = 8'h02;
localparam [7:0] T_DATA   = 8'h03;
localparam [7:0] T_COMMIT = 8'h04;
localparam [7:0] T_INFER  = 8'h10;
localparam [7:0] T_WIN    = 8'h11;   // INFER_WINDOW
localparam [7:0] T_STATUS = 8'h20;
localparam [7:0] T_RESET  = 8'h21;
localparam [7:0] T_ERROR  = 8'hE0;

// the ERROR responses' programs (rsel; the code is in the program)
localparam [4:0] E_UNKNOWN = 5'd2;    // code 1
localparam [4:0] E_LENGTH  = 5'd5;    // code 3
localparam [4:0] E_NOMODEL = 5'd9;    // code 4
localparam [4:0] E_K       = 5'd11;   // code 5
localparam [4:0] E_GAP     = 5'd13;   // code 6
localparam [4:0] E_COMMIT  = 5'd15;   // code 7
localparam [4:0] E_BUSY    = 5'd18;   // code 8
localparam [4:0] E_NOLOAD  = 5'd26;   // code 9

localparam [2:0] S_IDLE   = 3'd0;
localparam [2:0] S_PARAM  = 3'd1;   // read the leading fields
localparam [2:0] S_DECIDE = 3'd2;
localparam [2:0] S_WRITE  = 3'd3;   // LOAD_DATA: bank writes
localparam [2:0] S_DRAIN  = 3'd4;   // discard unread payload bytes, then respond
localparam [2:0] S_RESP   = 3'd5;   // response bytes
localparam [2:0] S_INFER  = 3'd6;
localparam [2:0] S_FLUSH  = 3'd7;   // discard unread payload bytes, then take the descriptor


localparam integer NCNT   = 13;                              // STATUS words
// STATUS word w is kept in stat_counters: 1, 2, 3, 11, 12 always; 6, 7
// with ETH_COUNTERS; 0, 8, 9, 10 with STATUS_ALL (counters 4 and 5 never)
function automatic cnt_kept(input integer w);
    begin
        case (w)
            1, 2, 3, 11, 12: cnt_kept = 1'b1;
            6, 7:            cnt_kept = (ETH_COUNTERS != 0);
            0, 8, 9, 10:     cnt_kept = (STATUS_ALL != 0);
            default:         cnt_kept = 1'b0;
        endcase
    end
endfunction
// the stored index of word w: the kept words below it
function automatic integer cnt_store(input integer w);
    integer i, n;
    begin
        n = 0;
        for (i = 0; i < w; i = i + 1) n = n + (cnt_kept(i) ? 1 : 0);
        cnt_store = n;
    end
endfunction
localparam integer NSTORE = cnt_store(NCNT);                 // counters kept

// ------------------------------------------------------------ frame state
// the frame's descriptor is used as offered (it is taken only at the end)
wire [7:0]       f_type = s_desc_type;
wire             f_link = (ETH_COUNTERS != 0) && s_desc_link;   // UART-only board: link 0

reg [2:0]        state = S_IDLE;
reg [LEN_W-1:0]  rem;               // payload bytes not read yet
reg [3:0]        pidx;              // leading field byte index
reg [3:0]        pneed;
wire             is_inf = (WINDOWS != 0) ? (f_type[7:1] == 7'h08) : (f_type == T_INFER);   // INFER or INFER_WINDOW

// leading fields (stored only where needed)
reg [1:0]        p_mode;
reg              mode_bad;          // INFER mode > 3 or sets > SETS_MAX
reg [SETS_W-1:0] p_m;               // M = max(1, sets)
wire [K_W-1:0]   p_k;               // K (K_W bits): its low byte in pb
reg              k_lo0;             // K's low byte is 0
reg              k_logt;            // K's low byte > KMAX's
reg              k_bad;             // K = 0 or K > KMAX (from both bytes)
reg [31:0]       p_seed;
reg [NEXT_W-1:0] p_off;             // LOAD_DATA offset (for the ack)
reg              off_hi;            // LOAD_DATA offset has bits at NEXT_W or above
reg              eq_c;              // crc == the running CRC (LOAD_COMMIT)

// response
reg [7:0]        r_rtype;
reg              r_err;
reg [4:0]        rsel;              // the response program (starts at 8*rsel)
reg [7:0]        pc;                // response program: the byte being offered
reg [1:0]        rb;                // INFER: byte within the result item; else byte within the response word
reg              rw;                // Ethernet INFO words 17-18: the response word's parity
reg              gap;               // STATUS: one idle clock between counter reads

// model upload state (not reset: it describes the bank, which survives rst)
reg              m_loaded = (INIT_LOADED != 0);
reg              load_active = 1'b0; // LOAD_BEGIN seen, no successful commit since
reg [NEXT_W-1:0] next = (INIT_LOADED != 0) ? TOTAL_N : {NEXT_W{1'b0}};
reg [31:0]       lcrc = (INIT_LOADED != 0) ? ~INIT_CRC : 32'hFFFFFFFF;
reg              at_end = (INIT_LOADED != 0);   // next == W
reg [LANE_W-1:0] wl = {LANE_W{1'b0}};    // lane and address of word next (LANES not a power of 2)
reg [ADDR_W-1:0] wa = {ADDR_W{1'b0}};
reg              over;              // a word of this LOAD_DATA fell past W, or was refused
reg              wref;              // KIND 1: a weight word of this LOAD_DATA was refused (WT_BITS)
reg              half;              // the next byte is a word's second
reg [7:0]        pb;                // a payload byte: a LOAD_DATA word's first byte, or INFER's K low byte (never needed together)
reg              bw_en = 1'b0;      // word next is written (its lane and address are next's)
reg [7:0]        bw_hi;             // the word's second byte (BITS > 8 only)

// inference
reg [FBI_W-1:0]  fbi;
reg              req_pend = 1'b0;
reg              feeding;           // the query's vectors are being read
reg              q_res;             // the query's result is through
reg              last_q;            // the query is the payload's last
reg [SETS_W-1:0] sm;                // set m of the query
reg [K_W-1:0]    kq;                // K / M
reg [SETS_W-1:0] kr;                // K mod M
reg [WI_W-1:0]   wi;                // result word of the query (mode 2), held at NC
reg              vwide;             // mode 2 votes as u32 (K > KV)
reg              win;               // INFER_WINDOW: only the window's items are sent
reg [15:0]       wskip;             // INFER_WINDOW: items still to skip
reg [15:0]       wtake;             // INFER_WINDOW: items still to send
reg              sent;              // INFER_WINDOW: the answer's last byte was sent

reg              err_sent_reg = 1'b0;

// the serial unit: the running CRC and the seed are shift registers
// stepped one bit per clock for sn clocks (a byte: 8; a seed step: 32)
reg [7:0]        sb;                // serial byte (LSB first)
reg [5:0]        sn = 6'd0;         // serial clocks left
reg              s_crc;             // 1: lcrc steps (S_WRITE: CRC of sb; else rotates); 0: p_seed steps
reg              s_cy;              // seed step: carry
reg              s_last;            // seed step: after a query's last set
reg              s_ld = 1'b0;       // a byte was handed to the serial unit last clock: it starts now
reg              s_ld_crc;          // ... for the CRC (else the seed)
reg [7:0]        s_ld_b;            // ... the byte (s_axis_tdata of the last clock)
wire             s_run   = (sn != 6'd0); // stepping
wire             s_busy  = s_run || s_ld;

// ------------------------------------------------------------ derived values
wire [7:0]  crc_lo  = ~lcrc[7:0];    // byte j of the CRC after 8*j rotations
// M*FB, the bytes of one query, and 2*M*FB (a function of M alone)
reg [LEN_W:0] qbytes;
reg [LEN_W:0] qbytes2;
integer mi;
always @* begin
    qbytes  = (LEN_W+1)'(FB);
    qbytes2 = (LEN_W+1)'(2 * FB);
    for (mi = 2; mi <= SETS_MAX; mi = mi + 1) begin
        if (p_m == SETS_W'(mi)) begin
            qbytes  = (LEN_W+1)'(mi * FB);
            qbytes2 = (LEN_W+1)'(2 * mi * FB);
        end
    end
end
// LOAD_DATA: a word's second byte, or another whole word, is still to
// come (an odd last payload byte is drained)
wire             w_more  = half || (rem[LEN_W-1:1] != {(LEN_W-1){1'b0}});
// (SETS_MAX = 1: comparisons with constants)
wire             q_fits  = SETS1 ? !lt_c(32'(rem), 32'(FB)) : ({1'b0, rem} >= qbytes);   // a whole query follows
wire             q_last  = SETS1 ? lt_c(32'(rem), 32'(2 * FB)) : ({1'b0, rem} < qbytes2); // ... and it is the last
wire             vmode   = p_mode == 2'd2;                      // mode 2: votes
wire             smode   = p_mode == 2'd3;                      // mode 3: clipped sums
// the set loop: set sm runs K_m = kq + (sm < kr) samples (none: skipped)
wire             sm_lo     = !SETS1 && (sm < kr);
wire             set_last  = SETS1 || (sm == p_m - 1'b1);
wire             set_runs  = SETS1 || (kq != {K_W{1'b0}}) || sm_lo;
wire             more_runs = !set_last && ((kq != {K_W{1'b0}}) || ((SETS_W+1)'(sm) + 1'b1 < (SETS_W+1)'(kr)));
// 1 - (M-1)*SET_SEED_STEP: the seed step from a query's last set to the
// next query (a function of M alone: a LUT per bit)
reg [31:0] seed_wrap;
integer si;
always @* begin
    seed_wrap = 32'd1;
    for (si = 2; si <= SETS_MAX; si = si + 1) begin
        if (p_m == SETS_W'(si)) seed_wrap = 32'd1 - 32'(si - 1) * SET_SEED_STEP;
    end
end
// mode 3: the sample word clipped to [-T, T]
// v is in [-2^TW, 2^TW) when bits 31..TW all equal its sign; then its low
// TW+1 bits are compared with +-T, else it is clipped by its sign alone
wire             c_neg     = res_data[31];
wire             c_fits    = ~|(res_data[31:TW] ^ {(32-TW){c_neg}});   // bits 31..TW all equal the sign
wire [TW:0]      c_low     = res_data[TW:0];
wire             clip_hi   = !c_neg && (!c_fits || gt_c(32'(c_low), 32'(TW1_T)));
wire             clip_lo   = c_neg && (!c_fits || lt_c(32'(c_low), 32'(TW1_NT)));
wire [15:0]      clip      = clip_hi ? T16 : clip_lo ? -T16 : 16'($signed(c_low));
wire [7:0]       clip_b    = T_NARROW ? clip[7:0] : clip[8*rb[0] +: 8];

wire [31:0] next32   = 32'(next);
// the bank address of word next: with LANES a power of two, next's bits
// themselves (no lane and address counters); else wl and wa
localparam         LANES_P2 = (LANES == (1 << LANE_W));
wire [LANE_W-1:0] w_lane = LANES_P2 ? next[LANE_W-1:0] : wl;
wire [ADDR_W-1:0] w_addr = LANES_P2 ? ADDR_W'(next >> LANE_W) : wa;
// offset == next (LOAD_DATA), once the offset is in p_off and off_hi
wire        eq_off   = !off_hi && (p_off == next);

// one bit of the reflected CRC-32 (polynomial 0xEDB88320) over sb[0], or
// (s_rot) a rotation by one bit: 32 rotations leave lcrc as it was, and
// byte j of the CRC is then in lcrc[7:0] after 8*j of them
localparam [31:0] CRC_POLY = 32'hEDB88320;
wire        s_rot    = (state != S_WRITE);
wire        crc_c0   = lcrc[0] ^ (sb[0] && !s_rot);
wire [31:0] crc_step = {crc_c0, lcrc[31:1] ^ (CRC_POLY[30:0] & {31{crc_c0 && !s_rot}})};
// one bit of the seed: shifted in from sb (S_PARAM) or the serial sum
// p_seed + addend (S_INFER), addend bit 32 - sn
wire [31:0] s_add    = s_last ? seed_wrap : SET_SEED_STEP;
reg         s_k;                 // s_add[32 - sn], a table over sn (no subtractor)
integer     sk;
always @* begin
    s_k = 1'b0;
    for (sk = 1; sk <= 32; sk = sk + 1) begin
        if (sn == 6'(sk)) s_k = s_add[32 - sk];
    end
end
wire        seed_in  = (state == S_PARAM) ? sb[0] : (p_seed[0] ^ s_k ^ s_cy);

// KIND 1: the word completed by this (second) byte is a clause weight
// (offset next >= LANES*DEPTH) outside the WT_BITS-bit range the core keeps
wire        wt_bad;
wire [15:0] w_word = {s_axis_tdata, pb};
generate
    if (CONV && WT_BITS < 16) begin : g_wtchk
        wire in_wts = !lt_c(32'(next), 32'(LANES * DEPTH));
        wire [16-WT_BITS:0] w_top = w_word[15:WT_BITS-1];
        assign wt_bad = in_wts && !(&w_top || ~|w_top);
        wire unused_lo = &{1'b0, w_word[WT_BITS-2:0]};
    end else begin : g_wtok
        assign wt_bad = 1'b0;
        wire unused_w = &{1'b0, w_word};
    end
endgenerate

// ------------------------------------------------------------ handshakes
wire take_desc = (state == S_IDLE) && s_desc_valid;               // start a frame
wire img_busy;                      // KIND 1: the image rows of the last byte are still being written
wire feed_rdy  = (state == S_INFER) && feeding && !req_pend && !s_busy && !img_busy;
assign s_desc_ready  = (state == S_FLUSH) && (rem == {LEN_W{1'b0}}) && !s_busy;  // done with it
assign s_axis_tready = ((state == S_PARAM) && (pidx != pneed) && !s_busy) ||
                       ((state == S_WRITE) && w_more && !s_busy) ||
                       ((state == S_DRAIN || state == S_FLUSH) && (rem != {LEN_W{1'b0}})) ||
                       feed_rdy;
wire byte_in   = s_axis_tvalid && s_axis_tready;
wire param_in  = (state == S_PARAM) && byte_in;

// ------------------------------------------------------------ frame decode
// parameter bytes, length rule and immediate error of the offered frame
reg [3:0] d_need;
reg [4:0] d_code;           // the ERROR's program; 0: no error
always @* begin
    d_need = 4'd0;
    d_code = 5'd0;
    case (s_desc_type)
        T_INFO, T_STATUS, T_RESET: begin
            if (s_desc_len != {LEN_W{1'b0}}) d_code = E_LENGTH;
        end
        T_BEGIN: begin
            if (s_desc_len != LEN_W'(4)) d_code = E_LENGTH;
        end
        T_DATA: begin
            d_need = 4'd4;
            if (lt_c(32'(s_desc_len), 32'd6)) d_code = E_LENGTH;
        end
        T_COMMIT: begin
            d_need = 4'd8;
            if (s_desc_len != LEN_W'(8)) d_code = E_LENGTH;
        end
        T_INFER: begin
            d_need = 4'd10;
            if (lt_c(32'(s_desc_len), 32'd10)) d_code = E_LENGTH;
        end
        T_WIN: begin
            if (WINDOWS != 0) begin
                d_need = 4'd14;
                if (lt_c(32'(s_desc_len), 32'd14)) d_code = E_LENGTH;
            end else begin
                d_code = E_UNKNOWN;         // version 5: an unknown command
            end
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
wire [7:0]  cnt_data;           // the counter byte named by rq (valid with cnt_valid only)

// The response programs: a ROM in block RAM, one 16-bit word per response
// byte, read at the pc register (the ROM's output register holds the word
// of the byte being offered a clock after pc last changed, rq_ok: a
// response byte takes at least 2 clocks, and pc's flip-flops pack with the
// logic of their next value). A word is either a constant byte (bits 7..0) or names
// the byte's source; bits 7..0 then carry the source's index:
//   B_INFO    byte rb of the core's info word (info_addr = bits 3..0)
//   B_CNT     byte of a STATUS counter (its stat_counters address,
//             4 * counter + byte, in the low bits; bit 7: the word's last
//             byte); offered while stat_counters shows it (cnt_valid)
//   B_CRC     the next byte of the model CRC (0 with no model; lcrc
//             then rotates by 8)
//   B_NEXT    byte rb of next
//   B_TYPE    the command type (ERROR byte 1)
//   B_LOADED  the loaded flag (INFO word 15 byte 0)
//   B_LAST    the response's last byte
//   B_EMPTY   with B_LAST: an empty response (proto_tx's tuser); alone
//             (ETH_COUNTERS only): INFO words 17-18, whose value on the
//             Ethernet link is 0 and RX_FRAMES_ETH
// pc is an 8-bit LFSR (no incrementer): a program's bytes are at
// successive LFSR states from its start, 8*rsel, and rb counts the bytes
// of the response (rb is the byte within the word, every word being 4
// bytes; rw, with Ethernet only, the word's parity). Programs: the
// LOAD_DATA answer (next) at P_ACK, the empty answer at P_EMPTY, ERROR
// code c (c = 1, 3..9: code, type, 0, 0, then next for codes 6 and 9,
// else 0) at its E_* selector, INFO (20 words) at P_INFO, STATUS (NCNT
// words) at P_STATUS; the starts were chosen so that no two programs
// share an LFSR state (255 states, 201 bytes; rtl/board's
// TestEngineProgramLayout checks it).
localparam [4:0] P_ACK    = 5'd14;
localparam [4:0] P_EMPTY  = 5'd17;
localparam [4:0] P_INFO   = 5'd1;
localparam [4:0] P_STATUS = 5'd3;
localparam integer B_INFO = 8, B_CNT = 9, B_CRC = 10, B_NEXT = 11, B_TYPE = 12,
                   B_LOADED = 13, B_LAST = 14, B_EMPTY = 15;

// the LFSR's next state (x^8 + x^4 + x^3 + x^2 + 1, maximal: the 255
// nonzero states in one cycle)
function automatic [7:0] pc_step(input [7:0] x);
    begin
        pc_step = {x[6:0], x[7] ^ x[3] ^ x[2] ^ x[1]};
    end
endfunction

// byte k of program p (0 INFO, 1 STATUS, 2 the LOAD_DATA answer, 3 the
// empty answer, 4..11 ERROR codes 1, 3, 4, ..., 9)
localparam integer NPROG = 12;
function automatic integer prog_start(input integer p);
    begin
        case (p)
            0:       prog_start = 8 * P_INFO;
            1:       prog_start = 8 * P_STATUS;
            2:       prog_start = 8 * P_ACK;
            3:       prog_start = 8 * P_EMPTY;
            4:       prog_start = 8 * E_UNKNOWN;
            5:       prog_start = 8 * E_LENGTH;
            6:       prog_start = 8 * E_NOMODEL;
            7:       prog_start = 8 * E_K;
            8:       prog_start = 8 * E_GAP;
            9:       prog_start = 8 * E_COMMIT;
            10:      prog_start = 8 * E_BUSY;
            default: prog_start = 8 * E_NOLOAD;
        endcase
    end
endfunction
function automatic integer prog_len(input integer p);
    begin
        case (p)
            0:       prog_len = 80;
            1:       prog_len = 4 * NCNT;
            2:       prog_len = 4;
            3:       prog_len = 1;
            default: prog_len = 8;
        endcase
    end
endfunction
function automatic [15:0] prog_word(input integer p, input integer k);
    integer w, b, c;
    reg [31:0] v;
    begin
        prog_word = 16'd0;
        b = k % 4;
        w = k / 4;
        if (p == 2) begin                                  // the LOAD_DATA answer
            prog_word = next_word(b);
            prog_word[B_LAST] = (b == 3);
        end else if (p == 3) begin                         // the empty answer
            prog_word[B_LAST]  = 1'b1;
            prog_word[B_EMPTY] = 1'b1;
        end else if (p >= 4) begin                         // ERROR c
            c = (p == 4) ? 1 : p - 2;
            case (k)
                0:       prog_word[7:0] = 8'(c);
                1:       prog_word[B_TYPE] = 1'b1;
                2, 3:    ;
                default: if (c == 6 || c == 9) prog_word = next_word(b);
            endcase
            prog_word[B_LAST] = (k == 7);
        end else if (p == 0) begin                         // INFO
            v = 32'd0;
            case (w)
                0:  v = MAGIC;
                1:  v = PROTO_VER;
                2:  v = GEN_VERSION;
                15: prog_word[B_LOADED] = (b == 0);
                16: prog_word[B_CRC] = 1'b1;
                17: begin
                    v = UART_BAUD;
                    prog_word[B_EMPTY] = (ETH_COUNTERS != 0);
                end
                18: begin
                    v = RX_FRAMES_UART;
                    prog_word[B_EMPTY] = (ETH_COUNTERS != 0);
                end
                19: v = SETS_MAX;
                default: begin                            // 3..14: the core's info ROM
                    prog_word[B_INFO] = 1'b1;
                    v = 32'((w - 2) | (b << 4)) << (8 * b);
                end
            endcase
            prog_word[7:0] = v[8*b +: 8];
            prog_word[B_LAST] = (k == 79);
        end else begin                                     // STATUS
            if (cnt_kept(w)) begin
                prog_word[B_CNT] = 1'b1;
                prog_word[7:0]   = 8'(4 * cnt_store(w) + b) | ((b == 3) ? 8'h80 : 8'h00);
            end
            prog_word[B_LAST] = (k == 4 * NCNT - 1);
        end
    end
endfunction

// byte b of next: B_NEXT where next has bits (8*b < NEXT_W), with b in
// bits 5..4 when next is wider than a byte; else a constant 0
function automatic [15:0] next_word(input integer b);
    begin
        next_word = 16'd0;
        if (8 * b < NEXT_W) begin
            next_word[B_NEXT] = 1'b1;
            if (NEXT_W > 8) next_word[5:4] = 2'(b);
        end
    end
endfunction

// the ROM: each program's bytes written at its successive LFSR states
(* rom_style = "block" *)
reg [15:0] rom [0:255];
integer ra, rk;
reg [7:0] rx;
initial begin
    for (ra = 0; ra < 256; ra = ra + 1) rom[ra] = 16'd0;
    for (ra = 0; ra < NPROG; ra = ra + 1) begin
        rx = 8'(prog_start(ra));
        for (rk = 0; rk < prog_len(ra); rk = rk + 1) begin
            rom[rx] = prog_word(ra, rk);
            rx = pc_step(rx);
        end
    end
end

// pc follows 8*rsel until the response is sent, then steps through it
wire [7:0]  pc_n    = pc_step(pc);
wire        resp_valid;
wire        resp_xfer;
reg         xt = 1'b0;           // conv INFO: the 24 bytes after the ROM's program are being sent
reg  [4:0]  xb;                  // ... this one
wire [7:0]  pc_d    = (state != S_RESP) ? {rsel, 3'b000} : (resp_xfer && !xt) ? pc_n : pc;
reg  [15:0] rq;                  // the word of byte pc when rq_ok
reg         rq_ok = 1'b0;        // pc did not change in the clock before
always @(posedge clk) begin
    pc <= pc_d;
    rq <= rom[pc];               // addressed by the register (the block RAM's address is no second load of pc_d)
    rq_ok <= (state == S_RESP) && !resp_xfer;
end

// STATUS counter index, info ROM address
localparam integer CA_W = $clog2(NSTORE) + 2;
wire [CA_W-1:0] cnt_addr = rq[CA_W-1:0];
assign info_addr = rq[3:0];

wire [7:0] next_rb = (NEXT_W <= 8) ? next32[7:0] : next32[8*rq[5:4] +: 8];
wire       k_src   = rq[B_INFO] || rq[B_CNT] || (NEXT_W > 8 && rq[B_NEXT]);   // bits 7..0 are an index
wire       linkw   = (ETH_COUNTERS != 0) && rq[B_EMPTY] && !rq[B_LAST] && f_link;
wire [7:0] eth_b   = rw ? 8'd0 : 8'(RX_FRAMES_ETH >> (8 * rb));   // INFO word 17 (odd) : 18
// the response byte (not INFER): an AND-OR of the selected sources
wire [7:0] rbyte   = ({8{!k_src && !linkw}} & rq[7:0]) |
                     ({8{linkw}} & eth_b) |
                     ({8{rq[B_INFO]}} & info_data[8*rq[5:4] +: 8]) |
                     {7'd0, rq[B_LOADED] && m_loaded} |
                     ({8{rq[B_CRC] && m_loaded}} & crc_lo) |
                     ({8{rq[B_CNT]}} & cnt_data) |
                     ({8{rq[B_TYPE]}} & f_type) |
                     ({8{rq[B_NEXT]}} & next_rb);

wire resp_empty = rq[B_EMPTY] && rq[B_LAST];
wire resp_last  = rq[B_LAST];
wire rom_valid  = (state == S_RESP) && rq_ok && !s_busy && (!rq[B_CNT] || cnt_valid);
// a convolutional board's INFO: the ROM's 80 bytes, then INFO_EXT's 24
// (xt); the ROM program's last byte is then not the response's
wire info_tail  = CONV && !xt && (rsel == P_INFO) && resp_last;
wire resp_end   = CONV ? (xt ? (xb == 5'd23) : (resp_last && !info_tail)) : resp_last;
assign resp_valid = CONV ? (xt ? (state == S_RESP) : rom_valid) : rom_valid;
always @(posedge clk) begin
    if (!CONV || state != S_RESP) begin
        xt <= 1'b0;
        xb <= 5'd0;
    end else if (resp_xfer) begin
        if (info_tail) xt <= 1'b1;
        if (xt) xb <= xb + 1'b1;
    end
end
wire [7:0] ext_b = INFO_EXT[8*xb +: 8];
// the response word is the CRC: lcrc rotates by 8 after each of its bytes
wire crc_word   = rq[B_CRC];
assign resp_xfer = resp_valid && r_axis_tready;
// mode 2 sends bytes 0..1 of the NC vote words and skips the other words
wire vskip      = vmode && (wi == NC_WI);
// INFER_WINDOW: an item is sent when none is left to skip and some are
// left to send (INFER: every item)
wire wskip0     = (wskip == 16'd0);
wire in_win     = !win || (wskip0 && (wtake != 16'd0));
wire w_item     = (state == S_INFER) && res_valid && !vskip;   // a result item is offered
wire w_drop     = w_item && !in_win;                            // ... outside the window: taken, not sent
wire infer_send = w_item && in_win;
wire infer_xfer = infer_send && r_axis_tready;
// last byte of a result item (u32, u16 votes, i8 or i16 sums)
wire item_end   = vmode ? (vwide ? (rb == 2'd3) : rb[0]) : smode ? (T_NARROW || rb[0]) : (rb == 2'd3);
wire word_done  = (infer_xfer && item_end) ||             // core word sent (or skipped or dropped)
                  ((state == S_INFER) && res_valid && (vskip || !in_win));
wire infer_tlast = item_end && ((last_q && (vmode ? (wi == NC_WI - 1'b1) : res_last)) ||
                                (win && (wtake == 16'd1)));

// a counter read is held for the 4 bytes of its word (one snapshot of the
// counter), then dropped for a clock (gap); each byte is offered in the
// clock stat_counters' sweep shows it (cnt_valid)
assign stat_req = (state == S_RESP) && rq[B_CNT] && !gap;

assign r_type        = r_rtype;
assign r_seq         = s_desc_seq;
assign r_link        = s_desc_link;
assign r_mac         = s_desc_mac;
// (in S_INFER rq is the empty program's word: rbyte is 0)
assign r_axis_tdata  = (CONV && xt) ? ext_b : rbyte | ({8{state == S_INFER}} & (smode ? clip_b : res_data[8*rb +: 8]));
assign r_axis_tvalid = resp_valid || infer_send;
assign r_axis_tlast  = (state == S_INFER) ? infer_tlast : resp_end;
assign r_axis_tuser  = (state == S_RESP) && resp_empty;

assign bank_wr_en   = bw_en;
assign bank_wr_lane = w_lane;
assign bank_wr_addr = w_addr;
generate
    if (BITS > 8) begin : g_wd16
        assign bank_wr_data = BITS'({bw_hi, pb});
    end else begin : g_wd8
        assign bank_wr_data = pb[BITS-1:0];
        wire unused_hi = &{1'b0, bw_hi, pb};
    end
endgenerate
assign req_valid    = req_pend && !img_busy;    // KIND 1: after the image's last row
assign req_k        = SETS1 ? p_k : kq + {{(K_W-1){1'b0}}, sm_lo};   // SETS_MAX 1: K itself (kq is not kept)
assign req_seed     = p_seed;
assign req_stats    = p_mode[0] ^ p_mode[1];                   // modes 1 and 2
assign req_more     = more_runs;
assign res_ready    = word_done;

assign loaded     = m_loaded;
assign busy       = (state != S_IDLE);
assign error_sent = err_sent_reg;

// ------------------------------------------------------------ counters
// increments of the stored counters this cycle, 2 bits each (counter i
// at [2i+1:2i])
wire [1:0] inc_crc   = {1'b0, ev_crc_error[0]} + {1'b0, ev_crc_error[1]};
wire [1:0] inc_frame = {1'b0, ev_framing_error[0]} + {1'b0, ev_framing_error[1]} + {1'b0, ev_framing_error[2]};
wire [1:0] inc_ovr   = {1'b0, ev_overrun[0]} + {1'b0, ev_overrun[1]};
wire err_done = resp_xfer && resp_last && r_err;         // an ERROR response handed over
wire [17:0] inc_uart = {
    1'b0, ev_bit_tick,                           // 12 UART bit times
    ev_uart_byte,                                // 11 UART bytes received
    1'b0, err_done,                              // 10 ERROR responses
    1'b0, req_pend && req_ready,                 // 9  core runs
    1'b0, ev_frame_sent,                         // 8  response frames sent
    inc_ovr,                                     // 3  UART overruns
    inc_frame,                                   // 2  framing errors
    inc_crc,                                     // 1  CRC errors
    1'b0, take_desc && !s_desc_busy              // 0  frames executed
};
// stored counters whose increment is 0 or 1 (bit 1 of their inc is 0):
// frames executed, Ethernet counters, frames sent, core runs, ERRORs,
// bit times
wire cclear = (state == S_DECIDE) && (f_type == T_RESET);
wire [25:0] inc_all = {inc_uart[17:8], 1'b0, ev_eth_drop, 1'b0, ev_fcs_error, 4'd0, inc_uart[7:0]};
wire [2*NSTORE-1:0] inc_vec;
function automatic [15:0] inc1_of(input integer words);
    integer w;
    begin
        inc1_of = 16'd0;
        for (w = 0; w < words; w = w + 1) begin
            if (cnt_kept(w) && (w == 0 || (w >= 6 && w != 11))) inc1_of[cnt_store(w)] = 1'b1;
        end
    end
endfunction
localparam [15:0] INC1 = inc1_of(NCNT);
genvar cw;
generate
    for (cw = 0; cw < NCNT; cw = cw + 1) begin : g_inc
        if (cnt_kept(cw)) begin : g_kept
            assign inc_vec[2*cnt_store(cw) +: 2] = inc_all[2*cw +: 2];
        end else begin : g_out
            wire unused_inc = &{1'b0, inc_all[2*cw +: 2]};
        end
    end
endgenerate

// A pending count is taken every 4*NSTORE clocks. The fastest counter,
// UART bit times (one per CLKS_PER_BIT >= 8 clocks), counts at most 3 in
// 24 clocks; every other event comes at most once per received UART byte
// (80 clocks) or frame from each of its sources (at most 3 per counter),
// or, core runs, a 32-clock seed step apart. So 2 bits hold a sweep's
// events with 6 counters or fewer (5 on the UART-only board: 20 clocks),
// 3 bits with more (9 or 11: 36 or 44 clocks, at most 6 bit times).
localparam integer PEND_W = (4 * NSTORE <= 24) ? 2 : 3;
stat_counters #(.NCNT(NSTORE), .PEND_W(PEND_W), .INC1(INC1)) u_counters (
    .clk(clk), .rst(rst),
    .inc(inc_vec), .clear(cclear),
    .rd_req(stat_req), .rd_addr(cnt_addr),
    .rd_valid(cnt_valid), .rd_data(cnt_data)
);

// ------------------------------------------------------------ feature bytes
// a shift register: feature byte 0 ends up in feat[7:0]
wire feat_shift = feed_rdy && byte_in;
wire vec_done  = feat_shift && (fbi == FBI_W'(FB - 1));              // a set's vector is in feat
wire set_end   = (req_pend && req_ready) || (vec_done && !set_runs);  // a set ran or was skipped
generate
    if (CONV) begin : g_img
        // KIND 1: no feature register. The image's bits go bit-serially
        // (one per clock, bit 0 of a byte first) into a row register of
        // IMG_W bits; each whole row is written to the core's image
        // memory (img_wr_*, the clock after its last bit), which keeps
        // two images (the running request's and the next) and counts the
        // rows itself. Rows are written only for a set that runs (ion,
        // from the vector's first byte: sm moves on before the last
        // byte's bits are out); the bits of the last byte past the image
        // are written as at most one more row, which the core ignores.
        // The next byte waits for the last one's 8 bits (img_busy), and so
        // does the request: req_valid follows the image's last row.
        localparam integer IRC_W = (IMG_W > 1) ? $clog2(IMG_W) : 1;
        reg [7:0]       ib;                 // the byte being shifted out, bit 0 next
        reg [3:0]       ibn = 4'd0;         // its bits still to shift
        reg [IMG_W-1:0] irow;               // the row being assembled (new bits enter at the top)
        reg [IRC_W-1:0] irc;                // bits of the row so far
        reg             iwe = 1'b0;         // irow is a whole row: written this clock
        reg             ion;                // the vector's set runs
        always @(posedge clk) begin
            iwe <= 1'b0;
            if (feat_shift) begin
                ib  <= s_axis_tdata;
                ibn <= 4'd8;
                if (fbi == {FBI_W{1'b0}}) begin
                    irc <= {IRC_W{1'b0}};
                    ion <= set_runs;
                end
            end else if (ibn != 4'd0) begin
                ib   <= {1'b0, ib[7:1]};
                ibn  <= ibn - 1'b1;
                irow <= IMG_W'({ib[0], irow} >> 1);
                if (irc == IRC_W'(IMG_W - 1)) begin
                    irc <= {IRC_W{1'b0}};
                    iwe <= ion;
                end else begin
                    irc <= irc + 1'b1;
                end
            end
            if (rst) begin
                ibn <= 4'd0;
                iwe <= 1'b0;
            end
        end
        assign img_busy    = (ibn != 4'd0) || iwe;
        assign img_wr_en   = iwe;
        assign img_wr_data = irow;
        assign req_features = {FEATURES{1'b0}};
    end else begin : g_feat
        /* verilator lint_off UNUSEDSIGNAL */
        reg [FB*8-1:0] feat;        // the feature vector; bits above FEATURES are ignored
        /* verilator lint_on UNUSEDSIGNAL */
        assign req_features = feat[FEATURES-1:0];
        assign img_busy    = 1'b0;
        assign img_wr_en   = 1'b0;
        assign img_wr_data = 1'b0;
        if (FB == 1) begin : g_feat1
            always @(posedge clk) begin
                if (feat_shift) feat <= s_axis_tdata;
            end
        end else begin : g_featn
            always @(posedge clk) begin
                if (feat_shift) feat <= {s_axis_tdata, feat[FB*8-1:8]};
            end
        end
    end
endgenerate

// K's bits above its low byte (K_W > 8), stored with K's second byte
generate
    if (K_W > 8) begin : g_khi
        reg [K_W-9:0] k_hi;
        always @(posedge clk) begin
            if (param_in && is_inf && pidx == 4'd3) k_hi <= s_axis_tdata[K_W-9:0];
        end
        assign p_k = {k_hi, pb};
    end else begin : g_klo
        assign p_k = pb[K_W-1:0];
    end
endgenerate

// ------------------------------------------------------------ leading fields
// checked and stored byte by byte as they arrive (pidx = byte index)
integer bi;
always @(posedge clk) begin
    // pb: INFER's K low byte (field byte 2), or a LOAD_DATA word's first byte
    if ((param_in && is_inf && pidx == 4'd2) || ((state == S_WRITE) && byte_in && !half)) begin
        pb <= s_axis_tdata;
    end
    if (take_desc) begin
        off_hi <= 1'b0;
        eq_c   <= 1'b1;
    end
    if (param_in) begin
        case (f_type)
            T_DATA: begin
                for (bi = 0; bi < 32; bi = bi + 1) begin
                    if (pidx == 4'(bi / 8)) begin
                        if (bi < NEXT_W) p_off[bi % NEXT_W] <= s_axis_tdata[bi % 8];
                        else if (s_axis_tdata[bi % 8]) off_hi <= 1'b1;
                    end
                end
            end
            T_COMMIT: begin
                if (pidx[2] && s_axis_tdata != crc_lo) eq_c <= 1'b0;   // bytes 4..7: the CRC
            end
            default: begin // T_INFER, T_WIN
                case (pidx)
                    4'd0: begin
                        p_mode   <= s_axis_tdata[1:0];
                        mode_bad <= (s_axis_tdata[7:2] != 6'd0);
                    end
                    4'd1: begin
                        if (gt_c(32'(s_axis_tdata), 32'(SETS_MAX8))) mode_bad <= 1'b1;
                        p_m      <= (SETS1 || s_axis_tdata == 8'd0) ? SETS_W'(1) : SETS_W'(s_axis_tdata);
                    end
                    // K: stored (K_W bits) and checked byte by byte
                    4'd2: begin
                        k_lo0        <= (s_axis_tdata == 8'd0);
                        k_logt       <= gt_c(32'(s_axis_tdata), 32'(KMAX16[7:0]));
                    end
                    4'd3: begin
                        k_bad <= (k_lo0 && s_axis_tdata == 8'd0) ||
                                 gt_c(32'(s_axis_tdata), 32'(KMAX16[15:8])) ||
                                 (s_axis_tdata == KMAX16[15:8] && k_logt);
                    end
                    default: ;
                endcase
                // INFER_WINDOW: bytes 10..11 first, 12..13 count
                if (pidx[3:1] == 3'd5) wskip <= {s_axis_tdata, wskip[15:8]};
                if (pidx[3:1] == 3'd6) wtake <= {s_axis_tdata, wtake[15:8]};
            end
        endcase
    end
    // INFER_WINDOW: items dropped before the window, items sent in it
    if (w_drop && !wskip0) begin
        wskip <= wskip - 1'b1;
    end
    if (win && infer_xfer && item_end) begin
        wtake <= wtake - 1'b1;
    end
end

// ------------------------------------------------------------ serial unit
// Bytes that go through it: LOAD_DATA words (CRC), LOAD_COMMIT's CRC
// (compared with lcrc[7:0], then 8 rotations), INFER's seed (shifted into
// p_seed); response bytes of the CRC word are followed by 8 rotations.
// Set m of query i runs with seed + i + m*SET_SEED_STEP: p_seed steps by
// SET_SEED_STEP after each set, and from the last set of query i (seed +
// i + (M-1)*SET_SEED_STEP) to seed + i + 1, by a 32-clock serial addition
// (the core has taken the request; the next one waits for it).
wire s_load_crc  = ((state == S_WRITE) && byte_in && !at_end) ||
                   (param_in && f_type == T_COMMIT && pidx[2]) ||
                   (resp_xfer && crc_word);
wire s_load_seed = param_in && is_inf && pidx[3:2] == 2'd1;   // bytes 4..7
// A byte load is registered (s_ld) and starts the unit the clock after
// the handshake that made it, so that the handshakes' logic ends at three
// flip-flops instead of the enables of sb, sn and s_crc; s_busy covers
// that clock (every handshake that loads waits for !s_busy).
always @(posedge clk) begin
    s_ld     <= (s_load_crc || s_load_seed) && !set_end && !rst;
    s_ld_crc <= s_load_crc;
    s_ld_b   <= s_axis_tdata;
    if (s_run) begin
        sn <= sn - 1'b1;
        sb <= {1'b0, sb[7:1]};
        if (s_crc) begin
            lcrc <= crc_step;
        end else begin
            p_seed <= {seed_in, p_seed[31:1]};
            s_cy   <= (p_seed[0] & s_k) | (p_seed[0] & s_cy) | (s_k & s_cy);
        end
    end
    if (s_ld) begin
        sb    <= s_ld_b;
        sn    <= 6'd8;
        s_crc <= s_ld_crc;
    end
    if (set_end) begin
        sn    <= 6'd32;
        s_crc  <= 1'b0;
        s_cy   <= 1'b0;
        s_last <= set_last;
    end
    if (state == S_DECIDE && f_type == T_BEGIN) begin
        lcrc <= 32'hFFFFFFFF;
    end
    if (rst) begin
        sn <= 6'd0;
    end
end

// ------------------------------------------------------------ main FSM
task automatic set_error(input [4:0] prog);
    begin
        r_rtype <= T_ERROR;
        r_err   <= 1'b1;
        rsel    <= prog;
        state   <= S_DRAIN;
    end
endtask

// K / M for the set loop: restoring division, one quotient bit per clock
// (K_W clocks in S_DECIDE's wait), remainder < M
reg [4:0]        kstep;
wire [SETS_W:0]  ktry = {kr, kq[K_W-1]};
wire             kge  = (ktry >= {1'b0, p_m});

always @(posedge clk) begin
    bw_en        <= 1'b0;
    err_sent_reg <= 1'b0;

    // the bank write of word next is this clock: next steps on (the
    // write's lane and address are next's, read by the core this edge)
    if (bw_en) begin
        next   <= next + 1'b1;
        at_end <= (next == TOTAL_N - 1'b1);
        if (wl == LANE_LAST) begin
            wl <= {LANE_W{1'b0}};
            wa <= wa + 1'b1;
        end else begin
            wl <= wl + 1'b1;
        end
    end

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
                win    <= (WINDOWS != 0) && (s_desc_type == T_WIN);
                sent   <= 1'b0;
                pneed  <= d_need;
                rb     <= 2'd0;
                rw     <= 1'b0;
                gap    <= 1'b0;
                over   <= 1'b0;
                wref   <= 1'b0;
                half   <= 1'b0;
                kstep  <= 5'(K_W);
                if (d_code != 5'd0) begin
                    // busy, unknown or bad length: drain, then ERROR
                    r_rtype <= T_ERROR;
                    r_err   <= 1'b1;
                    rsel    <= d_code;
                    state   <= S_DRAIN;
                end else begin
                    r_rtype <= s_desc_type | 8'h80;
                    r_err   <= 1'b0;
                    rsel    <= P_EMPTY;
                    state   <= S_PARAM;
                end
            end
        end

        S_PARAM: begin
            kq <= p_k;
            kr <= {SETS_W{1'b0}};
            if (pidx == pneed && !s_busy) begin
                state <= S_DECIDE;
            end
        end

        S_DECIDE: begin
            state <= S_DRAIN;
            case (f_type)
                T_INFO: begin
                    rsel <= P_INFO;
                end
                T_STATUS: begin
                    rsel <= P_STATUS;
                end
                T_RESET: ;
                T_BEGIN: begin
                    m_loaded    <= 1'b0;
                    load_active <= 1'b1;
                    next        <= {NEXT_W{1'b0}};
                    at_end      <= (TOTAL_I == 0);
                    wl          <= {LANE_W{1'b0}};
                    wa          <= {ADDR_W{1'b0}};
                end
                T_DATA: begin
                    rsel <= P_ACK;
                    if (!load_active) begin
                        set_error(E_NOLOAD);
                    end else if (!eq_off) begin
                        set_error(E_GAP);
                    end else begin
                        state <= S_WRITE;
                    end
                end
                T_COMMIT: begin
                    if (!at_end) begin
                        set_error(E_GAP);
                    end else if (!eq_c) begin
                        set_error(E_COMMIT);
                    end else begin
                        m_loaded    <= 1'b1;
                        load_active <= 1'b0;
                    end
                end
                default: begin // T_INFER, T_WIN (no other type gets here)
                    vwide <= !V_NARROW && gt_c(32'(p_k), 32'(KV_K));
                    if (mode_bad) begin
                        set_error(E_LENGTH);
                    end else if (k_bad) begin
                        set_error(E_K);
                    end else if (!m_loaded) begin
                        set_error(E_NOMODEL);
                    end else if (!q_fits) begin
                        set_error(E_LENGTH);
                    end else if (SETS1 || kstep == 5'd0) begin
                        fbi      <= {FBI_W{1'b0}};
                        sm       <= {SETS_W{1'b0}};
                        wi       <= {WI_W{1'b0}};
                        req_pend <= 1'b0;
                        feeding  <= 1'b1;
                        q_res    <= 1'b0;
                        last_q   <= q_last;
                        state    <= S_INFER;
                    end else begin
                        // K / M: one quotient bit per clock
                        state <= S_DECIDE;
                        kstep <= kstep - 1'b1;
                        kr    <= SETS_W'(kge ? ktry - {1'b0, p_m} : ktry);
                        kq    <= K_W'({kq, kge});
                    end
                end
            endcase
        end

        S_WRITE: begin
            // rem counts the bytes left (a word's first byte read: half);
            // a word past W is not written
            if (byte_in) begin
                if (at_end) begin
                    over <= 1'b1;           // not written, not in the CRC
                end
                half <= !half;
                if (half && !at_end && !wref && wt_bad) begin
                    // a weight that does not fit the core's WT_BITS: not
                    // written, next stays at it, the chunk's later words
                    // are not written either, the chunk is answered
                    // ERROR 3 and the load ends (a LOAD_COMMIT then gets
                    // ERROR 6 with next, the refused word's offset)
                    wref        <= 1'b1;
                    over        <= 1'b1;
                    load_active <= 1'b0;
                end else if (half && !at_end && !wref) begin
                    // the second byte of a word: written next clock at
                    // word next's lane and address, then next steps on
                    bw_en   <= 1'b1;
                    bw_hi   <= s_axis_tdata;
                end
            end
            if (!w_more && !s_busy) begin
                state <= S_DRAIN;
                if (over) begin
                    set_error(E_LENGTH);
                end
            end
        end

        S_DRAIN: begin
            if (rem == {LEN_W{1'b0}} || (byte_in && rem == {{(LEN_W-1){1'b0}}, 1'b1})) begin
                state <= S_RESP;
            end
        end

        S_RESP: begin
            gap <= 1'b0;
            if (resp_xfer) begin
                if (ETH_COUNTERS != 0) begin
                    rb <= rb + 1'b1;                // byte and word parity (INFO words 17-18)
                    if (rb == 2'd3) rw <= !rw;
                end
                if (rq[7]) begin
                    gap <= 1'b1;                    // release the counter read
                end
                if (resp_end) begin
                    state        <= S_FLUSH;
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
                sm <= sm + 1'b1;
                if (set_last) begin
                    sm      <= {SETS_W{1'b0}};
                    feeding <= 1'b0;
                end
            end
            if (infer_xfer) begin
                rb <= item_end ? 2'd0 : rb + 1'b1;
                if (infer_tlast) begin
                    sent <= 1'b1;
                end
            end
            if (word_done) begin
                wi <= res_last ? {WI_W{1'b0}} : vskip ? wi : wi + 1'b1;
                if (res_last) begin
                    q_res <= 1'b1;
                end
            end
            if (!feeding && q_res) begin
                // the query is through: the next one, or the end
                if (last_q) begin
                    // a window that selected no item: the empty answer
                    state <= (win && !sent) ? S_RESP : S_FLUSH;
                end else begin
                    feeding <= 1'b1;
                    q_res   <= 1'b0;
                    last_q  <= q_last;
                end
            end
        end

        S_FLUSH: begin
            if (rem == {LEN_W{1'b0}} && !s_busy) begin
                state <= S_IDLE;        // s_desc_ready: the descriptor is taken
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
