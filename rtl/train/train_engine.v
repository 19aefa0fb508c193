`default_nettype none
/*
 * train_engine - the on-chip PTM trainer: one example per command, bit-exact
 *
 * Executes docs/fixed-point-training.md sections 5.2-5.3 for one example:
 * the literals of x, the TM update of TM y towards positive and (multiclass)
 * the negative class drawn from the control lane, TM update towards
 * negative; binary models update TM 0 towards y == 1. The epoch shuffle
 * (5.1) is left to the host, which streams the rows in shuffled order.
 *
 * Storage (section 11): LL literal lanes; lane k holds the TAs of the
 * literals i with i mod LL = k. Per lane one single-port SPV RAM of
 * NT*M*G*2N 16-bit words (TA (c, i) at ((c*G + i div LL)*2N + n), G =
 * ceil(2o/LL)), an SB_SPRAM256KA on the UP5K, and one include-mass RAM of
 * NT*M*G words (I of TA (c, i) at c*G + i div LL). The NT*M 64-bit clause
 * lanes live in one RAM, the control lane in a register.
 *
 * Schedule, one clause engine, LL TAs at once:
 *   phase A  per clause: load its lane, per group of LL literals read the
 *            LL include masses and make the group's sampling draws (one
 *            per 0-literal, in literal order) in one cycle, store the lane
 *   sum      class sum of the firing clauses, clipped to [-T, T]
 *   phase B  per clause: load its lane, selection draw; Type I: per group
 *            LL rounding draws and one TPM stream of the group's LL SPVs;
 *            Type II: TPM4 streams of the selected TAs; store the lane
 *   stream   2 cycles per state (read, write) over 2N states plus a tail
 *            write; then the LL include masses get the TPMs' changes
 *
 * Parameters (documented in hw/trainer.go, which derives them):
 *   NT, NC, M, O   TMs, classes, clauses per TM, features
 *   T              vote margin
 *   N              states per action
 *   B              SPV width: masses sum to 2^B (8..15)
 *   LL             literal lanes (1..4)
 *   UP, DOWN       move probabilities as 16-bit fractions (hw.MovesOf)
 *   PAPER          1: the paper's update rule, 0: consistent (ptm-rule.md)
 *   BINARY         1: one TM, target y == 1
 *   USE_SPRAM      1: SPV RAMs are SB_SPRAM256KA (with `define ICE40)
 *
 * Ports:
 *   clk, rst        clock; synchronous reset (control only)
 *   busy            a command is running
 *   init_start      (idle) set every SPV to 2^(B-1) in states N-1 and N
 *                   and every include mass to 2^(B-1)
 *   seed_we         (idle) load lane seed_idx: 0 the control lane,
 *   seed_idx        1 + c clause lane c (fixedtrain.ControlSeed/ClauseSeed)
 *   seed_data
 *   ex_valid        (idle) train on example (ex_x, ex_y)
 *   ex_x            feature bits, bit i = feature i
 *   ex_y            label 0..NC-1
 *   dbg_sel         (idle) readback: 0 SPV word, 1 include mass
 *   dbg_lane        literal lane
 *   dbg_addr        word address in the lane
 *   dbg_data        the word, the cycle after the address
 *   dbg_thresh      with dbg_sel = 1: the inference threshold of the TA,
 *                   min(I, 2^B - 1) (docs/fixed-point-training.md 6), so
 *                   the trained include RAMs serve as inference banks
 */
module train_engine #(
    parameter NT        = 3,
    parameter NC        = 3,
    parameter M         = 4,
    parameter O         = 4,
    parameter T         = 4,
    parameter N         = 8,
    parameter B         = 12,
    parameter LL        = 4,
    parameter UP        = 48732,
    parameter DOWN      = 16804,
    parameter PAPER     = 0,
    parameter BINARY    = 0,
    parameter USE_SPRAM = 0,
    // derived: do not override
    parameter LITS      = 2 * O,
    parameter G         = (LITS + LL - 1) / LL,
    parameter NCL       = NT * M,
    parameter SPV_DEPTH = NCL * G * 2 * N,
    parameter INC_DEPTH = NCL * G,
    parameter SAW       = $clog2(SPV_DEPTH),
    parameter IAW       = $clog2(INC_DEPTH + 1),
    parameter CW        = $clog2(NCL + 1),
    parameter YW        = (NC > 2) ? $clog2(NC) : 1,
    parameter KW        = (LL > 1) ? $clog2(LL) : 1
) (
    input  wire           clk,
    input  wire           rst,
    output wire           busy,

    input  wire           init_start,

    input  wire           seed_we,
    input  wire [CW-1:0]  seed_idx,
    input  wire [63:0]    seed_data,

    input  wire           ex_valid,
    input  wire [O-1:0]   ex_x,
    input  wire [YW-1:0]  ex_y,

    input  wire           dbg_sel,
    input  wire [KW-1:0]  dbg_lane,
    input  wire [SAW-1:0] dbg_addr,
    output wire [15:0]    dbg_data,
    output wire [15:0]    dbg_thresh
);
    localparam N2  = 2 * N;
    localparam GL  = G * LL;
    localparam SW  = $clog2(N2 + 2);
    localparam GW  = $clog2(G + 1);
    localparam JW  = (M > 1) ? $clog2(M) : 1;
    localparam TMW = (NT > 1) ? $clog2(NT) : 1;
    localparam LW  = (NCL > 1) ? $clog2(NCL) : 1;
    localparam VW  = $clog2((M > T ? M : T) + 1) + 2; // signed -max(M,T)..max(M,T)
    localparam [15:0] HALF = 16'(1 << (B - 1));
    localparam [SW-1:0] N2S = SW'(N2);
    localparam [GW-1:0] GG  = GW'(G);
    localparam [JW-1:0] MM  = JW'(M);

    localparam [4:0] S_IDLE = 5'd0, S_INIT = 5'd1, S_EX = 5'd2, S_TM = 5'd3,
                     S_ALD = 5'd4, S_ALD2 = 5'd5, S_ARD = 5'd6, S_APROC = 5'd7,
                     S_AST = 5'd8, S_SUM = 5'd9, S_BLD = 5'd10, S_BLD2 = 5'd11,
                     S_BSEL = 5'd12, S_BGRP = 5'd13, S_STREAM = 5'd14,
                     S_IWR = 5'd15, S_BST = 5'd16, S_NEG = 5'd17;

    reg [4:0] state;
    assign busy = state != S_IDLE;

    // ---------------------------------------------------------------
    // Example registers
    reg  [GL-1:0]  lit;                 // literal values, bit i = literal i
    wire [GL-1:0]  exists;              // literal i < 2o
    genvar gi;
    generate
        for (gi = 0; gi < GL; gi = gi + 1) begin : g_exists
            assign exists[gi] = gi < LITS;
        end
    endgenerate
    reg [YW-1:0]  ylab;
    reg [TMW-1:0] tm;
    reg           pos;                  // target positive
    reg           second;               // a negative TM update follows

    // ---------------------------------------------------------------
    // Clause lanes (RAM) and the control lane
    reg  [63:0] lmem [0:NCL-1];
    reg  [63:0] lq;
    reg  [63:0] ctl;
    reg  [63:0] lane_s;                 // the working clause lane
    reg  [LW-1:0] cl;                   // global clause index t*M + j
    reg  [JW-1:0] j;                    // clause in its TM
    reg  [GW-1:0] g;                    // literal group
    reg  [IAW-1:0] cbase;               // cl * G
    wire [IAW-1:0] ta = cbase + IAW'(g);
    wire [SAW-1:0] spv_base = SAW'(ta * N2);

    wire [16*LL-1:0]     draws;
    wire [64*(LL+1)-1:0] after;
    train_draws #(.COUNT(LL)) u_draws (.state_in(lane_s), .draws(draws), .after(after));

    // ---------------------------------------------------------------
    // Per-clause sampling results of the TM being updated
    reg [1:0]    zmem  [0:M-1];         // included 0-literals, capped at 2
    reg [GW-1:0] wgmem [0:M-1];         // group and lane of the last one
    reg [KW-1:0] wkmem [0:M-1];
    reg [1:0]    zc;
    reg [GW-1:0] wg;
    reg [KW-1:0] wk;
    reg signed [VW-1:0] v;
    reg [VW:0]    amar;                 // A = T -/+ v, 0..2T
    reg           type1;
    reg [1:0]     zsel;                 // z of the clause in phase B
    reg [GW-1:0]  wgsel;
    reg [KW-1:0]  wksel;

    // ---------------------------------------------------------------
    // Lanes: RAMs and TPM datapaths
    reg  [SAW-1:0] init_addr;
    reg  [SW-1:0]  init_n;
    reg  [SW-1:0]  step;
    reg            wph;                 // stream: 0 read cycle, 1 write cycle
    reg  [LL-1:0]  en;                  // lanes taking part in the stream
    reg  [2:0]     kind [0:LL-1];
    reg  [15:0]    rr   [0:LL-1];
    reg            tstart;
    reg  [15:0]    ival [0:LL-1];
    reg            ilatch;
    reg            dsel_q;
    reg  [KW-1:0]  dlane_q;

    wire [15:0] spv_q [0:LL-1];
    wire [15:0] inc_q [0:LL-1];
    wire [16:0] delta [0:LL-1];

    wire is_init = state == S_INIT;
    wire is_idle = state == S_IDLE;

    genvar k;
    generate
        for (k = 0; k < LL; k = k + 1) begin : g_lane
            wire          t_we;
            wire [SW-1:0] t_off;
            wire [15:0]   t_wd;
            train_tpm_lane #(.N(N), .SW(SW), .UP(UP), .DOWN(DOWN)) u_tpm (
                .clk(clk), .start(tstart), .kind(kind[k]), .r(rr[k]),
                .rd_cycle(state == S_STREAM && !wph), .wr_cycle(state == S_STREAM && wph),
                .step(step), .q(spv_q[k]),
                .wr_en(t_we), .wr_off(t_off), .wdata(t_wd), .delta(delta[k]));

            reg           s_en, s_we;
            reg [SAW-1:0] s_addr;
            reg [15:0]    s_wd;
            always @(*) begin
                s_en = 1'b0; s_we = 1'b0; s_addr = dbg_addr; s_wd = 16'd0;
                if (is_init) begin
                    s_en = 1'b1; s_we = 1'b1; s_addr = init_addr;
                    s_wd = (init_n == SW'(N - 1) || init_n == SW'(N)) ? HALF : 16'd0;
                end else if (state == S_STREAM) begin
                    if (!wph) begin
                        s_en = en[k] && step < N2S;
                        s_addr = spv_base + SAW'(step);
                    end else begin
                        s_en = en[k] && t_we; s_we = 1'b1;
                        s_addr = spv_base + SAW'(t_off);
                        s_wd = t_wd;
                    end
                end else if (is_idle) begin
                    s_en = 1'b1;
                end
            end
            train_ram #(.DEPTH(SPV_DEPTH), .AW(SAW), .USE_SPRAM(USE_SPRAM)) u_spv (
                .clk(clk), .en(s_en), .we(s_we), .addr(s_addr), .wdata(s_wd), .rdata(spv_q[k]));

            reg           i_en, i_we;
            reg [IAW-1:0] i_addr;
            reg [15:0]    i_wd;
            always @(*) begin
                i_en = 1'b0; i_we = 1'b0; i_addr = ta; i_wd = ival[k] + delta[k][15:0];
                if (is_init) begin
                    i_en = init_addr < SAW'(INC_DEPTH); i_we = 1'b1;
                    i_addr = IAW'(init_addr); i_wd = HALF;
                end else if (state == S_ARD || state == S_BGRP) begin
                    i_en = 1'b1;
                end else if (state == S_IWR) begin
                    i_en = en[k]; i_we = 1'b1;
                end else if (is_idle) begin
                    i_en = 1'b1; i_addr = IAW'(dbg_addr);
                end
            end
            train_ram #(.DEPTH(INC_DEPTH), .AW(IAW), .USE_SPRAM(0)) u_inc (
                .clk(clk), .en(i_en), .we(i_we), .addr(i_addr), .wdata(i_wd), .rdata(inc_q[k]));

            always @(posedge clk) begin
                if (ilatch) ival[k] <= inc_q[k];
            end
        end
    endgenerate

    always @(posedge clk) begin
        dsel_q  <= dbg_sel;
        dlane_q <= dbg_lane;
    end
    assign dbg_data = dsel_q ? inc_q[dlane_q] : spv_q[dlane_q];
    localparam [15:0] QMAX = 16'((1 << B) - 1);
    wire [15:0] inc_rd = inc_q[dlane_q];
    assign dbg_thresh = (inc_rd > QMAX) ? QMAX : inc_rd;

    // ---------------------------------------------------------------
    // Phase A: sampling of one group of LL literals. The group's
    // 0-literal mask is registered in S_ARD (it depends on x and g only),
    // so S_APROC has the draws, the include masses and the mask at hand.
    reg  [LL-1:0]   zmask;              // 0-literals of group g
    reg  [LL-1:0]   zmask_n;
    reg  [KW:0]     didx   [0:LL-1];    // draw used by lane k: 0-literals below it
    reg  [KW:0]     didx_n [0:LL-1];
    reg  [KW:0]     a_nz;               // draws of the group
    reg  [KW:0]     a_nz_n;
    reg  [16*LL-1:0] draws_r;           // the group's draws (lane_s is stable in S_ARD)
    integer kz;
    always @(*) begin
        a_nz_n = 0;
        for (kz = 0; kz < LL; kz = kz + 1) begin
            zmask_n[kz] = exists[g * LL + kz] && !lit[g * LL + kz];
            didx_n[kz]  = a_nz_n;
            if (zmask_n[kz]) a_nz_n = a_nz_n + 1'b1;
        end
    end
    reg [1:0]    a_cnt;
    reg          a_any;
    reg [KW-1:0] a_last;
    reg [LL-1:0] a_hit;
    integer ka;
    always @(*) begin
        for (ka = 0; ka < LL; ka = ka + 1)
            a_hit[ka] = zmask[ka] && ({1'b0, draws_r[16 * didx[ka] +: 16]} < ({1'b0, inc_q[ka]} << (16 - B)));
        a_cnt = 0; a_any = 1'b0; a_last = 0;
        for (ka = 0; ka < LL; ka = ka + 1) begin
            if (a_hit[ka]) begin
                a_any = 1'b1;
                a_last = KW'(ka);
                if (a_cnt != 2'd2) a_cnt = a_cnt + 2'd1;
            end
        end
    end
    wire [2:0] zsum = {1'b0, zc} + {1'b0, a_cnt};

    // Phase B: one group's TPMs
    reg [LL-1:0] b_en;
    reg [KW:0]   b_nd;                  // draws used (Type I)
    integer kb;
    always @(*) begin
        b_en = 0; b_nd = 0;
        for (kb = 0; kb < LL; kb = kb + 1) begin
            if (type1) begin
                if (exists[g * LL + kb]) begin
                    b_en[kb] = 1'b1;
                    b_nd = b_nd + 1'b1;
                end
            end else if (zsel == 2'd0) begin
                b_en[kb] = exists[g * LL + kb] && !lit[g * LL + kb];
            end else begin
                b_en[kb] = (g == wgsel) && (KW'(kb) == wksel);
            end
        end
    end
    wire fired = zsel == 2'd0;

    // selection: r * 2T < A * 2^16
    wire [47:0] sel_lhs = {32'd0, draws[15:0]} * 48'(2 * T);
    wire [47:0] sel_rhs = 48'(amar) << 16;
    wire        selected = sel_lhs < sel_rhs;

    // negative class: q = (draw32 * (NC-1)) >> 32, skipping y
    wire [31:0] cx  = ctl[31:0] ^ ctl[32:1] ^ ctl[34:3] ^ ctl[35:4];
    localparam [31:0] NCM1 = NC - 1;
    wire [YW-1:0] qneg0 = YW'(({32'd0, cx} * {32'd0, NCM1}) >> 32);
    wire [YW-1:0] qneg  = (qneg0 >= ylab) ? qneg0 + 1'b1 : qneg0;

    // class sum clip and margin
    wire signed [VW-1:0] tpos = VW'(T);
    wire signed [VW-1:0] vcl = (v > tpos) ? tpos : (v < -tpos) ? -tpos : v;

    integer kk;
    always @(posedge clk) begin
        tstart <= 1'b0;
        ilatch <= 1'b0;
        if (rst) begin
            state <= S_IDLE;
        end else begin
            case (state)
                S_IDLE: begin
                    if (init_start) begin
                        state <= S_INIT;
                        init_addr <= 0;
                        init_n <= 0;
                    end else if (seed_we) begin
                        if (seed_idx == 0) ctl <= seed_data;
                        else lmem[LW'(seed_idx - 1'b1)] <= seed_data;
                    end else if (ex_valid) begin
                        lit  <= GL'({~ex_x, ex_x});
                        ylab <= ex_y;
                        state <= S_EX;
                    end
                end
                S_INIT: begin
                    init_addr <= init_addr + 1'b1;
                    init_n <= (init_n == N2S - 1'b1) ? 0 : init_n + 1'b1;
                    if (init_addr == SAW'(SPV_DEPTH - 1)) state <= S_IDLE;
                end
                S_EX: begin
                    if (BINARY != 0) begin
                        tm <= 0; pos <= ylab == 1; second <= 1'b0;
                    end else begin
                        tm <= TMW'(ylab); pos <= 1'b1; second <= 1'b1;
                    end
                    state <= S_TM;
                end
                S_TM: begin
                    cl <= LW'(tm * M);
                    cbase <= IAW'(tm * M * G);
                    j <= 0;
                    v <= 0;
                    state <= S_ALD;
                end
                // ---- phase A
                S_ALD: begin
                    lq <= lmem[cl];
                    state <= S_ALD2;
                end
                S_ALD2: begin
                    lane_s <= lq;
                    g <= 0; zc <= 0; wg <= 0; wk <= 0;
                    state <= S_ARD;
                end
                S_ARD: begin
                    zmask <= zmask_n;
                    a_nz  <= a_nz_n;
                    draws_r <= draws;
                    for (kk = 0; kk < LL; kk = kk + 1) didx[kk] <= didx_n[kk];
                    state <= S_APROC;
                end
                S_APROC: begin
                    lane_s <= after[64 * a_nz +: 64];
                    zc <= (zsum > 3'd2) ? 2'd2 : zsum[1:0];
                    if (a_any) begin
                        wg <= g; wk <= a_last;
                    end
                    if (g == GG - 1'b1) state <= S_AST;
                    else begin
                        g <= g + 1'b1;
                        state <= S_ARD;
                    end
                end
                S_AST: begin
                    lmem[cl] <= lane_s;
                    zmem[j] <= zc; wgmem[j] <= wg; wkmem[j] <= wk;
                    if (zc == 2'd0) v <= j[0] ? v - 1'b1 : v + 1'b1;
                    if (j == MM - 1'b1) state <= S_SUM;
                    else begin
                        j <= j + 1'b1; cl <= cl + 1'b1; cbase <= cbase + IAW'(G);
                        state <= S_ALD;
                    end
                end
                S_SUM: begin
                    amar <= pos ? {1'b0, tpos - vcl} : {1'b0, tpos + vcl};
                    cl <= LW'(tm * M);
                    cbase <= IAW'(tm * M * G);
                    j <= 0;
                    state <= S_BLD;
                end
                // ---- phase B
                S_BLD: begin
                    lq <= lmem[cl];
                    zsel <= zmem[j]; wgsel <= wgmem[j]; wksel <= wkmem[j];
                    state <= S_BLD2;
                end
                S_BLD2: begin
                    lane_s <= lq;
                    type1 <= (j[0] == 1'b0) == pos;
                    state <= S_BSEL;
                end
                S_BSEL: begin
                    lane_s <= after[127:64];
                    g <= 0;
                    if (!selected) state <= S_BST;
                    else if (type1) state <= S_BGRP;
                    else if (zsel == 2'd2 || (PAPER != 0 && zsel == 2'd1)) state <= S_BST;
                    else begin
                        if (zsel == 2'd1) g <= wgsel;
                        state <= S_BGRP;
                    end
                end
                S_BGRP: begin
                    en <= b_en;
                    for (kk = 0; kk < LL; kk = kk + 1) begin
                        rr[kk] <= draws[16 * kk +: 16];
                        if (!type1) kind[kk] <= 3'd4;
                        else if (fired && lit[g * LL + kk]) kind[kk] <= 3'd1;
                        else if (fired && PAPER != 0) kind[kk] <= 3'd2;
                        else kind[kk] <= 3'd3;
                    end
                    if (type1) lane_s <= after[64 * b_nd +: 64];
                    step <= 0; wph <= 1'b0;
                    if (b_en == 0) begin       // Type II: no 0-literal in this group
                        if (g == GG - 1'b1) state <= S_BST;
                        else g <= g + 1'b1;
                    end else begin
                        tstart <= 1'b1;
                        ilatch <= 1'b1;
                        state <= S_STREAM;
                    end
                end
                S_STREAM: begin
                    wph <= ~wph;
                    if (wph) begin
                        if (step == N2S + 1'b1) state <= S_IWR;
                        else step <= step + 1'b1;
                    end
                end
                S_IWR: begin
                    if (g == GG - 1'b1 || (!type1 && zsel == 2'd1)) state <= S_BST;
                    else begin
                        g <= g + 1'b1;
                        state <= S_BGRP;
                    end
                end
                S_BST: begin
                    lmem[cl] <= lane_s;
                    if (j == MM - 1'b1) begin
                        if (second) state <= S_NEG;
                        else state <= S_IDLE;
                    end else begin
                        j <= j + 1'b1; cl <= cl + 1'b1; cbase <= cbase + IAW'(G);
                        state <= S_BLD;
                    end
                end
                S_NEG: begin
                    ctl <= {cx, ctl[63:32]};
                    tm <= TMW'(qneg);
                    pos <= 1'b0;
                    second <= 1'b0;
                    state <= S_TM;
                end
                default: state <= S_IDLE;
            endcase
        end
    end
endmodule
`default_nettype wire
