package hw

// The module templates, in dependency order (the core last). Each is
// executed with a view of the Params (blocks.go); replicated structure is
// written as generate loops over the UPPER_CASE parameters and localparams
// every module declares, tables as ranges over rows the view computes.

func init() {
	addModule("lfsr_lane", "leap-forward LFSR of one lane (docs/fixed-point.md 3.1-3.2)", tmplLFSR)
	addModule("seeder", "serial per-request lane seeding (docs/fixed-point.md 3.3)", tmplSeeder)
	addModule("bank", "one lane's threshold memory (iCE40 SB_RAM40_4K, registered read)", tmplBank)
	addModule("lane", "one lane: LFSR, bank and include decision (docs/fixed-point.md 5.1)", tmplLane)
	addModule("clause_lane", "AND accumulation of one clause lane over a group's beats (docs/fixed-point.md 5.2)", tmplClauseLane)
	addModule("class_sum", "per-TM raw class sums v_t of a sample (docs/fixed-point.md 5.3)", tmplClassSum)
	addModule("vote", "clipping, maximum and tie-split vote of a sample (docs/fixed-point.md 5.4-5.6)", tmplVote)
	addModule("stats", "per-request votes, sum and sumsq accumulators (docs/fixed-point.md 6)", tmplStats)
	addModule("fifo", "result FIFO of whole samples (samples mode)", tmplFifo)
	addModule("info", "ROM of the shape, parameters and model hash", tmplInfo)
	addModule("core", "PTM inference core: request and result streams, bank write port, beat schedule", tmplCore)
}

const tmplLFSR = `// The state holds the window a[n..n+W-1] of the m-sequence, a[n] in bit 0.
// One step makes one draw: it advances the sequence by B steps, the B new
// bits being r[k] = XOR over the taps e in { {{- .TapList -}} } of state[e + k]
// (k = 0..B-1, r[0] the oldest), and shifts them in at the top:
// state' = {r, state[W-1:B]}. The draw is therefore the top B bits of the
// state (no register of its own): valid from the cycle after a step until
// the next step. A step with load takes seed_state instead: the core
// shifts the seeds through the lanes' states (state is seed_state of the
// neighbouring lane).
module {{.Prefix}}_lfsr_lane #(
    // Set by the generator (the taps below are those of x^W): regenerate
    // rather than override.
    parameter integer W = {{.W}}, // LFSR width
    parameter integer B = {{.Bits}}   // bits per draw
) (
    input  wire         clk,
    input  wire         step,       // make one draw, or with load take seed_state
    input  wire         load,       // (with step) load seed_state
    input  wire [W-1:0] seed_state, // the next state while loading
    output wire [B-1:0] draw,       // the last draw, valid the cycle after step
    output reg  [W-1:0] state       // the state (the next lane's seed_state)
);
    wire [B-1:0] next;

    genvar k;
    generate
        for (k = 0; k < B; k = k + 1) begin : g_bit
            assign next[k] = {{.TapXor}};
        end
    endgenerate

    always @(posedge clk) begin
        if (step)
            state <= load ? seed_state : {next, state[W-1:B]};
    end

    assign draw = state[W-1:W-B];
endmodule

` + "`default_nettype wire\n"

const tmplSeeder = `// After start, lane l = 0..LANES-1 receives, one lane per cycle,
//     t_l = (Q + (l + 1) * PHI) mod 2^W,  s_l = mix(t_l), s_l = PHI if 0,
// mix(x) = five shift-add / shift-xor steps; they are spread over three
// register stages; the last (the core's lane control registers) takes
// load and load_state. done is high in the cycle the last lane's seed is
// offered (it is loaded into the lane one cycle later).
module {{.Prefix}}_seeder #(
    // Set by the generator: regenerate rather than override.
    parameter integer W      = {{.W}}, // LFSR width
    parameter integer LANE_W = {{.LaneW}}   // width of a lane index
) (
    input  wire              clk,
    input  wire              rst,
    input  wire              start,      // begin seeding every lane from seed
    input  wire [31:0]       seed,       // request seed Q
    output wire              load,       // load_state is the seed of the next lane (0 first)
    output wire [W-1:0]      load_state,
    output wire              done        // the last lane's seed is offered in this cycle
);
    localparam [W-1:0]      PHI       = {{.PhiLit}};
    localparam [LANE_W-1:0] LAST_LANE = {{dec .LaneW (sub .L 1)}}; // LANES - 1, LANES = {{.L}}
{{- if .SeedUnused}}

    wire [31-W:0] unused_seed = seed[31:W]; // Q is reduced mod 2^W
{{- end}}

    // Stage 0: t_l.
    reg              run;
    reg [LANE_W-1:0] lane0;
    reg [W-1:0]      t0;
    // Stages 1..3: mix.
    reg              valid1, valid2;
    reg [W-1:0]      x1, x2;
    wire [W-1:0] y1     = x1 ^ (x1 >> 6);
    wire [W-1:0] y2     = x2 ^ (x2 >> 11);
    wire [W-1:0] mixed  = y2 + (y2 << 15);
    wire [W-1:0] t_base = run ? t0 : {{.SeedW}};

    always @(posedge clk) begin
        if (rst) begin
            run    <= 1'b0;
            valid1 <= 1'b0;
            valid2 <= 1'b0;
        end else begin
            if (start)
                run <= 1'b1;
            else if (lane0 == LAST_LANE)
                run <= 1'b0;
            valid1 <= run;
            valid2 <= valid1;
        end
        // While not running, t0 follows the seed input, so that it holds
        // Q + PHI after the start edge; no enable depends on start.
        lane0 <= run ? lane0 + 1'b1 : {LANE_W{1'b0}};
        t0    <= t_base + PHI; // one adder: Q + PHI, then t + PHI
        x1    <= t0 + (t0 << 10);
        x2    <= y1 + (y1 << 3);
    end

    assign load       = valid2;
    assign load_state = (mixed == {W{1'b0}}) ? PHI : mixed;
    assign done       = valid2 && !valid1; // valid1 falls a cycle before valid2
endmodule

` + "`default_nettype wire\n"

const tmplBank = `// DEPTH = {{.D}} thresholds of BITS = {{.Bits}} bits at addresses g*BT + b (0 for
// padding slots). Written through the write port between requests; read
// with a registered read port, so rd_data is valid the cycle after rd_en.
// yosys maps it to one SB_RAM40_4K (256 x 16) while DEPTH <= 256.
module {{.Prefix}}_bank #(
    // Set by the generator: regenerate rather than override.
    parameter integer BITS   = {{.Bits}}, // threshold width
    parameter integer ADDR_W = {{.AddrW}}, // address width
    parameter integer DEPTH  = {{.D}}{{if .InitBanks}}, // words
    parameter INIT_FILE = "{{.Prefix}}_bank_lane0.hex" // $readmemh image of the initial contents
{{- else}}  // words
{{- end}}
) (
    input  wire              clk,
    input  wire              wr_en,
    input  wire [ADDR_W-1:0] wr_addr,
    input  wire [BITS-1:0]   wr_data,
    input  wire              rd_en,
    input  wire [ADDR_W-1:0] rd_addr,
    output reg  [BITS-1:0]   rd_data
);
    reg [BITS-1:0] mem [0:DEPTH-1];
{{- if .InitBanks}}

    initial $readmemh(INIT_FILE, mem);
{{- end}}

    always @(posedge clk) begin
        if (wr_en)
            mem[wr_addr] <= wr_data;
    end

    always @(posedge clk) begin
        if (rd_en)
            rd_data <= mem[rd_addr];
    end
endmodule

` + "`default_nettype wire\n"

const tmplLane = `// In every beat the lane makes one draw r and reads its threshold q at the
// beat's address; one cycle later it decides
//     include = (q == 2^B - 1) || (r < q),
// registered: include belongs to the beat issued two cycles earlier. While
// seeding (step with load) the LFSR takes seed_in (the state of lane l+1,
// or the seeder's seed for the last lane) and passes its own state on to
// lane l-1 at seed_out.
module {{.Prefix}}_lane #(
    // Set by the generator: regenerate rather than override.
    parameter integer W      = {{.W}}, // LFSR width
    parameter integer BITS   = {{.Bits}}, // threshold and draw width
    parameter integer ADDR_W = {{.AddrW}}{{if .InitBanks}}, // bank address width
    parameter INIT_FILE = "{{.Prefix}}_bank_lane0.hex" // initial contents of the bank
{{- else}}  // bank address width
{{- end}}
) (
    input  wire              clk,
    input  wire              step,       // a beat's draw or, with load, a seed shift
    input  wire              load,       // (with step) the LFSR takes seed_in
    input  wire              read,       // a beat: read thresh[addr]
    input  wire [W-1:0]      seed_in,
    output wire [W-1:0]      seed_out,   // the LFSR's state
    input  wire [ADDR_W-1:0] addr,
    input  wire              wr_en,      // bank write port
    input  wire [ADDR_W-1:0] wr_addr,
    input  wire [BITS-1:0]   wr_data,
    output reg               incl        // TA decision of the beat issued 2 cycles ago
);
    localparam [BITS-1:0] ALWAYS = {BITS{1'b1}}; // threshold meaning "always include"

    wire [BITS-1:0] draw;
    wire [BITS-1:0] thresh;

    {{.Prefix}}_lfsr_lane lfsr (
        .clk        (clk),
        .step       (step),
        .load       (load),
        .seed_state (seed_in),
        .draw       (draw),
        .state      (seed_out)
    );

    {{.Prefix}}_bank {{- if .InitBanks}} #(
        .INIT_FILE (INIT_FILE)
    ){{end}} bank (
        .clk     (clk),
        .wr_en   (wr_en),
        .wr_addr (wr_addr),
        .wr_data (wr_data),
        .rd_en   (read),
        .rd_addr (addr),
        .rd_data (thresh)
    );

    // r < q as LUT logic rather than a subtractor's carry chain (which
    // costs a chain cell per bit plus an inverter per draw bit): lt[i] is
    // draw[i:0] < thresh[i:0], from the least significant bit up.
    wire [BITS-1:0] lt /* verilator split_var */;

    genvar i;
    generate
        for (i = 0; i < BITS; i = i + 1) begin : g_cmp
            if (i == 0) begin : g_lsb
                assign lt[i] = thresh[i] & ~draw[i];
            end else begin : g_bit
                assign lt[i] = (thresh[i] & ~draw[i]) | (~(thresh[i] ^ draw[i]) & lt[i-1]);
            end
        end
    endgenerate

    always @(posedge clk)
        incl <= (thresh == ALWAYS) || lt[BITS-1];
endmodule

` + "`default_nettype wire\n"

const tmplClauseLane = `// Over the BT beats of a clause group the clause lane sees its LL lanes'
// decisions and the literals of each beat, and keeps
//     ok  = AND over the group's literals of (!include || literal)
//     any = OR  over the group's literals of include
// (padding literal slots, present = 0, count as not included). The clause
// output ok && any is valid the cycle after the group's last beat, until
// the next beat.
module {{.Prefix}}_clause_lane #(
    parameter integer LL = {{.LL}} // literal lanes (set by the generator)
) (
    input  wire          clk,
    input  wire          valid,    // a beat's decisions are present
    input  wire          first,    // ... and it is the group's first beat
    input  wire [LL-1:0] incl,     // decisions of this clause lane's LL lanes
    input  wire [LL-1:0] literal,  // literal values of the beat
    input  wire [LL-1:0] present,  // 0 for padding literal slots
    output wire          clause    // clause output after the group's last beat
);
    reg ok, any;

    wire [LL-1:0] inc      = incl & present;
    wire          ok_next  = (first | ok) & (&(~inc | literal));
    wire          any_next = (~first & any) | (|inc);

    always @(posedge clk) begin
        if (valid) begin
            ok  <= ok_next;
            any <= any_next;
        end
    end

    assign clause = ok & any;
endmodule

` + "`default_nettype wire\n"

const tmplClassSum = `// The LC clause lanes of group g hold the global clauses c = g*LC + ci of
// TMs t = c / m; clause j = c % m votes +1 when even, -1 when odd. The LC
// clauses of a group span at most SLOTS TMs, base(g) .. base(g)+SLOTS-1.
// Per group, a ROM gives base(g) and, per slot, the clause lanes voting
// for (pos) and against (neg) that TM; padding clauses are in neither.
// Pipeline: mask (a), popcount ({{if .Chunked}}2 stages{{else}}1 stage{{end}}), accumulate; done is high
// the cycle after a sample's last group is accumulated, with sums valid.
module {{.Prefix}}_class_sum #(
    // Set by the generator (the ROM below is made for them): regenerate
    // rather than override.
    parameter integer NT       = {{.NT}}, // TMs
    parameter integer LC       = {{.LC}}, // clause lanes
    parameter integer SLOTS    = {{.Slots}}, // most TMs the clauses of one group span
    parameter integer MAX_BASE = {{.MaxBase}}, // largest base(g)
    parameter integer GROUP_W  = {{.GroupW}}, // width of a group index
    parameter integer TM_W     = {{.TMW}}, // width of a TM index
    parameter integer PC_W     = {{.PCW}}, // width of a popcount of LC clause bits
    parameter integer VW       = {{.VW}}  // width of a class sum v_t (signed)
) (
    input  wire               clk,
    input  wire               rst,
    input  wire               valid,       // clause outputs of one group are present
    input  wire [GROUP_W-1:0] group,       // ... of group g
    input  wire               sample_end,  // ... the sample's last group
    input  wire               last,        // ... of the request's last sample
    input  wire [LC-1:0]      clause,
    output reg                done,        // sums hold a complete sample
    output reg                done_last,   // ... the request's last sample
    output wire [NT*VW-1:0]   sums         // v_t, TM 0 in the low bits
);
    // Group ROM: base(g), and the pos and neg clause lanes of slot s in
    // bits s*LC +: LC.
    reg [TM_W-1:0]     base_rom;
    reg [SLOTS*LC-1:0] pos_rom, neg_rom;
    always @(*) begin
        case (group)
{{- range .ClassRows}}
        {{dec $.GroupW .G}}: begin
            base_rom = {{dec $.TMW .Base}}; pos_rom = {{.Pos}}; neg_rom = {{.Neg}};
        end
{{- end}}
        default: begin
            base_rom = {TM_W{1'b0}}; pos_rom = {SLOTS*LC{1'b0}}; neg_rom = {SLOTS*LC{1'b0}};
        end
        endcase
    end

    // Tags of stage a (masks){{if .Chunked}}, p (chunk counts){{end}} and c (counts).
    reg            valid_a, first_a, end_a, last_a;
    reg [TM_W-1:0] base_a;
    always @(posedge clk) begin
        base_a  <= base_rom;
        first_a <= group == {{dec .GroupW 0}};
        end_a   <= sample_end;
        last_a  <= last;
        if (rst) valid_a <= 1'b0;
        else     valid_a <= valid;
    end
{{- if .Chunked}}
    reg            valid_p, first_p, end_p, last_p;
    reg [TM_W-1:0] base_p;
    always @(posedge clk) begin
        base_p  <= base_a;
        first_p <= first_a;
        end_p   <= end_a;
        last_p  <= last_a;
        if (rst) valid_p <= 1'b0;
        else     valid_p <= valid_a;
    end
{{- end}}
    reg            valid_c, first_c, end_c, last_c;
    reg [TM_W-1:0] base_c;
    always @(posedge clk) begin
{{- $s := "a"}}{{if .Chunked}}{{$s = "p"}}{{end}}
        base_c  <= base_{{$s}};
        first_c <= first_{{$s}};
        end_c   <= end_{{$s}};
        last_c  <= last_{{$s}};
        if (rst) valid_c <= 1'b0;
        else     valid_c <= valid_{{$s}};
    end

    // Slot s: the clause outputs of each polarity (stage a), their
    // popcounts{{if .Chunked}} (chunks of {{.ChunkSize}} clause lanes, then their sum){{end}} and diff = pos - neg.
    wire [SLOTS*VW-1:0] diff;

    genvar s, t, k;
    generate
        for (s = 0; s < SLOTS; s = s + 1) begin : g_slot
            reg [LC-1:0]   pos_bits, neg_bits;
            reg [PC_W-1:0] pos_cnt, neg_cnt;
            always @(posedge clk) begin
                pos_bits <= clause & pos_rom[s*LC +: LC];
                neg_bits <= clause & neg_rom[s*LC +: LC];
            end
{{- if .Chunked}}
{{- range .ChunkList}}
            reg [{{sub $.ChunkW 1}}:0] pos_chunk_{{.I}}, neg_chunk_{{.I}};
{{- end}}
            always @(posedge clk) begin
{{- range .ChunkList}}
                pos_chunk_{{.I}} <= {{popsum "pos_bits" .Lo .Hi $.ChunkW}};
                neg_chunk_{{.I}} <= {{popsum "neg_bits" .Lo .Hi $.ChunkW}};
{{- end}}
            end
            always @(posedge clk) begin
                pos_cnt <= {{.ChunkSum "pos"}};
                neg_cnt <= {{.ChunkSum "neg"}};
            end
{{- else}}
            always @(posedge clk) begin
                pos_cnt <= {{popsum "pos_bits" 0 .LC .PCW}};
                neg_cnt <= {{popsum "neg_bits" 0 .LC .PCW}};
            end
{{- end}}
            assign diff[s*VW +: VW] = {{zext "pos_cnt" .PCW .VW}} - {{zext "neg_cnt" .PCW .VW}};
        end

        // TM t: add = the diff of slot t - base_c (a slot t - s with
        // 0 <= t - s <= MAX_BASE), else 0; sum accumulates it over the
        // sample's groups.
        for (t = 0; t < NT; t = t + 1) begin : g_tm
            wire [(SLOTS+1)*VW-1:0] pick /* verilator split_var */; // pick[k*VW +: VW]: the choice among slots k..SLOTS-1
            assign pick[SLOTS*VW +: VW] = {VW{1'b0}};
            for (k = 0; k < SLOTS; k = k + 1) begin : g_pick
                if (t >= k && t - k <= MAX_BASE) begin : g_base
                    localparam [TM_W-1:0] BASE = t - k;
                    assign pick[k*VW +: VW] = (base_c == BASE) ? diff[k*VW +: VW] : pick[(k+1)*VW +: VW];
                end else begin : g_none
                    assign pick[k*VW +: VW] = pick[(k+1)*VW +: VW];
                end
            end
            wire [VW-1:0] add = pick[VW-1:0];
            reg  [VW-1:0] sum;
            always @(posedge clk) begin
                if (valid_c)
                    sum <= (first_c ? {VW{1'b0}} : sum) + add;
            end
            assign sums[t*VW +: VW] = sum;
        end
    endgenerate

    always @(posedge clk) begin
        done_last <= last_c;
        if (rst) done <= 1'b0;
        else     done <= valid_c & end_c;
    end
endmodule

` + "`default_nettype wire\n"

const tmplVote = `// Stage u: u_t = max(-T, min(T, v_t)), T = {{.T}}. Scores: multiclass
// score_c = u_c; binary score_0 = -u_0, score_1 = u_0. A max tree of
// {{.MaxLevels}} register level(s) finds the top score; every class with that score
// (A) gets U/|A| vote units, U = lcm(1..NC) = {{.Unit}}.
module {{.Prefix}}_vote #(
    // Set by the generator (the tables below are made for them): regenerate
    // rather than override.
    parameter integer NT    = {{.NT}}, // TMs
    parameter integer NC    = {{.NC}}, // classes
    parameter integer VW    = {{.VW}}, // width of a class sum v_t (signed)
    parameter integer UW    = {{.UW}}, // width of a clipped sum u_t (signed)
    parameter integer VUW   = {{.VUW}}, // width of a class's vote units of a sample
    parameter integer TIE_W = {{.TieW}}  // width of a number of tied classes
) (
    input  wire              clk,
    input  wire              rst,
    input  wire              valid,      // a sample's class sums are present
    input  wire              last,       // ... of the request's last sample
    input  wire [NT*VW-1:0]  sums,       // v_t, TM 0 in the low bits
    output reg               u_valid,    // clipped sums of a sample
    output wire [NT*UW-1:0]  u,          // u_t, TM 0 in the low bits
    output reg               vote_valid, // vote units of a sample
    output reg               vote_last,  // ... the request's last sample
    output wire [NC*VUW-1:0] votes_out   // per class, class 0 in the low bits
);
    reg u_last;
    always @(posedge clk) begin
        u_last <= last;
        if (rst) u_valid <= 1'b0;
        else     u_valid <= valid;
    end
{{- if not .ClipTable}}

    localparam signed [{{sub .CW 1}}:0] T_POS   = {{.CW}}'sd{{.T}};
    localparam signed [{{sub .CW 1}}:0] T_NEG   = -{{.CW}}'sd{{.T}};
    localparam        [UW-1:0] T_POS_U = {{.UW}}'d{{.T}};
    localparam        [UW-1:0] T_NEG_U = -{{.UW}}'d{{.T}};
{{- end}}

    // Clipping of TM t{{if .ClipTable}}, a table of v_t{{end}}.
    genvar t, c, i;
    generate
        for (t = 0; t < NT; t = t + 1) begin : g_clip
            reg [UW-1:0] u_r;
{{- if .ClipTable}}
            reg [UW-1:0] uc;
            always @(*) begin
                case (sums[t*VW +: VW])
{{- range .ClipRows}}
                {{dec $.VW .R}}: uc = {{.Lit}}; // {{.V}} -> {{.U}}
{{- end}}
                endcase
            end
            always @(posedge clk)
                u_r <= uc;
{{- else}}
            wire signed [{{sub .CW 1}}:0] v = {{sext "sums[t*VW +: VW]" "sums[t*VW + VW-1]" .VW .CW}};
            always @(posedge clk)
                u_r <= (v > T_POS) ? T_POS_U : (v < T_NEG) ? T_NEG_U : {{.KeepU}};
{{- end}}
            assign u[t*UW +: UW] = u_r;
        end
    endgenerate

    // Scores, class c in bits c*UW (signed).
    wire [NC*UW-1:0] scores = {{if .Binary}}{u[UW-1:0], -u[UW-1:0]}{{else}}u{{end}};
{{range .TreeLevels}}
    // Max tree level {{.Lvl}}: {{.N}} maxima of {{.Prev}} values; the scores go along.
    wire [{{.N}}*UW-1:0] max_next_l{{.Lvl}};
    reg  [{{.N}}*UW-1:0] max_l{{.Lvl}};
    reg  [NC*UW-1:0] score_l{{.Lvl}};
    reg              valid_l{{.Lvl}}, last_l{{.Lvl}};
    generate
        for (i = 0; i < {{.N}}; i = i + 1) begin : g_max_l{{.Lvl}}
            if (2*i + 1 < {{.Prev}}) begin : g_pair
                wire [UW-1:0] a = {{.In}}[2*i*UW +: UW];
                wire [UW-1:0] b = {{.In}}[(2*i+1)*UW +: UW];
                assign max_next_l{{.Lvl}}[i*UW +: UW] = ($signed(a) >= $signed(b)) ? a : b;
            end else begin : g_single
                assign max_next_l{{.Lvl}}[i*UW +: UW] = {{.In}}[2*i*UW +: UW];
            end
        end
    endgenerate
    always @(posedge clk) begin
        max_l{{.Lvl}}   <= max_next_l{{.Lvl}};
        score_l{{.Lvl}} <= {{.Scores}};
        last_l{{.Lvl}}  <= {{.Last}};
        if (rst) valid_l{{.Lvl}} <= 1'b0;
        else     valid_l{{.Lvl}} <= {{.Valid}};
    end
{{end}}
    // Winners, then their share U/|A|, and the vote units of each class.
    wire [NC-1:0]     is_max;
    wire [NC*VUW-1:0] picked;
    reg  [NC-1:0]     win;
    reg               valid_w, last_w;
    reg  [VUW-1:0]    share;
    reg  [NC*VUW-1:0] votes_r;
    wire [TIE_W-1:0]  ties = {{popsum "win" 0 .NC .TieW}};

    generate
        for (c = 0; c < NC; c = c + 1) begin : g_class
            assign is_max[c]              = score_l{{.TopLevel}}[c*UW +: UW] == max_l{{.TopLevel}};
            assign picked[c*VUW +: VUW] = win[c] ? share : {VUW{1'b0}};
        end
    endgenerate

    always @(posedge clk) begin
        win    <= is_max;
        last_w <= last_l{{.TopLevel}};
        if (rst) valid_w <= 1'b0;
        else     valid_w <= valid_l{{.TopLevel}};
    end

    always @(*) begin
        case (ties)
{{- range .Shares}}
        {{dec $.TieW .N}}: share = {{dec $.VUW .Unit}};
{{- end}}
        default: share = {{dec .VUW 0}};
        endcase
    end

    always @(posedge clk) begin
        votes_r   <= picked;
        vote_last <= last_w;
        if (rst) vote_valid <= 1'b0;
        else     vote_valid <= valid_w;
    end

    assign votes_out = votes_r;
endmodule

` + "`default_nettype wire\n"

const tmplStats = `// Accumulates, over the samples of a request, votes_c (unsigned, VOTE_W
// bits), sum_t of u_t (signed, SUM_W bits) and sumsq_t of u_t^2 (unsigned,
// SQ_W bits); the widths hold MaxK = {{.MaxK}} samples. clear (request accepted)
// zeroes them; done is high the cycle after the request's last sample is
// accumulated. u_t^2 takes two stages: |u_t| (mag), then its square (sq{{if .SqTable}},
// a table{{end}}).
module {{.Prefix}}_stats #(
    // Set by the generator: regenerate rather than override.
    parameter integer NT     = {{.NT}}, // TMs
    parameter integer NC     = {{.NC}}, // classes
    parameter integer UW     = {{.UW}}, // width of a clipped sum u_t (signed, |u_t| <= T = {{.T}})
    parameter integer VUW    = {{.VUW}}, // width of a class's vote units of a sample
    parameter integer VOTE_W = {{.VoteW}}, // width of a votes accumulator
    parameter integer SUM_W  = {{.SumW}}, // width of a sum accumulator (signed)
    parameter integer SQ_W   = {{.SqW}}  // width of a sumsq accumulator
) (
    input  wire                 clk,
    input  wire                 rst,
    input  wire                 clear,
    input  wire                 u_valid,
    input  wire [NT*UW-1:0]     u,
    input  wire                 vote_valid,
    input  wire                 vote_last,
    input  wire [NC*VUW-1:0]    votes,
    output reg                  done,
    output wire [NC*VOTE_W-1:0] votes_acc,
    output wire [NT*SUM_W-1:0]  sum_acc,
    output wire [NT*SQ_W-1:0]   sumsq_acc
);
    localparam integer MAG_W = UW - 1;    // width of |u_t|
    localparam integer SQ1_W = 2 * MAG_W; // width of u_t^2

    reg mag_valid, sq_valid;
    always @(posedge clk) begin
        if (rst) begin
            mag_valid <= 1'b0;
            sq_valid  <= 1'b0;
            done      <= 1'b0;
        end else begin
            mag_valid <= u_valid;
            sq_valid  <= mag_valid;
            done      <= vote_valid & vote_last;
        end
    end

    genvar t, c;
    generate
        for (t = 0; t < NT; t = t + 1) begin : g_tm
            wire [UW-1:0]    ut   = u[t*UW +: UW];
            wire [MAG_W-1:0] umag = ut[UW-1] ? -ut[MAG_W-1:0] : ut[MAG_W-1:0];
            reg  [MAG_W-1:0] mag;
            reg  [SQ1_W-1:0] sq;
            reg  [SUM_W-1:0] sum;
            reg  [SQ_W-1:0]  sumsq;
{{- if .SqTable}}
            reg  [SQ1_W-1:0] usq;
            always @(*) begin
                case (mag)
{{- range .Squares}}
                {{dec $.MagW .M}}: usq = {{dec $.SqW1 .Sq}};
{{- end}}
                default: usq = {SQ1_W{1'bx}}; // |u| <= T
                endcase
            end
{{- else}}
            wire [SQ1_W-1:0] usq = {{zext "mag" .MagW .SqW1}} * {{zext "mag" .MagW .SqW1}};
{{- end}}
            always @(posedge clk) begin
                mag <= umag;
                sq  <= usq;
                if (clear) begin
                    sum   <= {SUM_W{1'b0}};
                    sumsq <= {SQ_W{1'b0}};
                end else begin
                    if (u_valid)
                        sum <= sum + {{sext "ut" "ut[UW-1]" .UW .SumW}};
                    if (sq_valid)
                        sumsq <= sumsq + {{zext "sq" .SqW1 .SqW}};
                end
            end
            assign sum_acc[t*SUM_W +: SUM_W] = sum;
            assign sumsq_acc[t*SQ_W +: SQ_W] = sumsq;
        end

        for (c = 0; c < NC; c = c + 1) begin : g_class
            reg [VOTE_W-1:0] acc;
            always @(posedge clk) begin
                if (clear)
                    acc <= {VOTE_W{1'b0}};
                else if (vote_valid)
                    acc <= acc + {{zext "votes[c*VUW +: VUW]" .VUW .VoteW}};
            end
            assign votes_acc[c*VOTE_W +: VOTE_W] = acc;
        end
    endgenerate
endmodule

` + "`default_nettype wire\n"

const tmplFifo = `// DEPTH = {{.FifoDepth}} entries of one sample each: {last, v_{NT-1}, ..., v_0}. First-word
// fall-through (head is valid while nonempty). The core never pushes into
// a full FIFO: it starts a sample only while fewer than DEPTH samples are
// started and not yet popped.
module {{.Prefix}}_fifo #(
    // Set by the generator: regenerate rather than override.
    parameter integer DW    = {{add (mul .NT .VW) 1}}, // entry width, NT*VW + 1
    parameter integer DEPTH = {{.FifoDepth}}, // entries
    parameter integer AW    = {{.FifoAW}}   // address width, log2(DEPTH)
) (
    input  wire          clk,
    input  wire          rst,
    input  wire          push,
    input  wire [DW-1:0] push_data,
    input  wire          pop,
    output wire [DW-1:0] head,
    output wire          nonempty
);
    reg [DW-1:0] mem [0:DEPTH-1];
    reg [AW:0]   wr_ptr, rd_ptr; // one bit more than the address

    assign nonempty = wr_ptr != rd_ptr;
    assign head     = mem[rd_ptr[AW-1:0]];

    always @(posedge clk) begin
        if (push)
            mem[wr_ptr[AW-1:0]] <= push_data;
        if (rst) begin
            wr_ptr <= {(AW+1){1'b0}};
            rd_ptr <= {(AW+1){1'b0}};
        end else begin
            if (push)
                wr_ptr <= wr_ptr + 1'b1;
            if (pop)
                rd_ptr <= rd_ptr + 1'b1;
        end
    end
endmodule

` + "`default_nettype wire\n"

const tmplInfo = `// Word 0 is the generator version ("PT", major, minor); word 12 the first
// 32 bits of the model hash. Combinational read.
module {{.Prefix}}_info (
    input  wire [3:0]  addr,
    output reg  [31:0] data
);
    always @(*) begin
        case (addr)
{{- range .InfoRows}}
        {{printf "4'd%-2d" .Addr}}: data = {{.Val}}; // {{.Name}}
{{- end}}
        endcase
    end
endmodule

` + "`default_nettype wire\n"

const tmplCore = `// A request (features x, K, seed Q, mode) is accepted in the idle state.
// K outside 1..MaxK is answered by one error word. Otherwise the seeder
// loads the L lane LFSRs (L + 3 cycles), then one beat is issued per clock
// (sample k, group g, beat b, address g*BT + b), stalling at a sample's
// first beat in samples mode only while the result FIFO has no room:
//   issue -> lane control registers -> lanes (draw, bank read) -> include
//   -> clause lanes -> class sum
//   -> samples mode: FIFO -> serializer -> result register
//   -> stats mode: vote -> stats -> NC + 2*NT result words at the end.
// req_more = 1 chains the next request to this one (runs of one query): it
// does not clear the statistics, this request sends no statistic words
// (stats mode) or no res_last (samples mode).
// See docs/core-interface.md for the ports and result words.
module {{.Prefix}}_core #(
    // The port widths. Set by the generator like every constant below: the
    // design is specialized for them (ROMs, tables); regenerate it rather
    // than override them. The board tops take the same names.
    parameter integer FEATURES = {{.O}},  // o, Boolean features of a sample
    parameter integer BITS     = {{.Bits}},  // B, width of a threshold and of a draw
    parameter integer LANE_W   = {{.LaneW}},  // width of a lane index
    parameter integer ADDR_W   = {{.AddrW}},  // width of a bank address (DEPTH = {{.D}} words)
    parameter integer K_W      = {{.KW}}   // width of req_k (K = 1..{{.MaxK}})
) (
    input  wire        clk,
    input  wire        rst,            // synchronous, active high (control only)
    // Bank write port (between requests).
    input  wire        bank_wr_en,
    input  wire [LANE_W-1:0]   bank_wr_lane,
    input  wire [ADDR_W-1:0]   bank_wr_addr,
    input  wire [BITS-1:0]     bank_wr_data,
    // Request stream.
    input  wire        req_valid,
    output wire        req_ready,
    input  wire [FEATURES-1:0] req_features,
    input  wire [K_W-1:0]      req_k,
    input  wire [31:0] req_seed,
    input  wire        req_stats,      // 0: per-sample class sums, 1: statistics
    input  wire        req_more,       // 1: another run of the same query follows
    // Result stream.
    output reg         res_valid,
    input  wire        res_ready,
    output reg  [31:0] res_data,
    output reg         res_last,
    output reg         res_error,
    // Status and info ROM.
    output wire        idle,           // no request in progress
    input  wire [3:0]  info_addr,
    output wire [31:0] info_data
);
    // Sizes and widths (set by the generator, like the parameters above).
    localparam integer NT            = {{.NT}}; // TMs
    localparam integer NC            = {{.NC}}; // classes
    localparam integer CLAUSE_LANES  = {{.LC}}; // LC
    localparam integer LITERAL_LANES = {{.LL}}; // LL
    localparam integer BEATS         = {{.BT}}; // BT, beats per clause group (G = {{.G}} groups)
    localparam integer VW            = {{.VW}}; // width of a class sum v_t (signed)
    localparam integer VOTE_W        = {{.VoteW}}; // widths of the votes, sum and sumsq accumulators
    localparam integer SUM_W         = {{.SumW}};
    localparam integer SQ_W          = {{.SqW}};
    localparam integer STAT_WORDS    = {{.StatWords}}; // NC + 2*NT

    localparam [2:0] S_IDLE  = 3'd0,
                     S_SEED  = 3'd1,
                     S_RUN   = 3'd2,
                     S_WAIT  = 3'd3,
                     S_STATS = 3'd4,
                     S_ERROR = 3'd5;
    localparam [31:0] ERR_K = 32'd1; // error word: K outside 1..MaxK

    reg  [2:0] state;
    reg  [FEATURES-1:0] features;
    reg  [K_W-1:0] k_last;      // K - 1
    reg        stats_mode;
    reg        more;        // req_more of the latest request (reset: 0)

    wire accept = req_valid && req_ready;
    wire k_bad  = {{.MaxKCheck}};

    assign req_ready = state == S_IDLE;
    assign idle      = state == S_IDLE;

    always @(posedge clk) begin
        if (accept) begin
            features   <= req_features;
            k_last     <= req_k - 1'b1;
            stats_mode <= req_stats;
        end
        if (rst)
            more <= 1'b0;
        else if (accept)
            more <= req_more && !k_bad;
    end

    // ---------------------------------------------------------------
    // Seeding.
    localparam integer LFSR_W = {{.W}}; // W, width of a lane's LFSR and seed

    wire        seed_load;
    wire [LFSR_W-1:0] seed_state;
    wire        seed_done;

    {{.Prefix}}_seeder seeder (
        .clk        (clk),
        .rst        (rst),
        .start      (accept && !k_bad),
        .seed       (req_seed),
        .load       (seed_load),
        .load_state (seed_state),
        .done       (seed_done)
    );

    // ---------------------------------------------------------------
    // Beat schedule: sample k, group g, beat b, bank address g*BT + b.
    reg [{{sub .BeatW 1}}:0]  beat;
    reg [{{sub .GroupW 1}}:0]  group;
    reg [{{sub .KW 1}}:0]  sample;
    reg [{{sub .AddrW 1}}:0]  addr;
    reg [{{sub .FifoCountW 1}}:0]  inflight;   // samples started and not yet popped from the FIFO

    wire beat_last    = beat == {{dec .BeatW (sub .BT 1)}};
    wire group_last   = group == {{dec .GroupW (sub .G 1)}};
    wire sample_last  = sample == k_last;
    // at_start / at_end: beat and group are a sample's first / last beat,
    // registered with the counters (from their next values), so issue and
    // the sample counter's enable start from flip-flops, not from the
    // counters' comparisons
    reg  at_start, at_end;
    wire [{{sub .BeatW 1}}:0]  beat_n  = beat_last ? {{dec .BeatW 0}} : beat + 1'b1;
    wire [{{sub .GroupW 1}}:0]  group_n = !beat_last ? group : group_last ? {{dec .GroupW 0}} : group + 1'b1;
    wire sample_start = at_start;
    wire room         = stats_mode || inflight != {{dec .FifoCountW .FifoDepth}};
    wire issue        = state == S_RUN && (!sample_start || room);
    wire request_end  = issue && at_end && sample_last;

    always @(posedge clk) begin
        if (accept) begin
            beat     <= {{dec .BeatW 0}};
            group    <= {{dec .GroupW 0}};
            sample   <= {{dec .KW 0}};
            addr     <= {{dec .AddrW 0}};
            at_start <= 1'b1;
            at_end   <= {{if and (eq .BT 1) (eq .G 1)}}1'b1{{else}}1'b0{{end}};
        end else if (issue) begin
            addr     <= (addr == {{dec .AddrW (sub .D 1)}}) ? {{dec .AddrW 0}} : addr + 1'b1;
            beat     <= beat_n;
            group    <= group_n;
            at_start <= at_end;
            at_end   <= beat_n == {{dec .BeatW (sub .BT 1)}} && group_n == {{dec .GroupW (sub .G 1)}};
            if (at_end)
                sample <= sample + 1'b1;
        end
    end

    // Beat tags, stage 0 (lane control registers), stage 1 (lanes read and
    // draw) and stage 2 (decisions). The beat index goes along, and the
    // literals, first and last of a beat are decoded from it at stage 2
    // (features holds still while beats are in flight).
    reg        valid0, valid1, valid2, group_done3;
    reg        send0, send1, send2, send3;   // the group is its sample's last
    reg        rend0, rend1, rend2, rend3;   // ... and the sample is the request's last
    reg [{{sub .GroupW 1}}:0]  group0, group1, group2, group3;
    reg [{{sub .BeatW 1}}:0]  beat0, beat1, beat2;
    wire       first2 = beat2 == {{dec .BeatW 0}};
    wire       last2  = beat2 == {{dec .BeatW (sub .BT 1)}};

    // Literal i = b*LL + li of beat b for literal lane li: the features,
    // then their negations, then padding slots (present = 0).
    localparam [BEATS*LITERAL_LANES-1:0] PRESENT = {{if .LitPad}}{ {{- .LitPad}}'d0, { {{- .Literals}}{1'b1}}}{{else}}{ {{- .Literals}}{1'b1}}{{end}};
    wire [BEATS*LITERAL_LANES-1:0] lits = {{if .LitPad}}{ {{- .LitPad}}'d0, ~features, features}{{else}}{~features, features}{{end}};
    wire [LITERAL_LANES-1:0] lit2, present2;

    genvar li, bi;
    generate
        for (li = 0; li < LITERAL_LANES; li = li + 1) begin : g_literal_lane
            wire [BEATS-1:0] lit_of_beat, present_of_beat;
            for (bi = 0; bi < BEATS; bi = bi + 1) begin : g_beat
                assign lit_of_beat[bi]     = lits[bi*LITERAL_LANES + li];
                assign present_of_beat[bi] = PRESENT[bi*LITERAL_LANES + li];
            end
            assign lit2[li]     = lit_of_beat[beat2];
            assign present2[li] = present_of_beat[beat2];
        end
    endgenerate

    // Lane control broadcast: the lanes see a beat (step, address) one cycle
    // after issue, through registers duplicated per group of CTRL_LANES lanes
    // (copy g drives lanes g*CTRL_LANES ..) so that no net fans out from
    // logic to every lane. Seeding shifts the seeds through the lanes'
    // LFSRs: while the seeder offers them (lane 0's first), every lane
    // steps with load (step_q and load_q; the banks are read on beats
    // only, read_q), lane LANES-1 taking seed_q and
    // lane l < LANES-1 lane l+1's state, so that after LANES shifts lane l
    // holds its seed. The bank writes go through registers too (one cycle
    // after bank_wr_en: wr_hi/wr_lo below).
    localparam integer CTRL_LANES  = {{.CtrlLanes}};
    localparam integer CTRL_COPIES = {{.CtrlGroups}}; // ceil(LANES / CTRL_LANES)

    // copy g: step_q[g], load_q[g], read_q[g], addr_q[g*ADDR_W +: ADDR_W]
    (* keep *) reg [CTRL_COPIES-1:0]        step_q, load_q, read_q;
    (* keep *) reg [CTRL_COPIES*ADDR_W-1:0] addr_q;
    reg  [LFSR_W-1:0] seed_q;
    reg  [ADDR_W-1:0] wr_addr_q;
    reg  [BITS-1:0]   wr_data_q;

    always @(posedge clk) begin
        step_q    <= {CTRL_COPIES{issue || seed_load}};
        load_q    <= {CTRL_COPIES{seed_load}};
        read_q    <= {CTRL_COPIES{issue}};
        addr_q    <= {CTRL_COPIES{addr}};
        seed_q    <= seed_state;
        wr_addr_q <= bank_wr_addr;
        wr_data_q <= bank_wr_data;
    end

    // Lane selects of the bank writes, decoded in two halves of the lane
    // index: lane l = h*2^LO_W + j is written when row h (the high bits,
    // wr_hi[h]) and column j (the low LO_W bits, wr_lo[j]) are, one AND per
    // lane instead of a full comparison of the index per lane.
    localparam integer LO_W = {{.LoW}}; // low bits of a lane index
    localparam integer LO_N = {{.LoN}}; // columns: min(2^LO_W, LANES)
    localparam integer HI_N = {{.HiN}}; // rows: ceil(LANES / 2^LO_W)

    reg  [HI_N-1:0] wr_hi = {HI_N{1'b0}}; // no write before the first reset
    reg  [LO_N-1:0] wr_lo;

    genvar hi, lo;
    generate
        for (hi = 0; hi < HI_N; hi = hi + 1) begin : g_sel_hi
            localparam [LANE_W-1:0] ROW = hi;
            always @(posedge clk) begin
                wr_hi[hi]   <= !rst && bank_wr_en && (bank_wr_lane >> LO_W) == ROW;
            end
        end
        for (lo = 0; lo < LO_N; lo = lo + 1) begin : g_sel_lo
            localparam [LO_W-1:0] COL = lo;
            always @(posedge clk) begin
                wr_lo[lo]   <= bank_wr_lane[LO_W-1:0] == COL;
            end
        end
    endgenerate

    always @(posedge clk) begin
        beat0    <= beat;
        group0   <= group;
        send0    <= group_last;
        rend0    <= group_last && sample_last;
        beat1    <= beat0;
        group1   <= group0;
        send1    <= send0;
        rend1    <= rend0;
        beat2    <= beat1;
        group2   <= group1;
        send2    <= send1;
        rend2    <= rend1;
        group3   <= group2;
        send3    <= send2;
        rend3    <= rend2;
        if (rst) begin
            valid0      <= 1'b0;
            valid1      <= 1'b0;
            valid2      <= 1'b0;
            group_done3 <= 1'b0;
        end else begin
            valid0      <= issue;
            valid1      <= valid0;
            valid2      <= valid1;
            group_done3 <= valid2 && last2;
        end
    end

    // ---------------------------------------------------------------
    // Lanes: lane l = ci*LITERAL_LANES + li (clause lane ci, literal lane li),
    // loaded and written when its row and column are selected{{if .InitBanks}};
    // its bank starts with the image BANK_FILE =
    // "{{.Prefix}}_bank_lane<l>.hex"{{end}}.
    localparam integer LANES = CLAUSE_LANES * LITERAL_LANES; // {{.L}}
{{- if .InitBanks}}
    // BANK_FILE is right-aligned in BANK_FILE_LEN characters: the names of
    // lanes with fewer digits start with NUL bytes, which $readmemh skips.
    localparam integer BANK_FILE_LEN = {{.BankFileLen}};
    localparam [79:0]  DIGITS        = "9876543210"; // DIGITS[8*d +: 8] is digit d
{{- end}}

    wire [LANES-1:0] incl;
    wire [(LANES+1)*LFSR_W-1:0] chain; // lane l's state at l*LFSR_W, seed_q at the top

    wire [LFSR_W-1:0] unused_chain = chain[LFSR_W-1:0]; // lane 0's state goes nowhere

    assign chain[LANES*LFSR_W +: LFSR_W] = seed_q;

    genvar l;
    generate
        for (l = 0; l < LANES; l = l + 1) begin : g_lane
{{- if .InitBanks}}
            localparam [8*BANK_FILE_LEN-1:0] BANK_FILE =
{{.BankFileExpr}};
{{- end}}

            {{.Prefix}}_lane {{- if .InitBanks}} #(
                .INIT_FILE (BANK_FILE)
            ){{end}} lane (
                .clk        (clk),
                .step       (step_q[l / CTRL_LANES]),
                .load       (load_q[l / CTRL_LANES]),
                .read       (read_q[l / CTRL_LANES]),
                .seed_in    (chain[(l+1)*LFSR_W +: LFSR_W]),
                .seed_out   (chain[l*LFSR_W +: LFSR_W]),
                .addr       (addr_q[(l / CTRL_LANES)*ADDR_W +: ADDR_W]),
                .wr_en      (wr_hi[l >> LO_W] && wr_lo[l % (1 << LO_W)]),
                .wr_addr    (wr_addr_q),
                .wr_data    (wr_data_q),
                .incl       (incl[l])
            );
        end
    endgenerate

    // ---------------------------------------------------------------
    // Clause lanes.
    wire [CLAUSE_LANES-1:0] clause;

    genvar ci;
    generate
        for (ci = 0; ci < CLAUSE_LANES; ci = ci + 1) begin : g_clause_lane
            {{.Prefix}}_clause_lane clause_lane (
                .clk     (clk),
                .valid   (valid2),
                .first   (first2),
                .incl    (incl[ci*LITERAL_LANES +: LITERAL_LANES]),
                .literal (lit2),
                .present (present2),
                .clause  (clause[ci])
            );
        end
    endgenerate

    // ---------------------------------------------------------------
    // Class sums.
    wire        sums_valid, sums_last;
    wire [NT*VW-1:0] sums;

    {{.Prefix}}_class_sum class_sum (
        .clk        (clk),
        .rst        (rst),
        .valid      (group_done3),
        .group      (group3),
        .sample_end (send3),
        .last       (rend3),
        .clause     (clause),
        .done       (sums_valid),
        .done_last  (sums_last),
        .sums       (sums)
    );

    // ---------------------------------------------------------------
    // Stats mode: vote and accumulate.
    wire        u_valid, vote_valid, vote_last, stats_done;
    wire [NT*{{.UW}}-1:0] u;
    wire [NC*{{.VUW}}-1:0] votes;
    wire [NC*VOTE_W-1:0] votes_acc;
    wire [NT*SUM_W-1:0] sum_acc;
    wire [NT*SQ_W-1:0] sumsq_acc;

    {{.Prefix}}_vote vote (
        .clk        (clk),
        .rst        (rst),
        .valid      (sums_valid && stats_mode),
        .last       (sums_last),
        .sums       (sums),
        .u_valid    (u_valid),
        .u          (u),
        .vote_valid (vote_valid),
        .vote_last  (vote_last),
        .votes_out  (votes)
    );

    {{.Prefix}}_stats stats (
        .clk        (clk),
        .rst        (rst),
        .clear      (accept && !more),   // a run after req_more = 1 accumulates
        .u_valid    (u_valid),
        .u          (u),
        .vote_valid (vote_valid),
        .vote_last  (vote_last),
        .votes      (votes),
        .done       (stats_done),
        .votes_acc  (votes_acc),
        .sum_acc    (sum_acc),
        .sumsq_acc  (sumsq_acc)
    );

    // Stats-mode result words: NC votes, NT sums, NT sumsqs, 32 bits each.
    wire [31:0] stat_word [0:STAT_WORDS-1];

    genvar sc, st;
    generate
        for (sc = 0; sc < NC; sc = sc + 1) begin : g_stat_votes
            assign stat_word[sc] = {{zext "votes_acc[sc*VOTE_W +: VOTE_W]" .VoteW 32}};
        end
        for (st = 0; st < NT; st = st + 1) begin : g_stat_tm
            assign stat_word[NC + st]      = {{sext "sum_acc[st*SUM_W +: SUM_W]" "sum_acc[st*SUM_W + SUM_W-1]" .SumW 32}};
            assign stat_word[NC + NT + st] = {{zext "sumsq_acc[st*SQ_W +: SQ_W]" .SqW 32}};
        end
    endgenerate

    // ---------------------------------------------------------------
    // Samples mode: FIFO of samples, serializer of class sums.
    reg         skid_valid, skid_last, skid_error;
    reg  [31:0] skid_data;
    wire        fifo_nonempty;
    wire [NT*VW:0] fifo_head;
    reg         ser_valid, ser_last;
    reg         ser_at_end;   // ser_valid and ser_tm is the sample's last TM
    reg  [NT*VW-1:0] ser_sums;
    reg  [{{sub .TMW 1}}:0]  ser_tm;

    wire out_free   = !skid_valid;   // the output stage takes a word (a register)
    wire ser_take   = out_free && ser_valid;
    wire ser_end    = out_free && ser_at_end;
    wire ser_free   = !ser_valid || ser_end;   // the serializer takes the FIFO head
    wire fifo_pop   = fifo_nonempty && ser_free;
    wire final_word = ser_end && ser_last;

    {{.Prefix}}_fifo fifo (
        .clk       (clk),
        .rst       (rst),
        .push      (sums_valid && !stats_mode),
        .push_data ({sums_last, sums}),
        .pop       (fifo_pop),
        .head      (fifo_head),
        .nonempty  (fifo_nonempty)
    );

    // The serializer loads the head whenever it is free, also from an empty
    // FIFO (ser_valid stays low then): its enables do not wait for the
    // FIFO's pointer comparison.
    always @(posedge clk) begin
        if (ser_free) begin
            ser_sums <= fifo_head[NT*VW-1:0];
            ser_last <= fifo_head[NT*VW];
            ser_tm   <= {{dec .TMW 0}};
        end else if (ser_take) begin
            ser_sums <= {{if eq .NT 1}}ser_sums{{else}}{ {{- .VW}}'d0, ser_sums[NT*VW-1:VW]}{{end}}; // the next TM's sum at the bottom
            ser_tm   <= ser_tm + 1'b1;
        end
        if (rst) begin
            ser_valid  <= 1'b0;
            ser_at_end <= 1'b0;
        end else if (ser_free) begin
            ser_valid  <= fifo_nonempty;
            ser_at_end <= {{if eq .NT 1}}fifo_nonempty{{else}}1'b0{{end}};
        end else if (ser_take) begin
            ser_at_end <= {{if eq .NT 1}}1'b0{{else}}ser_tm == {{dec .TMW (sub .NT 2)}}{{end}};
        end
    end

    always @(posedge clk) begin
        if (rst)
            inflight <= {{dec .FifoCountW 0}};
        else if (issue && sample_start && !stats_mode && !fifo_pop)
            inflight <= inflight + 1'b1;
        else if (!(issue && sample_start && !stats_mode) && fifo_pop)
            inflight <= inflight - 1'b1;
    end

    // ---------------------------------------------------------------
    // Result register and control.
    // stat_cur holds stat_word[stat_idx], loaded a word ahead, so that
    // the offered word is a register. The word ahead (index stat_idx + 1)
    // is selected by a one-hot register, stat_nsel, as an AND-OR of the
    // words: two or three LUT levels instead of a binary multiplexer's
    // five, on what was the core clock's critical path.
    reg  [{{sub .StatIdxW 1}}:0] stat_idx;
    reg  [STAT_WORDS-1:0] stat_nsel;
    reg  [31:0] stat_cur;
    reg  [31:0] stat_next;
    integer     stat_i;
    always @(*) begin
        stat_next = 32'd0;
        for (stat_i = 0; stat_i < STAT_WORDS; stat_i = stat_i + 1)
            stat_next = stat_next | (stat_word[stat_i] & {32{stat_nsel[stat_i]}});
    end
    wire stat_take = state == S_STATS && out_free;
    wire stat_end  = stat_take && stat_idx == {{dec .StatIdxW (sub .StatWords 1)}};

    // The word offered to the output stage in this cycle (taken when
    // out_free).
    reg         w_valid, w_last, w_error;
    reg  [31:0] w_data;
    always @(*) begin
        w_valid = 1'b0;
        w_data  = {{sext "ser_sums[VW-1:0]" "ser_sums[VW-1]" .VW 32}};
        w_last  = ser_last && ser_at_end && !more;
        w_error = 1'b0;
        if (state == S_ERROR) begin
            w_valid = 1'b1;
            w_data  = ERR_K;
            w_last  = 1'b1;
            w_error = 1'b1;
        end else if (state == S_STATS) begin
            w_valid = 1'b1;
            w_data  = stat_cur;
            w_last  = stat_idx == {{dec .StatIdxW (sub .StatWords 1)}};
        end else if (ser_valid) begin
            w_valid = 1'b1;
        end
    end

    // Output stage: the result register and a skid register behind it.
    // A word offered while the result register is held (res_valid and not
    // res_ready) waits in the skid register, and no word is offered while
    // the skid register is full: the core's enables depend on skid_valid,
    // a register, never on res_ready. With res_ready high the skid
    // register stays empty.
    wire res_move = !res_valid || res_ready;
    always @(posedge clk) begin
        if (res_move) begin
            if (skid_valid) begin
                res_data  <= skid_data;
                res_last  <= skid_last;
                res_error <= skid_error;
            end else if (w_valid) begin
                res_data  <= w_data;
                res_last  <= w_last;
                res_error <= w_error;
            end
        end else if (!skid_valid) begin
            skid_data  <= w_data;
            skid_last  <= w_last;
            skid_error <= w_error;
        end
        if (rst) begin
            res_valid  <= 1'b0;
            skid_valid <= 1'b0;
        end else if (res_move) begin
            res_valid  <= skid_valid || w_valid;
            skid_valid <= 1'b0;
        end else if (!skid_valid) begin
            skid_valid <= w_valid;
        end
    end

    always @(posedge clk) begin
        if (state != S_STATS) begin
            stat_idx  <= {{dec .StatIdxW 0}};
            stat_nsel <= {{"{"}}{{sub .StatWords 1}}'d1, 1'b0};
            stat_cur  <= stat_word[0];
        end else if (stat_take) begin
            stat_idx  <= stat_idx + 1'b1;
            stat_nsel <= stat_nsel << 1;
            stat_cur  <= stat_next;
        end
    end

    always @(posedge clk) begin
        if (rst) begin
            state <= S_IDLE;
        end else begin
            case (state)
            S_IDLE:  if (accept)      state <= k_bad ? S_ERROR : S_SEED;
            S_SEED:  if (seed_done)   state <= S_RUN;
            S_RUN:   if (request_end) state <= S_WAIT;
            S_WAIT:  if (stats_mode ? stats_done : final_word)
                                      state <= (stats_mode && !more) ? S_STATS : S_IDLE;
            S_STATS: if (stat_end)    state <= S_IDLE;
            S_ERROR: if (out_free)    state <= S_IDLE;
            default:                  state <= S_IDLE;
            endcase
        end
    end

    {{.Prefix}}_info info (
        .addr (info_addr),
        .data (info_data)
    );
endmodule


` + "`default_nettype wire\n"
