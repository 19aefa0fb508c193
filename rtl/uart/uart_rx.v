`default_nettype none
/*
 * uart_rx - 8N1 UART receiver with a valid/ready (AXI-stream style) byte output
 *
 * The rxd pin is brought into the clk domain by a 2-flop synchronizer. A
 * falling edge in the idle state starts a bit timer. Every bit (start, 8 data
 * bits LSB first, stop) is sampled three times around its middle, at
 * MID-SPREAD, MID and MID+SPREAD clocks after the bit boundary, and the
 * majority vote of the three samples is the bit value.
 *
 *   - Start-bit validation: if the start bit votes 1 the receiver returns to
 *     idle. A low glitch shorter than half a bit is therefore never taken as a
 *     start: it has ended before the middle of the would-be start bit.
 *   - Stop-bit check: if the stop bit votes 0, frame_error pulses for one
 *     cycle, the byte is dropped, and the receiver waits for the line to be
 *     high again before it looks for the next start bit (so a break or a
 *     stuck-low line is not decoded as a stream of 0x00 bytes).
 *   - The receiver returns to idle at the middle of the stop bit, so a
 *     transmitter up to about 4% fast, or one that sends back to back, is
 *     followed without losing bytes.
 *   - Output (BUFFER = 1): a one-byte buffer. A byte that completes while the
 *     previous one is still held (m_axis_tvalid && !m_axis_tready in that
 *     cycle) is dropped and overrun pulses for one cycle; the held byte is
 *     kept unchanged, as the valid/ready rules require.
 *   - Output (BUFFER = 0): no buffer, for a consumer that is always ready
 *     (proto_rx): m_axis_tvalid is high for one clock per byte and
 *     m_axis_tdata is the receive shift register, valid in that clock only;
 *     m_axis_tready is ignored and overrun never pulses (8 flip-flops less).
 *
 * Parameters:
 *   CLKS_PER_BIT  clock cycles per bit (the baud divisor), integer >= 8.
 *                 104 = 115200 Bd from 12 MHz (0.16% error),
 *                 16  = 3 Mbaud from 48 MHz (exact).
 *   BUFFER        1: a one-byte output buffer (default); 0: none, the byte
 *                 is offered for one clock (the consumer must take it)
 *
 * Ports:
 *   clk, rst        clock; synchronous active-high reset (control only)
 *   rxd             serial input pin (asynchronous, idle high)
 *   m_axis_tdata    received byte (stable while m_axis_tvalid is high)
 *   m_axis_tvalid   a byte is available (BUFFER = 0: for one clock)
 *   m_axis_tready   consumer takes the byte when valid && ready (BUFFER = 0:
 *                   ignored, the byte is taken)
 *   busy            receiver is inside a character (or waiting for the line
 *                   to return high after a framing error)
 *   frame_error     1-cycle pulse: stop bit was 0, byte dropped
 *   overrun         1-cycle pulse: byte dropped because the buffer was full
 *   bit_step, bit_d 1-cycle pulse as each data bit is taken (its majority
 *                   vote on bit_d): the 8 bits of a character, LSB first,
 *                   before the byte is offered or dropped (a bit-serial CRC
 *                   can follow the line: proto_rx CRC_SERIAL = 2)
 *
 * Latency: m_axis_tvalid rises MID+SPREAD+3 clocks after the start of the
 * stop bit on the pin (2 synchronizer flops + output register), i.e. about
 * 9.6 bit times after the falling edge of the start bit.
 */
module uart_rx #(
    parameter CLKS_PER_BIT = 104,
    parameter BUFFER       = 1
) (
    input  wire       clk,
    input  wire       rst,

    input  wire       rxd,

    output wire [7:0] m_axis_tdata,
    output wire       m_axis_tvalid,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire       m_axis_tready,   // unused when BUFFER = 0
    /* verilator lint_on UNUSEDSIGNAL */

    output wire       busy,
    output wire       frame_error,
    output wire       overrun,

    output wire       bit_step,
    output wire       bit_d
);

// Bit timer width and sample points, all as CNT_W-bit constants.
localparam integer CNT_W     = $clog2(CLKS_PER_BIT);
localparam integer SPREAD_I  = (CLKS_PER_BIT >= 32) ? (CLKS_PER_BIT / 16) : 1;
localparam [CNT_W-1:0] S0    = CNT_W'(CLKS_PER_BIT / 2 - SPREAD_I);
localparam [CNT_W-1:0] S1    = CNT_W'(CLKS_PER_BIT / 2);
localparam [CNT_W-1:0] S2    = CNT_W'(CLKS_PER_BIT / 2 + SPREAD_I);
localparam [CNT_W-1:0] LAST  = CNT_W'(CLKS_PER_BIT - 1);
localparam             POW2  = (CLKS_PER_BIT == (1 << CNT_W));

localparam [1:0] ST_IDLE = 2'd0;   // waiting for a start edge
localparam [1:0] ST_BITS = 2'd1;   // inside a character
localparam [1:0] ST_WAIT = 2'd2;   // framing error: wait for line high

// synchronizer (reset to the idle level so reset never creates a start edge)
reg rxd_meta = 1'b1;
reg rxd_sync = 1'b1;

reg [1:0]       state = ST_IDLE;
reg [CNT_W-1:0] cnt = {CNT_W{1'b0}};
reg             start_ph = 1'b1;   // the start bit is being received
reg             samp0 = 1'b0;
reg             samp1 = 1'b0;
// data bits shifted in from the top behind a marker 1 (set at the start
// edge): the marker in bit 0 means 8 data bits are in and the next bit is
// the stop bit (no bit counter)
reg [8:0]       shreg;

reg             m_valid_reg = 1'b0;
reg             frame_error_reg = 1'b0;
reg             overrun_reg = 1'b0;
// the consumer takes the byte: BUFFER = 0 assumes it always does
wire            ready = (BUFFER == 0) || m_axis_tready;

assign m_axis_tvalid = m_valid_reg;
assign busy          = (state != ST_IDLE);
assign frame_error   = frame_error_reg;
assign overrun       = overrun_reg;

// majority of the two stored samples and the current one
wire bit_val = (samp0 & samp1) | (samp0 & rxd_sync) | (samp1 & rxd_sync);

assign bit_step = (state == ST_BITS) && (cnt == S2) && !start_ph && !shreg[0];
assign bit_d    = bit_val;

generate
    if (BUFFER != 0) begin : g_buf
        // a good stop bit's vote with room for the byte
        wire take = (state == ST_BITS) && (cnt == S2) && !start_ph && shreg[0] && bit_val &&
                    !(m_valid_reg && !m_axis_tready);
        reg [7:0] m_data_reg;
        always @(posedge clk) begin
            if (take) begin
                m_data_reg <= shreg[8:1];
            end
        end
        assign m_axis_tdata = m_data_reg;
    end else begin : g_no_buf
        // the clock after the stop bit's vote: shreg is reloaded at its end
        assign m_axis_tdata = shreg[8:1];
    end
endgenerate

always @(posedge clk) begin
    rxd_meta <= rxd;
    rxd_sync <= rxd_meta;

    frame_error_reg <= 1'b0;
    overrun_reg     <= 1'b0;
    if (ready) begin
        m_valid_reg <= 1'b0;
    end

    case (state)
        ST_IDLE: begin
            start_ph <= 1'b1;
            shreg    <= 9'h100;
            // the cycle that first sees the line low is count 0
            cnt <= {{(CNT_W-1){1'b0}}, 1'b1};
            if (!rxd_sync) begin
                state <= ST_BITS;
            end
        end
        ST_BITS: begin
            // (CLKS_PER_BIT a power of two: the count wraps by itself)
            cnt <= (!POW2 && cnt == LAST) ? {CNT_W{1'b0}} : cnt + 1'b1;
            if (cnt == S0) begin
                samp0 <= rxd_sync;
            end
            if (cnt == S1) begin
                samp1 <= rxd_sync;
            end
            if (cnt == S2) begin
                if (start_ph) begin
                    start_ph <= 1'b0;
                    if (bit_val) begin
                        state <= ST_IDLE;          // glitch, not a start bit
                    end
                end else if (shreg[0]) begin
                    if (bit_val) begin
                        state <= ST_IDLE;
                        if (m_valid_reg && !ready) begin
                            overrun_reg <= 1'b1;   // keep the held byte
                        end else begin
                            m_valid_reg <= 1'b1;   // take (g_buf: m_data_reg <= shreg[8:1])
                        end
                    end else begin
                        state <= ST_WAIT;
                        frame_error_reg <= 1'b1;
                    end
                end else begin
                    shreg <= {bit_val, shreg[8:1]};
                end
            end
        end
        default: begin // ST_WAIT
            if (rxd_sync) begin
                state <= ST_IDLE;
            end
        end
    endcase

    if (rst) begin
        rxd_meta        <= 1'b1;
        rxd_sync        <= 1'b1;
        state           <= ST_IDLE;
        cnt             <= {CNT_W{1'b0}};
        start_ph        <= 1'b1;
        m_valid_reg     <= 1'b0;
        frame_error_reg <= 1'b0;
        overrun_reg     <= 1'b0;
    end
end

endmodule

`default_nettype wire
