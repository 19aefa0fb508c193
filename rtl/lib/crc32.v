`default_nettype none
/*
 * crc32 - combinational byte-at-a-time CRC-32 update (IEEE 802.3)
 *
 * CRC-32 as used by Ethernet (FCS), zlib and PNG: reflected polynomial
 * 0xEDB88320 (0x04C11DB7 bit-reversed), data processed LSB first, register
 * initialised to 0xFFFFFFFF, result complemented. This module is only the
 * update step; the caller keeps the 32-bit state register:
 *
 *     init:        state <= 32'hFFFFFFFF
 *     each byte:   state <= crc_out            (crc_in = state, data_in = byte)
 *     result:      crc = ~state                (CRC32("123456789") = 32'hCBF43926)
 *
 * Sending: the FCS is ~state, transmitted least significant byte first.
 * Checking (residue method): feed every received byte including the 4 FCS
 * bytes; the frame is good when state == RESIDUE (32'hDEBB20E3), i.e. the
 * complemented value equals 32'h2144DF1C.
 *
 * Parameters: none.
 *
 * Ports:
 *   crc_in   [31:0]  current state (not complemented)
 *   data_in  [7:0]   next message byte
 *   crc_out  [31:0]  state after data_in
 *
 * Latency: combinational. yosys synth_ice40 maps it to 43 SB_LUT4 with a
 * longest path of 3 LUT levels, so it fits in one clock at 100+ MHz.
 */
module crc32 (
    input  wire [31:0] crc_in,
    input  wire [7:0]  data_in,
    output wire [31:0] crc_out
);

localparam [31:0] POLY = 32'hEDB88320;

function [31:0] crc32_byte;
    input [31:0] c;
    input [7:0]  d;
    integer i;
    reg [31:0] r;
    begin
        r = c;
        for (i = 0; i < 8; i = i + 1) begin
            r = (r[0] ^ d[i]) ? ((r >> 1) ^ POLY) : (r >> 1);
        end
        crc32_byte = r;
    end
endfunction

assign crc_out = crc32_byte(crc_in, data_in);

endmodule

`default_nettype wire
