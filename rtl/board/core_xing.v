`default_nettype none
/*
 * core_xing - the board shell's ports to the inference core across two
 *             clocks: the shell (protocol engine) on clk, the core on
 *             clk_core (board_top CORE_CLK = 1)
 *
 *   shell (clk)                                    core (clk_core)
 *   bank_wr_*   -- word register + toggle --> 2 flops + edge --> bank_wr_en
 *                  (the register's word)                  (one clk_core)
 *   req_valid   -- toggle --> 2 flops -----------> req_valid
 *   req_ready   <-- 2 flops <-- ack toggle <------ req_valid && req_ready
 *   res_valid   <-- 2 flops <-- toggle <---------- res_valid
 *   res_ready   -- ack toggle --> 2 flops -------> res_ready
 *   idle        <-- 2 flops <--------------------- idle && !res_valid
 *   rst         -- 2 flops ----------------------> rst_core
 *
 * No request or result word is registered or queued here: those fields
 * cross on their own wires and are sampled only while the side that
 * drives them holds them stable, so only the toggles (one bit each) pass
 * through synchronizers; the bank write word is held in a register of its
 * own:
 *
 *   - requests: proto_engine holds req_features, req_k, req_seed,
 *     req_stats and req_more stable while req_valid is high and until it
 *     sees req_ready (docs/core-interface.md; the engine changes them only
 *     after the transfer). The core sees req_valid two or three clk_core
 *     edges after the toggle, so the fields have been stable for at least
 *     one clk period when it samples them. The engine's req_ready is a
 *     one-clock pulse when the core's acknowledgement toggle arrives.
 *   - results: the core holds res_data, res_last and res_error stable
 *     while res_valid is high and res_ready low; the shell side offers
 *     them when the toggle arrives and acknowledges with a toggle that
 *     becomes the core's res_ready (a one-clock_core pulse).
 *   - bank writes have no handshake (the core takes one every clock). The
 *     engine writes a word per two payload bytes, so bank writes come at
 *     most every second clk. The word (lane, address, data) is copied
 *     into bk_word at the clk edge that sees the write, together with the
 *     toggle, and is held there until the next write's edge, two clk
 *     periods later at the earliest. The core samples it at the third
 *     clk_core edge after the toggle (two synchronizer flops, then the
 *     strobe), at most 3 clk_core periods plus the toggle's clock-to-out
 *     after it: inside the two clk periods whenever clk_core is faster
 *     than 1.5 x clk, with a clk_core period to spare at 2 x (the PLL's
 *     GENCLK and GENCLK_HALF). That is this module's requirement. (Without
 *     the copy the engine's own registers, which change a clk earlier,
 *     would leave one clk_core period too few; the bench found it.) A
 *     request toggled after the last write arrives after it (the same
 *     synchronizer depth), and the core reads a word written in the cycle
 *     it takes a request.
 *   - info_addr / info_data do not cross a clock: the core's info ROM is
 *     combinational constants of the generated core (its shape, version,
 *     model hash), so info_data is a function of the shell's info_addr
 *     alone and is timed as a path of the clk domain.
 *
 * Throughput: a request costs about 3 clk_core + 3 clk periods of latency
 * before the core starts (its K x D cycles are unchanged), a result word
 * about 3 + 3 periods of a round trip; the engine takes at least 4 clk
 * periods per word (bytes to proto_tx) in any case.
 *
 * Reset: rst (clk domain, synchronous) reaches the core as rst_core
 * through two clk_core flip-flops. The request and result handshake
 * state of each side is reset by that side's reset, and the shell side's
 * stays in reset until the core side's reset is seen back (rst_back), so
 * both sides leave reset consistent: hold rst for at least 2 clk periods
 * (brd_por: 4096; the simulators: 8). The bank toggle has no reset (it
 * powers up 0 on both sides) so that no reset can make a spurious write.
 *
 * Parameters:
 *   BANK_W                   bits of a bank write word (LANE_W + ADDR_W +
 *                            BITS); the request and result fields are not
 *                            routed through this module (board_top
 *                            connects them directly)
 *
 * Ports (s_: shell side, clk; c_: core side, clk_core):
 *   clk, rst                 the shell's clock and reset
 *   clk_core, rst_core       the core's clock; rst synchronised to it
 *   s_bank_wr_en, s_bank_wr_word  the engine's bank write strobe and word
 *   c_bank_wr_en, c_bank_wr_word  the core's (one clk_core; the word held)
 *   s_req_valid, s_req_ready the engine's request handshake
 *   c_req_valid, c_req_ready the core's request handshake
 *   c_res_valid, c_res_ready the core's result handshake
 *   s_res_valid, s_res_ready the engine's result handshake
 *   c_idle                   the core's idle
 *   s_core_idle              the core idle with no result word waiting,
 *                            seen in clk (two clocks late), and no
 *                            request or result crossing
 */
module core_xing #(
    parameter BANK_W = 16
) (
    input  wire clk,
    input  wire rst,
    input  wire clk_core,
    output wire rst_core,

    input  wire              s_bank_wr_en,
    input  wire [BANK_W-1:0] s_bank_wr_word,
    output wire              c_bank_wr_en,
    output wire [BANK_W-1:0] c_bank_wr_word,

    input  wire s_req_valid,
    output wire s_req_ready,
    output wire c_req_valid,
    input  wire c_req_ready,

    input  wire c_res_valid,
    output wire c_res_ready,
    output wire s_res_valid,
    input  wire s_res_ready,

    input  wire c_idle,
    output wire s_core_idle
);

// ------------------------------------------------------------ resets
reg [1:0] rst_c = 2'b11;        // rst in clk_core
reg [1:0] rst_b = 2'b11;        // rst_core back in clk
always @(posedge clk_core) rst_c <= {rst_c[0], rst};
always @(posedge clk) rst_b <= {rst_b[0], rst_c[1]};
assign rst_core = rst_c[1];
wire rst_s = rst || rst_b[1];   // the shell side's handshake reset

// ------------------------------------------------------------ bank writes
reg              bk_tog = 1'b0;                // clk
reg [BANK_W-1:0] bk_word = {BANK_W{1'b0}};    // clk: the last write's word
reg [2:0]        bk_c = 3'b000;               // clk_core: two synchronizer flops, then the edge
always @(posedge clk) begin
    if (s_bank_wr_en) begin
        bk_tog  <= !bk_tog;
        bk_word <= s_bank_wr_word;
    end
end
always @(posedge clk_core) bk_c <= {bk_c[1:0], bk_tog};
assign c_bank_wr_en   = bk_c[2] ^ bk_c[1];
assign c_bank_wr_word = bk_word;

// ------------------------------------------------------------ requests
reg       rq_tog = 1'b0;        // clk: toggled when a request is offered
reg       rq_wait = 1'b0;       // clk: offered, not yet acknowledged to the engine
reg [1:0] rq_ack_s = 2'b00;     // clk: the core's acknowledgement, synchronised
reg [1:0] rq_c = 2'b00;         // clk_core: rq_tog synchronised
reg       rq_ack = 1'b0;        // clk_core: toggled when the core takes it

assign s_req_ready = rq_wait && (rq_ack_s[1] == rq_tog);
assign c_req_valid = (rq_c[1] != rq_ack);

always @(posedge clk) begin
    rq_ack_s <= {rq_ack_s[0], rq_ack};
    if (s_req_valid && !rq_wait) begin
        rq_tog  <= !rq_tog;
        rq_wait <= 1'b1;
    end
    if (s_req_ready) rq_wait <= 1'b0;
    if (rst_s) begin
        rq_tog   <= 1'b0;
        rq_wait  <= 1'b0;
        rq_ack_s <= 2'b00;
    end
end

always @(posedge clk_core) begin
    rq_c <= {rq_c[0], rq_tog};
    if (c_req_valid && c_req_ready) rq_ack <= !rq_ack;
    if (rst_core) begin
        rq_c   <= 2'b00;
        rq_ack <= 1'b0;
    end
end

// ------------------------------------------------------------ results
reg       rs_tog = 1'b0;        // clk_core: toggled when a word is offered
reg       rs_wait = 1'b0;       // clk_core: offered, not yet acknowledged
reg [1:0] rs_ack_c = 2'b00;     // clk_core: the shell's acknowledgement, synchronised
reg [1:0] rs_s = 2'b00;         // clk: rs_tog synchronised
reg       rs_ack = 1'b0;        // clk: toggled when the engine takes the word

assign c_res_ready = rs_wait && (rs_ack_c[1] == rs_tog);
assign s_res_valid = (rs_s[1] != rs_ack);

always @(posedge clk_core) begin
    rs_ack_c <= {rs_ack_c[0], rs_ack};
    if (c_res_valid && !rs_wait) begin
        rs_tog  <= !rs_tog;
        rs_wait <= 1'b1;
    end
    if (c_res_ready) rs_wait <= 1'b0;
    if (rst_core) begin
        rs_tog   <= 1'b0;
        rs_wait  <= 1'b0;
        rs_ack_c <= 2'b00;
    end
end

always @(posedge clk) begin
    rs_s <= {rs_s[0], rs_tog};
    if (s_res_valid && s_res_ready) rs_ack <= !rs_ack;
    if (rst_s) begin
        rs_s   <= 2'b00;
        rs_ack <= 1'b0;
    end
end

// ------------------------------------------------------------ idle
reg [1:0] idle_s = 2'b00;
always @(posedge clk) idle_s <= {idle_s[0], c_idle && !c_res_valid && !c_req_valid};
assign s_core_idle = idle_s[1] && !rq_wait && !s_res_valid && (rq_ack_s[1] == rq_tog) &&
                     (rs_s[1] == rs_ack);

endmodule

`default_nettype wire
