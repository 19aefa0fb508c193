`default_nettype none
/*
 * conv_query - the convolutional board's query path: the generated
 *              convolutional core (docs/conv-core.md) behind the tabular
 *              core's interface (docs/core-interface.md), so that
 *              proto_engine drives it unchanged (docs/protocol.md
 *              section 4, "Image queries", protocol version 7)
 *
 *   proto_engine --bank_wr (word by word)--> threshold rows, weight rows --> <conv core>
 *                --req (image, K_m, Q_m)---> image rows, one core request -->
 *                <--res (samples or stats)-- class sums, or their statistics <--
 *
 * Hand-written; the core it wraps is generated (hw.GenerateConv) and named
 * by the macro PTM_CONV_CORE (default ptm_conv_core, hw.Config.Prefix
 * "ptm"); the parameters below must match it (hw.ConvDesign.BoardParams;
 * sim/board sets them).
 *
 * Upload (LOAD_DATA words, in offset order, docs/protocol.md section 2,
 * "A convolutional board"): proto_engine writes word w = addr*LANES + lane
 * of the L*D + NC*C words one at a time (bank_wr_*, BITS = 16: the word as
 * received). Words with addr < DEPTH are thresholds: lane l's low TBITS
 * bits are kept in a row register, and the row is written through the
 * core's bank_wr_* port with its last lane's word. The words after them
 * are the clause weights, class-major (class k's weight of clause c at
 * L*D + k*C + c) while the core's weight memory takes a clause's NC
 * weights as one row: classes 0..NC-2 are kept in NC-1 staging memories
 * (C x 16 bits each), and class NC-1's weight of clause c completes the
 * row, written through wt_wr_* the clock after (with the staged weights
 * read in the clock of the word). Since writes come strictly in offset
 * order from word 0 (proto_engine's next), a threshold word restarts the
 * weight position at class 0, clause 0.
 *
 * Requests: a request's features are one booleanized image, P*H rows of
 * IMG_W bits (row r = p*H + y at bits r*IMG_W, pixel x in bit x): written
 * through img_wr_* (IMG_ROWS clocks, the core idle), then one core request
 * with the request's K and seed; req_ready is the core's acceptance. The
 * core answers K*NC raw class sums (samples mode only):
 *   samples mode (req_stats = 0): the words pass through, res_last only on
 *     the last run of a query (req_more = 0), as the tabular core;
 *   stats mode (req_stats = 1): the words are taken and reduced to the
 *     query's statistics over all its runs (chained by req_more):
 *     per class the votes (the clipped sums' argmax, ties split: U/n
 *     units to each of the n tied classes, U = lcm(1..NC)), the sum and
 *     the sum of squares of the sums clipped to [-CLIP_T, CLIP_T], sent
 *     as NC + NC + NC words after the query's last run (golden conv
 *     Head.Stats, fixed.Core's stats words).
 * An error word of the core (K outside 1..MaxK: proto_engine checks K
 * first, so it does not occur) is passed on with res_last and res_error.
 *
 * Info ROM (info_addr/info_data, combinational): docs/core-interface.md's
 * words with NT = NC, m = C, o = P*H*W (INFO words 3..14).
 *
 * Parameters:
 *   FEATURES          P*H*W, the bits of one booleanized image
 *   IMG_W, IMG_ROWS   W, and P*H, the rows written per request
 *   BITS              the width of an upload word on bank_wr_data (16)
 *   TBITS             B, the threshold width
 *   LANES, LANE_W     L = LC*LL lanes, the width of bank_wr_lane
 *   DEPTH, ADDR_W     D threshold rows; ADDR_W holds every upload word's
 *                     address, weights included (ceil((L*D + NC*C)/L))
 *   CADDR_W           the core's threshold row address width
 *   NC, CLAUSES       classes, clauses C
 *   WADDR_W           the core's weight row address width (G*LC rows)
 *   K_W               width of req_k (the core's)
 *   CLIP_T            T: the statistics clip the class sums to [-T, T]
 *   INFO_VER, LFSR_W, LC, LL, MAXK, HASH32, GROUPS, BEATS
 *                     info ROM words (version, W, lanes, MaxK, model
 *                     hash prefix, G and BT)
 */
`ifndef PTM_CONV_CORE
`define PTM_CONV_CORE ptm_conv_core
`endif
module conv_query #(
    parameter FEATURES = 16,
    parameter IMG_W    = 4,
    parameter IMG_ROWS = 4,
    parameter BITS     = 16,
    parameter TBITS    = 4,
    parameter LANES    = 4,
    parameter LANE_W   = 2,
    parameter DEPTH    = 8,
    parameter ADDR_W   = 4,
    parameter CADDR_W  = 3,
    parameter NC       = 3,
    parameter CLAUSES  = 4,
    parameter WADDR_W  = 2,
    parameter K_W      = 8,
    parameter CLIP_T   = 10,
    parameter [31:0] INFO_VER = 32'h50540002,
    parameter LFSR_W   = 16,
    parameter LC       = 2,
    parameter LL       = 2,
    parameter MAXK     = 255,
    parameter [31:0] HASH32 = 32'h00000000,
    parameter GROUPS   = 2,
    parameter BEATS    = 4
) (
    input  wire                clk,
    input  wire                rst,
    input  wire                bank_wr_en,
    input  wire [LANE_W-1:0]   bank_wr_lane,
    input  wire [ADDR_W-1:0]   bank_wr_addr,
    input  wire [BITS-1:0]     bank_wr_data,
    input  wire                req_valid,
    output wire                req_ready,
    input  wire [FEATURES-1:0] req_features,
    input  wire [K_W-1:0]      req_k,
    input  wire [31:0]         req_seed,
    input  wire                req_stats,
    input  wire                req_more,
    output wire                res_valid,
    input  wire                res_ready,
    output wire [31:0]         res_data,
    output wire                res_last,
    output wire                res_error,
    output wire                idle,
    input  wire [3:0]          info_addr,
    output reg  [31:0]         info_data
);

localparam integer CLS_W  = (NC > 1) ? $clog2(NC) : 1;
localparam integer ROW_W  = (IMG_ROWS > 1) ? $clog2(IMG_ROWS) : 1;
localparam integer OUT_W  = $clog2(3 * NC);
localparam integer CW     = $clog2(CLAUSES + 1);

// U = lcm(1..NC), the vote unit (docs/core-interface.md)
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
localparam integer VOTE_U = vote_unit(NC);

// ------------------------------------------------------------ the core
wire             c_bank_wr_en, c_wt_wr_en, c_img_wr_en, c_req_valid, c_req_ready;
wire [CADDR_W-1:0] c_bank_wr_addr;
wire [LANES*TBITS-1:0] c_bank_wr_data;
wire [WADDR_W-1:0] c_wt_wr_clause;
wire [NC*16-1:0]  c_wt_wr_data;
wire [IMG_W-1:0]  c_img_wr_data;
wire             c_res_valid, c_res_ready, c_res_last, c_res_error, c_idle;
wire [31:0]      c_res_data;

`PTM_CONV_CORE core (
    .clk(clk), .rst(rst),
    .bank_wr_en(c_bank_wr_en), .bank_wr_addr(c_bank_wr_addr), .bank_wr_data(c_bank_wr_data),
    .wt_wr_en(c_wt_wr_en), .wt_wr_clause(c_wt_wr_clause), .wt_wr_data(c_wt_wr_data),
    .img_wr_en(c_img_wr_en), .img_wr_data(c_img_wr_data),
    .req_valid(c_req_valid), .req_ready(c_req_ready), .req_k(req_k), .req_seed(req_seed),
    .res_valid(c_res_valid), .res_ready(c_res_ready), .res_data(c_res_data),
    .res_last(c_res_last), .res_error(c_res_error), .idle(c_idle)
);

// ------------------------------------------------------------ upload
wire thr_word = (32'(bank_wr_addr) < 32'(DEPTH));      // a threshold word

// threshold rows: lanes 0..L-2 kept, the row written with lane L-1
generate
    if (LANES > 1) begin : g_trow
        reg [(LANES-1)*TBITS-1:0] trow;
        genvar tl;
        for (tl = 0; tl < LANES - 1; tl = tl + 1) begin : g_lane
            always @(posedge clk) begin
                if (bank_wr_en && thr_word && bank_wr_lane == LANE_W'(tl)) begin
                    trow[tl*TBITS +: TBITS] <= bank_wr_data[TBITS-1:0];
                end
            end
        end
        assign c_bank_wr_data = {bank_wr_data[TBITS-1:0], trow};
    end else begin : g_trow1
        assign c_bank_wr_data = bank_wr_data[TBITS-1:0];
    end
endgenerate
assign c_bank_wr_en   = bank_wr_en && thr_word && (bank_wr_lane == LANE_W'(LANES - 1));
assign c_bank_wr_addr = bank_wr_addr[CADDR_W-1:0];

// weights: class wk's weight of clause wc is the next weight word
reg [CLS_W-1:0]   wk = {CLS_W{1'b0}};
reg [CW-1:0]      wc = {CW{1'b0}};
reg               wlast_en = 1'b0;       // write the completed row of clause wl_c
reg [WADDR_W-1:0] wl_c;
reg [15:0]        wl_d;                  // class NC-1's weight
wire              wt_word = bank_wr_en && !thr_word;
wire              wt_last = (wk == CLS_W'(NC - 1));
always @(posedge clk) begin
    wlast_en <= wt_word && wt_last;
    if (bank_wr_en) begin
        if (thr_word) begin
            wk <= {CLS_W{1'b0}};
            wc <= {CW{1'b0}};
        end else if (wc == CW'(CLAUSES - 1)) begin
            wc <= {CW{1'b0}};
            wk <= wk + 1'b1;
        end else begin
            wc <= wc + 1'b1;
        end
    end
    if (wt_word) begin
        wl_c <= wc[WADDR_W-1:0];
        wl_d <= bank_wr_data[15:0];
    end
end

// classes 0..NC-2: one staging memory each, read in the clock of class
// NC-1's word
wire [(NC-1)*16-1:0] staged;
genvar sk;
generate
    for (sk = 0; sk < NC - 1; sk = sk + 1) begin : g_stage
        reg [15:0] mem [0:CLAUSES-1];
        reg [15:0] q;
        always @(posedge clk) begin
            if (wt_word && wk == CLS_W'(sk)) begin
                mem[wc[WADDR_W-1:0]] <= bank_wr_data[15:0];
            end
            if (wt_word && wt_last) begin
                q <= mem[wc[WADDR_W-1:0]];
            end
        end
        assign staged[sk*16 +: 16] = q;
    end
endgenerate
assign c_wt_wr_en     = wlast_en;
assign c_wt_wr_clause = wl_c;
assign c_wt_wr_data   = {wl_d, staged};

// ------------------------------------------------------------ requests
localparam [2:0] Q_IDLE = 3'd0, Q_ROWS = 3'd1, Q_REQ = 3'd2, Q_RUN = 3'd3, Q_STATS = 3'd4;
reg  [2:0]       qs = Q_IDLE;
reg  [ROW_W-1:0] row;
reg              more_q;           // the running request has req_more
reg              stats_q;          // ... and req_stats
reg              chain = 1'b0;     // the last accepted request had req_more: accumulate on
reg  [OUT_W-1:0] oi;               // stats word sent
reg              p_v = 1'b0;       // the statistics' p_u holds a class sum not yet added in

wire accept = (qs == Q_REQ) && c_req_ready;
assign c_img_wr_en   = (qs == Q_ROWS);
// row `row` of the image: an AND-OR over the rows (an indexed part-select
// made yosys build a 784-bit barrel shifter, about 4,000 LUT4 at MNIST)
reg [IMG_W-1:0] img_row;
integer ri;
always @* begin
    img_row = {IMG_W{1'b0}};
    for (ri = 0; ri < IMG_ROWS; ri = ri + 1) begin
        if (row == ROW_W'(ri)) img_row = img_row | req_features[ri*IMG_W +: IMG_W];
    end
end
assign c_img_wr_data = img_row;
assign c_req_valid   = (qs == Q_REQ);
assign req_ready     = accept;
assign idle          = (qs == Q_IDLE) && c_idle && !p_v;

// stats mode takes every class sum; samples mode passes them on
wire run       = (qs == Q_RUN);
wire c_take    = c_res_valid && c_res_ready;
wire sum_in    = run && stats_q && c_take && !c_res_error;
assign c_res_ready = run && (stats_q ? (!c_res_error || res_ready) : res_ready);

// ------------------------------------------------------------ statistics
// u = clip(v, -T, T); per sample: the running best, the tied classes and
// their number; per class: votes, sums, sums of squares.
// Two stages: the clock of a taken class sum registers its clipped value
// (p_u, p_v); the clock after adds it in (the square, the running best and
// tie count, the vote share, the accumulators). The handshake with the
// core is unchanged; the stats words wait while p_v is set (Q_STATS below).
localparam integer UW = $clog2(CLIP_T + 1) + 1;           // u in UW bits, signed
wire signed [31:0] v   = c_res_data;
wire signed [UW-1:0] u_in = (v > 32'sd0 + CLIP_T) ? UW'(CLIP_T) :
                            (v < -(32'sd0 + CLIP_T)) ? UW'(-CLIP_T) : v[UW-1:0];
reg  signed [UW-1:0] p_u;
always @(posedge clk) begin
    p_v <= sum_in && !rst;
    if (sum_in) p_u <= u_in;
end
wire signed [UW-1:0] u = p_u;
wire [31:0]        u32 = 32'($signed(u));
wire [31:0]        sq  = 32'($signed(u) * $signed(u));

reg  [CLS_W-1:0]   cls;            // class of the next word within a sample
reg  signed [UW-1:0] best;
reg  [NC-1:0]      tied;
reg  [CLS_W:0]     ntied;
reg  [31:0]        votes [0:NC-1];
reg  [31:0]        sums  [0:NC-1];
reg  [31:0]        sqs   [0:NC-1];

// U / n for n = 1..NC tied classes
function automatic [31:0] share(input integer n);
    integer i;
    begin
        share = 32'd0;
        for (i = 1; i <= NC; i = i + 1) begin
            if (n == i) share = 32'(VOTE_U / i);
        end
    end
endfunction

wire               first_c = (cls == {CLS_W{1'b0}});
wire               gt      = first_c || (u > best);
wire               eq      = !first_c && (u == best);
wire [NC-1:0]      onehot  = NC'(1) << cls;
wire [NC-1:0]      tied_n  = gt ? onehot : eq ? (tied | onehot) : tied;
wire [CLS_W:0]     ntied_n = gt ? (CLS_W+1)'(1) : eq ? ntied + 1'b1 : ntied;
wire [31:0]        vshare  = share(32'(ntied_n));
wire               clear   = accept && !chain;         // a query's first run

integer ci;
always @(posedge clk) begin
    if (clear) begin
        cls <= {CLS_W{1'b0}};
        for (ci = 0; ci < NC; ci = ci + 1) begin
            votes[ci] <= 32'd0;
            sums[ci]  <= 32'd0;
            sqs[ci]   <= 32'd0;
        end
    end else if (p_v) begin
        sums[cls] <= sums[cls] + u32;
        sqs[cls]  <= sqs[cls] + sq;
        best      <= gt ? u : best;
        tied      <= tied_n;
        ntied     <= ntied_n;
        if (cls == CLS_W'(NC - 1)) begin
            cls <= {CLS_W{1'b0}};
            for (ci = 0; ci < NC; ci = ci + 1) begin
                if (tied_n[ci]) votes[ci] <= votes[ci] + vshare;
            end
        end else begin
            cls <= cls + 1'b1;
        end
    end
end

// stats word oi: votes, then sums, then sums of squares
reg [31:0] stat_w;
integer si;
always @* begin
    stat_w = 32'd0;
    for (si = 0; si < NC; si = si + 1) begin
        if (32'(oi) == si)          stat_w = votes[si];
        if (32'(oi) == NC + si)     stat_w = sums[si];
        if (32'(oi) == 2 * NC + si) stat_w = sqs[si];
    end
end
wire stat_last = (oi == OUT_W'(3 * NC - 1));

assign res_valid = (run && c_res_valid && (!stats_q || c_res_error)) || (qs == Q_STATS && !p_v);
assign res_data  = (qs == Q_STATS) ? stat_w : c_res_data;
assign res_last  = (qs == Q_STATS) ? stat_last : (c_res_last && (!more_q || c_res_error));
assign res_error = run && c_res_error;

// ------------------------------------------------------------ control
always @(posedge clk) begin
    case (qs)
        Q_IDLE: begin
            row <= {ROW_W{1'b0}};
            if (req_valid && c_idle) qs <= Q_ROWS;
        end
        Q_ROWS: begin
            row <= row + 1'b1;
            if (row == ROW_W'(IMG_ROWS - 1)) qs <= Q_REQ;
        end
        Q_REQ: begin
            if (accept) begin
                more_q  <= req_more;
                stats_q <= req_stats;
                chain   <= req_more;
                qs      <= Q_RUN;
            end
        end
        Q_RUN: begin
            oi <= {OUT_W{1'b0}};
            if (c_take && c_res_last) begin
                if (c_res_error) begin
                    chain <= 1'b0;
                    qs    <= Q_IDLE;
                end else begin
                    qs <= (stats_q && !more_q) ? Q_STATS : Q_IDLE;
                end
            end
        end
        Q_STATS: begin
            if (res_ready && !p_v) begin
                oi <= oi + 1'b1;
                if (stat_last) qs <= Q_IDLE;
            end
        end
        default: qs <= Q_IDLE;
    endcase
    if (rst) begin
        qs    <= Q_IDLE;
        chain <= 1'b0;
    end
end

// ------------------------------------------------------------ info ROM
always @* begin
    case (info_addr)
        4'd0:    info_data = INFO_VER;
        4'd1:    info_data = 32'(NC);
        4'd2:    info_data = 32'(NC);
        4'd3:    info_data = 32'(CLAUSES);
        4'd4:    info_data = 32'(FEATURES);
        4'd5:    info_data = 32'(CLIP_T);
        4'd6:    info_data = 32'(TBITS);
        4'd7:    info_data = 32'(LFSR_W);
        4'd8:    info_data = 32'(LC);
        4'd9:    info_data = 32'(LL);
        4'd10:   info_data = 32'(DEPTH);
        4'd11:   info_data = 32'(MAXK);
        4'd12:   info_data = HASH32;
        4'd13:   info_data = 32'd0;
        4'd14:   info_data = 32'(VOTE_U);
        default: info_data = (32'(GROUPS) << 16) | 32'(BEATS);
    endcase
end

endmodule

`default_nettype wire
