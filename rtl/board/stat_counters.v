`default_nettype none
/*
 * stat_counters - 32-bit event counters kept in one block RAM
 *
 * NCNT counters of 32 bits that wrap modulo 2^32, for the STATUS
 * command. Keeping them in flip-flops with one incrementer each costs
 * about 40 logic cells per counter on an iCE40; here they live in one
 * 16-bit wide block RAM (two words per counter) and a single 32-bit adder
 * folds the events into them:
 *
 *   - Every counter has a small pending count (PEND_W bits, saturating)
 *     that collects its increments (inc, 0..3 per clock).
 *   - A server visits one counter per 4 clocks, round robin, or the
 *     counter a read asks for (requests and round-robin visits alternate
 *     when both wait): read low half, read high half, add the pending
 *     count snapshot (modulo 2^32), write both halves back.
 *   - A read (rd_req held high with rd_idx) returns the folded value:
 *     every event counted before the visit started. rd_valid then stays
 *     high, with rd_data stable and the server paused, until rd_req falls
 *     (so the reader may take the value a byte at a time); drop rd_req for
 *     at least one clock between reads.
 *   - clear (and rst) sets every counter to 0 at once through a per-counter
 *     "zero" flag (the RAM is rewritten on the next visit) and drops the
 *     pending counts.
 *
 * A counter is visited at least every 2*4*NCNT clocks plus the time reads
 * are held, so a pending count can only saturate (and lose events) if one
 * counter gets more than 2^PEND_W-1 events in that time: 31 in 88 clocks
 * with the defaults; frame-level events are at least a minimum frame (11
 * bytes) apart, and the engine holds a read for 4 clocks.
 *
 * Parameters:
 *   NCNT    number of counters, 2..16
 *   PEND_W  width of a pending count (5)
 *
 * Ports:
 *   clk, rst                 clock; synchronous active-high reset: all
 *                            counters read 0 afterwards
 *   inc [2*NCNT-1:0]         counter i increments by inc[2i+1:2i] this clock
 *   clear                    1-cycle pulse: all counters to 0 (increments of
 *                            the same clock are dropped)
 *   rd_req, rd_idx           read request (hold both until done with
 *                            rd_data); rd_idx is $clog2(NCNT) bits
 *   rd_valid, rd_data [31:0] counter rd_idx's value is on rd_data (level,
 *                            until rd_req falls)
 *
 * Latency: rd_valid rises 4 to 8 clocks after rd_req rises (up to 4 more
 * if the previous visit was also a read).
 */
module stat_counters #(
    parameter NCNT   = 11,
    parameter PEND_W = 5
) (
    input  wire              clk,
    input  wire              rst,

    input  wire [2*NCNT-1:0] inc,
    input  wire              clear,

    input  wire              rd_req,
    input  wire [$clog2(NCNT)-1:0] rd_idx,
    output wire              rd_valid,
    output wire [31:0]       rd_data
);

localparam integer      IW    = $clog2(NCNT);
localparam [IW-1:0]     LAST  = IW'(NCNT - 1);
localparam [PEND_W-1:0] PMAX  = {PEND_W{1'b1}};

(* no_rw_check *)
reg [15:0]       mem [0:2*NCNT-1];  // counter i: low half at 2i, high at 2i+1
reg [15:0]       rdata;

reg [1:0]        phase = 2'd0;
reg [IW-1:0]     rr = {IW{1'b0}};   // next round-robin counter
reg [IW-1:0]     j = {IW{1'b0}};    // counter being visited
reg              req_visit = 1'b0;  // this visit serves rd_req
reg              last_req = 1'b0;   // the previous visit served a read
reg              cancel = 1'b0;     // clear during this visit
reg [PEND_W-1:0] snap;
reg [15:0]       lo;
reg [31:0]       val;
reg              valid_reg = 1'b0;  // a read's value is held
reg [NCNT-1:0]   zero = {NCNT{1'b1}};
reg              zj;                // zero[j], registered (the fold starts from flip-flops)
reg [NCNT*PEND_W-1:0] pend = {(NCNT*PEND_W){1'b0}};   // counter i at [PEND_W*i +: PEND_W]

wire       take_req = rd_req && !last_req;
wire       pause    = valid_reg;     // hold val while the reader takes it
wire [IW-1:0] sel   = take_req ? rd_idx : rr;

// phase 2: fold
wire [31:0] fold = (zj ? 32'd0 : {rdata, lo}) + {{(32-PEND_W){1'b0}}, snap};

wire        we    = !pause && ((phase == 2'd2) || (phase == 2'd3));
wire [IW:0] waddr = {j, phase == 2'd3};
wire [15:0] wdata = (phase == 2'd2) ? fold[15:0] : val[31:16];
wire [IW:0] raddr = (phase == 2'd0) ? {sel, 1'b0} : {j, 1'b1};

assign rd_valid = valid_reg;
assign rd_data  = val;

always @(posedge clk) begin
    if (we) begin
        mem[waddr] <= wdata;
    end
    rdata <= mem[raddr];
end

// pending counts: cleared to this clock's increment when snapshotted
wire snap_now = (phase == 2'd0) && !pause;
genvar g;
generate
    for (g = 0; g < NCNT; g = g + 1) begin : g_pend
        wire [PEND_W:0] psum = {1'b0, pend[PEND_W*g +: PEND_W]} + {{(PEND_W-1){1'b0}}, inc[2*g +: 2]};
        always @(posedge clk) begin
            if (snap_now && sel == IW'(g)) begin
                pend[PEND_W*g +: PEND_W] <= {{(PEND_W-2){1'b0}}, inc[2*g +: 2]};
            end else begin
                pend[PEND_W*g +: PEND_W] <= psum[PEND_W] ? PMAX : psum[PEND_W-1:0];   // saturate
            end
            if (clear || rst) begin
                pend[PEND_W*g +: PEND_W] <= {PEND_W{1'b0}};
            end
        end
    end
endgenerate

always @(posedge clk) begin
    if (!rd_req) begin
        valid_reg <= 1'b0;
    end
    if (!pause) begin
        phase <= phase + 1'b1;
    end

    case (pause ? 3'd4 : {1'b0, phase})
        3'd0: begin
            j         <= sel;
            snap      <= pend[PEND_W*sel +: PEND_W];
            req_visit <= take_req;
            last_req  <= take_req;
            cancel    <= 1'b0;
            if (!take_req) begin
                rr <= (rr == LAST) ? {IW{1'b0}} : rr + 1'b1;
            end
        end
        3'd1: begin
            lo <= rdata;
            zj <= zero[j];
        end
        3'd2: begin
            val <= cancel ? 32'd0 : fold;
        end
        3'd3: begin
            if (!cancel) begin
                zero[j] <= 1'b0;
            end
            valid_reg <= req_visit && rd_req;
        end
        default: begin
            // paused: a read's value is held
        end
    endcase

    if (clear || rst) begin
        zero   <= {NCNT{1'b1}};
        cancel <= 1'b1;
    end
    if (rst) begin
        phase     <= 2'd0;
        rr        <= {IW{1'b0}};
        last_req  <= 1'b0;
        valid_reg <= 1'b0;
    end
end

endmodule

`default_nettype wire
