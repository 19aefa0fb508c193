// const_cmp.vh: x < c and x > c for a constant c, as an AND/OR chain
// from bit 0 up: ABC packs it into a few LUT4 where yosys would spend a
// carry chain (one SB_CARRY per bit) on the comparison. One definition,
// included inside the modules that compare against constants
// (proto_engine, proto_rx, conv_query):
//
//     `include "../lib/const_cmp.vh"
//
// The path is relative to the including file (see lfsr_taps.vh). Both
// are functions only: including them adds no logic until they are used.
function automatic lt_c(input [31:0] x, input [31:0] c);
    integer i;
    reg r;
    begin
        r = 1'b0;
        for (i = 0; i < 32; i = i + 1) r = c[i] ? (!x[i] || r) : (!x[i] && r);
        lt_c = r;
    end
endfunction
function automatic gt_c(input [31:0] x, input [31:0] c);
    integer i;
    reg r;
    begin
        r = 1'b0;
        for (i = 0; i < 32; i = i + 1) r = c[i] ? (x[i] && r) : (x[i] || r);
        gt_c = r;
    end
endfunction
