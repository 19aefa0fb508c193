`default_nettype none
/*
 * conv_query - the convolutional board's query path: the generated
 *              convolutional core (docs/conv-core.md) behind the tabular
 *              core's interface (docs/core-interface.md), so that
 *              proto_engine drives it unchanged (docs/protocol.md
 *              section 4, "Image queries", protocol version 7)
 *
 *   proto_engine --bank_wr (word by word)--> threshold rows, weight rows --> <conv core>
 *                --img_wr (row by row)-----> image rows ----------------------->
 *                --req (K_m, Q_m)----------> one core request ----------------->
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
 * bits are written at once into lane l of row addr through the core's
 * bank_wr_* port (bank_wr_mask selects the lane), so no row is staged
 * here. The words after them
 * are the clause weights, class-major (class k's weight of clause c at
 * L*D + k*C + c): each is written as it comes, into class k's 16-bit
 * column of clause c's row of the core's weight memory (wt_wr_one,
 * wt_wr_class: the memory has a write enable per class), so no weight is
 * staged here. Since writes come strictly in offset order from word 0
 * (proto_engine's next), a threshold word restarts the weight position
 * at class 0, clause 0.
 *
 * Requests: a request's image, P*H rows of IMG_W bits (row p*H + y, pixel
 * x in bit x), comes before it on img_wr_* row by row, as proto_engine
 * takes the image's bytes from the frame, straight into the core's image
 * memory (which holds two images: the next one is written while a request
 * runs on the last, and a request reads the last image written whole);
 * nothing of the image is kept here. A request is one core request with
 * its K and seed; req_ready is the core's acceptance. The
 * core answers K*NC raw class sums (samples mode only):
 *   samples mode (req_stats = 0): the words pass through, res_last only on
 *     the last run of a query (req_more = 0), as the tabular core;
 *   stats mode (req_stats = 1): the words are taken and reduced to the
 *     query's statistics over all its runs (chained by req_more):
 *     per class the votes (the clipped sums' argmax, ties split: U/n
 *     units to each of the n tied classes, U = lcm(1..NC)), the sum and
 *     the sum of squares of the sums clipped to [-CLIP_T, CLIP_T], sent
 *     as NC + NC + NC words after the query's last run (golden conv
 *     Head.Stats, fixed.Core's stats words). The 3*NC 32-bit
 *     accumulators are one memory of 16-bit halves (one block RAM)
 *     updated serially by one 16-bit adder, low half first: a class sum
 *     is taken every seventh clock (registered, clipped the clock after)
 *     and adds into its class's sum, its
 *     square (SB_MAC16 with synth_ice40 -dsp) and, one sample late, the
 *     previous sample's vote share; the last sample's votes are added
 *     after the query's last word (2*NC clocks), then the words are read
 *     out (two reads each).
 * Every result word leaves through a one-entry register slice that
 * takes a word only when empty, so no combinational path runs from the
 * core's result word (or the statistics memory) to res_data, res_valid
 * or res_last, nor from res_ready back into the core.
 * An error word of the core (K outside 1..MaxK: proto_engine checks K
 * first, so it does not occur) is passed on with res_last and res_error.
 *
 * Info ROM (info_addr/info_data, combinational): docs/core-interface.md's
 * words with NT = NC, m = C, o = P*H*W (INFO words 3..14).
 *
 * Parameters:
 *   FEATURES          P*H*W, the bits of one booleanized image (INFO word 4)
 *   IMG_W             W, the bits of an image row
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
 *   WT_BITS           the width of the core's stored weights (hw.ConvParams.WB):
 *                     a class sum is at most CLAUSES * 2^(WT_BITS-1) in
 *                     magnitude, so the statistics keep the sign-extended
 *                     sum in SUM_W = clog2(CLAUSES) + WT_BITS + 1 bits
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
    parameter BEATS    = 4,
    parameter WT_BITS  = 16
) (
    input  wire                clk,
    input  wire                rst,
    input  wire                bank_wr_en,
    input  wire [LANE_W-1:0]   bank_wr_lane,
    input  wire [ADDR_W-1:0]   bank_wr_addr,
    input  wire [BITS-1:0]     bank_wr_data,
    input  wire                img_wr_en,
    input  wire [IMG_W-1:0]    img_wr_data,
    input  wire                req_valid,
    output wire                req_ready,
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
localparam integer VU_W   = $clog2(VOTE_U + 1);    // a vote share U/n in VU_W bits

`include "../lib/const_cmp.vh"

// ------------------------------------------------------------ the core
wire             c_bank_wr_en, c_wt_wr_en, c_req_valid, c_req_ready;
wire [CADDR_W-1:0] c_bank_wr_addr;
wire [LANES*TBITS-1:0] c_bank_wr_data;
wire [LANES-1:0] c_bank_wr_mask;
wire [WADDR_W-1:0] c_wt_wr_clause;
wire [NC*16-1:0]  c_wt_wr_data;
wire             c_wt_wr_one;
wire [CLS_W-1:0]  c_wt_wr_class;
wire             c_res_valid, c_res_ready, c_res_last, c_res_error, c_idle;
wire [31:0]      c_res_data;

`PTM_CONV_CORE core (
    .clk(clk), .rst(rst),
    .bank_wr_en(c_bank_wr_en), .bank_wr_mask(c_bank_wr_mask), .bank_wr_addr(c_bank_wr_addr), .bank_wr_data(c_bank_wr_data),
    .wt_wr_en(c_wt_wr_en), .wt_wr_clause(c_wt_wr_clause), .wt_wr_data(c_wt_wr_data),
    .wt_wr_one(c_wt_wr_one), .wt_wr_class(c_wt_wr_class),
    .img_wr_en(img_wr_en), .img_wr_data(img_wr_data),
    .req_valid(c_req_valid), .req_ready(c_req_ready), .req_k(req_k), .req_seed(req_seed),
    .res_valid(c_res_valid), .res_ready(c_res_ready), .res_data(c_res_data),
    .res_last(c_res_last), .res_error(c_res_error), .idle(c_idle)
);

// ------------------------------------------------------------ upload
wire thr_word = lt_c(32'(bank_wr_addr), 32'(DEPTH));   // a threshold word

// thresholds: each word is written at once into its lane of the core's
// row (the core's threshold memory has a write enable per lane: the
// SPRAMs' and block RAMs' write masks), so no row is kept here
assign c_bank_wr_data = {LANES{bank_wr_data[TBITS-1:0]}};
assign c_bank_wr_mask = LANES'(1) << bank_wr_lane;
assign c_bank_wr_en   = bank_wr_en && thr_word;
assign c_bank_wr_addr = CADDR_W'(bank_wr_addr); // the core's rows (ADDR_W also counts the weight rows)

// weights: class wk's weight of clause wc is the next weight word,
// written at once into class wk's column of the core's row wc
reg [CLS_W-1:0]   wk = {CLS_W{1'b0}};
reg [CW-1:0]      wc = {CW{1'b0}};
always @(posedge clk) begin
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
end
assign c_wt_wr_en     = bank_wr_en && !thr_word;
assign c_wt_wr_clause = wc[WADDR_W-1:0];
assign c_wt_wr_data   = {NC{16'(bank_wr_data)}};
assign c_wt_wr_one    = 1'b1;
assign c_wt_wr_class  = wk;

// ------------------------------------------------------------ requests
localparam [2:0] Q_IDLE = 3'd0, Q_REQ = 3'd2, Q_RUN = 3'd3, Q_FLUSH = 3'd4, Q_STATS = 3'd5;
reg  [2:0]       qs = Q_IDLE;
reg              more_q;           // the running request has req_more
reg              stats_q;          // ... and req_stats
reg              chain = 1'b0;     // the last accepted request had req_more: accumulate on
reg  [OUT_W-1:0] oi;               // stats word read (Q_STATS), vote flushed (Q_FLUSH)
reg  [1:0]       ph = 2'd0;        // the statistics' step of the class sum in p_u (0: none)
reg              pv = 1'b0;        // a class sum taken into v_q, clipped into p_u next
wire             st_idle = (ph == 2'd0) && !pv;   // no class sum in the statistics
reg              hf = 1'b0;        // ... its half (0: low, 1: high)
wire             ob_ready;         // the output slice takes a word
wire             ob_busy;          // ... holds one

wire accept = (qs == Q_REQ) && c_req_ready;
assign c_req_valid   = (qs == Q_REQ);
assign req_ready     = accept;
assign idle          = (qs == Q_IDLE) && c_idle && st_idle && !ob_busy;

// stats mode takes a class sum every seventh clock (when its statistics
// steps are done); samples mode passes them on through the output slice
wire run       = (qs == Q_RUN);
wire c_take    = c_res_valid && c_res_ready;
wire sum_in    = run && stats_q && c_take && !c_res_error;
wire st_free   = st_idle || (ph == 2'd3 && hf);
assign c_res_ready = run && ((stats_q && !c_res_error) ? st_free : ob_ready);

// ------------------------------------------------------------ statistics
// The class sum is registered as taken (v_q) and u = clip(v_q, -T, T)
// the clock after (p_u), so no path runs from the core's result word
// (its class-sum select) through the clip's comparisons; then
// three steps (ph = 1, 2, 3), each a read-modify-write of one 32-bit
// accumulator in two clocks, its low half (hf = 0) then its high half
// with the low half's carry (each half read in its clock, written the
// clock after):
//   ph 1: sums[cls] += u, and the running best, tied classes, their number;
//   ph 2: sqs[cls]  += u*u;
//   ph 3: votes[cls] += the previous sample's share when cls was tied in it
//         (0 in the query's first sample); after the last class the
//         sample's tied classes and share become the previous sample's.
// In the query's first sample every step writes its addend alone (the
// accumulators are not cleared otherwise). After the query's last run
// (Q_FLUSH) NC steps add the last sample's shares to the votes.
// Accumulator i's half h is word 2i + h of the memory.
localparam integer UW = $clog2(CLIP_T + 1) + 1;           // u in UW bits, signed
localparam integer SUM_W = ($clog2(CLAUSES) + WT_BITS + 1 < 32) ? $clog2(CLAUSES) + WT_BITS + 1 : 32;
localparam integer VOTES = 0, SUMS = NC, SQS = 2 * NC;    // accumulator addresses
localparam integer VW = ((SUM_W > UW) ? SUM_W : UW) + 1;  // v, T and -T compared in VW bits, signed
localparam signed [VW-1:0] PT = VW'(CLIP_T);
localparam signed [VW-1:0] NT = VW'(-CLIP_T);
reg  signed [SUM_W-1:0] v_q;        // the class sum taken (the core's word is its sign extension)
wire signed [VW-1:0] v    = VW'(v_q);
// v > T: v non-negative and its bits above T's; v < -T: v negative and,
// as VW-bit two's complement, below -T's (order is kept among negatives);
// the constant comparisons take 32 bits (VW > 32 only with 2^15 clauses
// of 16-bit weights: then the comparators)
wire v_hi = (VW > 32) ? (v > PT) : (!v[VW-1] && gt_c(32'(v[VW-2:0]), 32'(PT[VW-2:0])));
wire v_lo = (VW > 32) ? (v < NT) : (v[VW-1] && lt_c(32'($unsigned(v)), 32'($unsigned(NT))));
wire signed [UW-1:0] u_in = v_hi ? UW'(CLIP_T) :
                            v_lo ? UW'(-CLIP_T) : v[UW-1:0];
reg  signed [UW-1:0] p_u;
wire signed [UW-1:0] u = p_u;
wire [31:0]        u32 = 32'($signed(u));
wire [31:0]        sq  = 32'($signed(u) * $signed(u));

reg  [CLS_W-1:0]   cls;            // class of p_u within its sample
reg                first_s;        // the query's first sample
reg  signed [UW-1:0] best;
reg  [NC-1:0]      tied;
reg  [CLS_W:0]     ntied;
reg  [NC-1:0]      prev_tied;      // the previous sample's tied classes ...
reg  [VU_W-1:0]    prev_share;     // ... and their share U/n (at most U: VU_W bits)

// U / n for n = 1..NC tied classes (a table: no divider)
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
wire               clear   = accept && !chain;         // a query's first run
wire               flush   = (qs == Q_FLUSH) && st_idle;
wire [CLS_W-1:0]   fl_cls  = oi[CLS_W-1:0];
wire               fl_last = (oi == OUT_W'(NC - 1));

// the accumulators: votes at k, sums at NC + k, sums of squares at 2NC + k
reg  [15:0]        acc [0:6*NC-1];
reg  [15:0]        acc_q;          // the read half
reg  [OUT_W-1:0]   a_ra;           // the step's accumulator
reg  [31:0]        a_add;          // ... its addend
reg                a_rd;           // a read this clock
reg                a_new;          // the step writes its addend alone
reg                w_v, w_new, w_hf; // the clock after a half's read: write
reg  [OUT_W:0]     w_a;
reg  [15:0]        w_add;
reg                carry;          // the low half's carry, for the high half
reg  [1:0]         st_rd = 2'd0;   // Q_STATS: 0 read the low half, 1 the high, 2 offer
reg  [15:0]        st_lo;          // ... the low half read
wire [16:0]        w_sum = {1'b0, w_new ? 16'd0 : acc_q} + {1'b0, w_add} + {16'd0, w_hf && carry};
wire               a_hf  = (qs == Q_STATS) ? st_rd[0] : hf;

always @* begin
    a_rd  = 1'b1;
    a_new = first_s;
    a_add = 32'd0;
    a_ra  = oi;
    case (ph)
        2'd1: begin a_ra = OUT_W'(SUMS) + OUT_W'(cls); a_add = u32; end
        2'd2: begin a_ra = OUT_W'(SQS) + OUT_W'(cls);  a_add = sq; end
        2'd3: begin a_ra = OUT_W'(VOTES) + OUT_W'(cls); a_add = prev_tied[cls] ? 32'(prev_share) : 32'd0; end
        default: begin
            a_new = 1'b0;
            if (flush) begin
                a_ra  = OUT_W'(VOTES) + OUT_W'(fl_cls);
                a_add = prev_tied[fl_cls] ? 32'(prev_share) : 32'd0;
            end else begin
                a_rd  = (qs == Q_STATS) && st_rd != 2'd2;
            end
        end
    endcase
end

always @(posedge clk) begin
    if (a_rd) acc_q <= acc[{a_ra, a_hf}];
    if (w_v)  acc[w_a] <= w_sum[15:0];
    if (w_v && !w_hf) carry <= w_sum[16];
end

always @(posedge clk) begin
    w_v   <= (ph != 2'd0) || flush;
    w_a   <= {a_ra, hf};
    w_add <= hf ? a_add[31:16] : a_add[15:0];
    w_new <= a_new;
    w_hf  <= hf;
    if (sum_in) v_q <= c_res_data[SUM_W-1:0];
    if (pv) p_u <= u_in;
    pv <= sum_in;
    if (pv) begin
        ph <= 2'd1;
        hf <= 1'b0;
    end else if (ph != 2'd0 || flush) begin
        hf <= !hf;
        if (hf) ph <= (ph == 2'd3 || ph == 2'd0) ? 2'd0 : ph + 2'd1;
    end
    if (ph == 2'd1 && !hf) begin
        best  <= gt ? u : best;
        tied  <= gt ? onehot : eq ? (tied | onehot) : tied;
        ntied <= gt ? (CLS_W+1)'(1) : eq ? ntied + 1'b1 : ntied;
    end
    if (ph == 2'd3 && hf) begin
        if (cls == CLS_W'(NC - 1)) begin
            cls        <= {CLS_W{1'b0}};
            first_s    <= 1'b0;
            prev_tied  <= tied;
            prev_share <= VU_W'(share(32'(ntied)));
        end else begin
            cls <= cls + 1'b1;
        end
    end
    if (clear) begin
        cls       <= {CLS_W{1'b0}};
        first_s   <= 1'b1;
        prev_tied <= {NC{1'b0}};
    end
    if (rst) begin
        ph <= 2'd0;
        hf <= 1'b0;
        pv <= 1'b0;
    end
end

// ------------------------------------------------------------ output slice
// one entry that takes a word only when empty (a word every second clock
// at most: proto_engine takes one per byte it sends, and drops at most
// one per clock, so this costs a clock per dropped word): res_* come from
// flip-flops, and no path runs from res_ready back into the core
wire        st_last = (oi == OUT_W'(3 * NC - 1));
wire        ob_in_v = (run && c_res_valid && (!stats_q || c_res_error)) || (qs == Q_STATS && st_rd == 2'd2);
wire [33:0] ob_in   = (qs == Q_STATS) ? {1'b0, st_last, acc_q, st_lo}
                                      : {c_res_error, c_res_last && (!more_q || c_res_error), c_res_data};
reg  [33:0] ob_m;
reg         ob_mv = 1'b0;
assign ob_ready = !ob_mv;
assign ob_busy  = ob_mv;
always @(posedge clk) begin
    if (!ob_mv) begin
        ob_m  <= ob_in;
        ob_mv <= ob_in_v;
    end else if (res_ready) begin
        ob_mv <= 1'b0;
    end
    if (rst) ob_mv <= 1'b0;
end
assign res_valid = ob_mv;
assign res_data  = ob_m[31:0];
assign res_last  = ob_m[32];
assign res_error = ob_m[33];

// ------------------------------------------------------------ control
always @(posedge clk) begin
    case (qs)
        Q_IDLE: begin
            if (req_valid && c_idle && st_idle) qs <= Q_REQ;   // the last run's statistics done
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
            oi    <= {OUT_W{1'b0}};
            st_rd <= 2'd0;
            if (c_take && c_res_last) begin
                if (c_res_error) begin
                    chain <= 1'b0;
                    qs    <= Q_IDLE;
                end else begin
                    qs <= (stats_q && !more_q) ? Q_FLUSH : Q_IDLE;
                end
            end
        end
        Q_FLUSH: begin
            if (flush && hf) begin
                oi <= fl_last ? {OUT_W{1'b0}} : oi + 1'b1;
                if (fl_last) qs <= Q_STATS;
            end
        end
        Q_STATS: begin
            // read word oi's halves, then offer it until the slice takes it
            if (st_rd == 2'd0) begin
                st_rd <= 2'd1;
            end else if (st_rd == 2'd1) begin
                st_lo <= acc_q;
                st_rd <= 2'd2;
            end else if (ob_ready) begin
                st_rd <= 2'd0;
                oi    <= oi + 1'b1;
                if (st_last) qs <= Q_IDLE;
            end
        end
        default: qs <= Q_IDLE;
    endcase
    if (rst) begin
        qs    <= Q_IDLE;
        chain <= 1'b0;
        st_rd <= 2'd0;
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
