`default_nettype none
/*
 * uart_tx - 8N1 UART transmitter with a valid/ready (AXI-stream style) byte input
 *
 * A byte is accepted when s_axis_tvalid && s_axis_tready and sent as one start
 * bit (0), 8 data bits LSB first and one stop bit (1), each CLKS_PER_BIT clocks
 * long. The line idles high. s_axis_tready is high when the transmitter is idle
 * and also in the last clock of a stop bit, so a continuous input stream is
 * sent back to back at exactly 10*CLKS_PER_BIT clocks per byte.
 *
 * Parameters:
 *   CLKS_PER_BIT  clock cycles per bit (the baud divisor), integer >= 2.
 *                 104 = 115200 Bd from 12 MHz, 16 = 3 Mbaud from 48 MHz.
 *
 * Ports:
 *   clk, rst        clock; synchronous active-high reset (control only)
 *   s_axis_tdata    byte to send
 *   s_axis_tvalid   byte available
 *   s_axis_tready   transmitter takes the byte when valid && ready
 *   txd             serial output pin (registered, idle high)
 *   busy            a character is on the line (start bit to end of stop bit)
 *
 * Latency: txd goes low (start bit) in the clock cycle right after the
 * transfer. Reset mid-character returns the line to idle (high) at once.
 */
module uart_tx #(
    parameter CLKS_PER_BIT = 104
) (
    input  wire       clk,
    input  wire       rst,

    input  wire [7:0] s_axis_tdata,
    input  wire       s_axis_tvalid,
    output wire       s_axis_tready,

    output wire       txd,
    output wire       busy
);

localparam integer CNT_W = $clog2(CLKS_PER_BIT);
localparam [CNT_W-1:0] LAST = CNT_W'(CLKS_PER_BIT - 1);

reg             txd_reg = 1'b1;
reg             busy_reg = 1'b0;
reg [CNT_W-1:0] cnt = {CNT_W{1'b0}};
reg [3:0]       bits_left = 4'd0;  // bits still to send after the current one
reg [8:0]       shreg;             // {stop, data[7:1..]} still to send

wire last_clk = busy_reg && (cnt == LAST) && (bits_left == 4'd0);

assign s_axis_tready = !busy_reg || last_clk;
assign txd  = txd_reg;
assign busy = busy_reg;

always @(posedge clk) begin
    if (busy_reg) begin
        cnt <= (cnt == LAST) ? {CNT_W{1'b0}} : cnt + 1'b1;
        if (cnt == LAST) begin
            if (bits_left == 4'd0) begin
                busy_reg <= 1'b0;        // stop bit done; line stays high
            end else begin
                txd_reg   <= shreg[0];
                shreg     <= {1'b1, shreg[8:1]};
                bits_left <= bits_left - 1'b1;
            end
        end
    end

    if (s_axis_tvalid && s_axis_tready) begin
        txd_reg   <= 1'b0;                 // start bit
        shreg     <= {1'b1, s_axis_tdata};
        bits_left <= 4'd9;
        cnt       <= {CNT_W{1'b0}};
        busy_reg  <= 1'b1;
    end

    if (rst) begin
        txd_reg   <= 1'b1;
        busy_reg  <= 1'b0;
        cnt       <= {CNT_W{1'b0}};
        bits_left <= 4'd0;
    end
end

endmodule

`default_nettype wire
