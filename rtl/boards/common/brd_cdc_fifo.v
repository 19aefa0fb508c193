`default_nettype none
/*
 * brd_cdc_fifo - small dual-clock FIFO (Gray-coded pointers, flip-flop
 *                storage) for the MII clock-domain crossings
 *
 * Write side in wclk, read side in rclk, unrelated clocks. Each pointer has
 * AW+1 bits, is kept in Gray code and crosses to the other side through two
 * flip-flops, then is converted to binary in a third, so the full/empty
 * flags and counts are conservative (they clear 3-4 clocks of the other
 * side after the event) and no Gray decoder sits in a timing path. There is no reset: the
 * pointers start at 0 after configuration (iCE40 flip-flops power up 0),
 * and both sides must only be used after that. Storage is DEPTH x W
 * flip-flops with an asynchronous read (the head is visible while
 * r_empty is low: first-word fall-through).
 *
 * Parameters:
 *   W        data width
 *   AW       address bits: DEPTH = 2^AW entries (>= 2)
 *
 * Ports:
 *   wclk, w_en, w_data   write one entry at a wclk edge with w_en (ignored
 *                        when w_full)
 *   w_full               no free entry
 *   w_free               free entries as seen from the write side (AW+1 bits)
 *   rclk, r_en, r_data   r_data is the head; r_en pops it at an rclk edge
 *                        (ignored when r_empty)
 *   r_empty              no entry visible to the read side
 *   r_count              entries as seen from the read side (AW+1 bits)
 */
module brd_cdc_fifo #(
    parameter W  = 10,
    parameter AW = 3
) (
    input  wire          wclk,
    input  wire          w_en,
    input  wire [W-1:0]  w_data,
    output wire          w_full,
    output wire [AW:0]   w_free,

    input  wire          rclk,
    input  wire          r_en,
    output wire [W-1:0]  r_data,
    output wire          r_empty,
    output wire [AW:0]   r_count
);

localparam integer DEPTH = 1 << AW;

function automatic [AW:0] bin2gray(input [AW:0] b);
    bin2gray = b ^ (b >> 1);
endfunction

function automatic [AW:0] gray2bin(input [AW:0] g);
    integer i;
    begin
        gray2bin[AW] = g[AW];
        for (i = AW - 1; i >= 0; i = i - 1)
            gray2bin[i] = gray2bin[i + 1] ^ g[i];
    end
endfunction

reg [W-1:0] mem [0:DEPTH-1];

reg  [AW:0] wbin     = {(AW+1){1'b0}};   // write side
reg  [AW:0] wgray    = {(AW+1){1'b0}};
reg  [AW:0] rgray_w1 = {(AW+1){1'b0}};
reg  [AW:0] rgray_w2 = {(AW+1){1'b0}};
reg  [AW:0] rbin_w   = {(AW+1){1'b0}};   // read pointer seen by the write side
reg  [AW:0] rbin     = {(AW+1){1'b0}};   // read side
reg  [AW:0] rgray    = {(AW+1){1'b0}};
reg  [AW:0] wgray_r1 = {(AW+1){1'b0}};
reg  [AW:0] wgray_r2 = {(AW+1){1'b0}};
reg  [AW:0] wbin_r   = {(AW+1){1'b0}};   // write pointer seen by the read side

// ------------------------------------------------------------ write side
wire [AW:0] wused = wbin - rbin_w;
wire        wdo = w_en && !w_full;

assign w_full = (wused == DEPTH[AW:0]);
assign w_free = DEPTH[AW:0] - wused;

always @(posedge wclk) begin
    rgray_w1 <= rgray;
    rgray_w2 <= rgray_w1;
    rbin_w   <= gray2bin(rgray_w2);
    if (wdo) begin
        mem[wbin[AW-1:0]] <= w_data;
        wbin  <= wbin + 1'b1;
        wgray <= bin2gray(wbin + 1'b1);
    end
end

// ------------------------------------------------------------ read side
assign r_count = wbin_r - rbin;
assign r_empty = (wbin_r == rbin);
assign r_data  = mem[rbin[AW-1:0]];

always @(posedge rclk) begin
    wgray_r1 <= wgray;
    wgray_r2 <= wgray_r1;
    wbin_r   <= gray2bin(wgray_r2);
    if (r_en && !r_empty) begin
        rbin  <= rbin + 1'b1;
        rgray <= bin2gray(rbin + 1'b1);
    end
end

endmodule

`default_nettype wire
