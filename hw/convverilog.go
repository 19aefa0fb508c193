package hw

// The module templates of the convolutional core (conv.go), in dependency
// order, the core last. The LFSR lanes and the seeder are the tabular
// core's (verilog.go).

func init() {
	addConvModule("conv_mem", "memory of whole rows (iCE40 block RAM / SPRAM, registered read)", tmplConvMem)
	addConvModule("conv_wmem", "the weight memory: rows of 16-bit words with a write enable per word (iCE40 block RAM, registered read)", tmplConvWMem)
	addConvModuleIf("conv_spram", "the threshold memory in the UP5K's SPRAM (conv_mem marked ram_style huge)", tmplConvSPRAM, func(p *ConvParams) bool { return p.ThreshSPRAM })
	addConvModule("conv_sampler", "LFSR lanes, include decisions and the include registers of the clause lanes (docs/fixed-point-conv.md 4)", tmplConvSampler)
	addConvModule("conv_patch", "image bit-planes, sliding window and position thermometers: the literals of one patch (docs/fixed-point-conv.md 2)", tmplConvPatch)
	addConvModuleIf("conv_range", "the range scan's patch rows and columns from the clause lanes' included thermometer literals (docs/conv-core.md 3)", tmplConvRange, func(p *ConvParams) bool { return p.Range })
	addConvModule("conv_clause", "one clause lane: AND over included literals, OR over patches (docs/fixed-point-conv.md 5.2)", tmplConvClause)
	addConvModule("conv_core", "convolutional PTM inference core: request and result streams, memory write ports, schedule, class sums", tmplConvCore)
}

const tmplConvMem = `// DEPTH rows of WIDTH bits, written and read a whole row at a time through
// one port (a write wins; the core writes only between requests and reads
// only within them); the read is registered: rd_data is valid the cycle
// after rd_en. One port, so that yosys maps it to iCE40 block RAM or, with
// synth_ice40 -spram, to the UP5K's single-ported SPRAM.
module {{.Prefix}}_conv_mem #(
    parameter integer WIDTH  = 1,  // bits per row
    parameter integer ADDR_W = 1,  // width of a row address
    parameter integer DEPTH  = 2{{if .InitMems}}, // rows
    parameter INIT_FILE = ""       // $readmemh image of the initial contents
{{- else}}   // rows
{{- end}}
) (
    input  wire              clk,
    input  wire              wr_en,
    input  wire [ADDR_W-1:0] wr_addr,
    input  wire [WIDTH-1:0]  wr_data,
    input  wire              rd_en,
    input  wire [ADDR_W-1:0] rd_addr,
    output reg  [WIDTH-1:0]  rd_data
);
    reg [WIDTH-1:0] mem [0:DEPTH-1];
{{- if .InitMems}}

    initial $readmemh(INIT_FILE, mem);
{{- end}}

    wire [ADDR_W-1:0] addr = wr_en ? wr_addr : rd_addr;

    always @(posedge clk) begin
        if (wr_en)
            mem[addr] <= wr_data;
        else if (rd_en)
            rd_data <= mem[addr];
    end
endmodule

` + "`default_nettype wire\n"

const tmplConvWMem = `// {{.Prefix}}_conv_mem with a write enable per 16-bit word: wr_mask bit k
// writes word k of the row (the weight memory: a clause's NC weights,
// written as a whole row or one class's weight at a time). yosys maps the
// word enables onto the block RAM's write mask.
module {{.Prefix}}_conv_wmem #(
    parameter integer WORDS  = 1,  // 16-bit words per row
    parameter integer ADDR_W = 1,  // width of a row address
    parameter integer DEPTH  = 2{{if .InitMems}}, // rows
    parameter INIT_FILE = ""       // $readmemh image of the initial contents
{{- else}}   // rows
{{- end}}
) (
    input  wire                clk,
    input  wire                wr_en,
    input  wire [WORDS-1:0]    wr_mask,
    input  wire [ADDR_W-1:0]   wr_addr,
    input  wire [WORDS*16-1:0] wr_data,
    input  wire                rd_en,
    input  wire [ADDR_W-1:0]   rd_addr,
    output reg  [WORDS*16-1:0] rd_data
);
    reg [WORDS*16-1:0] mem [0:DEPTH-1];
{{- if .InitMems}}

    initial $readmemh(INIT_FILE, mem);
{{- end}}

    wire [ADDR_W-1:0] addr = wr_en ? wr_addr : rd_addr;

    integer k;
    always @(posedge clk) begin
        if (wr_en) begin
            for (k = 0; k < WORDS; k = k + 1)
                if (wr_mask[k])
                    mem[addr][k*16 +: 16] <= wr_data[k*16 +: 16];
        end else if (rd_en)
            rd_data <= mem[addr];
    end
endmodule

` + "`default_nettype wire\n"

const tmplConvSPRAM = `// {{.Prefix}}_conv_mem with the memory marked ram_style "huge": yosys
// (synth_ice40 -spram) maps it to the UP5K's SPRAMs (16 bits x 16K words
// each), which its cost model would otherwise leave to block RAM. SPRAM
// has no initial contents: the core's write port loads it.
module {{.Prefix}}_conv_spram #(
    parameter integer WIDTH  = 1,  // bits per row
    parameter integer ADDR_W = 1,  // width of a row address
    parameter integer DEPTH  = 2   // rows
) (
    input  wire              clk,
    input  wire              wr_en,
    input  wire [ADDR_W-1:0] wr_addr,
    input  wire [WIDTH-1:0]  wr_data,
    input  wire              rd_en,
    input  wire [ADDR_W-1:0] rd_addr,
    output reg  [WIDTH-1:0]  rd_data
);
    (* ram_style = "huge" *) reg [WIDTH-1:0] mem [0:DEPTH-1];

    wire [ADDR_W-1:0] addr = wr_en ? wr_addr : rd_addr;

    always @(posedge clk) begin
        if (wr_en)
            mem[addr] <= wr_data;
        else if (rd_en)
            rd_data <= mem[addr];
    end
endmodule

` + "`default_nettype wire\n"

const tmplConvSampler = `// L = LC*LL lanes, lane l = ci*LL + li. step advances every lane's LFSR by
// one draw, or with load shifts the seeds through the lanes (lane L-1
// takes seed_in, lane l lane l+1's state: after L shifts lane l holds the
// l-th seed offered). shift (the cycle after a beat's step, when the
// draws and the beat's threshold row are present) decides every lane's TA,
//     include = (q == 2^B - 1) || (r < q),
// and shifts clause lane ci's LL decisions in at the top of its include
// register: after the BT beats of a group, literal i = b*LL + li of
// clause lane ci is bit i of inc[ci*INC_W +: INC_W], and any[ci] is the
// OR of its include bits (first: the beat shifted is its group's first).
module {{.Prefix}}_conv_sampler #(
    // Set by the generator: regenerate rather than override.
    parameter integer W     = {{.LW}}, // LFSR width
    parameter integer BITS  = {{.Bits}}, // threshold and draw width
    parameter integer LC    = {{.LC}}, // clause lanes
    parameter integer LL    = {{.LL}}, // literal lanes
    parameter integer INC_W = {{.IncW}}  // BT*LL, include bits per clause lane
) (
    input  wire                  clk,
    input  wire                  step,    // a beat's draw or, with load, a seed shift
    input  wire                  load,
    input  wire [W-1:0]          seed_in,
    input  wire                  shift,   // decide and shift in one beat
    input  wire                  first,   // ... the group's first
    input  wire [LC*LL*BITS-1:0] thresh,  // the beat's thresholds, lane 0 in the low bits
    output wire [LC*INC_W-1:0]   inc,
    output wire [LC-1:0]         any      // some literal of the clause lane is included
);
    localparam integer    LANES  = LC * LL;
    localparam [BITS-1:0] ALWAYS = {BITS{1'b1}}; // threshold meaning "always include"

    wire [(LANES+1)*W-1:0] chain; // lane l's state at l*W, seed_in at the top
    wire [W-1:0] unused_chain = chain[W-1:0]; // lane 0's state goes nowhere
    wire [LANES-1:0] incl;

    assign chain[LANES*W +: W] = seed_in;

    genvar l, ci;
    generate
        for (l = 0; l < LANES; l = l + 1) begin : g_lane
            wire [BITS-1:0] draw;
            wire [BITS-1:0] q = thresh[l*BITS +: BITS];

            {{.Prefix}}_lfsr_lane lfsr (
                .clk        (clk),
                .step       (step),
                .load       (load),
                .seed_state (chain[(l+1)*W +: W]),
                .draw       (draw),
                .state      (chain[l*W +: W])
            );

            assign incl[l] = (q == ALWAYS) || (draw < q);
        end
        for (ci = 0; ci < LC; ci = ci + 1) begin : g_clause
            reg [INC_W-1:0] sr;
            reg             sr_any;
            always @(posedge clk) begin
                if (shift) begin
                    sr     <= {{if eq .BT 1}}incl[ci*LL +: LL]{{else}}{incl[ci*LL +: LL], sr[INC_W-1:LL]}{{end}};
                    sr_any <= (!first && sr_any) || (|incl[ci*LL +: LL]);
                end
            end
            assign inc[ci*INC_W +: INC_W] = sr;
            assign any[ci] = sr_any;
        end
    endgenerate
endmodule

` + "`default_nettype wire\n"

const tmplConvPatch = `// The literals of PN = {{.PN}} adjacent patches (y, x + j), j = 0..PN-1
// (docs/fixed-point-conv.md 2), the patch blocks visited in raster order.
// row_en shifts one image row in: the
// rows of the bit-planes are written in order p*H + y (plane p's pixel
// (y, x) in bit x of row p*H + y), P*H of them; start (re)starts the
// scan at patch (0, 0) and must come when ready; next moves x on by PN
// patches, or to the next patch row. rows holds the image with every plane rotated up by rot rows:
// each move to the next patch row rotates it once, and when not scanning
// (no next) it keeps rotating until rot is back to 0 (ready), so the image
// is kept once. Window row (p, dy) holds row y+dy of plane p moved left by
// x columns, so that the window bit (p, dy, dx) of patch j is its bit dx + j; the row and
// column thermometers ty[k] = y > k and tx[k] = x > k are shift registers
// (patch j's column thermometer is tx moved up by j, ones below). valid[j]
// is x + j < PX.
module {{.Prefix}}_conv_patch #(
    // Set by the generator: regenerate rather than override.
    parameter integer H   = {{.H}}, // image rows
    parameter integer W   = {{.W}}, // image columns
    parameter integer P   = {{.P}}, // bit-planes
    parameter integer WY  = {{.WY}}, // window rows
    parameter integer WX  = {{.WX}}, // window columns
    parameter integer F   = {{.F}}, // features of a patch
    parameter integer PN  = {{.PN}}, // patches per cycle
    parameter integer IMG = {{.ImgBits}}  // P*H*W
) (
    input  wire              clk,
    input  wire              row_en,
    input  wire [W-1:0]      row,
    input  wire              start,
    input  wire              next,
{{- if .Range}}
    input  wire [{{sub .YW 1}}:0]        ylo,   // range scan: rows below ylo pass in one cycle each,
    input  wire [{{sub .YW 1}}:0]        yhi,   // ... the scan ends after row yhi,
    input  wire [{{sub .XW 1}}:0]        xhi,   // ... a row ends at the block holding column xhi (held from start to the scan's end)
{{- end}}
    output wire              ready, // rows holds the image unrotated: start may come
    output wire [PN*2*F-1:0] lit,   // patch j's literals at j*2F: literal i < F is feature i, F + i its negation
    output wire [PN-1:0]     valid, // patch j exists (x + j < PX)
    output wire              last   // the block is the last of the scan
);
    reg  [IMG-1:0] rows;
    wire [IMG-1:0] rows_rot; // every plane rotated up by one row
    wire x_last, x_end; // the block is the row's last: of the patch columns; of the scan's row
{{- if not .Range}}
    wire y_last;
{{- end}}
{{- if gt .TX 0}}
    reg [{{sub .TX 1}}:0] tx;
{{- if ge .PN .PX}}
    assign x_last = 1'b1;
{{- else}}
    assign x_last = tx[{{sub (sub .PX .PN) 1}}];
{{- end}}
{{- else}}
    assign x_last = 1'b1;
{{- end}}
{{- if gt .TY 0}}
    reg [{{sub .TY 1}}:0] ty;
{{- end}}
{{- if .Range}}
    reg [{{sub .YW 1}}:0] y;
    reg [{{sub .XW 1}}:0] x;
    assign x_end = x_last || y < ylo || x + {{dec .XW .PN}} > xhi;

    always @(posedge clk) begin
        if (start) begin
            y <= {{dec .YW 0}};
            x <= {{dec .XW 0}};
        end else if (next) begin
            if (x_end) begin
                y <= y + 1'b1;
                x <= {{dec .XW 0}};
            end else
                x <= x + {{dec .XW .PN}};
        end
    end
{{- else}}
    assign x_end  = x_last;
{{- if gt .TY 0}}
    assign y_last = &ty;
{{- else}}
    assign y_last = 1'b1;
{{- end}}
{{- end}}

{{- if eq .H 1}}
    assign rows_rot = rows;
    assign ready    = 1'b1;

    always @(posedge clk) begin
        if (row_en)
            rows <= {{if eq .ImgBits .W}}row{{else}}{row, rows[IMG-1:W]}{{end}};
    end
{{- else}}
    reg  [{{sub .RotW 1}}:0] rot;
    wire rotate = (next && x_end) || (!next && rot != {{dec .RotW 0}});

    genvar q;
    generate
        for (q = 0; q < P; q = q + 1) begin : g_rot
            assign rows_rot[q*H*W +: H*W] = {rows[q*H*W +: W], rows[q*H*W + W +: (H-1)*W]};
        end
    endgenerate

    always @(posedge clk) begin
        if (row_en) begin
            rows <= {row, rows[IMG-1:W]};
            rot  <= {{dec .RotW 0}};
        end else if (rotate) begin
            rows <= rows_rot;
            rot  <= (rot == {{dec .RotW (sub .H 1)}}) ? {{dec .RotW 0}} : rot + 1'b1;
        end
    end

    assign ready = rot == {{dec .RotW 0}};
{{- end}}

    always @(posedge clk) begin
        if (start) begin
{{- if gt .TX 0}}
            tx   <= {{dec .TX 0}};
{{- end}}
{{- if gt .TY 0}}
            ty   <= {{dec .TY 0}};
{{- end}}
        end else if (next) begin
            if (x_end) begin
{{- if gt .TX 0}}
                tx   <= {{dec .TX 0}};
{{- end}}
{{- if gt .TY 0}}
                ty   <= {{if eq .TY 1}}1'b1{{else}}{ty[{{sub .TY 2}}:0], 1'b1}{{end}};
{{- end}}
{{- if gt .TX 0}}
            end else begin
                tx   <= {{if le .TX .PN}}{{"{"}}{{.TX}}{1'b1}}{{else}}{tx[{{sub (sub .TX 1) .PN}}:0], {{"{"}}{{.PN}}{1'b1}}}{{end}};
{{- end}}
            end
        end
    end

    wire [PN*F-1:0] feat;

    genvar p, dy, dx, j;
    generate
        for (p = 0; p < P; p = p + 1) begin : g_plane
            for (dy = 0; dy < WY; dy = dy + 1) begin : g_row
                reg [W-1:0] win; // row y+dy of plane p, moved left by x
                always @(posedge clk) begin
                    if (start)
                        win <= rows[(p*H + dy)*W +: W];
                    else if (next) begin
                        if (x_end)
{{- if eq .PY 1}}
                            win <= {W{1'b0}}; // no next row: the scan ends
{{- else}}
                            win <= rows[(p*H + dy + 1)*W +: W];
{{- end}}
{{- if gt .PX .PN}}
                        else
                            win <= {{"{"}}{{.PN}}'b0, win[W-1:{{.PN}}]};
{{- end}}
                    end
                end
{{- if gt .W (add .WX (sub .PN 1))}}
                wire unused_win = ^win[W-1:{{add .WX (sub .PN 1)}}];
{{- end}}
                for (j = 0; j < PN; j = j + 1) begin : g_patch
                    for (dx = 0; dx < WX; dx = dx + 1) begin : g_col
                        assign feat[j*F + (p*WY + dy)*WX + dx] = win[dx + j];
                    end
                end
            end
        end
        for (j = 0; j < PN; j = j + 1) begin : g_therm
{{- if gt .TY 0}}
            assign feat[j*F + {{.WinBits}} +: {{.TY}}] = ty;
{{- end}}
{{- if gt .TX 0}}
            if (j == 0) begin : g_t0
                assign feat[{{add .WinBits .TY}} +: {{.TX}}] = tx;
            end else if (j < {{.TX}}) begin : g_tj
                assign feat[j*F + {{add .WinBits .TY}} +: {{.TX}}] = {tx[{{sub .TX 1}}-j:0], {j{1'b1}}};
            end else begin : g_tall
                assign feat[j*F + {{add .WinBits .TY}} +: {{.TX}}] = {{"{"}}{{.TX}}{1'b1}};
            end
{{- end}}
            assign lit[j*2*F +: 2*F] = {~feat[j*F +: F], feat[j*F +: F]};
{{- if gt .PN 1}}
            if (j == 0) begin : g_v0
                assign valid[j] = 1'b1;
            end else begin : g_vj
                assign valid[j] = !tx[{{sub .PX 1}}-j];
            end
{{- end}}
        end
    endgenerate
{{- if eq .PN 1}}

    assign valid = 1'b1;
{{- end}}

{{- if .Range}}
    assign last = x_end && y == yhi;
{{- else}}
    assign last = x_last && y_last;
{{- end}}
endmodule

` + "`default_nettype wire\n"

const tmplConvRange = `// The patches a clause lane can fire on: its included row-thermometer
// literals "y > k" (and negations "y <= k") allow an interval of patch rows
// lo..hi, its column-thermometer literals an interval of columns xl..xh;
// every other patch fails one of those literals. ok[ci]: the lane has an
// included literal and a non-empty range. The outputs are the union over
// the ok lanes: the rows ylo..yhi and the last column xhi (none: no lane
// is ok, no patch can fire). Combinational; the core registers them.
module {{.Prefix}}_conv_range #(
    parameter integer LC = {{.LC}}, // clause lanes (set by the generator)
    parameter integer TH = {{.TH}}  // thermometer include bits per lane, 2*(TY+TX)
) (
    input  wire [LC*TH-1:0] therm,  // lane ci at ci*TH: row, column thermometers included, then their negations
    input  wire [LC-1:0]    any,    // the lane has an included literal
    output reg  [{{sub .YW 1}}:0]      ylo,
    output reg  [{{sub .YW 1}}:0]      yhi,
    output reg  [{{sub .XW 1}}:0]      xhi,
    output reg              none,
    output reg  [LC-1:0]    ok
);
{{.RangeLogic}}endmodule

` + "`default_nettype wire\n"

const tmplConvClause = `// One clause lane over a group's patch scan. With inc the clause's include
// bits (literal i at bit i) and lit the present PN patches' literals,
//     fire = OR over valid patches j of AND over i of (!inc[i] || lit_j[i]),
// fired is the OR of fire over the patches evaluated since clear (a
// register: it includes the present patch from the next cycle), any the
// OR of inc (a register of the sampler). The clause output is any && fired (a clause with no included
// literal outputs 0); it can no longer change once the clause fired or
// when it has no included literal (resolved). Both come from registers,
// so that the scan's control does not wait for the AND of this cycle.
module {{.Prefix}}_conv_clause #(
    parameter integer LIT = {{.Lit}}, // literals of a patch, 2F (set by the generator)
    parameter integer PN  = {{.PN}}  // patches evaluated per cycle
) (
    input  wire           clk,
    input  wire           clear,
    input  wire           eval,          // the present patches count
    input  wire [LIT-1:0] inc,
    input  wire           any,           // OR of inc (the sampler keeps it)
    input  wire [PN*LIT-1:0] lit,        // patch j's literals at j*LIT
    input  wire [PN-1:0]  valid,         // patch j exists
    output wire           out,           // the output over the patches evaluated before this cycle
    output wire           resolved       // ... which no further patch changes
);
    reg fired;

    wire [PN-1:0] fire_j;
    genvar j;
    generate
        for (j = 0; j < PN; j = j + 1) begin : g_patch
            assign fire_j[j] = valid[j] & (&(~inc | lit[j*LIT +: LIT]));
        end
    endgenerate
    wire fire = |fire_j;

    always @(posedge clk) begin
        if (clear)
            fired <= 1'b0;
        else if (eval)
            fired <= fired | fire;
    end

    assign out      = any & fired;
    assign resolved = ~any | fired;
endmodule

` + "`default_nettype wire\n"

const tmplConvCore = `// The image's bit-planes are written row by row (img_wr_en) in the idle
// state; a request (K, seed Q) on that image is accepted in the idle
// state. K outside 1..MaxK is answered by one error word. Otherwise the
// seeder loads the L lane LFSRs (L + 3 cycles); then for every sample k and
// clause group g:
//   sample: BT beats, one per cycle (threshold row g*BT + b, every lane
//           draws), and one cycle for the last beat's decisions;
{{- if .Range}}
//   range:  one cycle: the rectangle of patches the clause lanes'
//           included position thermometers allow (conv_range);
//   scan:   blocks of PN patches in raster order, one per cycle, every
//           clause lane on the same block: rows below the rectangle's one
//           cycle each, in a row the blocks up to its last column, until
//           its last row, every clause lane resolved (seen one cycle
//           later: the clause lanes' fired registers) or none allowed;
{{- else}}
//   scan:   blocks of PN patches in raster order, one per cycle, every
//           clause lane on the same block, until every clause lane is
//           resolved or the last patch was evaluated (seen one cycle
//           later: the clause lanes' fired registers);
{{- end}}
//   weigh:  LC + 1 cycles: clause lane ci's output adds its weight row
//           (clause g*LC + ci) to the NC class sums;
// and after the last group the NC class sums v_k of the sample leave as NC
// result words (sign-extended to 32 bits), res_last on the request's last.
module {{.Prefix}}_conv_core #(
    // The port widths. Set by the generator like every constant below:
    // the design is specialized for them; regenerate it rather than
    // override them.
    parameter integer IMG_W    = {{.W}}, // W, bits of an image row
    parameter integer BITS     = {{.Bits}}, // B, width of a threshold and of a draw
    parameter integer L        = {{.L}}, // lanes, LC*LL
    parameter integer ADDR_W   = {{.AddrW}}, // width of a threshold row address (D = {{.D}} rows)
    parameter integer WADDR_W  = {{.WAddrW}}, // width of a weight row address (G*LC = {{.WDepth}} rows)
    parameter integer NC       = {{.NC}}, // classes
    parameter integer K_W      = {{.KW}}  // width of req_k (K = 1..{{.MaxK}})
) (
    input  wire                clk,
    input  wire                rst,           // synchronous, active high (control only)
    // Threshold write port (between requests): row addr = g*BT + b, the
    // thresholds of the beat's L lanes, lane 0 in the low BITS bits.
    input  wire                bank_wr_en,
    input  wire [ADDR_W-1:0]   bank_wr_addr,
    input  wire [L*BITS-1:0]   bank_wr_data,
    // Weight write port (between requests): the NC 16-bit weights of
    // clause slot c = g*LC + ci, class 0 in the low bits; with wt_wr_one
    // only class wt_wr_class's weight (its 16 bits of wt_wr_data).
    input  wire                wt_wr_en,
    input  wire [WADDR_W-1:0]  wt_wr_clause,
    input  wire [NC*16-1:0]    wt_wr_data,
    input  wire                wt_wr_one,
    input  wire [{{sub .ClsW 1}}:0]        wt_wr_class,
    // Image rows (between requests): P*H = {{mul .P .H}} rows written in order
    // p*H + y before a request, plane p's pixel (y, x) in bit x of row
    // p*H + y; the image stays for the following requests until rewritten.
    input  wire                img_wr_en,
    input  wire [IMG_W-1:0]    img_wr_data,
    // Request stream.
    input  wire                req_valid,
    output wire                req_ready,
    input  wire [K_W-1:0]      req_k,
    input  wire [31:0]         req_seed,
    // Result stream: K*NC class sums, sample-major.
    output wire                res_valid,
    input  wire                res_ready,
    output wire [31:0]         res_data,
    output wire                res_last,
    output wire                res_error,
    output wire                idle           // no request in progress
);
    localparam integer LC     = {{.LC}}; // clause lanes (LL = {{.LL}} literal lanes each)
    localparam integer LIT    = {{.Lit}}; // literals of a patch, 2F
    localparam integer INC_W  = {{.IncW}}; // BT*LL
    localparam integer SW     = {{.SW}}; // width of a raw class sum (signed)
    localparam integer LFSR_W = {{.LW}}; // W

    localparam [3:0] S_IDLE   = 4'd0,
                     S_SEED   = 4'd1,
                     S_SAMPLE = 4'd2,
                     S_DRAIN  = 4'd3,
                     S_SCAN   = 4'd4,
                     S_WEIGH  = 4'd5,
                     S_OUT    = 4'd6,
                     S_ERROR  = 4'd7{{if .Range}},
                     S_RANGE  = 4'd8{{end}};
    localparam [31:0] ERR_K = 32'd1; // error word: K outside 1..MaxK

    reg  [3:0]       state;
    reg  [K_W-1:0]   k_last, sample;
    reg  [{{sub .BeatW 1}}:0]       beat;
    reg  [{{sub .GroupW 1}}:0]       group;
    reg  [ADDR_W-1:0] addr;
    reg  [WADDR_W-1:0] waddr;
    reg  [{{sub .JW 1}}:0]       j;
    reg  [{{sub .ClsW 1}}:0]       o_idx;

    wire accept = req_valid && req_ready;
    wire k_bad  = {{.KBad}};

    assign req_ready = state == S_IDLE;
    assign idle      = state == S_IDLE;

    // ---------------------------------------------------------------
    // Seeding, lanes and threshold memory.
    wire              seed_load, seed_done;
    wire [LFSR_W-1:0] seed_state;

    {{.Prefix}}_seeder seeder (
        .clk        (clk),
        .rst        (rst),
        .start      (accept && !k_bad),
        .seed       (req_seed),
        .load       (seed_load),
        .load_state (seed_state),
        .done       (seed_done)
    );

    wire issue = state == S_SAMPLE; // one beat per cycle
    reg  valid1;                    // the beat issued last cycle: draws and thresholds present
    reg  first1;                    // ... and it was its group's first
    always @(posedge clk) begin
        if (rst) valid1 <= 1'b0;
        else     valid1 <= issue;
        first1 <= beat == {{dec .BeatW 0}};
    end

    wire [L*BITS-1:0]     thresh;
    wire [LC*INC_W-1:0]   inc;
    wire [LC-1:0]         inc_any;

    {{.Prefix}}_conv_{{if .ThreshSPRAM}}spram{{else}}mem{{end}} #(
        .WIDTH  (L*BITS),
        .ADDR_W (ADDR_W),
        .DEPTH  ({{.D}}){{if .InitMems}},
        .INIT_FILE ("{{.ThreshFile}}"){{end}}
    ) tmem (
        .clk     (clk),
        .wr_en   (bank_wr_en && state == S_IDLE),
        .wr_addr (bank_wr_addr),
        .wr_data (bank_wr_data),
        .rd_en   (issue),
        .rd_addr (addr),
        .rd_data (thresh)
    );

    {{.Prefix}}_conv_sampler sampler (
        .clk     (clk),
        .step    (issue || seed_load),
        .load    (seed_load),
        .seed_in (seed_state),
        .shift   (valid1),
        .first   (first1),
        .thresh  (thresh),
        .inc     (inc),
        .any     (inc_any)
    );

    // ---------------------------------------------------------------
    // Patches and clause lanes.
    wire [{{.PN}}*LIT-1:0] lit;
    wire [{{.PN}}-1:0]     lit_valid;
    wire           patch_last, patch_ready;
    wire [LC-1:0]  clause_out, resolved;
    reg            past_last;     // the last patch has been evaluated
    wire           scan_eval = state == S_SCAN && !past_last;
{{- if .Range}}
    // The range scan (conv_range): in S_RANGE the include registers are
    // complete; the union of the lanes' ranges is registered for the scan,
    // and a lane with an empty range counts as resolved.
    localparam integer TH = {{.TH}}; // thermometer include bits per clause lane
    wire [LC*TH-1:0] therm;
    wire [{{sub .YW 1}}:0]       r_ylo, r_yhi;
    wire [{{sub .XW 1}}:0]       r_xhi;
    wire             r_none;
    wire [LC-1:0]    r_ok;
    reg  [{{sub .YW 1}}:0]       scan_ylo, scan_yhi;
    reg  [{{sub .XW 1}}:0]       scan_xhi;
    reg  [LC-1:0]    scan_ok;
    wire           scan_end  = past_last || &(resolved | ~scan_ok);

    {{.Prefix}}_conv_range rng (
        .therm (therm),
        .any   (inc_any),
        .ylo   (r_ylo),
        .yhi   (r_yhi),
        .xhi   (r_xhi),
        .none  (r_none),
        .ok    (r_ok)
    );

    always @(posedge clk) begin
        if (state == S_RANGE) begin
            scan_ylo <= r_ylo;
            scan_yhi <= r_yhi;
            scan_xhi <= r_xhi;
            scan_ok  <= r_ok;
            past_last <= r_none;
        end else if (scan_eval && patch_last)
            past_last <= 1'b1;
    end
{{- else}}
    wire           scan_end  = past_last || &resolved;

    always @(posedge clk) begin
        if (state == S_DRAIN)
            past_last <= 1'b0;
        else if (scan_eval && patch_last)
            past_last <= 1'b1;
    end
{{- end}}

    {{.Prefix}}_conv_patch patch (
        .clk    (clk),
        .row_en (img_wr_en && state == S_IDLE),
        .row    (img_wr_data),
{{- if .Range}}
        .start  (state == S_RANGE),
        .next   (scan_eval && !patch_last),
        .ylo    (scan_ylo),
        .yhi    (scan_yhi),
        .xhi    (scan_xhi),
{{- else}}
        .start  (state == S_DRAIN),
        .next   (scan_eval && !patch_last),
{{- end}}
        .ready  (patch_ready),
        .lit    (lit),
        .valid  (lit_valid),
        .last   (patch_last)
    );

    genvar ci;
    generate
        for (ci = 0; ci < LC; ci = ci + 1) begin : g_clause_lane
{{- if .Range}}
            assign therm[ci*TH +: TH] = {inc[ci*INC_W + {{add .F .WinBits}} +: {{add .TY .TX}}], inc[ci*INC_W + {{.WinBits}} +: {{add .TY .TX}}]};
{{- end}}
{{- if gt .IncW .Lit}}
            // Bits of padding literal slots are never included (threshold 0).
            wire unused_pad = ^inc[ci*INC_W + LIT +: INC_W - LIT];
{{- end}}
            {{.Prefix}}_conv_clause clause (
                .clk           (clk),
                .clear         (state == S_DRAIN),
                .eval          (scan_eval),
                .inc           (inc[ci*INC_W +: LIT]),
                .any           (inc_any[ci]),
                .lit           (lit),
                .valid         (lit_valid),
                .out           (clause_out[ci]),
                .resolved      (resolved[ci])
            );
        end
    endgenerate

    // ---------------------------------------------------------------
    // Weights and class sums: in S_WEIGH cycle j < LC reads the weight row
    // of clause slot waddr = g*LC + j; the next cycle adds it to the sums
    // when clause lane j's output (outs[0] at the read) is 1.
    reg  [LC-1:0]    outs;
    reg              acc_v, acc_o;
    wire [NC*16-1:0] wt_row;
    wire             weigh_read = state == S_WEIGH && j != {{dec .JW .LC}};

    {{.Prefix}}_conv_wmem #(
        .WORDS  (NC),
        .ADDR_W (WADDR_W),
        .DEPTH  ({{.WDepth}}){{if .InitMems}},
        .INIT_FILE ("{{.WtsFile}}"){{end}}
    ) wmem (
        .clk     (clk),
        .wr_en   (wt_wr_en && state == S_IDLE),
        .wr_mask (wt_wr_one ? NC'(1) << wt_wr_class : {NC{1'b1}}),
        .wr_addr (wt_wr_clause),
        .wr_data (wt_wr_data),
        .rd_en   (weigh_read),
        .rd_addr (waddr),
        .rd_data (wt_row)
    );

    wire sample_start = (state == S_SEED && seed_done) || (out_end && sample != k_last);
    wire out_take     = res_valid && res_ready;
    wire out_end      = state == S_OUT && out_take && o_idx == {{dec .ClsW (sub .NC 1)}};

    reg [SW-1:0] sums [0:NC-1];
    integer k;
    always @(posedge clk) begin
        acc_v <= weigh_read;
        acc_o <= outs[0];
        for (k = 0; k < NC; k = k + 1) begin
            if (sample_start)
                sums[k] <= {SW{1'b0}};
            else if (acc_v && acc_o)
                sums[k] <= sums[k] + {{.WtExt}};
        end
    end

    // ---------------------------------------------------------------
    // Schedule.
    always @(posedge clk) begin
        if (accept)
            k_last <= req_k - 1'b1;
        if (sample_start) begin
            beat  <= {{dec .BeatW 0}};
            group <= {{dec .GroupW 0}};
            addr  <= {{dec .AddrW 0}};
            waddr <= {{dec .WAddrW 0}};
            sample <= (state == S_SEED) ? {K_W{1'b0}} : sample + 1'b1;
        end
        if (issue) begin
            addr <= addr + 1'b1;
            beat <= (beat == {{dec .BeatW (sub .BT 1)}}) ? {{dec .BeatW 0}} : beat + 1'b1;
        end
        if (state == S_SCAN && scan_end) begin
            outs <= clause_out;
            j    <= {{dec .JW 0}};
        end
        if (weigh_read) begin
            outs  <= outs >> 1;
            waddr <= waddr + 1'b1;
            j     <= j + 1'b1;
        end
        if (state == S_WEIGH && !weigh_read)
            group <= group + 1'b1;
        if (state != S_OUT)
            o_idx <= {{dec .ClsW 0}};
        else if (out_take)
            o_idx <= o_idx + 1'b1;
    end

    always @(posedge clk) begin
        if (rst) begin
            state <= S_IDLE;
        end else begin
            case (state)
            S_IDLE:   if (accept)       state <= k_bad ? S_ERROR : S_SEED;
            S_SEED:   if (seed_done)    state <= S_SAMPLE;
            S_SAMPLE: if (beat == {{dec .BeatW (sub .BT 1)}})
                                        state <= S_DRAIN;
{{- if .Range}}
            S_DRAIN:  if (patch_ready)  state <= S_RANGE; // the image rotated back
            S_RANGE:                    state <= S_SCAN;
{{- else}}
            S_DRAIN:  if (patch_ready)  state <= S_SCAN; // the image rotated back
{{- end}}
            S_SCAN:   if (scan_end)     state <= S_WEIGH;
            S_WEIGH:  if (!weigh_read)  state <= (group == {{dec .GroupW (sub .G 1)}}) ? S_OUT : S_SAMPLE;
            S_OUT:    if (out_end)      state <= (sample == k_last) ? S_IDLE : S_SAMPLE;
            S_ERROR:  if (out_take)     state <= S_IDLE;
            default:                    state <= S_IDLE;
            endcase
        end
    end

    // ---------------------------------------------------------------
    // Result words.
    wire [SW-1:0] out_sum = sums[o_idx];

    assign res_valid = state == S_OUT || state == S_ERROR;
    assign res_data  = state == S_ERROR ? ERR_K : {{.SumToWord}};
    assign res_last  = state == S_ERROR || (o_idx == {{dec .ClsW (sub .NC 1)}} && sample == k_last);
    assign res_error = state == S_ERROR;
endmodule

` + "`default_nettype wire\n"
