`default_nettype none
/*
 * train_tpm_lane - one literal lane's TPM datapath: a streamed SPV update
 *
 * Applies one of the four integer TPMs (docs/fixed-point-training.md
 * section 3) to one SPV of N2 = 2N words as the words stream past in state
 * order n = 0..N2-1. A step is two cycles of the single-port RAM: a read
 * cycle (the engine reads word n) and a write cycle (Q[n] is on `q`; this
 * block writes). The transfer of state n is
 *
 *     t[n] = floor((Q[n]*P + d[n]) / 2^16),  d[n] = (r + n*0x9E37) mod 2^16
 *
 * with P = UP (TPM1) or DOWN (TPM2, TPM3) and t[n] = Q[n] for TPM4's
 * exclude states; 0 where the TPM moves nothing. Upward TPMs (TPM1, TPM4)
 * write Q'[n] = Q[n] - t[n] + t[n-1] at state n; downward ones (TPM2,
 * TPM3) write Q'[n-1] = Q[n-1] - t[n-1] + t[n] at state n-1 (t[N2] = 0).
 * `delta` is the include change: +t[N-1] (TPM1, TPM4), -t[N] (TPM3), 0
 * (TPM2).
 *
 * Pipeline (three stages, each word written one step after it is read):
 *   write cycle of step n    Q[n]*P + d[n] on the DSP -> registered
 *   read cycle of step n+1   t[n], the new word       -> registered
 *   write cycle of step n+1  the word is written (wr_en, wr_off, wdata)
 * so the engine runs steps 0..N2+1 (the last two only drain the pipeline).
 *
 * Parameters:
 *   N      states per action (SPV of 2N words)
 *   SW     width of the step counter (holds 0..2N+1)
 *   UP     16-bit fraction (s-1)/s (17 bits: 0..65536)
 *   DOWN   16-bit fraction 1/s (0..65536)
 *
 * Ports:
 *   clk        clock
 *   start      load kind and draw (before step 0)
 *   kind       1 TPM1, 2 TPM2, 3 TPM3, 4 TPM4
 *   r          16-bit rounding draw (unused by TPM4)
 *   rd_cycle   this cycle is the read cycle of step `step`
 *   wr_cycle   this cycle is the write cycle of step `step`
 *   step       the step n (0..2N+1)
 *   q          Q[n] in the write cycle (n < 2N)
 *   wr_en      write wdata at state wr_off this cycle (a write cycle)
 *   wr_off     the state written
 *   wdata      the new word
 *   delta      include change, signed, final after the last step
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
    input  wire          rd_cycle,
    input  wire          wr_cycle,
    input  wire [SW-1:0] step,
    input  wire [15:0]   q,
    output wire          wr_en,
    output reg  [SW-1:0] wr_off,
    output reg  [15:0]   wdata,
    output reg  [16:0]   delta
);
    localparam [SW-1:0] N2    = SW'(2 * N);
    localparam [SW-1:0] NM1   = SW'(N - 1);
    localparam [SW-1:0] NN    = SW'(N);
    localparam [SW-1:0] TOP   = SW'(2 * N - 1);
    localparam [16:0]   PUP   = 17'(UP);
    localparam [16:0]   PDOWN = 17'(DOWN);

    reg [2:0]  k;
    reg        down;
    reg [16:0] p;       // UP or DOWN
    reg [15:0] dith;    // d[n] for the current step

    // Stage 1 (write cycle of step n): the product and the step's flags.
    wire [31:0] prod16 = q * p[15:0];
    wire [15:0] tr_n   = 16'((prod16 + {16'd0, dith} + (p[16] ? {q, 16'd0} : 32'd0)) >> 16);
    wire        word   = step < N2;
    reg         use_tr_n, use_q_n;
    always @(*) begin
        use_tr_n = 1'b0;
        use_q_n  = 1'b0;
        if (word) begin
            case (k)
                3'd1: use_tr_n = step != TOP;
                3'd2: use_tr_n = step != 0 && step < NN;
                3'd3: use_tr_n = step != 0;
                3'd4: use_q_n  = step < NN;
                default: ;
            endcase
        end
    end
    reg [15:0]   tr, q1;
    reg          use_tr, use_q, word1, first1, dup1, ddown1;
    reg [SW-1:0] step1;

    // Stage 2 (read cycle of step n+1): t[n] and the word to write.
    wire [15:0] t = use_tr ? tr : use_q ? q1 : 16'd0;
    reg  [15:0] carry;  // t[n-1] (upward)
    reg  [15:0] prev;   // Q[n-1] - t[n-1] (downward)
    reg         we2;

    assign wr_en = wr_cycle && we2;

    always @(posedge clk) begin
        if (start) begin
            k     <= kind;
            down  <= (kind == 3'd2) || (kind == 3'd3);
            p     <= ((kind == 3'd2) || (kind == 3'd3)) ? PDOWN : PUP;
            dith  <= r;
            carry <= 16'd0;
            prev  <= 16'd0;
            delta <= 17'd0;
            we2    <= 1'b0;
            word1  <= 1'b0;
            first1 <= 1'b1;
            step1  <= 0;
            use_tr <= 1'b0;
            use_q  <= 1'b0;
            dup1   <= 1'b0;
            ddown1 <= 1'b0;
        end else if (wr_cycle) begin
            dith   <= dith + 16'h9E37;
            tr     <= tr_n;
            q1     <= q;
            use_tr <= use_tr_n;
            use_q  <= use_q_n;
            word1  <= word;
            first1 <= step == 0;
            step1  <= step;
            dup1   <= !down && step == NM1;
            ddown1 <= k == 3'd3 && step == NN;
        end else if (rd_cycle) begin
            if (down) begin
                wdata  <= prev + t;
                wr_off <= step1 - 1'b1;
                we2    <= !first1 && (word1 || step1 == N2);
                prev   <= q1 - t;
            end else begin
                wdata  <= q1 - t + carry;
                wr_off <= step1;
                we2    <= word1;
                carry  <= t;
            end
            if (dup1)   delta <= {1'b0, t};
            if (ddown1) delta <= 17'(-{1'b0, t});
        end
    end
endmodule
`default_nettype wire
