`default_nettype none
/*
 * train_draws - COUNT consecutive 16-bit draws of a 64-bit trainer lane
 *
 * The lane is the leap-forward LFSR of docs/fixed-point.md 3.1-3.2 at
 * W = 64, polynomial x^64 + x^4 + x^3 + x + 1 (docs/fixed-point-training.md
 * section 4). One 16-bit draw from state s is
 *
 *     r  = (s ^ s>>1 ^ s>>3 ^ s>>4) mod 2^16
 *     s' = s>>16 | r<<48
 *
 * This block chains COUNT such draws combinationally: draw k (k = 0 ..
 * COUNT-1) is the k-th draw after state_in, and after[k] is the state once
 * k draws have been made (after[0] = state_in), so a caller that uses the
 * first j draws continues from after[j].
 *
 * Parameters:
 *   COUNT   draws per call, 1..4 (4 draws = one 64-bit leap)
 *
 * Ports:
 *   state_in   lane state before the draws
 *   draws      draw k in bits [16k +: 16]
 *   after      state after k draws in bits [64k +: 64], k = 0..COUNT
 *
 * Purely combinational.
 */
module train_draws #(
    parameter COUNT = 4
) (
    input  wire [63:0]             state_in,
    output wire [16*COUNT-1:0]     draws,
    output wire [64*(COUNT+1)-1:0] after
);
    assign after[63:0] = state_in;
    genvar k;
    generate
        for (k = 0; k < COUNT; k = k + 1) begin : g_draw
            wire [63:0] s;
            wire [15:0] x = s[15:0] ^ s[16:1] ^ s[18:3] ^ s[19:4];
            wire [63:0] nxt = {x, s[63:16]};
            if (k == 0) begin : g_first
                assign s = state_in;
            end else begin : g_next
                assign s = g_draw[k-1].nxt;
            end
            assign draws[16*k +: 16]     = x;
            assign after[64*(k+1) +: 64] = nxt;
        end
    endgenerate
endmodule
`default_nettype wire
