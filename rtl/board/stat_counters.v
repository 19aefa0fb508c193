`default_nettype none
/*
 * stat_counters - 32-bit event counters kept in one block RAM, a byte
 *                 at a time
 *
 * NCNT counters of 32 bits that wrap modulo 2^32, for the STATUS
 * command. Keeping them in flip-flops with one incrementer each costs
 * about 40 logic cells per counter on an iCE40; here they live in one
 * 8-bit wide block RAM (four bytes per counter, counter i's byte b at
 * 4i+b) and a single 8-bit adder folds the events into them:
 *
 *   - Every counter has a small pending count (PEND_W bits, wrapping)
 *     that collects its increments (inc, 0..3 per clock).
 *   - The RAM is swept without pause, one byte per clock, counter by
 *     counter, byte 0 (least significant) first: a byte is read, and a
 *     clock later written back plus an addend: for byte 0 the counter's
 *     pending count (taken and restarted from that clock's increment),
 *     for bytes 1..3 the carry out of the byte before. A counter is
 *     visited every 4*NCNT clocks.
 *   - A read (rd_req held high with rd_idx) waits for the next visit of
 *     counter rd_idx that starts after rd_req rose and returns the bytes
 *     that visit writes: every event counted before the visit started.
 *     rd_valid then stays high until rd_req falls, with the value's
 *     least significant byte on rd_data; each rd_next pulse shifts the
 *     next byte down (the reader takes the value a byte at a time, byte 0
 *     first, with at most 3 pulses per read: no byte mux, the value is a
 *     shift register); the sweep goes on meanwhile. Drop rd_req for at
 *     least one clock between reads.
 *   - clear (and rst) sets every counter to 0 at once: the next NCNT
 *     visits (one of each counter) fold from 0 instead of the RAM's bytes
 *     (a shift register of NCNT flags, no per-counter logic), and the
 *     pending counts are dropped.
 *
 * A pending count is taken every 4*NCNT clocks, so it can only wrap (and
 * lose events) if one counter gets more than 2^PEND_W-1 events in that
 * time: 7 in 36 clocks with NCNT = 9 and the defaults (the fastest counter,
 * UART bit times, counts one event per CLKS_PER_BIT >= 8 clocks: at most 5
 * in 36, 6 in 44 with NCNT = 11; frame-level events are at least a
 * minimum frame, 11 bytes, apart; proto_engine's core runs at least a
 * 32-clock seed step apart). proto_engine uses PEND_W = 3 (5 cost 42
 * more LUT4: 159 + 12 against 117 + 12).
 *
 * Parameters:
 *   NCNT    number of counters, 2..16
 *   PEND_W  width of a pending count, 2..8 (3)
 *   INC1    bit i set: counter i never gets more than 1 per clock (bit
 *           2i+1 of inc is ignored; its pending adder is an incrementer)
 *
 * Ports:
 *   clk, rst                 clock; synchronous active-high reset: all
 *                            counters read 0 afterwards
 *   inc [2*NCNT-1:0]         counter i increments by inc[2i+1:2i] this clock
 *   clear                    1-cycle pulse: all counters to 0 (increments of
 *                            the same clock are dropped)
 *   rd_req, rd_idx           read request (hold both until done with
 *                            rd_data); rd_idx is $clog2(NCNT) bits
 *   rd_valid, rd_data [7:0]  counter rd_idx's value is held (level, until
 *                            rd_req falls); rd_data is its byte 0, then
 *                            byte k after k rd_next pulses
 *   rd_next                  1-cycle pulse while rd_valid: the next byte
 *                            of the held value moves onto rd_data
 *
 * Latency: rd_valid rises 5 to 4*NCNT+5 clocks after rd_req rises.
 */
module stat_counters #(
    parameter NCNT   = 11,
    parameter PEND_W = 3,
    parameter [15:0] INC1 = 16'h0000
) (
    input  wire              clk,
    input  wire              rst,

    input  wire [2*NCNT-1:0] inc,
    input  wire              clear,

    input  wire              rd_req,
    input  wire [$clog2(NCNT)-1:0] rd_idx,
    output wire              rd_valid,
    output wire [7:0]        rd_data,
    input  wire              rd_next
);

localparam integer  IW    = $clog2(NCNT);
localparam integer  AW    = IW + 2;
localparam [AW-1:0] ALAST = AW'(4 * NCNT - 1);

(* no_rw_check *)
reg [7:0]        mem [0:4*NCNT-1];  // counter i's byte b at 4i+b
reg [7:0]        rdata;             // mem[wa]

reg [AW-1:0]     ra = {AW{1'b0}};   // address read this clock
reg [AW-1:0]     wa = {AW{1'b0}};   // address of rdata, written back this clock
reg              c = 1'b0;          // carry out of byte wa-1
reg              zj = 1'b1;         // counter wa[AW-1:2] starts from 0
reg              hit = 1'b0;        // this visit answers the read
reg              valid_reg = 1'b0;  // a read's value is held
reg [31:0]       val;
reg [NCNT-1:0]   zs = {NCNT{1'b1}};  // zs[0]: the next visit starts from 0 (shifts by one per visit)
reg [NCNT*PEND_W-1:0] pend = {(NCNT*PEND_W){1'b0}};   // counter i at [PEND_W*i +: PEND_W]

wire [IW-1:0] ja = ra[AW-1:2];      // counter whose byte ra is read
wire [IW-1:0] jw = wa[AW-1:2];      // counter whose byte wa is written
wire          a0 = (ra[1:0] == 2'd0);
wire          w0 = (wa[1:0] == 2'd0);

// the fold: byte 0 adds the pending count, bytes 1..3 the carry
wire [PEND_W-1:0] snap   = pend[PEND_W*jw +: PEND_W];
wire [7:0]        addend = w0 ? 8'(snap) : {7'd0, c};
wire [8:0]        fold   = {1'b0, zj ? 8'd0 : rdata} + {1'b0, addend};

assign rd_valid = valid_reg;
assign rd_data  = val[7:0];

always @(posedge clk) begin
    mem[wa] <= fold[7:0];
    rdata   <= mem[ra];
end

// p + i (modulo 2^PEND_W) as gates: a carry chain per counter costs more
function [PEND_W-1:0] pend_add;
    input [PEND_W-1:0] a;
    input [PEND_W-1:0] b;
    integer n;
    reg cy;
    begin
        cy = 1'b0;
        for (n = 0; n < PEND_W; n = n + 1) begin
            pend_add[n] = a[n] ^ b[n] ^ cy;
            cy          = (a[n] & b[n]) | ((a[n] ^ b[n]) & cy);
        end
    end
endfunction

// pending counts: restarted from this clock's increment when taken
genvar g;
generate
    for (g = 0; g < NCNT; g = g + 1) begin : g_pend
        wire [PEND_W-1:0] p = pend[PEND_W*g +: PEND_W];
        wire [PEND_W-1:0] i = INC1[g] ? PEND_W'(inc[2*g]) : PEND_W'(inc[2*g +: 2]);
        wire [PEND_W-1:0] sum = pend_add(p, i);
        always @(posedge clk) begin
            if (w0 && jw == IW'(g)) begin
                pend[PEND_W*g +: PEND_W] <= i;
            end else begin
                pend[PEND_W*g +: PEND_W] <= sum;
            end
            if (clear || rst) begin
                pend[PEND_W*g +: PEND_W] <= {PEND_W{1'b0}};
            end
        end
    end
endgenerate

always @(posedge clk) begin
    ra <= (ra == ALAST) ? {AW{1'b0}} : ra + 1'b1;
    wa <= ra;
    c  <= fold[8];
    if (!rd_req) begin
        valid_reg <= 1'b0;
        hit       <= 1'b0;
    end
    // val is a shift register: a visit's bytes 0..3 enter at the top, the
    // reader shifts them out at the bottom (never in the same clock)
    if (hit || rd_next) begin
        val <= {fold[7:0], val[31:8]};
    end
    if (hit) begin
        if (wa[1:0] == 2'd3) begin
            valid_reg <= rd_req;
        end
    end
    // a visit starts: its zero flag, and whether it answers the read
    if (a0) begin
        zj        <= zs[0];
        zs        <= {1'b0, zs[NCNT-1:1]};
        hit       <= rd_req && !valid_reg && (ja == rd_idx);
    end
    if (clear || rst) begin
        zs <= {NCNT{1'b1}};
    end
    if (rst) begin
        ra        <= {AW{1'b0}};
        valid_reg <= 1'b0;
        hit       <= 1'b0;
    end
end

endmodule

`default_nettype wire
