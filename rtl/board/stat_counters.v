`default_nettype none
/*
 * stat_counters - 32-bit event counters kept in one block RAM, a byte
 *                 at a time
 *
 * NCNT counters of 32 bits that wrap modulo 2^32, for the STATUS
 * command. Keeping them in flip-flops with one incrementer each costs
 * about 40 logic cells per counter on an iCE40; here they live in one
 * block RAM (four bytes per counter, counter i's byte b at 4i+b, bits
 * 7..0 of a 16-bit word; bits 15..8 hold a read's snapshot) and a single
 * 8-bit adder folds the events into them:
 *
 *   - Every counter has a small pending count (PEND_W bits, wrapping)
 *     that collects its increments (inc, 0..3 per clock).
 *   - The RAM is swept without pause, one byte per clock, counter by
 *     counter, byte 0 (least significant) first: a byte is read, and a
 *     clock later written back plus an addend: for byte 0 the counter's
 *     pending count (taken and restarted from that clock's increment),
 *     for bytes 1..3 the carry out of the byte before. A counter is
 *     visited every 4*NCNT clocks.
 *   - A read (rd_req held high with rd_addr, counter rd_addr[.:2]'s
 *     byte rd_addr[1:0]) waits for the next visit of that counter that
 *     starts after rd_req rose; the visit writes its bytes (every event
 *     counted before the visit started) into the RAM a second time, as a
 *     snapshot in the upper half of the same 16-bit words (a masked write:
 *     no register holds the value). From then on, each time the sweep
 *     reads the word at rd_addr, rd_valid is high for that one clock with
 *     the snapshot's byte on rd_data (the RAM's output register): once
 *     every 4*NCNT clocks. The reader may change rd_addr[1:0] (the byte)
 *     while it holds rd_req, and takes the value's four bytes, in any
 *     order, from the same snapshot; the sweep goes on meanwhile. Drop
 *     rd_req for at least one clock between reads (of different counters
 *     or for a fresh value).
 *   - clear (and rst) sets every counter to 0 at once: the next NCNT
 *     visits (one of each counter) fold from 0 instead of the RAM's bytes
 *     (a shift register of NCNT flags, no per-counter logic), and the
 *     pending counts are dropped.
 *
 * A pending count is taken every 4*NCNT clocks, so it can only wrap (and
 * lose events) if one counter gets more than 2^PEND_W-1 events in that
 * time: 7 in 36 clocks with NCNT = 9 and PEND_W = 3 (the fastest counter,
 * UART bit times, counts one event per CLKS_PER_BIT >= 8 clocks: at most 5
 * in 36, 6 in 44 with NCNT = 11; frame-level events are at least a
 * minimum frame, 11 bytes, apart; proto_engine's core runs at least a
 * 32-clock seed step apart). proto_engine uses PEND_W = 3 with 9 or 11
 * counters (5 cost 42 more LUT4: 159 + 12 against 117 + 12) and PEND_W =
 * 2 with the UART-only board's 5 (3 events in 20 clocks: at most 3 bit
 * times, every other source at most once per UART byte; 85 -> 72 LUT4 +
 * carry).
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
 *   rd_req, rd_addr          read request (hold rd_req until done with
 *                            the value); rd_addr is {counter, byte},
 *                            $clog2(NCNT) + 2 bits, the counter part held
 *                            with rd_req
 *   rd_valid, rd_data [7:0]  1-clock pulse: rd_data is byte rd_addr[1:0]
 *                            of the snapshot of counter rd_addr[.:2]
 *
 * Latency: the first rd_valid comes 4*NCNT+1 to 8*NCNT+4 clocks after
 * rd_req rises, then one every 4*NCNT clocks for an unchanged rd_addr.
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
    input  wire [$clog2(NCNT)+1:0] rd_addr,
    output wire              rd_valid,
    output wire [7:0]        rd_data
);

localparam integer  IW    = $clog2(NCNT);
localparam integer  AW    = IW + 2;
localparam [AW-1:0] ALAST = AW'(4 * NCNT - 1);

(* no_rw_check *)
reg [15:0]       mem [0:4*NCNT-1];  // counter i's byte b at 4i+b [7:0], the read's snapshot of it [15:8]
reg [15:0]       rdata;             // mem[wa]

reg [AW-1:0]     ra = {AW{1'b0}};   // address read this clock
reg [AW-1:0]     wa = {AW{1'b0}};   // address of rdata, written back this clock
reg              c = 1'b0;          // carry out of byte wa-1
reg              zj = 1'b1;         // counter wa[AW-1:2] starts from 0
reg              hit = 1'b0;        // this visit writes the read's snapshot
reg              vis = 1'b0;        // this visit is counter rd_addr[.:2]'s
reg              shot = 1'b0;       // the read's snapshot is complete
reg [NCNT-1:0]   zs = {NCNT{1'b1}};  // zs[0]: the next visit starts from 0 (shifts by one per visit)
reg [NCNT*PEND_W-1:0] pend = {(NCNT*PEND_W){1'b0}};   // counter i at [PEND_W*i +: PEND_W]

wire [IW-1:0] ja = ra[AW-1:2];      // counter whose byte ra is read
wire [IW-1:0] jw = wa[AW-1:2];      // counter whose byte wa is written
wire          a0 = (ra[1:0] == 2'd0);
wire          w0 = (wa[1:0] == 2'd0);

// the fold: byte 0 adds the pending count, bytes 1..3 the carry
wire [PEND_W-1:0] snap   = pend[PEND_W*jw +: PEND_W];
wire [7:0]        addend = w0 ? 8'(snap) : {7'd0, c};
wire [8:0]        fold   = {1'b0, zj ? 8'd0 : rdata[7:0]} + {1'b0, addend};

// the snapshot's byte passes by on the RAM's output once a sweep
assign rd_valid = shot && rd_req && vis && (wa[1:0] == rd_addr[1:0]);
assign rd_data  = rdata[15:8];

always @(posedge clk) begin
    mem[wa][7:0] <= fold[7:0];
    if (hit) begin
        mem[wa][15:8] <= fold[7:0];
    end
    rdata <= mem[ra];
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
    if (hit && wa[1:0] == 2'd3) begin
        shot <= 1'b1;
    end
    if (!rd_req) begin
        shot <= 1'b0;
        hit  <= 1'b0;
    end
    // a visit starts: its zero flag, and whether it answers the read
    if (a0) begin
        zj        <= zs[0];
        zs        <= {1'b0, zs[NCNT-1:1]};
        vis       <= (ja == rd_addr[AW-1:2]);
        hit       <= rd_req && !shot && (ja == rd_addr[AW-1:2]);
    end
    if (clear || rst) begin
        zs <= {NCNT{1'b1}};
    end
    if (rst) begin
        ra        <= {AW{1'b0}};
        shot      <= 1'b0;
        hit       <= 1'b0;
    end
end

endmodule

`default_nettype wire
