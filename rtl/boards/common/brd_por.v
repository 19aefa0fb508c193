`default_nettype none
/*
 * brd_por - power-on reset for the device tops
 *
 * The iCE40 configures every flip-flop to 0, so the counter starts at 0
 * after configuration and rst is high until it has counted CYCLES clocks.
 * While hold is high (PLL not locked, reset button pressed: an asynchronous
 * input, synchronized here by two flip-flops) the counter restarts, so rst
 * stays high for CYCLES clocks after hold falls.
 *
 * Parameters:
 *   CYCLES   reset length in clocks after configuration or hold (>= 2)
 *
 * Ports:
 *   clk      the clock of the logic being reset
 *   hold     asynchronous, active high: keep (or put) the design in reset
 *   rst      synchronous, active-high reset
 */
module brd_por #(
    parameter CYCLES = 4096
) (
    input  wire clk,
    input  wire hold,
    output reg  rst
);

localparam integer CW = $clog2(CYCLES) + 1;
localparam [CW-1:0] LAST = CW'(CYCLES - 1);

reg          hold_m = 1'b0;
reg          hold_s = 1'b0;
reg [CW-1:0] count = {CW{1'b0}};

initial rst = 1'b1;

always @(posedge clk) begin
    hold_m <= hold;
    hold_s <= hold_m;
    if (hold_s) begin
        count <= {CW{1'b0}};
        rst   <= 1'b1;
    end else if (count != LAST) begin
        count <= count + 1'b1;
        rst   <= 1'b1;
    end else begin
        rst   <= 1'b0;
    end
end

endmodule

`default_nettype wire
