`default_nettype none
/*
 * train_tpm_lane - one literal lane's TPM datapath: a streamed SPV update
 *
 * Applies one of the four integer TPMs (docs/fixed-point-training.md
 * section 3) to one SPV of N2 = 2N words as the words stream past in state
 * order n = 0..N2-1, one word per step (a step is two cycles of the
 * single-port RAM: a read, then this block's write). Step N2 is a tail
 * with no word, for the downward TPMs' last write.
 *
 * In the write cycle of step n the word q = Q[n] is on `q` (the RAM's read
 * data, valid when n < N2). The transfer is
 *
 *     t[n] = floor((Q[n]*P + d[n]) / 2^16),  d[n] = (r + n*0x9E37) mod 2^16
 *
 * with P = UP (TPM1) or DOWN (TPM2, TPM3) and t[n] = Q[n] for TPM4's
 * exclude states; 0 where the TPM moves nothing. Upward TPMs (TPM1, TPM4)
 * write Q'[n] = Q[n] - t[n] + t[n-1] at state n in step n; downward ones
 * (TPM2, TPM3) write Q'[n-1] = Q[n-1] - t[n-1] + t[n] at state n-1 in
 * step n (one state late, t[N2] = 0). `delta` is the include change: +t[N-1]
 * (TPM1, TPM4), -t[N] (TPM3), 0 (TPM2).
 *
 * Parameters:
 *   N      states per action (SPV of 2N words)
 *   SW     width of the step counter (holds 0..2N)
 *   UP     16-bit fraction (s-1)/s (17 bits: 0..65536)
 *   DOWN   16-bit fraction 1/s (0..65536)
 *
 * Ports:
 *   clk        clock
 *   start      load kind and draw; the next write cycle is step 0
 *   kind       1 TPM1, 2 TPM2, 3 TPM3, 4 TPM4 (held from start)
 *   r          16-bit rounding draw (unused by TPM4)
 *   wr_cycle   this cycle is the write cycle of step `step`
 *   step       the step n (0..2N)
 *   q          Q[n] in the write cycle (n < 2N)
 *   wr_en      write wdata this cycle
 *   wr_late    the write is at state n-1 (downward TPMs)
 *   wdata      the new word
 *   delta      include change, signed, final after step 2N
 */
module train_tpm_lane #(
    parameter N    = 8,
    parameter SW   = 5,
    parameter UP   = 48732,
    parameter DOWN = 16804
) (
    input  wire          clk,
    input  wire          start,
    input  wire [2:0]    kind,
    input  wire [15:0]   r,
    input  wire          wr_cycle,
    input  wire [SW-1:0] step,
    input  wire [15:0]   q,
    output wire          wr_en,
    output wire          wr_late,
    output wire [15:0]   wdata,
    output reg  [16:0]   delta
);
    localparam [SW-1:0] N2    = SW'(2 * N);
    localparam [SW-1:0] NM1   = SW'(N - 1);
    localparam [SW-1:0] NN    = SW'(N);
    localparam [SW-1:0] TOP   = SW'(2 * N - 1);
    localparam [16:0]   PUP   = 17'(UP);
    localparam [16:0]   PDOWN = 17'(DOWN);

    reg [2:0]  k;
    reg [15:0] dith;    // d[n] for the current step
    reg [15:0] carry;   // t[n-1]
    reg [15:0] prev;    // Q[n-1] - t[n-1] (downward TPMs)

    wire down  = (k == 3'd2) || (k == 3'd3);
    wire word  = step != N2;    // a word is on q
    wire [16:0] p = down ? PDOWN : PUP;
    // Q*P as a 16x16 product (one SB_MAC16) plus Q*2^16 when P = 65536
    wire [31:0] prod16 = q * p[15:0];
    wire [15:0] tr     = 16'((prod16 + {16'd0, dith} + (p[16] ? {q, 16'd0} : 32'd0)) >> 16);

    reg [15:0] t;       // t[n]
    always @(*) begin
        t = 16'd0;
        if (word) begin
            case (k)
                3'd1: if (step != TOP) t = tr;
                3'd2: if (step != 0 && step < NN) t = tr;
                3'd3: if (step != 0) t = tr;
                3'd4: if (step < NN) t = q;
                default: t = 16'd0;
            endcase
        end
    end

    assign wr_late = down;
    assign wr_en   = wr_cycle && (down ? (step != 0) : word);
    assign wdata   = down ? prev + t : q - t + carry;

    always @(posedge clk) begin
        if (start) begin
            k     <= kind;
            dith  <= r;
            carry <= 16'd0;
            prev  <= 16'd0;
            delta <= 17'd0;
        end else if (wr_cycle) begin
            dith  <= dith + 16'h9E37;
            carry <= t;
            prev  <= q - t;
            if (!down && step == NM1) delta <= {1'b0, t};
            if (k == 3'd3 && step == NN) delta <= 17'(-{1'b0, t});
        end
    end
endmodule
`default_nettype wire
