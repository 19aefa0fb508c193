`default_nettype none
/*
 * link_arb - frame-by-frame round-robin arbiter of two proto_rx links
 *
 * Merges the descriptor and payload streams of two proto_rx instances
 * (link 0: UART, link 1: Ethernet) into one, a whole frame at a time, so a
 * single protocol engine serves both links. Each merged descriptor carries
 * the link it came from (m_desc_link), so the response can be routed back.
 *
 *   1. Idle: when either link offers a descriptor, one is chosen: the link
 *      not served last when both offer (round robin), else the one that
 *      offers. The choice is registered, so the offered descriptor never
 *      changes while m_desc_valid is high.
 *   2. Offer: the chosen link's descriptor is on m_desc_* and its payload
 *      stream on m_axis_*, until the consumer takes the descriptor; then
 *      back to 1.
 *
 * The consumer reads the frame's m_desc_len payload bytes (none when
 * m_desc_busy) while the descriptor is offered and takes the descriptor
 * when it is done with the frame, so it can use the descriptor fields
 * directly, without copies, until then (proto_rx allows the payload to be
 * read before its descriptor is taken).
 *
 * Parameters:
 *   LEN_W   width of the descriptor length field (11 for MAX_PAYLOAD 1024)
 *
 * Ports:
 *   clk, rst                      clock; synchronous active-high reset of
 *                                 the control state
 *   s0_desc_*, s0_axis_*          link 0 descriptor and payload streams
 *   s1_desc_*, s1_axis_*          link 1 descriptor and payload streams
 *   m_desc_valid/ready, m_desc_type, m_desc_seq, m_desc_len, m_desc_busy,
 *   m_desc_mac, m_desc_link       merged descriptor (link: 0 or 1);
 *                                 m_desc_mac is link 1's (the Ethernet
 *                                 source MAC), passed through ungated: it
 *                                 is meaningful only when m_desc_link is 1
 *   m_axis_tdata/tvalid/tready    merged payload bytes (combinational
 *                                 pass-through of the chosen link)
 *   active                        a frame is chosen or offered
 *
 * Latency: a descriptor is offered 1 clock after it appears on an idle
 * arbiter; payload bytes pass through without delay.
 */
module link_arb #(
    parameter LEN_W = 11
) (
    input  wire             clk,
    input  wire             rst,

    input  wire             s0_desc_valid,
    output wire             s0_desc_ready,
    input  wire [7:0]       s0_desc_type,
    input  wire [15:0]      s0_desc_seq,
    input  wire [LEN_W-1:0] s0_desc_len,
    input  wire             s0_desc_busy,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [47:0]      s0_desc_mac,    // not used: link 0 has no MAC
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire [7:0]       s0_axis_tdata,
    input  wire             s0_axis_tvalid,
    output wire             s0_axis_tready,

    input  wire             s1_desc_valid,
    output wire             s1_desc_ready,
    input  wire [7:0]       s1_desc_type,
    input  wire [15:0]      s1_desc_seq,
    input  wire [LEN_W-1:0] s1_desc_len,
    input  wire             s1_desc_busy,
    input  wire [47:0]      s1_desc_mac,
    input  wire [7:0]       s1_axis_tdata,
    input  wire             s1_axis_tvalid,
    output wire             s1_axis_tready,

    output wire             m_desc_valid,
    input  wire             m_desc_ready,
    output wire [7:0]       m_desc_type,
    output wire [15:0]      m_desc_seq,
    output wire [LEN_W-1:0] m_desc_len,
    output wire             m_desc_busy,
    output wire [47:0]      m_desc_mac,
    output wire             m_desc_link,
    output wire [7:0]       m_axis_tdata,
    output wire             m_axis_tvalid,
    input  wire             m_axis_tready,

    output wire             active
);

reg  offer = 1'b0;     // a descriptor is chosen and offered
reg  sel = 1'b0;       // chosen link
reg  last = 1'b1;      // link served last

wire choose = s0_desc_valid && s1_desc_valid ? !last : s1_desc_valid;
wire take   = offer && m_desc_ready;
wire pass   = offer;

assign m_desc_valid = offer;
assign m_desc_type  = sel ? s1_desc_type : s0_desc_type;
assign m_desc_seq   = sel ? s1_desc_seq : s0_desc_seq;
assign m_desc_len   = sel ? s1_desc_len : s0_desc_len;
assign m_desc_busy  = sel ? s1_desc_busy : s0_desc_busy;
assign m_desc_mac   = s1_desc_mac;   // only meaningful for link 1 (see header)
assign m_desc_link  = sel;
assign s0_desc_ready = take && !sel;
assign s1_desc_ready = take && sel;

assign m_axis_tdata   = sel ? s1_axis_tdata : s0_axis_tdata;
assign m_axis_tvalid  = pass && (sel ? s1_axis_tvalid : s0_axis_tvalid);
assign s0_axis_tready = pass && !sel && m_axis_tready;
assign s1_axis_tready = pass && sel && m_axis_tready;
assign active         = offer;

always @(posedge clk) begin
    if (!offer) begin
        if (s0_desc_valid || s1_desc_valid) begin
            sel   <= choose;
            offer <= 1'b1;
        end
    end else if (take) begin
        last  <= sel;
        offer <= 1'b0;
    end

    if (rst) begin
        offer <= 1'b0;
        last  <= 1'b1;
    end
end

endmodule

`default_nettype wire
