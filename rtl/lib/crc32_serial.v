`default_nettype none
/*
 * crc32_serial - bit-serial CRC-32 register (IEEE 802.3), with rotation
 *
 * The CRC of rtl/lib/crc32.v (reflected polynomial 0xEDB88320, data LSB
 * first, register initialised to 0xFFFFFFFF, result complemented), one
 * message bit per clock instead of a byte: a byte is 8 steps with d = its
 * bits 0..7. The register costs about 16 logic cells instead of crc32's 43
 * LUT4 plus a 32-bit multiplexer, for links with time to spare (a UART
 * byte is 10 bit times, 80 clocks or more).
 *
 * A step with rot high rotates the register right by one bit instead
 * (bit 0 moves to bit 31, d ignored): after 8 rotations byte j of the
 * register is in crc[7:0] for j = 1, 2, 3, so a sender emits the FCS
 * ~crc[7:0] four times with 8 rotations after each (32 rotations restore
 * the register).
 *
 * Parameters: none.
 *
 * Ports:
 *   clk          clock
 *   init         crc <= 32'hFFFFFFFF (has priority over step)
 *   step         advance one bit (d) or, with rot, rotate by one bit
 *   rot, d       rotation instead of a CRC step; the message bit
 *   crc [31:0]   the register (not complemented; CRC("123456789") =
 *                ~crc = 32'hCBF43926 after its 72 steps)
 *
 * Latency: crc is the register itself; a step takes effect at the next
 * clock.
 */
module crc32_serial (
    input  wire        clk,
    input  wire        init,
    input  wire        step,
    input  wire        rot,
    input  wire        d,
    output wire [31:0] crc
);

localparam [31:0] POLY = 32'hEDB88320;

reg [31:0] r;

wire fb = r[0] ^ (d && !rot);      // the bit shifted in at the top
wire fp = fb && !rot;              // the polynomial is applied

assign crc = r;

always @(posedge clk) begin
    if (init) begin
        r <= 32'hFFFFFFFF;
    end else if (step) begin
        r <= {fb, r[31:1] ^ (POLY[30:0] & {31{fp}})};
    end
end

endmodule

`default_nettype wire
