package hw

// The module templates of the convolutional core (conv.go), in dependency
// order, the core last. The LFSR lanes and the seeder are the tabular
// core's (verilog.go).

func init() {
	addConvModule("conv_mem", "memory of whole rows (iCE40 block RAM / SPRAM, registered read)", tmplConvMem)
	addConvModule("conv_wmem", "the weight memory: rows of 16-bit words with a write enable per word (iCE40 block RAM, registered read)", tmplConvWMem)
	addConvModuleIf("conv_spram", "the threshold memory in the UP5K's SPRAM (conv_mem marked ram_style huge)", tmplConvSPRAM, func(p *ConvParams) bool { return p.ThreshSPRAM })
	addConvModule("conv_sampler", "LFSR lanes, include decisions and the include registers of the clause lanes (docs/fixed-point-conv.md 4)", tmplConvSampler)
	addConvModule("conv_img", "one bit-plane of the image in block RAM, a row per cycle", tmplConvImg)
	addConvModuleIf("conv_patch", "image bit-planes, sliding window and position thermometers: the literals of one patch (docs/fixed-point-conv.md 2)", tmplConvPatch, func(p *ConvParams) bool { return !p.Compact })
	addConvModuleIf("conv_patch", "image bit-planes, sliding window (reloaded at every patch row) and position thermometers: the literals of one patch (docs/fixed-point-conv.md 2), the compact scan", tmplConvPatchCompact, func(p *ConvParams) bool { return p.Compact })
	addConvModuleIf("conv_range", "the range scan's patch rows and columns from the clause lanes' included thermometer literals (docs/conv-core.md 3)", tmplConvRange, func(p *ConvParams) bool { return p.Range })
	addConvModule("conv_clause", "one clause lane: AND over included literals, OR over patches (docs/fixed-point-conv.md 5.2)", tmplConvClause)
	addConvModule("conv_core", "convolutional PTM inference core: request and result streams, memory write ports, schedule, class sums", tmplConvCore)
}

const tmplConvMem = `// DEPTH rows of LANES lanes of LB bits, read a whole row at a time and
// written lane by lane through one port: wr_mask bit l writes lane l
// (bits l*LB +: LB) of row wr_addr (a write wins; the core writes only
// between requests and reads only within them); the read is registered:
// rd_data is valid the cycle after rd_en. One port, so that yosys maps it
// to iCE40 block RAM (the lanes' enables onto its bit mask).
module {{.Prefix}}_conv_mem #(
    parameter integer LANES  = 1,  // lanes per row
    parameter integer LB     = 1,  // bits per lane
    parameter integer ADDR_W = 1,  // width of a row address
    parameter integer DEPTH  = 2{{if .InitMems}}, // rows
    parameter INIT_FILE = ""       // $readmemh image of the initial contents
{{- else}}   // rows
{{- end}}
) (
    input  wire                  clk,
    input  wire                  wr_en,
    input  wire [LANES-1:0]      wr_mask,
    input  wire [ADDR_W-1:0]     wr_addr,
    input  wire [LANES*LB-1:0]   wr_data,
    input  wire                  rd_en,
    input  wire [ADDR_W-1:0]     rd_addr,
    output reg  [LANES*LB-1:0]   rd_data
);
    reg [LANES*LB-1:0] mem [0:DEPTH-1];
{{- if .InitMems}}

    initial $readmemh(INIT_FILE, mem);
{{- end}}

    wire [ADDR_W-1:0] addr = wr_en ? wr_addr : rd_addr;
    integer l;

    always @(posedge clk) begin
        if (wr_en) begin
            for (l = 0; l < LANES; l = l + 1)
                if (wr_mask[l])
                    mem[addr][l*LB +: LB] <= wr_data[l*LB +: LB];
        end else if (rd_en)
            rd_data <= mem[addr];
    end
endmodule

` + "`default_nettype wire\n"

const tmplConvWMem = `// {{.Prefix}}_conv_mem with a write enable per word: a row holds WORDS
// words of WB bits, written from the low WB bits of the 16-bit words of
// wr_data (the core's weight port; the generator chose WB to hold every
// weight of the model, and the board refuses an upload word that does
// not fit); wr_mask bit k writes word k of the row (the weight memory: a
// clause's NC weights, written as a whole row or one class's weight at a
// time). yosys maps the word enables onto the block RAM's write mask.
module {{.Prefix}}_conv_wmem #(
    parameter integer WORDS  = 1,  // words per row
    parameter integer WB     = 16, // bits per stored word (at most 16)
    parameter integer ADDR_W = 1,  // width of a row address
    parameter integer DEPTH  = 2{{if .InitMems}}, // rows
    parameter INIT_FILE = ""       // $readmemh image of the initial contents (WORDS*WB-bit rows)
{{- else}}   // rows
{{- end}}
) (
    input  wire                clk,
    input  wire                wr_en,
    input  wire [WORDS-1:0]    wr_mask,
    input  wire [ADDR_W-1:0]   wr_addr,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [WORDS*16-1:0] wr_data, // bits WB..15 of each word are not stored
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire                rd_en,
    input  wire [ADDR_W-1:0]   rd_addr,
    output reg  [WORDS*WB-1:0] rd_data
);
    reg [WORDS*WB-1:0] mem [0:DEPTH-1];
{{- if .InitMems}}
    initial $readmemh(INIT_FILE, mem);
{{- end}}
    wire [ADDR_W-1:0] addr = wr_en ? wr_addr : rd_addr;
    integer k;
    always @(posedge clk) begin
        if (wr_en) begin
            for (k = 0; k < WORDS; k = k + 1)
                if (wr_mask[k])
                    mem[addr][k*WB +: WB] <= wr_data[k*16 +: WB];
        end else if (rd_en)
            rd_data <= mem[addr];
    end
endmodule

` + "`default_nettype wire\n"

const tmplConvSPRAM = `// {{.Prefix}}_conv_mem with the memory marked ram_style "huge": yosys
// (synth_ice40 -spram) maps it to the UP5K's SPRAMs (16 bits x 16K words
// each), which its cost model would otherwise leave to block RAM, and the
// lanes' write enables onto their 4-bit write masks (MASKWREN: LB is a
// multiple of 4, hw.ConvParams.ThreshSPRAM). SPRAM has no initial
// contents: the core's write port loads it.
module {{.Prefix}}_conv_spram #(
    parameter integer LANES  = 1,  // lanes per row
    parameter integer LB     = 4,  // bits per lane
    parameter integer ADDR_W = 1,  // width of a row address
    parameter integer DEPTH  = 2   // rows
) (
    input  wire                  clk,
    input  wire                  wr_en,
    input  wire [LANES-1:0]      wr_mask,
    input  wire [ADDR_W-1:0]     wr_addr,
    input  wire [LANES*LB-1:0]   wr_data,
    input  wire                  rd_en,
    input  wire [ADDR_W-1:0]     rd_addr,
    output reg  [LANES*LB-1:0]   rd_data
);
    (* ram_style = "huge" *) reg [LANES*LB-1:0] mem [0:DEPTH-1];

    wire [ADDR_W-1:0] addr = wr_en ? wr_addr : rd_addr;
    integer l;

    always @(posedge clk) begin
        if (wr_en) begin
            for (l = 0; l < LANES; l = l + 1)
                if (wr_mask[l])
                    mem[addr][l*LB +: LB] <= wr_data[l*LB +: LB];
        end else if (rd_en)
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

const tmplConvImg = `// Rows of one bit-plane of two images: H rows of W bits, written one row at a time
// (wr_en) and read one row at a time (rd_en, registered: rd_data is valid
// the cycle after rd_en and holds until the next read). One write and one
// read port, so that yosys maps it to iCE40 block RAM.
module {{.Prefix}}_conv_img #(
    parameter integer W      = 1, // bits per row
    parameter integer ADDR_W = 1, // width of a row address
    parameter integer H      = 2  // rows
) (
    input  wire              clk,
    input  wire              wr_en,
    input  wire [ADDR_W-1:0] wr_addr,
    input  wire [W-1:0]      wr_data,
    input  wire              rd_en,
    input  wire [ADDR_W-1:0] rd_addr,
    output reg  [W-1:0]      rd_data
);
    // no_rw_check: a read never meets a write of the same row (the core
    // writes one image while a request reads the other), so yosys needs no
    // collision bypass (about 63 flip-flops and 33 LUT4 per memory)
    (* ram_style = "block", no_rw_check *) reg [W-1:0] mem [0:H-1];

    always @(posedge clk) begin
        if (wr_en)
            mem[wr_addr] <= wr_data;
        if (rd_en)
            rd_data <= mem[rd_addr];
    end
endmodule

` + "`default_nettype wire\n"

const tmplConvPatch = `// The literals of PN = {{.PN}} adjacent patches (y, x + j), j = 0..PN-1
// (docs/fixed-point-conv.md 2), the patch blocks visited in raster order.
// The image is kept once, in block RAM: per bit-plane one
// {{.Prefix}}_conv_img of its even rows and one of its odd rows, so that a
// read gives two rows of every plane (2a, 2a+1 at address a). Each memory
// holds two images (banks): the scan reads bank rb while row_en writes the
// next row of bank wb, in order p*H + y (plane p's pixel (y, x) in bit x),
// counted from 0 after rst and after every swap; once P*H rows are
// written (wfull) further rows are ignored until the swap. swap (a
// request accepted) makes the bank just written whole the one read (no
// swap when no whole image was written since the last: the request reads
// the previous image), so the next image can be written while a request
// runs. start (re)starts a scan at patch
// ({{if .Range}}ylo{{else}}0{{end}}, 0): the load reads the window's rows, from the even row at or
// below the first patch row to its last window row (n = WY + (first & 1)
// rows), two per cycle and the last one or two one per cycle
// (n - floor((n-1)/2) cycles), and raises ready the cycle after; next
// moves x on by PN patches, or to the next patch row. Per plane, band
// holds the rows y+1 .. y+WY-1 as read, and window row (p, dy) holds row
// y+dy moved left by x columns, so that the window bit (p, dy, dx) of
// patch j is its bit dx + j. A double advance (the load's) shifts the
// band by two rows read the cycle before; a single advance (the load's
// last, and a move to the next patch row) shifts it by one and reloads the
// window rows from the band and that row; the row a move to the next patch
// row needs is read in advance. {{if .Range}}Only the window's bits leave: the
// clause lanes' rectangles (conv_range) stand for the position
// thermometers and for x + j < PX; row_end marks a row's last block.{{if .Lane1}}
// With one clause lane every patch row starts at x = xs = xb*PN, the block
// of the lane's first allowed column (the blocks before it cannot fire):
// the rows are read moved down by xs (each row is written as NB copies,
// copy k moved down by k*PN, and read from copy xb), so window row
// (p, dy) holds row y+dy moved left by x and the window bit (p, dy, dx) of
// patch j is again its bit dx + j.{{end}}{{else}}The row and column thermometers
// ty[k] = y > k and tx[k] = x > k are shift registers (patch j's column
// thermometer is tx moved up by j, ones below). valid[j] is x + j < PX.{{end}}
` + tmplConvPatchPorts + `{{- if .Range}}
    input  wire [{{sub .YW 1}}:0]        ylo,   // range scan: the first patch row (read at start),
    input  wire [{{sub .YW 1}}:0]        yhi,   // ... the scan ends after row yhi,
    input  wire [{{sub .XW 1}}:0]        xhi,   // ... a row ends at the block holding column xhi (held from start to the scan's end)
{{- end}}
{{- if .Lane1}}
    input  wire [{{sub .XW 1}}:0]        xs,    // one clause lane: every row starts at the block of column xs (held like xhi),
    input  wire [{{sub .XBW 1}}:0]        xb,    // ... block xb (xs = xb*PN): the rows are read moved down by xs
{{- end}}
    output reg               ready, // the window holds the scan's first block
{{- if .Range}}
    output wire [PN*FO-1:0]  feat,  // patch j's window bits at j*FO (features 0..FO-1: the rectangle stands for the thermometers)
    output wire              row_end, // the block is the last of its row in the scan
{{- else}}
    output wire [PN*FO-1:0]  feat,  // patch j's features at j*FO (FO = F)
    output wire [PN-1:0]     valid, // patch j exists (x + j < PX)
{{- end}}
    output wire              last   // the block is the last of the scan
);
    localparam integer MA_W = {{.MAW}}; // the write row counter (0..H-1): HA_W + 1
    localparam integer HA_W = {{.HAW}}; // an address of the even-row and odd-row memories ({{.HH}} rows each)
    localparam integer RA_W = {{.RAW}}; // the read row counter, up to H + 2
{{- if not .Range}}
{{- if gt .TX 0}}
    reg [{{sub .TX 1}}:0] tx;
{{- end}}
{{- if gt .TY 0}}
    reg [{{sub .TY 1}}:0] ty;
{{- end}}
{{- end}}
{{- if .Range}}
    // The range scan's row end and last row, registered for the block
    // they describe (they enable the window's {{mul .P (sub (mul 2 .WY) 1)}} row registers).
    wire x_end; // the block is the last of its row in the scan
    reg [{{sub .YW 1}}:0] y;
    reg         ye; // y == yhi
{{- if lt .PN .PX}}
    reg [{{sub .XW 1}}:0] x;
    reg         xe; // x + PN > xhi
    assign x_end = xe;
{{- else}}
    assign x_end = 1'b1; // a row is one block
    wire unused_xhi = ^xhi;
{{- end}}

    always @(posedge clk) begin
        if (start) begin
            y  <= ylo;
            ye <= ylo == yhi;
{{- if lt .PN .PX}}
            x  <= {{if .Lane1}}xs{{else}}{{dec .XW 0}}{{end}};
            xe <= {{if .Lane1}}xs + {{end}}{{dec .XW .PN}} > xhi;
{{- end}}
        end else if (next) begin
            if (x_end) begin
                y  <= y + 1'b1;
                ye <= y + 1'b1 == yhi;
{{- if lt .PN .PX}}
                x  <= {{if .Lane1}}xs{{else}}{{dec .XW 0}}{{end}};
                xe <= {{if .Lane1}}xs + {{end}}{{dec .XW .PN}} > xhi;
            end else begin
                x  <= x + {{dec .XW .PN}};
                xe <= x + {{dec .XW (mul 2 .PN)}} > xhi;
{{- end}}
            end
        end
    end
{{- if and .Lane1 (ge .PN .PX)}}
    wire unused_xs = ^{xs, xb};
{{- end}}
    wire [RA_W-1:0] first_row = {{if eq .RAW .YW}}ylo{{else}}{{"{"}}{{sub .RAW .YW}}'b0, ylo}{{end}};
{{- else}}
    wire x_end; // the block is the row's last
    wire y_last;
{{- if and (gt .TX 0) (lt .PN .PX)}}
    assign x_end = tx[{{sub (sub .PX .PN) 1}}];
{{- else}}
    assign x_end = 1'b1;
{{- end}}
{{- if gt .TY 0}}
    assign y_last = &ty;
{{- else}}
    assign y_last = 1'b1;
{{- end}}
    wire [RA_W-1:0] first_row = {{dec .RAW 0}};
{{- end}}

    // The image memories: the write counter, the reads of the load and
    // of the next patch rows.
    reg  [MA_W-1:0] wa;
{{- if gt .P 1}}
    reg  [{{sub .PWd 1}}:0] wp;
{{- end}}
    reg             wfull; // P*H rows written since the last swap
    reg             wb, rb; // the bank written, the bank read (wb != rb)
    wire            wr     = row_en && !wfull;
    wire            w_last = wa == MA_W'(H - 1){{if gt .P 1}} && wp == {{dec .PWd (sub .P 1)}}{{end}};
    always @(posedge clk) begin
        if (rst || swap) begin
            wa    <= {{dec .MAW 0}};
{{- if gt .P 1}}
            wp    <= {{dec .PWd 0}};
{{- end}}
            wfull <= 1'b0;
            if (rst) begin
                wb <= 1'b0;
                rb <= 1'b1;
            end else if (wfull) begin
                wb <= rb;
                rb <= wb;
            end
        end else if (wr) begin
            wa <= (wa == {{dec .MAW (sub .H 1)}}) ? {{dec .MAW 0}} : wa + 1'b1;
{{- if gt .P 1}}
            if (wa == {{dec .MAW (sub .H 1)}})
                wp <= (wp == {{dec .PWd (sub .P 1)}}) ? {{dec .PWd 0}} : wp + 1'b1;
{{- end}}
            if (w_last)
                wfull <= 1'b1;
        end
    end
{{- if .Lane1}}

    // One clause lane: each row is written NB = {{.NB}} times in the NB
    // cycles after row_en (rows come at least NB cycles apart), copy k
    // moved down by k*PN columns at address {bank, k, row/2}, so that the
    // load reads the rows as the scan uses them, moved down by xs =
    // xb*PN, at {rb, xb, row/2}.
    reg  [W-1:0]      cw_row;  // the copy written next
    reg  [{{sub .XBW 1}}:0]        cw_k;    // ... its number
    reg               cw_on;   // a copy is written
    reg               cw_odd, cw_bank;
    reg  [HA_W-1:0]   cw_half; // the row's address in the even or odd memory
{{- if gt .P 1}}
    reg  [{{sub .PWd 1}}:0] cw_p;
{{- end}}
    always @(posedge clk) begin
        if (wr) begin
            cw_row  <= row;
            cw_k    <= {{dec .XBW 0}};
            cw_on   <= 1'b1;
            cw_odd  <= wa[0];
            cw_bank <= wb;
            cw_half <= wa[HA_W:1];
{{- if gt .P 1}}
            cw_p    <= wp;
{{- end}}
        end else if (cw_on) begin
            cw_row  <= cw_row >> {{.PN}};
            cw_k    <= cw_k + 1'b1;
            if (cw_k == {{dec .XBW (sub .NB 1)}})
                cw_on <= 1'b0;
        end
        if (rst)
            cw_on <= 1'b0;
    end
{{- end}}

    // The load: rem rows from nr to the window's last row; a double
    // advance while rem >= 3 (nr is then even), single ones after.
    reg              loading;
    reg  [{{sub .LdW 1}}:0]       rem;
    reg  [RA_W-1:0]  nr;     // the next row to shift in
    wire             pair   = loading && rem >= {{dec .LdW 3}};
    wire             single = (loading && !pair) || (next && x_end);
    wire [RA_W-1:0]  nr_next = start ? first_row & ~{{dec .RAW 1}} : nr + (pair ? {{dec .RAW 2}} : {{dec .RAW 1}});
{{- if .Lane1}}
    // (one clause lane: a row past the image is read too, into unused
    // words: only a scan's last move reads one, and no patch uses it; no
    // comparison on the way to the block RAMs' read enable)
    wire             rd_en = start || pair || single;
{{- else}}
    wire             rd_en = start || ((pair || single) && nr_next < {{dec .RAW .H}});
{{- end}}
    wire [P*W-1:0]   rd_e, rd_o; // rows 2a and 2a+1 of every plane, read at a = nr >> 1 the cycle before

    always @(posedge clk) begin
        if (start) begin
            loading <= 1'b1;
            rem     <= {{dec .LdW .WY}} + {{if .Range}}{ {{- sub .LdW 1}}'b0, ylo[0]}{{else}}{{dec .LdW 0}}{{end}};
            ready   <= 1'b0;
        end else if (loading) begin
            rem <= rem - (pair ? {{dec .LdW 2}} : {{dec .LdW 1}});
            if (rem == {{dec .LdW 1}}) begin
                loading <= 1'b0;
                ready   <= 1'b1;
            end
        end
        if (start || pair || single)
            nr <= nr_next;
    end

{{- if not .Range}}

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
{{- end}}

    genvar p, dy, dx, j;
    generate
        for (p = 0; p < P; p = p + 1) begin : g_plane
{{- if .Lane1}}
            {{.Prefix}}_conv_img #(
                .W      (W),
                .ADDR_W (HA_W + 1 + {{.XBW}}),
                .H      (2 << (HA_W + {{.XBW}}))
            ) img_e (
                .clk     (clk),
                .wr_en   (cw_on && !cw_odd{{if gt .P 1}} && cw_p == p{{end}}),
                .wr_addr ({cw_bank, cw_k, cw_half}),
                .wr_data (cw_row),
                .rd_en   (rd_en),
                .rd_addr ({rb, xb, nr_next[HA_W:1]}),
                .rd_data (rd_e[p*W +: W])
            );
            {{.Prefix}}_conv_img #(
                .W      (W),
                .ADDR_W (HA_W + 1 + {{.XBW}}),
                .H      (2 << (HA_W + {{.XBW}}))
            ) img_o (
                .clk     (clk),
                .wr_en   (cw_on && cw_odd{{if gt .P 1}} && cw_p == p{{end}}),
                .wr_addr ({cw_bank, cw_k, cw_half}),
                .wr_data (cw_row),
                .rd_en   (rd_en),
                .rd_addr ({rb, xb, nr_next[HA_W:1]}),
                .rd_data (rd_o[p*W +: W])
            );
{{- else}}
            {{.Prefix}}_conv_img #(
                .W      (W),
                .ADDR_W (HA_W + 1),
                .H      (2 << HA_W)
            ) img_e (
                .clk     (clk),
                .wr_en   (wr && !wa[0]{{if gt .P 1}} && wp == p{{end}}),
                .wr_addr ({wb, wa[HA_W:1]}),
                .wr_data (row),
                .rd_en   (rd_en),
                .rd_addr ({rb, nr_next[HA_W:1]}),
                .rd_data (rd_e[p*W +: W])
            );
            {{.Prefix}}_conv_img #(
                .W      (W),
                .ADDR_W (HA_W + 1),
                .H      (2 << HA_W)
            ) img_o (
                .clk     (clk),
                .wr_en   (wr && wa[0]{{if gt .P 1}} && wp == p{{end}}),
                .wr_addr ({wb, wa[HA_W:1]}),
                .wr_data (row),
                .rd_en   (rd_en),
                .rd_addr ({rb, nr_next[HA_W:1]}),
                .rd_data (rd_o[p*W +: W])
            );
{{- end}}
            wire [W-1:0] re = rd_e[p*W +: W]; // {{if .Lane1}}rows 2a, 2a+1 moved down by xs{{else}}rows 2a, 2a+1{{end}}
            wire [W-1:0] ro = rd_o[p*W +: W];
            wire [W-1:0] rd_1 = nr[0] ? ro : re; // row nr
{{- if gt .WY 1}}
            // band: rows y+1 .. y+WY-1 of plane p, row y+1+i at i*W
            reg [(WY-1)*W-1:0] band;
            always @(posedge clk) begin
                if (pair)
                    band <= {{if eq .WY 2}}ro{{else if eq .WY 3}}{ro, re}{{else}}{ro, re, band[(WY-1)*W-1:2*W]}{{end}};
                else if (single)
                    band <= {{if eq .WY 2}}rd_1{{else}}{rd_1, band[(WY-1)*W-1:W]}{{end}};
            end
{{- end}}
            for (dy = 0; dy < WY; dy = dy + 1) begin : g_row
                reg  [W-1:0] win; // row y+dy of plane p, moved left by x
                wire [W-1:0] win_adv; // ... at an advance: row y+1+dy
                if (dy == WY-1) begin : g_top
                    assign win_adv = rd_1;
                end else begin : g_band
{{- if gt .WY 1}}
                    assign win_adv = band[dy*W +: W];
{{- else}}
                    assign win_adv = rd_1;
{{- end}}
                end
                always @(posedge clk) begin
                    if (single)
                        win <= win_adv;
{{- if gt .PX .PN}}
                    else if (next)
                        win <= {{"{"}}{{.PN}}'b0, win[W-1:{{.PN}}]};
{{- end}}
                end
` + tmplConvPatchLiterals + `
{{- if .Range}}
    assign last = x_end && ye;
{{- else}}
    assign last = x_end && y_last;
{{- end}}
endmodule

` + "`default_nettype wire\n"

const tmplConvPatchCompact = `// The literals of PN = {{.PN}} adjacent patches (y, x + j), j = 0..PN-1
// (docs/fixed-point-conv.md 2), the patch blocks visited in raster order:
// the compact scan's variant (hw.ScanCompact), with no band of rows below
// the window. The image is kept in block RAM: per bit-plane two
// {{.Prefix}}_conv_img memories a and b with every row of the plane (so
// that one read gives any two rows), two images each (banks): the scan
// reads bank rb while row_en writes the
// next row of bank wb, in order p*H + y (plane p's pixel (y, x) in bit
// x), counted from 0 after rst and after every swap; once P*H rows are
// written (wfull) further rows are ignored until the swap. swap (a
// request accepted) makes the bank just written whole the one read (no
// swap when no whole image was written since the last). start (re)starts
// a scan at patch (ylo, 0), and a move to the next patch row (next at
// the row's last block) reloads the window at row y + 1: the load reads
// the window's rows r .. r+WY-1 in NR = {{.NR}} pairs (row r + 2i from
// memory a, r + 2i + 1 from memory b), one pair per cycle from the cycle
// after, each written into window rows 2i, 2i + 1 the cycle after its
// read; ready rises the cycle after the last (NR + 2 cycles from start). next moves x on by PN patches. Window row
// (p, dy) holds row y+dy moved left by x, so that the window bit (p, dy,
// dx) of patch j is its bit dx + j. Only the window's bits leave: the
// clause lanes' rectangles (conv_range) stand for the position
// thermometers and for x + j < PX; row_end marks a row's last block.
` + tmplConvPatchPorts + `    input  wire [{{sub .YW 1}}:0]        ylo,   // the first patch row (read at start),
    input  wire [{{sub .YW 1}}:0]        yhi,   // ... the scan ends after row yhi,
    input  wire [{{sub .XW 1}}:0]        xhi,   // ... a row ends at the block holding column xhi (held from start to the scan's end)
    output reg               ready, // the window holds the present block's rows
    output wire [PN*FO-1:0]  feat,  // patch j's window bits at j*FO (features 0..FO-1: the rectangle stands for the thermometers)
    output wire              row_end, // the block is the last of its row in the scan
    output wire              last   // the block is the last of the scan
);
    localparam integer MA_W = {{.MAW}}; // the write row counter (0..H-1): HA_W + 1
    localparam integer NR   = {{.NR}}; // reads of a window load (row pairs)
    // The row end and last row, registered for the block they describe.
    wire x_end; // the block is the last of its row in the scan
    reg [{{sub .YW 1}}:0] y;
    reg         ye; // y == yhi
{{- if lt .PN .PX}}
    reg [{{sub .XW 1}}:0] x;
    reg         xe; // x + PN > xhi
    assign x_end = xe;
{{- else}}
    assign x_end = 1'b1; // a row is one block
    wire unused_xhi = ^xhi;
{{- end}}
    wire adv = next && x_end; // a move to the next patch row

    always @(posedge clk) begin
        if (start) begin
            y  <= ylo;
            ye <= ylo == yhi;
{{- if lt .PN .PX}}
            x  <= {{dec .XW 0}};
            xe <= {{dec .XW .PN}} > xhi;
{{- end}}
        end else if (next) begin
            if (x_end) begin
                y  <= y + 1'b1;
                ye <= y + 1'b1 == yhi;
{{- if lt .PN .PX}}
                x  <= {{dec .XW 0}};
                xe <= {{dec .XW .PN}} > xhi;
            end else begin
                x  <= x + {{dec .XW .PN}};
                xe <= x + {{dec .XW (mul 2 .PN)}} > xhi;
{{- end}}
            end
        end
    end

    // The image memories: the write counter and the banks.
    reg  [MA_W-1:0] wa;
{{- if gt .P 1}}
    reg  [{{sub .PWd 1}}:0] wp;
{{- end}}
    reg             wfull; // P*H rows written since the last swap
    reg             wb, rb; // the bank written, the bank read (wb != rb)
    wire            wr     = row_en && !wfull;
    wire            w_last = wa == MA_W'(H - 1){{if gt .P 1}} && wp == {{dec .PWd (sub .P 1)}}{{end}};
    always @(posedge clk) begin
        if (rst || swap) begin
            wa    <= {{dec .MAW 0}};
{{- if gt .P 1}}
            wp    <= {{dec .PWd 0}};
{{- end}}
            wfull <= 1'b0;
            if (rst) begin
                wb <= 1'b0;
                rb <= 1'b1;
            end else if (wfull) begin
                wb <= rb;
                rb <= wb;
            end
        end else if (wr) begin
            wa <= (wa == {{dec .MAW (sub .H 1)}}) ? {{dec .MAW 0}} : wa + 1'b1;
{{- if gt .P 1}}
            if (wa == {{dec .MAW (sub .H 1)}})
                wp <= (wp == {{dec .PWd (sub .P 1)}}) ? {{dec .PWd 0}} : wp + 1'b1;
{{- end}}
            if (w_last)
                wfull <= 1'b1;
        end
    end

    // The load: from row r = ylo (start) or y + 1 (adv), NR reads of row
    // pairs, each written into two window rows the cycle after.
    wire [{{.YW}}:0] r = start ? {1'b0, ylo} : {1'b0, y} + 1'b1;
    reg              loading;   // a read this cycle
    reg  [MA_W-1:0]  la, lb;    // its rows in memories a and b (rows past the image wrap: never used)
    reg  [{{.NRW}}-1:0] li;        // its pair index
    reg              wv;        // the read of last cycle is present: written now
    reg  [{{.NRW}}-1:0] wi;        // ... its pair index
    always @(posedge clk) begin
        wv <= loading && !(start || adv); // a new load drops a read in flight
        wi <= li;
        if (start || adv) begin
            loading <= 1'b1;
            la      <= MA_W'(r);
            lb      <= MA_W'(r + 1'b1);
            li      <= {{"{"}}{{.NRW}}{1'b0}};
            ready   <= 1'b0;
        end else begin
            if (loading) begin
                la <= la + MA_W'(2);
                lb <= lb + MA_W'(2);
                li <= li + 1'b1;
                if (li == {{.NRW}}'(NR - 1))
                    loading <= 1'b0;
            end
            if (wv && wi == {{.NRW}}'(NR - 1))
                ready <= 1'b1;
        end
        if (rst) begin
            loading <= 1'b0;
            wv      <= 1'b0;
        end
    end
    wire [P*W-1:0] rd_a, rd_b; // the pair read last cycle: rows r + 2i and r + 2i + 1 of every plane

    genvar p, dy, dx, j;
    generate
        for (p = 0; p < P; p = p + 1) begin : g_plane
            {{.Prefix}}_conv_img #(
                .W      (W),
                .ADDR_W (MA_W + 1),
                .H      (2 << MA_W)
            ) img_a (
                .clk     (clk),
                .wr_en   (wr{{if gt .P 1}} && wp == p{{end}}),
                .wr_addr ({wb, wa}),
                .wr_data (row),
                .rd_en   (loading),
                .rd_addr ({rb, la}),
                .rd_data (rd_a[p*W +: W])
            );
            {{.Prefix}}_conv_img #(
                .W      (W),
                .ADDR_W (MA_W + 1),
                .H      (2 << MA_W)
            ) img_b (
                .clk     (clk),
                .wr_en   (wr{{if gt .P 1}} && wp == p{{end}}),
                .wr_addr ({wb, wa}),
                .wr_data (row),
                .rd_en   (loading),
                .rd_addr ({rb, lb}),
                .rd_data (rd_b[p*W +: W])
            );
            for (dy = 0; dy < WY; dy = dy + 1) begin : g_row
                reg  [W-1:0] win; // row y+dy of plane p, moved left by x
                wire ld = wv && wi == {{.NRW}}'(dy / 2);
                always @(posedge clk) begin
                    if (ld)
                        win <= (dy % 2 == 0) ? rd_a[p*W +: W] : rd_b[p*W +: W];
{{- if gt .PX .PN}}
                    else if (next)
                        win <= {{"{"}}{{.PN}}'b0, win[W-1:{{.PN}}]};
{{- end}}
                end
` + tmplConvPatchLiterals + `
    assign last = x_end && ye;
endmodule

` + "`default_nettype wire\n"

// tmplConvPatchPorts is the head the range and compact patch modules
// share: the parameters and the ports before the scan's range inputs.
const tmplConvPatchPorts = `module {{.Prefix}}_conv_patch #(
    // Set by the generator: regenerate rather than override.
    parameter integer H   = {{.H}}, // image rows
    parameter integer W   = {{.W}}, // image columns
    parameter integer P   = {{.P}}, // bit-planes
    parameter integer WY  = {{.WY}}, // window rows
    parameter integer WX  = {{.WX}}, // window columns
{{- if and (not .Range) (gt .F .WinBits)}}
    parameter integer F   = {{.F}}, // features of a patch
{{- end}}
    parameter integer FO  = {{.FO}}, // features output per patch: {{if .Range}}the window bits (WY*WX*P){{else}}all F{{end}}
    parameter integer PN  = {{.PN}}  // patches per cycle
) (
    input  wire              clk,
    input  wire              rst,
    input  wire              row_en,
    input  wire [W-1:0]      row,
    input  wire              swap,    // a request is accepted: read the image just written, write the next from row 0
    input  wire              start,
    input  wire              next,
`

// tmplConvPatchLiterals is the part the patch modules share: a window
// row's columns as the PN patches' features; with the full scan also the
// position thermometers and the patches' valid bits (with the range and
// compact scans the clause lanes' rectangles stand for both: conv_range's
// gates).
const tmplConvPatchLiterals = `{{- if gt .W (add .WX (sub .PN 1))}}
                wire unused_win = ^win[W-1:{{add .WX (sub .PN 1)}}];
{{- end}}
                for (j = 0; j < PN; j = j + 1) begin : g_patch
                    for (dx = 0; dx < WX; dx = dx + 1) begin : g_col
                        assign feat[j*FO + (p*WY + dy)*WX + dx] = win[dx + j];
                    end
                end
            end
        end
{{- if and (not .Range) (or (gt .TY 0) (gt .TX 0) (gt .PN 1))}}
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
{{- if gt .PN 1}}
            if (j == 0) begin : g_v0
                assign valid[j] = 1'b1;
            end else begin : g_vj
                assign valid[j] = !tx[{{sub .PX 1}}-j];
            end
{{- end}}
        end
{{- end}}
    endgenerate
{{- if .Range}}

    assign row_end = x_end;
{{- else if eq .PN 1}}

    assign valid = 1'b1;
{{- end}}
`

const tmplConvRange = `// The patches a clause lane can fire on: its included row-thermometer
// literals "y > k" (and negations "y <= k") allow an interval of patch rows
// lo..hi, its column-thermometer literals an interval of columns xl..xh;
// every other patch fails one of those literals. The intervals are
// registered at load (from the include registers of the group the scan
// takes); from them, ok[ci]: the lane has an included literal and a
// non-empty range, and the union over the ok lanes: the rows ylo..yhi and
// the last column xhi (none: no lane is ok, no patch can fire),
// combinational; the core registers them.
//
// Inside a lane's rectangle every included thermometer literal holds, so
// the clause lanes test only the window's literals, gated by gate: bit
// ci*PN + j is 1 when patch j of the present block (y, x + j) lies in
// clause lane ci's rectangle (it exists, x + j < PX{{if gt .LC 1}}, and y is in
// the lane's rows: the group scans the union of its lanes' rows{{else}}; with one clause
// lane the scan visits the lane's rows only{{end}}). The
// gates follow the patch module's blocks: start (the scan's first row),
// next (the next block), row_end (... which starts the next row).
{{- if .Lane1}}
// With one clause lane (the range scan, not the compact one) every patch
// row starts at block xb, the one holding the lane's first allowed column
// (xs = xb*PN): the blocks before it cannot fire, so they are not
// visited, and the gates are counted from the offsets of the lane's first
// and last columns from xs (no column mask).
{{- end}}
module {{.Prefix}}_conv_range #(
    parameter integer LC = {{.LC}}, // clause lanes (set by the generator)
    parameter integer TH = {{.TH}}, // thermometer include bits per lane, 2*(TY+TX)
    parameter integer PN = {{.PN}}  // patches per block
) (
    input  wire             clk,
    input  wire             load,   // register the intervals of therm
    input  wire [LC*TH-1:0] therm,  // lane ci at ci*TH: row, column thermometers included, then their negations
    input  wire [LC-1:0]    any,    // the lane has an included literal ({{if .Lane1}}the sampler's, registered here at load{{else}}registered at load by the core{{end}})
    input  wire             start,  // the scan starts at patch (ylo, 0)
    input  wire             next,   // the scan moves on by one block
    input  wire             row_end, // the present block is the last of its row
    output reg  [{{sub .YW 1}}:0]      ylo,
    output reg  [{{sub .YW 1}}:0]      yhi,
    output reg  [{{sub .XW 1}}:0]      xhi,
    output reg              none,
    output reg  [LC-1:0]    ok,
{{- if .Lane1}}
    output reg  [{{sub .XW 1}}:0]      xs,     // one clause lane: the first column of every patch row's first block, xb*PN
    output reg  [{{sub .XBW 1}}:0]      xb,     // ... its block, the one holding the lane's first allowed column
{{- end}}
    output wire [LC*PN-1:0] gate    // patch j of the present block is in clause lane ci's rectangle, at ci*PN + j
);
{{.RangeLogic}}endmodule

` + "`default_nettype wire\n"

const tmplConvClause = `{{if .Lane1}}` + tmplConvClauseLane1 + `{{else}}// One clause lane over a group's patch scan. With inc the clause's include
// bits of the FO features the lane tests (feature f's literal at bit f,
// its negation at FO + f: {{if .Range}}the window's literals; the rectangle of the
// included thermometer literals is conv_range's gate, valid{{else}}all 2F literals{{end}}) and feat
// the present PN patches' features,
//     fire = OR over patches j with valid[j] of AND over f of
//            (feat_j[f] ? !inc[FO + f] : !inc[f]),
// fired is the OR of fire over the patches evaluated since clear (a
// register: it includes the present patch from the next cycle), any the
// OR of the clause's include bits (a register of the sampler). The clause
// output is any && fired (a clause with no included literal outputs 0);
// it can no longer change once the clause fired or when it has no
// included literal (resolved). Both come from registers, so that the
// scan's control does not wait for the AND of this cycle.
module {{.Prefix}}_conv_clause #(
    parameter integer FO = {{.FO}}, // features tested per patch (set by the generator)
    parameter integer PN = {{.PN}}  // patches evaluated per cycle
) (
    input  wire             clk,
    input  wire             clear,
    input  wire             eval,          // the present patches count
    input  wire [2*FO-1:0]  inc,
    input  wire             any,           // some literal of the clause is included (the sampler keeps it)
    input  wire [PN*FO-1:0] feat,          // patch j's features at j*FO
    input  wire [PN-1:0]    valid,         // patch j {{if .Range}}lies in the clause's rectangle{{else}}exists{{end}}
    output wire             out,           // the output over the patches evaluated before this cycle{{if .Lane1}} (and, with eval, this cycle's){{end}}
    output wire             resolved       // ... which no further patch changes
);
    reg fired;

    wire [FO-1:0] inc_p = inc[FO-1:0];    // literal f included
    wire [FO-1:0] inc_n = inc[2*FO-1:FO]; // its negation included
    wire [PN-1:0] fire_j;
    genvar j;
    generate
        for (j = 0; j < PN; j = j + 1) begin : g_patch
            wire [FO-1:0] f = feat[j*FO +: FO];
            // per feature, not per literal: yosys maps it into fewer LUT4
            assign fire_j[j] = valid[j] & (&((f & ~inc_n) | (~f & ~inc_p)));
        end
    endgenerate
    wire fire = |fire_j;

    always @(posedge clk) begin
        if (clear)
            fired <= 1'b0;
        else if (eval)
            fired <= fired | fire;
    end

{{- if .Lane1}}
    assign out      = any & (fired | (eval & fire)); // one clause lane: the scan may end at this cycle's block
{{- else}}
    assign out      = any & fired;
{{- end}}
    assign resolved = ~any | fired;
endmodule

{{end}}` + "`default_nettype wire\n"

// tmplConvClauseLane1 is conv_clause of the one-lane range scan
// (ConvParams.Lane1): the clause AND pipelined over two cycles, so that
// no path runs from the include registers through the whole AND.
const tmplConvClauseLane1 = `// One clause lane of the one-lane range scan, its AND pipelined. With inc
// the clause's include bits of the FO window features (feature f's
// literal at bit f, its negation at FO + f; the rectangle of the included
// thermometer literals is conv_range's gate, valid) and feat the present
// PN patches' features,
//     fire = OR over patches j with valid[j] of AND over f of
//            (feat_j[f] ? !inc[FO + f] : !inc[f]).
// Stage 1 (the cycle of the block, eval) registers per patch the partial
// ANDs of NG groups of up to GS features, and the patch's gate valid[j]
// with eval; stage 2 (the next cycle) finishes the AND, gates it and ORs
// the patches into fire, and accumulates it into fired. last marks the
// clause's end (its scan ends this cycle, with or without a block): it
// goes through stage 1 with the clause's any (a register of the core,
// replaced at the next clause's take), and in stage 2 out is registered
// as any && (fired | fire), the clause's output over every block it
// evaluated (a clause with no included literal outputs 0), and fired is
// cleared for the next clause: out holds the output from the second
// cycle after last until the next clause's. The next clause's first
// block comes at least 3 cycles after last (the take, the start of the
// window's load, the load), so stage 2 is done with a clause before the
// next one's first block enters it. resolved (the output can no longer
// change: the clause fired, or has no included literal) comes from
// registers; it sees a fire in the second cycle after its block. clear
// (no request running) clears fired.
module {{.Prefix}}_conv_clause #(
    parameter integer FO = {{.FO}}, // features tested per patch (set by the generator)
    parameter integer PN = {{.PN}}, // patches evaluated per cycle
    parameter integer GS = 16  // features per partial AND (stage 1)
) (
    input  wire             clk,
    input  wire             clear,
    input  wire             eval,          // the present patches count
    input  wire             last,          // the clause's scan ends this cycle
    input  wire [2*FO-1:0]  inc,
    input  wire             any,           // some literal of the clause is included (the core keeps it from the take)
    input  wire [PN*FO-1:0] feat,          // patch j's features at j*FO
    input  wire [PN-1:0]    valid,         // patch j lies in the clause's rectangle
    output reg              out,           // the output of the clause whose last was 2 cycles ago or earlier
    output wire             resolved       // the present clause's output can no longer change (seen 2 cycles after its block)
);
    localparam integer NG = (FO + GS - 1) / GS; // partial ANDs per patch

    wire [FO-1:0] inc_p = inc[FO-1:0];    // literal f included
    wire [FO-1:0] inc_n = inc[2*FO-1:FO]; // its negation included

    // stage 1
    reg  [PN*NG-1:0] part;   // patch j's partial AND of group g at j*NG + g
    reg  [PN-1:0]    v1;     // patch j evaluated and in the rectangle
    reg              last1, any1;
    genvar j, g;
    generate
        for (j = 0; j < PN; j = j + 1) begin : g_patch
            wire [FO-1:0] f = feat[j*FO +: FO];
            // per feature, not per literal: yosys maps it into fewer LUT4
            wire [FO-1:0] pass = (f & ~inc_n) | (~f & ~inc_p);
            for (g = 0; g < NG; g = g + 1) begin : g_group
                localparam integer LO = g * GS;
                localparam integer N  = FO - LO < GS ? FO - LO : GS;
                always @(posedge clk)
                    part[j*NG + g] <= &pass[LO +: N];
            end
        end
    endgenerate
    always @(posedge clk) begin
        v1    <= valid & {PN{eval}};
        last1 <= last;
        if (last)
            any1 <= any;
    end

    // stage 2
    reg           fired; // the present clause fired on a block that left stage 1
    wire [PN-1:0] fire_j;
    generate
        for (j = 0; j < PN; j = j + 1) begin : g_fire
            assign fire_j[j] = v1[j] & (&part[j*NG +: NG]);
        end
    endgenerate
    wire fire = |fire_j;

    always @(posedge clk) begin
        if (clear || last1)
            fired <= 1'b0;
        else
            fired <= fired | fire;
        if (last1)
            out <= any1 & (fired | fire);
    end

    assign resolved = ~any | fired;
endmodule

`

const tmplConvCore = `// The image's bit-planes are written row by row (img_wr_en) at any time,
// into block RAM (conv_patch: two images, so the next one is written
// while a request runs on the last); a request (K, seed Q) on that image
// is accepted in the idle state. K outside 1..MaxK is answered by one
// error word. Otherwise the seeder loads the L lane LFSRs (L + 3 cycles);
// then three units work on consecutive clause groups at once (the K*G
// groups of the request, sample-major):
//   sampler: BT beats per group, one per cycle (threshold row g*BT + b,
//            every lane draws; the decisions enter the include registers
//            the cycle after); the group's last beat waits until the
//            previous group was handed to the scan, so the draws are
//            golden's in golden's order whatever the scan does;
//   scan:    takes a complete group from the sampler (a copy of its
//            include bits: the sampler goes on with the next group),
{{- if .Range}}
{{- if .Lane1}}
//            registers the rectangle of patches the clause lane's
//            included position thermometers allow (conv_range, at the
//            take), reads the window's WY rows at its first row from the
//            image memory (from the cycle after the take), then evaluates
//            blocks of PN patches, one per cycle, in each row of the
//            rectangle from the block holding its first column to the one
//            holding its last, until its last row (the scan ends as the
//            last block is evaluated), the clause lane resolved (seen one
//            cycle later: its fired register) or no patch allowed (no
//            block at all);
{{- else}}
//            registers the rectangle of patches the clause lanes'
//            included position thermometers allow (conv_range; one
//            cycle), reads the window's WY rows at its first row from the
//            image memory (WY + 2 cycles), then evaluates blocks of PN
//            patches, one per cycle, every clause lane on the same block,
//            in each row of the rectangle the blocks up to its last
//            column, until its last row, every clause lane resolved (seen
//            one cycle later: the clause lanes' fired registers) or none
//            allowed (no block at all);
{{- end}}
{{- else}}
//            reads the window's first WY rows from the image memory
//            (WY + 2 cycles), then evaluates blocks of PN patches in
//            raster order, one per cycle, every clause lane on the same
//            block, until every clause lane is resolved or the last patch
//            was evaluated (seen one cycle later: the clause lanes' fired
//            registers);
{{- end}}
//   weigh:   takes the clause outputs of a scanned group and adds clause
//            lane ci's weight row (clause g*LC + ci) to the NC class sums
//            when its output is 1 (LC + 1 cycles); after a sample's last
//            group the NC class sums v_k leave as NC result words
//            (sign-extended to 32 bits), res_last on the request's last.
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
    // thresholds of the beat's L lanes, lane 0 in the low BITS bits; only
    // the lanes whose bit of bank_wr_mask is set are written (all ones: the
    // whole row; one: a lane at a time, as the board uploads them).
    input  wire                bank_wr_en,
    input  wire [L-1:0]        bank_wr_mask,
    input  wire [ADDR_W-1:0]   bank_wr_addr,
    input  wire [L*BITS-1:0]   bank_wr_data,
    // Weight write port (between requests): the NC 16-bit weights of
    // clause slot c = g*LC + ci, class 0 in the low bits; with wt_wr_one
    // only class wt_wr_class's weight (its 16 bits of wt_wr_data). The
    // memory keeps the low WB = {{.WB}} bits of each (every weight of the
    // model fits them; a wider weight would wrap).
    input  wire                wt_wr_en,
    input  wire [WADDR_W-1:0]  wt_wr_clause,
    input  wire [NC*16-1:0]    wt_wr_data,
    input  wire                wt_wr_one,
    input  wire [{{sub .ClsW 1}}:0]        wt_wr_class,
    // Image rows (at any time: the image memory holds two images, the one
    // a running request reads and the next): P*H = {{mul .P .H}} rows written in
    // order p*H + y before a request, plane p's pixel (y, x) in bit x of
    // row p*H + y, counted from row 0 after reset and after every accepted
    // request; rows past P*H are ignored. A request reads the last image
    // written whole (all P*H rows) before it was accepted: the image stays
    // for the following requests until rewritten.
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
    localparam integer INC_W  = {{.IncW}}; // BT*LL
    localparam integer SW     = {{.SW}}; // width of a raw class sum (signed)
    localparam integer LFSR_W = {{.LW}}; // W

    localparam [1:0] S_IDLE  = 2'd0, // request
                     S_SEED  = 2'd1,
                     S_RUN   = 2'd2,
                     S_ERROR = 2'd3;
    localparam [1:0] C_WAIT  = 2'd0, // scan unit
{{- if and .Range (not .Lane1)}}
                     C_RANGE = 2'd1,
{{- end}}
                     C_START = 2'd2,
                     C_SCAN  = 2'd3;
    localparam [1:0] W_IDLE  = 2'd0, // weigh unit
                     W_WEIGH = 2'd1,
                     W_OUT   = 2'd2;
    localparam [31:0] ERR_K = 32'd1; // error word: K outside 1..MaxK

    reg  [1:0]       state, cstate, wstate;
    reg  [K_W-1:0]   k_last, ssample, wsample;
    reg  [{{sub .BeatW 1}}:0]       beat;
    reg  [{{sub .GroupW 1}}:0]       sgroup, cgroup;
    reg  [ADDR_W-1:0] addr;
    reg  [WADDR_W-1:0] waddr;
    reg  [{{sub .JW 1}}:0]       j;
    reg  [{{sub .ClsW 1}}:0]       o_idx;

    wire accept = req_valid && req_ready;
    wire k_bad  = {{.KBad}};

    assign req_ready = state == S_IDLE;
    assign idle      = state == S_IDLE;

    // ---------------------------------------------------------------
    // Seeding, lanes and threshold memory: the sampler.
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

    reg  s_done;   // every beat of the request issued
    reg  hold;     // a group's last beat issued and the group not yet taken by the scan
    reg  sr_full;  // ... and its decisions are in the include registers
    wire take;     // the scan takes the include registers' group this cycle
    wire beat0     = beat == {{dec .BeatW 0}};
    wire beat_last = beat == {{dec .BeatW (sub .BT 1)}};
    // A group's first beat waits for the previous group's take (its
    // decisions enter the include registers the cycle after){{if gt .BT 1}}, or for
    // the cycle before it when the scan waits: then the take is certain{{end}}.
{{- if .Compact}}
    // (compact: the clause lanes read the include registers themselves, so
    // a group's first beat waits until the scan is done with the previous
    // group, wt_take; its decisions enter the cycle after)
    wire wt_take;
    wire issue = state == S_RUN && !s_done && (!beat0 || !hold || wt_take);
{{- else}}
    wire issue = state == S_RUN && !s_done && (!beat0 || !hold || take{{if gt .BT 1}} || early{{end}});
{{- end}}
    reg  valid1;                    // the beat issued last cycle: draws and thresholds present
    reg  first1, last1;             // ... and it was its group's first, last
{{- if and (gt .BT 1) (not .Compact)}}
    wire early = valid1 && last1 && cstate == C_WAIT; // the group completes now and the scan waits: it takes it next cycle
{{- end}}
    always @(posedge clk) begin
        if (rst) valid1 <= 1'b0;
        else     valid1 <= issue;
        first1 <= beat0;
        last1  <= beat_last;
    end

    always @(posedge clk) begin
        if (state == S_SEED) begin
            beat    <= {{dec .BeatW 0}};
            sgroup  <= {{dec .GroupW 0}};
            addr    <= {{dec .AddrW 0}};
            ssample <= {K_W{1'b0}};
            s_done  <= 1'b0;
            hold    <= 1'b0;
            sr_full <= 1'b0;
        end else begin
            if (issue) begin
                addr <= (addr == {{dec .AddrW (sub .D 1)}}) ? {{dec .AddrW 0}} : addr + 1'b1;
                beat <= beat_last ? {{dec .BeatW 0}} : beat + 1'b1;
                if (beat_last) begin
                    sgroup <= (sgroup == {{dec .GroupW (sub .G 1)}}) ? {{dec .GroupW 0}} : sgroup + 1'b1;
                    if (sgroup == {{dec .GroupW (sub .G 1)}}) begin
                        ssample <= ssample + 1'b1;
                        if (ssample == k_last)
                            s_done <= 1'b1;
                    end
                end
            end
            if (issue && beat_last)
                hold <= 1'b1;
            else if ({{if .Compact}}wt_take{{else}}take{{end}})
                hold <= 1'b0;
            if (valid1 && last1)
                sr_full <= 1'b1;
            else if (take)
                sr_full <= 1'b0;
        end
    end

    wire [L*BITS-1:0]     thresh;
    wire [LC*INC_W-1:0]   inc;
    wire [LC-1:0]         inc_any;

    {{.Prefix}}_conv_{{if .ThreshSPRAM}}spram{{else}}mem{{end}} #(
        .LANES  (L),
        .LB     (BITS),
        .ADDR_W (ADDR_W),
        .DEPTH  ({{.D}}){{if .InitMems}},
        .INIT_FILE ("{{.ThreshFile}}"){{end}}
    ) tmem (
        .clk     (clk),
        .wr_en   (bank_wr_en && state == S_IDLE),
        .wr_mask (bank_wr_mask),
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
    // The scan unit: patches and clause lanes.
    localparam integer FO = {{.FO}}; // features the clause AND tests{{if .Range}}: the window's (the rectangle stands for the thermometers){{end}}
    wire [{{.PN}}*FO-1:0] feat;
{{- if .Range}}
    wire           row_end;      // the present block ends its patch row
    wire [LC*{{.PN}}-1:0] gate;  // patch j is in clause lane ci's rectangle (conv_range), at ci*PN + j
{{- else}}
    wire [{{.PN}}-1:0]     lit_valid;
{{- end}}
    wire           patch_last, patch_ready;
    wire [LC-1:0]  clause_out, resolved;
    reg  [LC-1:0]  any_s;         // the scanned group's lanes have an included literal
    reg            past_last;     // the last patch has been evaluated
    wire           scan_eval = cstate == C_SCAN && patch_ready && !past_last;
{{- if not .Compact}}
    wire           wt_take;       // the weigh unit takes the scanned group's outputs
{{- end}}
{{- if .Range}}
    // The range scan (conv_range): at the take the lanes' intervals are
    // registered from the include registers; in C_RANGE their union is
    // registered for the scan, and a lane with an empty range counts as
    // resolved.
    localparam integer TH = {{.TH}}; // thermometer include bits per clause lane
    wire [LC*TH-1:0] therm;
    wire [{{sub .YW 1}}:0]       r_ylo, r_yhi;
    wire [{{sub .XW 1}}:0]       r_xhi;
    wire             r_none;
    wire [LC-1:0]    r_ok;
{{- if .Lane1}}
    // One clause lane: the union is the lane's rectangle, registered at
    // the take, so the window's load starts the cycle after (no C_RANGE),
    // and the scan ends as its last block is evaluated (the clause's
    // output then includes that block's AND).
    wire [{{sub .XW 1}}:0]       r_xs;
    wire [{{sub .XBW 1}}:0]       r_xb;
    wire [{{sub .YW 1}}:0]       scan_ylo = r_ylo, scan_yhi = r_yhi;
    wire [{{sub .XW 1}}:0]       scan_xhi = r_xhi;
    wire [LC-1:0]    scan_ok  = r_ok;
    wire           scan_end  = past_last || &(resolved | ~scan_ok) || (scan_eval && patch_last);
    localparam [1:0] C_FIRST = C_START;
{{- else}}
    reg  [{{sub .YW 1}}:0]       scan_ylo, scan_yhi;
    reg  [{{sub .XW 1}}:0]       scan_xhi;
    reg  [LC-1:0]    scan_ok;
    wire           scan_end  = past_last || &(resolved | ~scan_ok);
    localparam [1:0] C_FIRST = C_RANGE;
{{- end}}

    {{.Prefix}}_conv_range rng (
        .clk     (clk),
        .load    (take),
        .therm   (therm),
        .any     ({{if .Lane1}}inc_any{{else}}any_s{{end}}),
        .start   (cstate == C_START),
        .next    (scan_eval && !patch_last),
        .row_end (row_end),
        .ylo     (r_ylo),
        .yhi     (r_yhi),
        .xhi     (r_xhi),
        .none    (r_none),
        .ok      (r_ok),
{{- if .Lane1}}
        .xs      (r_xs),
        .xb      (r_xb),
{{- end}}
        .gate    (gate)
    );

    always @(posedge clk) begin
{{- if .Lane1}}
        if (cstate == C_START)
            past_last <= r_none; // no patch can fire: the load started is not waited for
{{- else}}
        if (cstate == C_RANGE) begin
            scan_ylo <= r_ylo;
            scan_yhi <= r_yhi;
            scan_xhi <= r_xhi;
            scan_ok  <= r_ok;
            past_last <= r_none;
        end
{{- end}}
        else if (scan_eval && patch_last)
            past_last <= 1'b1;
    end
{{- else}}
    wire           scan_end  = past_last || &resolved;
    localparam [1:0] C_FIRST = C_START;

    always @(posedge clk) begin
        if (take)
            past_last <= 1'b0;
        else if (scan_eval && patch_last)
            past_last <= 1'b1;
    end
{{- end}}

{{- if .Lane1}}
    // One clause lane: the scanned clauses' outputs wait for the weigh
    // unit in a queue of WQ entries, so that the scan goes on while the
    // weigh unit sends a sample's NC words (which a board that takes a
    // word every few clocks makes tens of cycles long).
    // The clause's AND is pipelined (conv_clause): the scan's end
    // (wt_take) goes through its two stages as the tag e_v, then c_v,
    // when the clause's output (clause_out, a register) is known, and
    // the output enters the queue the cycle after. q_occ counts the
    // entries and the clauses in flight, so that the scan ends a clause
    // only when the queue has room for it.
    localparam integer WQ = 4;
    reg           e_v, e_last;  // the clause whose scan ended last cycle, in the AND's stage 2
    reg           c_v, c_last;  // ... and the cycle before: its output is clause_out[0]
    wire          c_out = clause_out[0];
    reg  [WQ-1:0] q_out, q_last; // entry i at bit i, entry 0 the oldest: the clause's output, the sample's last group
    reg  [2:0]    q_n;           // entries
    reg  [2:0]    q_occ;         // entries and clauses in flight (e_v, c_v)
    wire          q_pop = wstate == W_IDLE && q_n != 3'd0;
    wire [2:0]    q_n1  = q_n - {2'b0, q_pop};
    wire [1:0]    q_w   = q_n1[1:0]; // the entry c_v writes (q_n1 <= 3 then)
    assign wt_take = cstate == C_SCAN && scan_end && q_occ != 3'd4;
    always @(posedge clk) begin
        e_v <= wt_take && !rst;
        c_v <= e_v && !rst;
        if (wt_take)
            e_last <= cgroup == {{dec .GroupW (sub .G 1)}};
        c_last <= e_last;
        if (q_pop) begin
            q_out  <= q_out >> 1;
            q_last <= q_last >> 1;
        end
        if (c_v) begin // at the first free entry after the pop
            q_out[q_w]  <= c_out;
            q_last[q_w] <= c_last;
        end
        if (rst || state == S_SEED) begin
            q_n   <= 3'd0;
            q_occ <= 3'd0;
        end else begin
            q_n   <= q_n1 + {2'b0, c_v};
            q_occ <= q_occ - {2'b0, q_pop} + {2'b0, wt_take};
        end
    end
{{- else}}
    assign wt_take = cstate == C_SCAN && scan_end && wstate == W_IDLE;
{{- end}}
    assign take    = sr_full && (cstate == C_WAIT || wt_take);

    always @(posedge clk) begin
        if (take)
            any_s <= inc_any;
        if (state == S_SEED)
            cgroup <= {{dec .GroupW 0}};
        else if (wt_take)
            cgroup <= (cgroup == {{dec .GroupW (sub .G 1)}}) ? {{dec .GroupW 0}} : cgroup + 1'b1;
        if (rst || state != S_RUN)
            cstate <= C_WAIT;
        else case (cstate)
            C_WAIT:  if (take)    cstate <= C_FIRST;
{{- if and .Range (not .Lane1)}}
            C_RANGE:              cstate <= r_none ? C_SCAN : C_START; // no patch can fire: nothing to read
{{- end}}
            C_START:              cstate <= C_SCAN;
            C_SCAN:  if (wt_take) cstate <= take ? C_FIRST : C_WAIT;
            default:              cstate <= C_WAIT;
        endcase
    end

    {{.Prefix}}_conv_patch patch (
        .clk     (clk),
        .rst     (rst),
        .row_en  (img_wr_en),
        .row     (img_wr_data),
        .swap    (accept),
        .start   (cstate == C_START),
        .next    (scan_eval && !patch_last),
{{- if .Range}}
        .ylo     (scan_ylo),
        .yhi     (scan_yhi),
        .xhi     (scan_xhi),
{{- end}}
{{- if .Lane1}}
        .xs      (r_xs),
        .xb      (r_xb),
{{- end}}
        .ready   (patch_ready),
        .feat    (feat),
{{- if .Range}}
        .row_end (row_end),
{{- else}}
        .valid   (lit_valid),
{{- end}}
        .last    (patch_last)
    );

    genvar ci;
    generate
        for (ci = 0; ci < LC; ci = ci + 1) begin : g_clause_lane
            // the include bits of the FO features the AND tests: literal f
            // at f, its negation (literal F + f) at FO + f
            wire [2*FO-1:0] inc_f = {{if .Range}}{inc[ci*INC_W + {{.F}} +: FO], inc[ci*INC_W +: FO]}{{else}}inc[ci*INC_W +: {{.Lit}}]{{end}};
{{- if .Compact}}
            wire [2*FO-1:0] inc_s = inc_f; // the include registers themselves (held until wt_take)
{{- else}}
            reg [2*FO-1:0] inc_s; // the scanned group's include bits of clause lane ci
            always @(posedge clk) begin
                if (take)
                    inc_s <= inc_f;
            end
{{- end}}
{{- if .Range}}
            assign therm[ci*TH +: TH] = {inc[ci*INC_W + {{add .F .WinBits}} +: {{add .TY .TX}}], inc[ci*INC_W + {{.WinBits}} +: {{add .TY .TX}}]};
{{- end}}
{{- if gt .IncW .Lit}}
            // Bits of padding literal slots are never included (threshold 0).
            wire unused_pad = ^inc[ci*INC_W + {{.Lit}} +: INC_W - {{.Lit}}];
{{- end}}
            {{.Prefix}}_conv_clause clause (
                .clk           (clk),
{{- if .Lane1}}
                .clear         (state != S_RUN),
                .eval          (scan_eval),
                .last          (wt_take),
{{- else}}
                .clear         (take),
                .eval          (scan_eval),
{{- end}}
                .inc           (inc_s),
                .any           (any_s[ci]),
                .feat          (feat),
                .valid         ({{if .Range}}gate[ci*{{.PN}} +: {{.PN}}]{{else}}lit_valid{{end}}),
                .out           (clause_out[ci]),
                .resolved      (resolved[ci])
            );
        end
    endgenerate

    // ---------------------------------------------------------------
    // The weigh unit: weights and class sums. In W_WEIGH cycle j < LC
    // reads the weight row of clause slot waddr = g*LC + j; the next
    // cycle adds it to the sums when clause lane j's output (outs[0] at
    // the read) is 1.
    reg  [LC-1:0]    outs;
    reg              acc_v, acc_o, wlast;
    wire [NC*{{.WB}}-1:0] wt_row; // the clause's NC weights, {{.WB}} bits each
    wire             weigh_read = wstate == W_WEIGH && j != {{dec .JW .LC}};

    {{.Prefix}}_conv_wmem #(
        .WORDS  (NC),
        .WB     ({{.WB}}),
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

    wire out_take = res_valid && res_ready;
    wire out_end  = wstate == W_OUT && out_take && o_idx == {{dec .ClsW (sub .NC 1)}};

    reg [SW-1:0] sums [0:NC-1];
    integer k;
    always @(posedge clk) begin
        acc_v <= weigh_read;
        acc_o <= outs[0];
        for (k = 0; k < NC; k = k + 1) begin
            if (state == S_SEED || out_end)
                sums[k] <= {SW{1'b0}};
            else if (acc_v && acc_o)
                sums[k] <= sums[k] + {{.WtExt}};
        end
    end

    always @(posedge clk) begin
        if (accept)
            k_last <= req_k - 1'b1;
{{- if .Lane1}}
        if (q_pop) begin
            outs  <= q_out[0];
            wlast <= q_last[0];
            j     <= {{dec .JW 0}};
        end
{{- else}}
        if (wt_take) begin
            outs  <= clause_out;
            wlast <= cgroup == {{dec .GroupW (sub .G 1)}};
            j     <= {{dec .JW 0}};
        end
{{- end}}
        if (weigh_read) begin
            outs  <= outs >> 1;
            waddr <= waddr + 1'b1;
            j     <= j + 1'b1;
        end
        if (state == S_SEED || wstate == W_OUT)
            waddr <= {{dec .WAddrW 0}};
        if (state == S_SEED)
            wsample <= {K_W{1'b0}};
        else if (out_end)
            wsample <= wsample + 1'b1;
        if (wstate != W_OUT)
            o_idx <= {{dec .ClsW 0}};
        else if (out_take)
            o_idx <= o_idx + 1'b1;
        if (rst || state != S_RUN)
            wstate <= W_IDLE;
        else case (wstate)
            W_IDLE:  if ({{if .Lane1}}q_pop{{else}}wt_take{{end}}){{if .Lane1}}  {{else}}    {{end}} wstate <= W_WEIGH;
            W_WEIGH: if (!weigh_read) wstate <= wlast ? W_OUT : W_IDLE;
            W_OUT:   if (out_end)     wstate <= W_IDLE;
            default:                  wstate <= W_IDLE;
        endcase
    end

    // ---------------------------------------------------------------
    // The request.
    always @(posedge clk) begin
        if (rst) begin
            state <= S_IDLE;
        end else begin
            case (state)
            S_IDLE:  if (accept)    state <= k_bad ? S_ERROR : S_SEED;
            S_SEED:  if (seed_done) state <= S_RUN;
            S_RUN:   if (out_end && wsample == k_last)
                                    state <= S_IDLE;
            S_ERROR: if (out_take)  state <= S_IDLE;
            default:                state <= S_IDLE;
            endcase
        end
    end

    // ---------------------------------------------------------------
    // Result words.
    wire [SW-1:0] out_sum = sums[o_idx];

    assign res_valid = (state == S_RUN && wstate == W_OUT) || state == S_ERROR;
    assign res_data  = state == S_ERROR ? ERR_K : {{.SumToWord}};
    assign res_last  = state == S_ERROR || (o_idx == {{dec .ClsW (sub .NC 1)}} && wsample == k_last);
    assign res_error = state == S_ERROR;
endmodule

` + "`default_nettype wire\n"
