package hw

// The module templates, in dependency order (the core last). Each is
// executed with *Params; the computed parts are methods in blocks.go.

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
// bits being r[k] = XOR over the taps e in {{"{"}}{{.TapList}}{{"}"}} of state[e + k]
// (k = 0..B-1, r[0] the oldest), and shifts them in at the top:
// state' = {r, state[W-1:B]}.
module {{.Prefix}}_lfsr_lane (
    input  wire         clk,
    input  wire         load,       // load seed_state (has priority over step)
    input  wire [{{sub .W 1}}:0]  seed_state, // non-zero seed of this lane
    input  wire         step,       // make one draw
    output reg  [{{sub .Bits 1}}:0]  draw        // the last draw, valid the cycle after step
);
    reg  [{{sub .W 1}}:0] state;
    wire [{{sub .Bits 1}}:0] next;

{{.LFSREquations}}
    always @(posedge clk) begin
        if (load) begin
            state <= seed_state;
        end else if (step) begin
            state <= {next, state[{{sub .W 1}}:{{.Bits}}]};
            draw  <= next;
        end
    end
endmodule

` + "`default_nettype wire\n"

const tmplSeeder = `// After start, lane l = 0..L-1 receives, one lane per cycle,
//     t_l = (Q + (l + 1) * PHI) mod 2^W,  s_l = mix(t_l), s_l = PHI if 0,
// mix(x) = five shift-add / shift-xor steps; they are spread over three
// register stages; the last (the core's lane control registers) takes
// load, load_lane and load_state. done is high in the cycle the last
// lane's seed is offered (it is loaded into the lane one cycle later).
module {{.Prefix}}_seeder (
    input  wire        clk,
    input  wire        rst,
    input  wire        start,      // begin seeding every lane from seed
    input  wire [31:0] seed,       // request seed Q
    output wire        load,       // load_state is the seed of lane load_lane
    output wire [{{sub .LaneW 1}}:0]  load_lane,
    output wire [{{sub .W 1}}:0] load_state,
    output wire        done        // the last lane's seed is offered in this cycle
);
    localparam [{{sub .W 1}}:0] PHI       = {{.PhiLit}};
    localparam [{{sub .LaneW 1}}:0]  LAST_LANE = {{dec .LaneW (sub .L 1)}};
{{- if .SeedUnused}}

    wire [{{sub 31 .W}}:0] unused_seed = seed[31:{{.W}}]; // Q is reduced mod 2^W
{{- end}}

    // Stage 0: t_l.
    reg        run;
    reg [{{sub .LaneW 1}}:0] lane0;
    reg [{{sub .W 1}}:0] t0;
    // Stages 1..3: mix.
    reg        valid1, valid2;
    reg [{{sub .LaneW 1}}:0] lane1, lane2;
    reg [{{sub .W 1}}:0] x1, x2;
    wire [{{sub .W 1}}:0] y1    = x1 ^ (x1 >> 6);
    wire [{{sub .W 1}}:0] y2    = x2 ^ (x2 >> 11);
    wire [{{sub .W 1}}:0] mixed = y2 + (y2 << 15);
    wire [{{sub .W 1}}:0] t_base = run ? t0 : {{.SeedW}};

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
        lane0 <= run ? lane0 + 1'b1 : {{dec .LaneW 0}};
        t0    <= t_base + PHI; // one adder: Q + PHI, then t + PHI
        x1         <= t0 + (t0 << 10);
        lane1      <= lane0;
        x2         <= y1 + (y1 << 3);
        lane2      <= lane1;
    end

    assign load       = valid2;
    assign load_lane  = lane2;
    assign load_state = (mixed == {{dec .W 0}}) ? PHI : mixed;
    assign done       = valid2 && lane2 == LAST_LANE;
endmodule

` + "`default_nettype wire\n"

const tmplBank = `// D = {{.D}} thresholds of B = {{.Bits}} bits at addresses g*BT + b (0 for padding
// slots). Written through the write port between requests; read with a
// registered read port, so rd_data is valid the cycle after rd_en. yosys
// maps it to one SB_RAM40_4K (256 x 16) while D <= 256.
module {{.Prefix}}_bank {{- if .InitBanks}} #(
    parameter INIT_FILE = "{{.Prefix}}_bank_lane0.hex"
){{end}} (
    input  wire       clk,
    input  wire       wr_en,
    input  wire [{{sub .AddrW 1}}:0] wr_addr,
    input  wire [{{sub .Bits 1}}:0] wr_data,
    input  wire       rd_en,
    input  wire [{{sub .AddrW 1}}:0] rd_addr,
    output reg  [{{sub .Bits 1}}:0] rd_data
);
    reg [{{sub .Bits 1}}:0] mem [0:{{sub .D 1}}];
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
// registered: include belongs to the beat issued two cycles earlier.
module {{.Prefix}}_lane {{- if .InitBanks}} #(
    parameter INIT_FILE = "{{.Prefix}}_bank_lane0.hex"
){{end}} (
    input  wire        clk,
    input  wire        seed_load,  // load this lane's LFSR seed
    input  wire [{{sub .W 1}}:0] seed_state,
    input  wire        beat,       // issue a beat: draw and read thresh[addr]
    input  wire [{{sub .AddrW 1}}:0]  addr,
    input  wire        wr_en,      // bank write port
    input  wire [{{sub .AddrW 1}}:0]  wr_addr,
    input  wire [{{sub .Bits 1}}:0]  wr_data,
    output reg         incl        // TA decision of the beat issued 2 cycles ago
);
    localparam [{{sub .Bits 1}}:0] ALWAYS = {{"{"}}{{.Bits}}{1'b1}}; // threshold meaning "always include"

    wire [{{sub .Bits 1}}:0] draw;
    wire [{{sub .Bits 1}}:0] thresh;

    {{.Prefix}}_lfsr_lane lfsr (
        .clk        (clk),
        .load       (seed_load),
        .seed_state (seed_state),
        .step       (beat),
        .draw       (draw)
    );

    {{.Prefix}}_bank {{- if .InitBanks}} #(
        .INIT_FILE (INIT_FILE)
    ){{end}} bank (
        .clk     (clk),
        .wr_en   (wr_en),
        .wr_addr (wr_addr),
        .wr_data (wr_data),
        .rd_en   (beat),
        .rd_addr (addr),
        .rd_data (thresh)
    );

    always @(posedge clk)
        incl <= (thresh == ALWAYS) || (draw < thresh);
endmodule

` + "`default_nettype wire\n"

const tmplClauseLane = `// Over the BT beats of a clause group the clause lane sees its LL lanes'
// decisions and the literals of each beat, and keeps
//     ok  = AND over the group's literals of (!include || literal)
//     any = OR  over the group's literals of include
// (padding literal slots, present = 0, count as not included). The clause
// output ok && any is valid the cycle after the group's last beat, until
// the next beat.
module {{.Prefix}}_clause_lane (
    input  wire       clk,
    input  wire       valid,    // a beat's decisions are present
    input  wire       first,    // ... and it is the group's first beat
    input  wire [{{sub .LL 1}}:0] incl,     // decisions of this clause lane's LL lanes
    input  wire [{{sub .LL 1}}:0] literal,  // literal values of the beat
    input  wire [{{sub .LL 1}}:0] present,  // 0 for padding literal slots
    output wire       clause    // clause output after the group's last beat
);
    reg ok, any;

    wire [{{sub .LL 1}}:0] inc      = incl & present;
    wire       ok_next  = (first | ok) & (&(~inc | literal));
    wire       any_next = (~first & any) | (|inc);

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
// clauses of a group span at most SLOTS = {{.Slots}} TMs, base(g) .. base(g)+SLOTS-1.
// Per group, a ROM gives base(g) and, per slot, the clause lanes voting
// for (pos) and against (neg) that TM; padding clauses are in neither.
// Pipeline: mask (a), popcount ({{len .PopTagStages}} stage(s)), accumulate; done is high
// the cycle after a sample's last group is accumulated, with sums valid.
module {{.Prefix}}_class_sum (
    input  wire        clk,
    input  wire        rst,
    input  wire        valid,       // clause outputs of one group are present
    input  wire [{{sub .GroupW 1}}:0]  group,       // ... of group g
    input  wire        sample_end,  // ... the sample's last group
    input  wire        last,        // ... of the request's last sample
    input  wire [{{sub .LC 1}}:0]  clause,
    output reg         done,        // sums hold a complete sample
    output reg         done_last,   // ... the request's last sample
    output wire [{{sub (mul .NT .VW) 1}}:0] sums        // v_t, VW = {{.VW}} bits each, TM 0 in the low bits
);
    // Group ROM.
    reg [{{sub .TMW 1}}:0] base_rom;
{{.SlotRegs "rom" .LC}}    always @(*) begin
{{.ClassROM -}}
    end

    // Stage a: the clause outputs of every slot and polarity.
    reg        valid_a, first_a, end_a, last_a;
    reg [{{sub .TMW 1}}:0] base_a;
{{.SlotRegs "bits" .LC}}    always @(posedge clk) begin
{{.SlotMasks -}}
        base_a  <= base_rom;
        first_a <= group == {{dec .GroupW 0}};
        end_a   <= sample_end;
        last_a  <= last;
        if (rst) valid_a <= 1'b0;
        else     valid_a <= valid;
    end

    // Popcount stages.
{{.SlotRegs "cnt" .PCW}}{{.PopcountStages}}
{{- if .Chunked}}
    reg        valid_p, first_p, end_p, last_p;
    reg [{{sub .TMW 1}}:0] base_p;
    always @(posedge clk) begin
        base_p  <= base_a;
        first_p <= first_a;
        end_p   <= end_a;
        last_p  <= last_a;
        if (rst) valid_p <= 1'b0;
        else     valid_p <= valid_a;
    end
{{- end}}
    reg        valid_c, first_c, end_c, last_c;
    reg [{{sub .TMW 1}}:0] base_c;
    always @(posedge clk) begin
{{- if .Chunked}}
        base_c  <= base_p;
        first_c <= first_p;
        end_c   <= end_p;
        last_c  <= last_p;
        if (rst) valid_c <= 1'b0;
        else     valid_c <= valid_p;
{{- else}}
        base_c  <= base_a;
        first_c <= first_a;
        end_c   <= end_a;
        last_c  <= last_a;
        if (rst) valid_c <= 1'b0;
        else     valid_c <= valid_a;
{{- end}}
    end

    // Accumulate: slot s adds pos - neg to TM base + s.
{{.SlotDiffs}}
{{.TMAdds}}
{{.TMSums}}
    always @(posedge clk) begin
        if (valid_c) begin
{{.TMAccumulate -}}
        end
        done_last <= last_c;
        if (rst) done <= 1'b0;
        else     done <= valid_c & end_c;
    end

    assign sums = {{.SumsConcat}};
endmodule

` + "`default_nettype wire\n"

const tmplVote = `// Stage u: u_t = max(-T, min(T, v_t)), T = {{.T}}. Scores: multiclass
// score_c = u_c; binary score_0 = -u_0, score_1 = u_0. A max tree of
// {{.MaxLevels}} register level(s) finds the top score; every class with that score
// (A) gets U/|A| vote units, U = lcm(1..NC) = {{.Unit}}.
module {{.Prefix}}_vote (
    input  wire        clk,
    input  wire        rst,
    input  wire        valid,      // a sample's class sums are present
    input  wire        last,       // ... of the request's last sample
    input  wire [{{sub (mul .NT .VW) 1}}:0] sums,       // v_t, {{.VW}} bits each
    output reg         u_valid,    // clipped sums of a sample
    output wire [{{sub (mul .NT .UW) 1}}:0] u,          // u_t, {{.UW}} bits each
    output reg         vote_valid, // vote units of a sample
    output reg         vote_last,  // ... the request's last sample
    output wire [{{sub (mul .NC .VUW) 1}}:0] votes_out   // per class, {{.VUW}} bits each
);
{{.ClippedDecl}}    reg        u_last;
{{.Clip}}
    always @(posedge clk) begin
        u_last <= last;
        if (rst) u_valid <= 1'b0;
        else     u_valid <= valid;
    end

    assign u = {{.UConcat}};

{{.Scores}}
{{.MaxTree -}}
    // Winners, then their share U/|A|.
    reg [{{sub .NC 1}}:0] win;
    reg        valid_w, last_w;
    always @(posedge clk) begin
{{.Winners -}}
        last_w <= last_l{{.TopLevel}};
        if (rst) valid_w <= 1'b0;
        else     valid_w <= valid_l{{.TopLevel}};
    end

    wire [{{sub .TieW 1}}:0] ties = {{.TieCount}};
    reg  [{{sub .VUW 1}}:0] share;
    always @(*) begin
        case (ties)
{{.UnitTable -}}
        endcase
    end

{{.VoteRegs}}    always @(posedge clk) begin
{{.VoteOut -}}
        vote_last <= last_w;
        if (rst) vote_valid <= 1'b0;
        else     vote_valid <= valid_w;
    end

{{.VotesPacked -}}
endmodule

` + "`default_nettype wire\n"

const tmplStats = `// Accumulates, over the samples of a request, votes_c (unsigned, {{.VoteW}} bits),
// sum_t of u_t (signed, {{.SumW}} bits) and sumsq_t of u_t^2 (unsigned, {{.SqW}} bits);
// the widths hold MaxK = {{.MaxK}} samples. clear (request accepted) zeroes them;
// done is high the cycle after the request's last sample is accumulated.
module {{.Prefix}}_stats (
    input  wire        clk,
    input  wire        rst,
    input  wire        clear,
    input  wire        u_valid,
    input  wire [{{sub (mul .NT .UW) 1}}:0] u,
    input  wire        vote_valid,
    input  wire        vote_last,
    input  wire [{{sub (mul .NC .VUW) 1}}:0] votes,
    output reg         done,
    output wire [{{sub (mul .NC .VoteW) 1}}:0] votes_acc,
    output wire [{{sub (mul .NT .SumW) 1}}:0] sum_acc,
    output wire [{{sub (mul .NT .SqW) 1}}:0] sumsq_acc
);
{{.StatsDecls}}    reg        mag_valid, sq_valid;

{{.StatsSquares}}
    always @(posedge clk) begin
{{.SqRegs -}}
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

{{.StatsUpdates}}
    assign votes_acc = {{.VotesAccPacked}};
    assign sum_acc   = {{.SumPacked}};
    assign sumsq_acc = {{.SqPacked}};
endmodule

` + "`default_nettype wire\n"

const tmplFifo = `// {{.FifoDepth}} entries of one sample each: {last, v_{NT-1}, ..., v_0}. First-word
// fall-through (head is valid while nonempty). The core never pushes into
// a full FIFO: it starts a sample only while fewer than {{.FifoDepth}} samples are
// started and not yet popped.
module {{.Prefix}}_fifo (
    input  wire        clk,
    input  wire        rst,
    input  wire        push,
    input  wire [{{mul .NT .VW}}:0] push_data,
    input  wire        pop,
    output wire [{{mul .NT .VW}}:0] head,
    output wire        nonempty
);
    reg [{{mul .NT .VW}}:0] mem [0:{{sub .FifoDepth 1}}];
    reg [{{.FifoAW}}:0]  wr_ptr, rd_ptr; // one bit more than the address

    assign nonempty = wr_ptr != rd_ptr;
    assign head     = mem[rd_ptr[{{sub .FifoAW 1}}:0]];

    always @(posedge clk) begin
        if (push)
            mem[wr_ptr[{{sub .FifoAW 1}}:0]] <= push_data;
        if (rst) begin
            wr_ptr <= {{dec (add .FifoAW 1) 0}};
            rd_ptr <= {{dec (add .FifoAW 1) 0}};
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
{{.InfoCases -}}
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
    end

    // ---------------------------------------------------------------
    // Seeding.
    localparam integer LFSR_W = {{.W}}; // W, width of a lane's LFSR and seed

    wire        seed_load;
    wire [LANE_W-1:0] seed_lane;
    wire [LFSR_W-1:0] seed_state;
    wire        seed_done;

    {{.Prefix}}_seeder seeder (
        .clk        (clk),
        .rst        (rst),
        .start      (accept && !k_bad),
        .seed       (req_seed),
        .load       (seed_load),
        .load_lane  (seed_lane),
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
    wire sample_start = beat == {{dec .BeatW 0}} && group == {{dec .GroupW 0}};
    wire room         = stats_mode || inflight != {{dec .FifoCountW .FifoDepth}};
    wire issue        = state == S_RUN && (!sample_start || room);
    wire request_end  = issue && beat_last && group_last && sample_last;

    always @(posedge clk) begin
        if (accept) begin
            beat   <= {{dec .BeatW 0}};
            group  <= {{dec .GroupW 0}};
            sample <= {{dec .KW 0}};
            addr   <= {{dec .AddrW 0}};
        end else if (issue) begin
            addr <= (addr == {{dec .AddrW (sub .D 1)}}) ? {{dec .AddrW 0}} : addr + 1'b1;
            if (beat_last) begin
                beat <= {{dec .BeatW 0}};
                if (group_last) begin
                    group  <= {{dec .GroupW 0}};
                    sample <= sample + 1'b1;
                end else begin
                    group <= group + 1'b1;
                end
            end else begin
                beat <= beat + 1'b1;
            end
        end
    end

    // Literal i = b*LL + li of beat b for literal lane li: the features,
    // then their negations, then padding slots (present = 0).
    localparam [{{sub .LitSlots 1}}:0] PRESENT = {{.PresentVector}};
    wire [{{sub .LitSlots 1}}:0] lits = {{.LitVector}};
    wire [{{sub .LL 1}}:0] lit0, present0;

    genvar li, bi;
    generate
        for (li = 0; li < {{.LL}}; li = li + 1) begin : g_literal_lane
            wire [{{sub .BT 1}}:0] lit_of_beat, present_of_beat;
            for (bi = 0; bi < {{.BT}}; bi = bi + 1) begin : g_beat
                assign lit_of_beat[bi]     = lits[bi*{{.LL}} + li];
                assign present_of_beat[bi] = PRESENT[bi*{{.LL}} + li];
            end
            assign lit0[li]     = lit_of_beat[beat];
            assign present0[li] = present_of_beat[beat];
        end
    endgenerate

    // Lane control broadcast: the lanes see a beat (step, address) one cycle
    // after issue, through registers duplicated per group of CTRL_LANES lanes
    // (copy g drives lanes g*CTRL_LANES ..) so that no net fans out from
    // logic to every lane; the seed loads and bank writes (one cycle after
    // bank_wr_en) go through registers too (load_q and wr_q below).
    localparam integer CTRL_LANES  = {{.CtrlLanes}};
    localparam integer CTRL_COPIES = {{.CtrlGroups}}; // ceil(LANES / CTRL_LANES)

    (* keep *) reg [CTRL_COPIES-1:0]        step_q; // copy g: step_q[g], addr_q[g*ADDR_W +: ADDR_W]
    (* keep *) reg [CTRL_COPIES*ADDR_W-1:0] addr_q;
    reg  [LFSR_W-1:0] seed_q;
    reg  [ADDR_W-1:0] wr_addr_q;
    reg  [BITS-1:0]   wr_data_q;

    always @(posedge clk) begin
        step_q    <= {CTRL_COPIES{issue}};
        addr_q    <= {CTRL_COPIES{addr}};
        seed_q    <= seed_state;
        wr_addr_q <= bank_wr_addr;
        wr_data_q <= bank_wr_data;
    end

    // Beat tags, stage 0 (lane control registers), stage 1 (lanes read and
    // draw) and stage 2 (decisions).
    reg        valid0, valid1, valid2, group_done3;
    reg        first0, first1, first2, last0, last1, last2;
    reg        send0, send1, send2, send3;   // the group is its sample's last
    reg        rend0, rend1, rend2, rend3;   // ... and the sample is the request's last
    reg [{{sub .GroupW 1}}:0]  group0, group1, group2, group3;
    reg [{{sub .LL 1}}:0] lit1, lit2, present1, present2;
    reg [{{sub .LL 1}}:0] lit0q, present0q;

    always @(posedge clk) begin
        first0    <= beat == {{dec .BeatW 0}};
        last0     <= beat_last;
        group0    <= group;
        send0     <= group_last;
        rend0     <= group_last && sample_last;
        lit0q     <= lit0;
        present0q <= present0;
        first1   <= first0;
        last1    <= last0;
        group1   <= group0;
        send1    <= send0;
        rend1    <= rend0;
        lit1     <= lit0q;
        present1 <= present0q;
        first2   <= first1;
        last2    <= last1;
        group2   <= group1;
        send2    <= send1;
        rend2    <= rend1;
        lit2     <= lit1;
        present2 <= present1;
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
    // with its own seed-load and bank write-enable registers (load_q[l],
    // wr_q[l]){{if .InitBanks}}; its bank starts with the image BANK_FILE =
    // "{{.Prefix}}_bank_lane<l>.hex"{{end}}.
    localparam integer LANES = {{.L}}; // CLAUSE_LANES * LITERAL_LANES
{{- if .InitBanks}}
    // BANK_FILE is right-aligned in BANK_FILE_LEN characters: the names of
    // lanes with fewer digits start with NUL bytes, which $readmemh skips.
    localparam integer BANK_FILE_LEN = {{.BankFileLen}};
    localparam [79:0]  DIGITS        = "9876543210"; // DIGITS[8*d +: 8] is digit d
{{- end}}

    wire [LANES-1:0] incl;
    reg  [LANES-1:0] load_q;
    reg  [LANES-1:0] wr_q = {LANES{1'b0}}; // no write before the first reset

    genvar l;
    generate
        for (l = 0; l < LANES; l = l + 1) begin : g_lane
            localparam [LANE_W-1:0] LANE = l;
{{- if .InitBanks}}
            localparam [8*BANK_FILE_LEN-1:0] BANK_FILE =
{{.BankFileExpr}};
{{- end}}
            always @(posedge clk) begin
                load_q[l] <= seed_load && seed_lane == LANE;
                wr_q[l]   <= !rst && bank_wr_en && bank_wr_lane == LANE;
            end

            {{.Prefix}}_lane {{- if .InitBanks}} #(
                .INIT_FILE (BANK_FILE)
            ){{end}} lane (
                .clk        (clk),
                .seed_load  (load_q[l]),
                .seed_state (seed_q),
                .beat       (step_q[l / CTRL_LANES]),
                .addr       (addr_q[(l / CTRL_LANES)*ADDR_W +: ADDR_W]),
                .wr_en      (wr_q[l]),
                .wr_addr    (wr_addr_q),
                .wr_data    (wr_data_q),
                .incl       (incl[l])
            );
        end
    endgenerate

    // ---------------------------------------------------------------
    // Clause lanes.
    wire [{{sub .LC 1}}:0] clause;

    genvar ci;
    generate
        for (ci = 0; ci < {{.LC}}; ci = ci + 1) begin : g_clause_lane
            {{.Prefix}}_clause_lane clause_lane (
                .clk     (clk),
                .valid   (valid2),
                .first   (first2),
                .incl    (incl[ci*{{.LL}} +: {{.LL}}]),
                .literal (lit2),
                .present (present2),
                .clause  (clause[ci])
            );
        end
    endgenerate

    // ---------------------------------------------------------------
    // Class sums.
    wire        sums_valid, sums_last;
    wire [{{sub (mul .NT .VW) 1}}:0] sums;

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
    wire [{{sub (mul .NT .UW) 1}}:0] u;
    wire [{{sub (mul .NC .VUW) 1}}:0] votes;
    wire [{{sub (mul .NC .VoteW) 1}}:0] votes_acc;
    wire [{{sub (mul .NT .SumW) 1}}:0] sum_acc;
    wire [{{sub (mul .NT .SqW) 1}}:0] sumsq_acc;

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
        .clear      (accept),
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

    wire [31:0] stat_word [0:{{sub .StatWords 1}}];
{{.StatWordAssigns}}
    // ---------------------------------------------------------------
    // Samples mode: FIFO of samples, serializer of class sums.
    reg         skid_valid, skid_last, skid_error;
    reg  [31:0] skid_data;
    wire        fifo_nonempty;
    wire [{{mul .NT .VW}}:0] fifo_head;
    reg         ser_valid, ser_last;
    reg         ser_at_end;   // ser_valid and ser_tm is the sample's last TM
    reg  [{{sub (mul .NT .VW) 1}}:0] ser_sums;
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
            ser_sums <= fifo_head[{{sub (mul .NT .VW) 1}}:0];
            ser_last <= fifo_head[{{mul .NT .VW}}];
            ser_tm   <= {{dec .TMW 0}};
        end else if (ser_take) begin
            ser_sums <= {{.SerShift}}; // the next TM's sum at the bottom
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
    // stat_cur holds stat_word[stat_idx], loaded a word ahead (from
    // stat_nidx = stat_idx + 1), so that the offered word is a register.
    reg  [{{sub .StatIdxW 1}}:0] stat_idx, stat_nidx;
    reg  [31:0] stat_cur;
    wire stat_take = state == S_STATS && out_free;
    wire stat_end  = stat_take && stat_idx == {{dec .StatIdxW (sub .StatWords 1)}};

    // The word offered to the output stage in this cycle (taken when
    // out_free).
    reg         w_valid, w_last, w_error;
    reg  [31:0] w_data;
    always @(*) begin
        w_valid = 1'b0;
        w_data  = {{.SerWord}};
        w_last  = ser_last && ser_at_end;
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
            stat_nidx <= {{dec .StatIdxW 1}};
            stat_cur  <= stat_word[0];
        end else if (stat_take) begin
            stat_idx  <= stat_nidx;
            stat_nidx <= stat_nidx + 1'b1;
            stat_cur  <= stat_word[stat_nidx];
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
                                      state <= stats_mode ? S_STATS : S_IDLE;
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
