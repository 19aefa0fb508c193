`default_nettype none
/*
 * uart_tx - 8N1 UART transmitter with a valid/ready (AXI-stream style) byte input
 *
 * A byte is sent as one start bit (0), 8 data bits LSB first and one stop
 * bit (1), each CLKS_PER_BIT clocks long. The line idles high. Bit times
 * are the periods of a free-running bit tick: an input of the module
 * (EXT_TICK = 1: board_top's bit timer, shared with the STATUS line
 * counters) or its own timer (EXT_TICK = 0: an LFSR restarted by rst). A
 * byte is accepted only in a clock with the tick, when the transmitter is
 * idle or its stop bit ends there, so a continuous input stream is sent
 * back to back at exactly 10*CLKS_PER_BIT clocks per byte; a byte offered
 * to an idle transmitter waits up to one bit time for the tick.
 *
 * The character is one shift register of 11 bits, {marker 1, stop 1,
 * data, start 0}, shifted right on each tick (0 shifted in): txd is its
 * bit 0, the transmitter is busy while the marker is above bit 0, and the
 * idle register is the marker alone (txd high). No bit counter, no
 * per-character timer.
 *
 * Parameters:
 *   CLKS_PER_BIT  clock cycles per bit (the baud divisor), integer >= 2;
 *                 with EXT_TICK = 1 the tick's period (not used here)
 *                 104 = 115200 Bd from 12 MHz, 16 = 3 Mbaud from 48 MHz.
 *   EXT_TICK      1: bit times from the tick input; 0: from an own timer
 *
 * Ports:
 *   clk, rst        clock; synchronous active-high reset (control only)
 *   tick            EXT_TICK = 1: one clock in every CLKS_PER_BIT, free
 *                   running (ignored with EXT_TICK = 0)
 *   s_axis_tdata    byte to send
 *   s_axis_tvalid   byte available
 *   s_axis_tready   transmitter takes the byte when valid && ready (only
 *                   in tick clocks)
 *   txd             serial output pin (registered, idle high)
 *   busy            a character is on the line (start bit to end of stop bit)
 *   bit_step, bit_d 1-cycle pulse in the tick that puts a data bit on txd
 *                   (the bit on bit_d): the 8 bits of a character, LSB
 *                   first, all before the character's stop bit, so before
 *                   the next byte is taken (a bit-serial CRC can follow
 *                   the line: proto_tx CRC_SERIAL = 2)
 *
 * Latency: txd goes low (start bit) in the clock cycle right after the
 * transfer. Reset mid-character returns the line to idle (high) at once.
 */
module uart_tx #(
    parameter CLKS_PER_BIT = 104,
    parameter EXT_TICK     = 0
) (
    input  wire       clk,
    input  wire       rst,

    /* verilator lint_off UNUSEDSIGNAL */
    input  wire       tick,            // unused when EXT_TICK = 0
    /* verilator lint_on UNUSEDSIGNAL */

    input  wire [7:0] s_axis_tdata,
    input  wire       s_axis_tvalid,
    output wire       s_axis_tready,

    output wire       txd,
    output wire       busy,

    output wire       bit_step,
    output wire       bit_d
);

localparam [10:0] IDLE = 11'd1;

// the own bit timer (EXT_TICK = 0): an LFSR of W bits (period 2^W - 1 >=
// CLKS_PER_BIT, XNOR feedback from the seed 0), restarted at its state
// CLKS_PER_BIT - 1 steps on
localparam integer W = ($clog2(CLKS_PER_BIT + 1) < 2) ? 2 : $clog2(CLKS_PER_BIT + 1);
`include "../lib/lfsr_taps.vh"
localparam [W-1:0] TAPS = W'(lfsr_taps(W));
function automatic [W-1:0] after(input integer k);
    integer i;
    reg [W-1:0] x;
    begin
        x = {W{1'b0}};
        for (i = 0; i < k; i = i + 1) x = {x[W-2:0], ~^(x & TAPS)};
        after = x;
    end
endfunction

reg  [10:0] sh = IDLE;             // {marker, stop, data, start} still to send
wire        bt;                    // bit tick

generate
    if (EXT_TICK != 0) begin : g_ext_tick
        assign bt = tick;
    end else begin : g_own_tick
        localparam [W-1:0] LAST = after(CLKS_PER_BIT - 1);
        reg [W-1:0] t = {W{1'b0}};
        assign bt = (t == LAST);
        always @(posedge clk) begin
            t <= bt ? {W{1'b0}} : {t[W-2:0], ~^(t & TAPS)};
            if (rst) begin
                t <= {W{1'b0}};
            end
        end
    end
endgenerate

wire sending = |sh[10:1];          // the marker has not reached bit 0
wire ending  = (sh[10:2] == 9'd0); // idle, or the stop bit is on the line

assign s_axis_tready = bt && ending;
assign txd  = sh[0];
assign busy = sending;
// a data bit goes onto the line at this tick: the marker is at bit 3 or
// above, so sh[1] is a data bit (the start bit leaves first)
assign bit_step = bt && (sh[10:3] != 8'd0);
assign bit_d    = sh[1];

always @(posedge clk) begin
    if (bt) begin
        if (s_axis_tvalid && ending) begin
            sh <= {2'b11, s_axis_tdata, 1'b0};
        end else if (sending) begin
            sh <= {1'b0, sh[10:1]};
        end
    end
    if (rst) begin
        sh <= IDLE;
    end
end

endmodule

`default_nettype wire
