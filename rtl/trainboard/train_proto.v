`default_nettype none
/*
 * train_proto - protocol engine of the training board: executes the TRAIN
 *               commands (docs/protocol.md section 8) on the on-chip
 *               trainer (rtl/train, docs/fixed-point-training.md 11)
 *
 * Takes CRC-good frames from proto_rx (descriptor + payload bytes), copies
 * each payload into a MAX_PAYLOAD-byte buffer (checking the labels of a
 * TRAIN_ROWS payload on the way), takes the descriptor, executes the
 * command and hands the response to proto_tx as a byte stream (least
 * significant byte of every word first). One frame at a time, in arrival
 * order; proto_rx keeps receiving the next frames meanwhile, so the UART
 * streams the next rows while the engine trains.
 *
 *   TRAIN_INFO  0x30  the board's shape, training parameters and progress
 *   TRAIN_INIT  0x31  every SPV and include mass to its initial state,
 *                     examples trained := 0
 *   TRAIN_SEED  0x32  u32 first, n x u64: lanes first..first+n-1
 *                     (0 control lane, 1 + c clause lane c)
 *   TRAIN_ROWS  0x33  u32 first, u16 count, count x (u8 label, FB bytes of
 *                     features): trained in order; answered when trained
 *   TRAIN_READ  0x34  u8 what (0 SPV words, 1 include masses, 2 inference
 *                     thresholds), u8 lane, u16 0, u32 offset, u32 count:
 *                     count u16 words of that lane's RAM
 *
 * Parameters (train_board_top sets them from the generated trainer):
 *   NT, NC, M, O, T   shape: TMs, classes, clauses per TM, features, margin
 *   N, B, LL          states per action, SPV width, literal lanes
 *   UP, DOWN          the integer move probabilities
 *   PAPER, BINARY     update rule 1 = paper; 1 = binary model (one TM)
 *   SPV_DEPTH         SPV words per literal lane
 *   INC_DEPTH         include masses per literal lane
 *   CW, YW, KW, SAW   widths of the trainer's seed_idx, ex_y, dbg_lane, dbg_addr
 *   UART_BAUD         bit rate reported in TRAIN_INFO
 *   LEN_W             width of the descriptor's length (11: 0..1024)
 *   MAX_PAYLOAD       payload buffer bytes (1024)
 *
 * Ports:
 *   clk, rst                          clock, synchronous reset (control only)
 *   s_desc_*, s_axis_*                frames from proto_rx
 *   r_type, r_seq, r_axis_*           responses to proto_tx
 *   t_*                               the trainer's ports (<prefix>_trainer)
 *   ev_crc_error, ev_frame_error      dropped-frame pulses, counted for TRAIN_INFO
 *   ev_frame_sent                     response-frame pulse from proto_tx
 *   busy                              a frame is being executed
 */
module train_proto #(
    parameter NT          = 3,
    parameter NC          = 3,
    parameter M           = 4,
    parameter O           = 4,
    parameter T           = 4,
    parameter N           = 8,
    parameter B           = 12,
    parameter LL          = 4,
    parameter UP          = 48732,
    parameter DOWN        = 16804,
    parameter PAPER       = 0,
    parameter BINARY      = 0,
    parameter SPV_DEPTH   = 1024,
    parameter INC_DEPTH   = 64,
    parameter CW          = 4,
    parameter YW          = 2,
    parameter KW          = 2,
    parameter SAW         = 10,
    parameter UART_BAUD   = 115200,
    parameter LEN_W       = 11,
    parameter MAX_PAYLOAD = 1024
) (
    input  wire             clk,
    input  wire             rst,

    input  wire             s_desc_valid,
    output wire             s_desc_ready,
    input  wire [7:0]       s_desc_type,
    input  wire [15:0]      s_desc_seq,
    input  wire [LEN_W-1:0] s_desc_len,
    input  wire             s_desc_busy,
    input  wire [7:0]       s_axis_tdata,
    input  wire             s_axis_tvalid,
    output wire             s_axis_tready,

    output reg  [7:0]       r_type,
    output reg  [15:0]      r_seq,
    output wire [7:0]       r_axis_tdata,
    output wire             r_axis_tvalid,
    input  wire             r_axis_tready,
    output wire             r_axis_tlast,

    input  wire             t_busy,
    output reg              t_init,
    output reg              t_seed_we,
    output reg  [CW-1:0]    t_seed_idx,
    output reg  [63:0]      t_seed_data,
    output reg              t_ex_valid,
    output wire [O-1:0]     t_ex_x,
    output reg  [YW-1:0]    t_ex_y,
    output wire             t_dbg_sel,
    output wire [KW-1:0]    t_dbg_lane,
    output reg  [SAW-1:0]   t_dbg_addr,
    input  wire [15:0]      t_dbg_data,
    input  wire [15:0]      t_dbg_thresh,

    input  wire             ev_crc_error,
    input  wire             ev_frame_error,
    input  wire             ev_frame_sent,
    output wire             busy
);
    localparam integer FB     = (O + 7) / 8;       // feature bytes per row
    localparam integer RB     = 1 + FB;            // bytes per row
    localparam integer LANES  = NT * M + 1;        // control lane + clause lanes
    localparam integer PAW    = $clog2(MAX_PAYLOAD);

    localparam [7:0] C_INFO = 8'h30, C_INIT = 8'h31, C_SEED = 8'h32,
                     C_ROWS = 8'h33, C_READ = 8'h34, T_ERROR = 8'hE0;
    localparam [7:0] E_UNKNOWN = 8'd1, E_LEN = 8'd3, E_ORDER = 8'd6, E_BUSY = 8'd8,
                     E_NOINIT = 8'd10, E_LABEL = 8'd11, E_RANGE = 8'd12;
    localparam [31:0] MAGIC = 32'h4E525450;         // "PTRN"
    localparam [31:0] VERSION = 32'd1;
    localparam integer INFO_WORDS = 22;

    localparam [3:0] S_IDLE = 4'd0, S_COPY = 4'd1, S_POP = 4'd2, S_EXEC = 4'd3,
                     S_WORDS = 4'd4, S_INIT = 4'd5, S_SEED = 4'd6, S_ROWS = 4'd7,
                     S_TRAIN = 4'd8, S_RD_A = 4'd9, S_RD_W = 4'd10, S_RD_C = 4'd11,
                     S_RD_E = 4'd12, S_WAIT = 4'd13, S_TWAIT = 4'd14;

    reg [3:0]        state = S_IDLE;
    reg [7:0]        cmd;
    reg              dbusy;
    reg [LEN_W-1:0]  len;
    reg [LEN_W-1:0]  cnt;

    // payload buffer and the header fields at fixed offsets
    reg [7:0]        pbuf [0:MAX_PAYLOAD-1];
    reg [PAW-1:0]    pra;                          // read address
    reg [7:0]        pbuf_q;
    reg [95:0]       hdr;                          // payload bytes 0..11
    always @(posedge clk) begin
        pbuf_q <= pbuf[pra];
        if (state == S_COPY && s_axis_tvalid) begin
            pbuf[cnt[PAW-1:0]] <= s_axis_tdata;
        end
    end

    // label check of TRAIN_ROWS while copying
    reg [$clog2(RB+1)-1:0] col;
    reg [15:0]       row;
    reg              bad_label;
    reg [15:0]       bad_row;

    // trainer state
    reg              inited = 1'b0;
    reg [31:0]       trained = 32'd0;
    reg [15:0]       frames = 16'd0, errors = 16'd0, crcs = 16'd0, framings = 16'd0;  // saturating
    reg [31:0]       tcycles = 32'd0;

    // response: a list of words, or the words of a readback
    reg [4:0]        widx, wlast;
    reg [1:0]        bi;
    reg [31:0]       e_word0, e_word1;             // error words, or small answers
    reg              rd;                            // 1: readback response
    reg [16:0]       rleft;                        // readback words left
    reg [15:0]       rword;
    reg              rhi;                          // second byte of rword
    reg [1:0]        what;
    reg [KW-1:0]     rlane;

    // streaming reads of the payload buffer: sb bytes from pra
    reg [10:0]       sleft;
    reg              sv1;
    reg [8*FB-1:0]   xsh;
    reg [63:0]       sh64;
    reg [10:0]       got;                          // bytes received of the current item
    reg [15:0]       k;                            // lane / row index

    wire [31:0] h_first = hdr[31:0];
    wire [15:0] h_count = hdr[47:32];
    wire [7:0]  h_what  = hdr[7:0];
    wire [7:0]  h_lane  = hdr[15:8];
    wire [15:0] h_zero  = hdr[31:16];
    wire [31:0] h_off   = hdr[63:32];
    wire [31:0] h_rcnt  = hdr[95:64];

    wire [31:0] rows_len  = 32'd6 + 32'(h_count) * 32'(RB);
    wire [31:0] rows_exp  = 32'd6 + ((h_count == 16'd0) ? 32'(RB) : 32'(h_count) * 32'(RB));
    wire [31:0] seed_n    = (32'(len) - 32'd4) >> 3;
    wire [32:0] seed_end  = {1'b0, h_first} + {1'b0, seed_n};
    wire [32:0] rows_end  = {1'b0, h_first} + 33'(h_count);
    wire [31:0] rdepth    = (h_what == 8'd0) ? 32'(SPV_DEPTH) : 32'(INC_DEPTH);
    wire [32:0] read_end  = {1'b0, h_off} + {1'b0, h_rcnt};

    function automatic [31:0] info_word(input [4:0] i);
        case (i)
            5'd0:  info_word = MAGIC;
            5'd1:  info_word = VERSION;
            5'd2:  info_word = 32'(NT);
            5'd3:  info_word = 32'(NC);
            5'd4:  info_word = 32'(M);
            5'd5:  info_word = 32'(O);
            5'd6:  info_word = 32'(T);
            5'd7:  info_word = 32'(N);
            5'd8:  info_word = 32'(B);
            5'd9:  info_word = 32'(LL);
            5'd10: info_word = 32'(UP);
            5'd11: info_word = 32'(DOWN);
            5'd12: info_word = {29'd0, inited, PAPER != 0, BINARY != 0};
            5'd13: info_word = 32'(SPV_DEPTH);
            5'd14: info_word = 32'(INC_DEPTH);
            5'd15: info_word = trained;
            5'd16: info_word = {16'd0, frames};
            5'd17: info_word = {16'd0, errors};
            5'd18: info_word = {16'd0, crcs};
            5'd19: info_word = {16'd0, framings};
            5'd20: info_word = 32'(UART_BAUD);
            5'd21: info_word = tcycles;
            default: info_word = 32'd0;
        endcase
    endfunction

    reg         err;
    wire [31:0] cur_word = (cmd == C_INFO && !err) ? info_word(widx) :
                           (widx == 5'd0) ? e_word0 : e_word1;
    wire [8*FB+7:0] xcat = {pbuf_q, xsh};

    assign s_axis_tready = state == S_COPY;
    assign s_desc_ready  = state == S_POP;
    assign r_axis_tvalid = state == S_WORDS || state == S_RD_E;
    assign r_axis_tdata  = (state == S_RD_E) ? (rhi ? rword[15:8] : rword[7:0]) : cur_word[8*bi +: 8];
    assign r_axis_tlast  = (state == S_RD_E) ? (rhi && rleft == 17'd1) : (widx == wlast && bi == 2'd3);
    assign t_ex_x        = xsh[O-1:0];
    assign t_dbg_sel     = what != 2'd0;
    assign t_dbg_lane    = rlane;
    assign busy          = state != S_IDLE || t_busy;

    // answer with an ERROR frame
    task automatic fail(input [7:0] code, input [31:0] detail);
        begin
            err     <= 1'b1;
            r_type  <= T_ERROR;
            if (errors != 16'hFFFF) errors <= errors + 1'b1;
            e_word0 <= {16'd0, cmd, code};
            e_word1 <= detail;
            widx    <= 5'd0;
            wlast   <= 5'd1;
            bi      <= 2'd0;
            state   <= S_WORDS;
        end
    endtask

    // answer with one or two words (e_word0, e_word1)
    task automatic answer(input [31:0] w0, input [31:0] w1, input two);
        begin
            e_word0 <= w0;
            e_word1 <= w1;
            widx    <= 5'd0;
            wlast   <= two ? 5'd1 : 5'd0;
            bi      <= 2'd0;
            state   <= S_WORDS;
        end
    endtask

    always @(posedge clk) begin
        t_init     <= 1'b0;
        t_seed_we  <= 1'b0;
        t_ex_valid <= 1'b0;
        sv1 <= sleft != 11'd0;
        if (sleft != 11'd0) begin
            pra   <= pra + 1'b1;
            sleft <= sleft - 1'b1;
        end
        if (ev_crc_error && crcs != 16'hFFFF) crcs <= crcs + 1'b1;
        if (ev_frame_error && framings != 16'hFFFF) framings <= framings + 1'b1;
        if (t_busy && tcycles != 32'hFFFFFFFF) tcycles <= tcycles + 1'b1;

        case (state)
            S_IDLE: begin
                if (s_desc_valid) begin
                    cmd       <= s_desc_type;
                    r_seq     <= s_desc_seq;
                    r_type    <= s_desc_type | 8'h80;
                    len       <= s_desc_len;
                    dbusy     <= s_desc_busy;
                    cnt       <= {LEN_W{1'b0}};
                    hdr       <= 96'd0;
                    col       <= '0;
                    row       <= 16'd0;
                    bad_label <= 1'b0;
                    bad_row   <= 16'd0;
                    err       <= 1'b0;
                    rd        <= 1'b0;
                    what      <= 2'd0;
                    rlane     <= {KW{1'b0}};
                    state     <= (s_desc_busy || s_desc_len == {LEN_W{1'b0}}) ? S_POP : S_COPY;
                end
            end
            S_COPY: begin
                if (s_axis_tvalid) begin
                    if (cnt < 12) hdr[8*cnt[3:0] +: 8] <= s_axis_tdata;
                    if (cmd == C_ROWS && cnt >= 6) begin
                        if (col == 0 && 32'(s_axis_tdata) >= 32'(NC) && !bad_label) begin
                            bad_label <= 1'b1;
                            bad_row   <= row;
                        end
                        if (32'(col) == RB - 1) begin
                            col <= '0;
                            row <= row + 1'b1;
                        end else begin
                            col <= col + 1'b1;
                        end
                    end
                    cnt <= cnt + 1'b1;
                    if (cnt + 1'b1 == len) state <= S_POP;
                end
            end
            S_POP: begin
                state <= S_EXEC;
                if (frames != 16'hFFFF) frames <= frames + 1'b1;
            end
            S_EXEC: begin
                if (dbusy) begin
                    fail(E_BUSY, 32'd0);
                end else begin
                    case (cmd)
                        C_INFO: begin
                            if (len != 0) fail(E_LEN, 32'd0);
                            else begin
                                widx  <= 5'd0;
                                wlast <= 5'(INFO_WORDS - 1);
                                bi    <= 2'd0;
                                state <= S_WORDS;
                            end
                        end
                        C_INIT: begin
                            if (len != 0) fail(E_LEN, 32'd0);
                            else if (!t_busy) begin
                                t_init <= 1'b1;
                                state  <= S_INIT;
                            end
                        end
                        C_SEED: begin
                            if (len < 12 || len[2:0] != 3'd4) fail(E_LEN, 32'd12);
                            else if (seed_end > 33'(LANES)) fail(E_RANGE, 32'(LANES));
                            else begin
                                pra   <= PAW'(4);
                                sleft <= 11'd0;
                                k     <= 16'd0;
                                got   <= 11'd0;
                                state <= S_SEED;
                            end
                        end
                        C_ROWS: begin
                            if (len < 6 || h_count == 16'd0 || 32'(len) != rows_len) fail(E_LEN, (len < 6) ? 32'(6 + RB) : rows_exp);
                            else if (!inited) fail(E_NOINIT, 32'd0);
                            else if (bad_label) fail(E_LABEL, 32'(bad_row));
                            else if (h_first == trained) begin
                                pra   <= PAW'(6);
                                k     <= 16'd0;
                                state <= S_ROWS;
                            end else if (rows_end <= 33'(trained)) answer(trained, 32'd0, 1'b0);
                            else fail(E_ORDER, trained);
                        end
                        C_READ: begin
                            if (len != 12) fail(E_LEN, 32'd12);
                            else if (h_what > 8'd2 || 32'(h_lane) >= 32'(LL) || h_zero != 16'd0) fail(E_LEN, 32'd0);
                            else if (h_rcnt == 32'd0 || h_rcnt > 32'd65536) fail(E_LEN, 32'd65536);
                            else if (read_end > {1'b0, rdepth}) fail(E_RANGE, rdepth);
                            else begin
                                rd        <= 1'b1;
                                what      <= h_what[1:0];
                                rlane     <= KW'(h_lane);
                                t_dbg_addr <= SAW'(h_off);
                                rleft     <= h_rcnt[16:0];
                                state     <= S_RD_A;
                            end
                        end
                        default: fail(E_UNKNOWN, 32'd0);
                    endcase
                end
            end
            S_INIT: begin
                // t_init is seen this cycle; the trainer is busy from the next
                state <= S_WAIT;
            end
            S_WAIT: begin
                if (!t_busy) begin
                    inited  <= 1'b1;
                    trained <= 32'd0;
                    tcycles <= 32'd0;
                    answer(32'd0, 32'd0, 1'b0);
                end
            end
            S_SEED: begin
                // lane k: 8 bytes from 4 + 8k
                if (got == 11'd0 && sleft == 11'd0 && !sv1) begin
                    sleft <= 11'd8;
                    got   <= 11'd1;
                end else if (sv1) begin
                    sh64 <= {pbuf_q, sh64[63:8]};
                    got  <= got + 1'b1;
                end else if (got == 11'd9) begin
                    t_seed_we   <= 1'b1;
                    t_seed_idx  <= CW'(h_first + 32'(k));
                    t_seed_data <= sh64;
                    got         <= 11'd0;
                    k           <= k + 1'b1;
                    if (32'(k) + 32'd1 == seed_n) answer(h_first, seed_n, 1'b1);
                end
            end
            S_ROWS: begin
                // row k: label and FB feature bytes
                if (got == 11'd0 && sleft == 11'd0 && !sv1) begin
                    sleft <= 11'(RB);
                    got   <= 11'd1;
                end else if (sv1) begin
                    if (got == 11'd1) t_ex_y <= YW'(pbuf_q);
                    else xsh <= xcat[8*FB+7:8];
                    got <= got + 1'b1;
                end else if (32'(got) == RB + 1 && !t_busy) begin
                    t_ex_valid <= 1'b1;
                    got        <= 11'd0;
                    state      <= S_TRAIN;
                end
            end
            S_TRAIN: begin
                // ex_valid is seen this cycle; busy rises at the next
                state <= S_TWAIT;
            end
            S_TWAIT: begin
                if (!t_busy) begin
                    trained <= trained + 1'b1;
                    k       <= k + 1'b1;
                    if (k + 1'b1 == h_count) begin
                        answer(trained + 1'b1, 32'd0, 1'b0);
                    end else begin
                        state <= S_ROWS;
                    end
                end
            end
            S_RD_A: begin
                state <= S_RD_W;               // the RAM takes the address
            end
            S_RD_W: begin
                state <= S_RD_C;               // the word is on dbg_data
            end
            S_RD_C: begin
                rword <= (what == 2'd2) ? t_dbg_thresh : t_dbg_data;
                rhi   <= 1'b0;
                state <= S_RD_E;
            end
            S_RD_E: begin
                if (r_axis_tready) begin
                    if (!rhi) begin
                        rhi <= 1'b1;
                    end else if (rleft == 17'd1) begin
                        state <= S_IDLE;
                    end else begin
                        rleft      <= rleft - 1'b1;
                        t_dbg_addr <= t_dbg_addr + 1'b1;
                        state      <= S_RD_A;
                    end
                end
            end
            S_WORDS: begin
                if (r_axis_tready) begin
                    bi <= bi + 1'b1;
                    if (bi == 2'd3) begin
                        if (widx == wlast) state <= S_IDLE;
                        else widx <= widx + 1'b1;
                    end
                end
            end
            default: state <= S_IDLE;
        endcase
        if (rst) begin
            state  <= S_IDLE;
            sleft  <= 11'd0;
            sv1    <= 1'b0;
            t_init <= 1'b0;
            t_seed_we <= 1'b0;
            t_ex_valid <= 1'b0;
        end
    end

    wire unused_ok = &{1'b0, rd, ev_frame_sent, xcat[7:0]};
endmodule

`default_nettype wire
