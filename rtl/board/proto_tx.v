`default_nettype none
/*
 * proto_tx - board protocol frame builder with fragmenting
 *
 * Takes responses as streams of 32-bit words and sends them as protocol
 * frames (docs/protocol.md section 1) on a byte stream:
 *
 *     SOF(0xA5) type flags seq[2] len[2] payload[len] crc[4]
 *
 * Every payload word is sent as 4 bytes, least significant first. A
 * response longer than FRAG_WORDS words is cut into fragments of
 * FRAG_WORDS words: every fragment but the last has flags bit 0 (MORE)
 * set, flags bits 7..1 count the fragments of the response from 0 (the
 * producer must keep a response within 128 fragments; the index wraps).
 *
 *   - Fill: words are written into a FRAG_WORDS x 32 block RAM (iCE40: 2
 *     SB_RAM40_4K for 256 words) while s_axis_tready is high. A fragment is
 *     closed by the word with s_axis_tlast (MORE = 0) or by its
 *     FRAG_WORDS-th word (MORE = 1). An empty response is one transfer
 *     with s_axis_tlast and s_axis_tuser both high (no data word).
 *   - Emit: s_axis_tready is low while the fragment is sent. The header is
 *     built from the fragment's side band, the payload read back from the
 *     RAM (one word prefetched) and the CRC-32 (rtl/lib/crc32.v, over type
 *     .. payload) computed on the fly and appended least significant byte
 *     first. m_axis_tlast marks the last CRC byte.
 *   - Once the first byte is offered, a byte is offered on every clock
 *     (m_axis_tvalid stays high to the end of the frame), so the output can
 *     feed a MAC that cannot wait (eth_mac_tx) directly.
 *
 * Side band: s_type, s_seq, s_link, s_mac describe the response the words
 * belong to. They are not latched: they must stay stable from the first
 * word of a response until its last frame has been sent (busy low), which
 * proto_engine guarantees by taking no new frame while busy is high.
 * m_link and m_mac are s_link and s_mac passed through.
 *
 * Parameters:
 *   FRAG_WORDS  payload words per fragment, power of two (256 = the
 *               protocol's MAX_PAYLOAD of 1024 bytes)
 *
 * Ports:
 *   clk, rst                     clock; synchronous active-high reset of
 *                                the control state (a frame being sent is
 *                                cut off, buffered words are forgotten)
 *   s_type, s_seq, s_link, s_mac response side band (type is the response
 *                                type, e.g. 0x81; link 0 UART, 1 Ethernet)
 *   s_axis_tdata/tvalid/tready/tlast/tuser   response words; tuser = empty
 *   m_axis_tdata/tvalid/tready/tlast         frame bytes
 *   m_link, m_mac                frame side band
 *   busy                         words buffered or a frame being sent
 *   frame_sent                   1-cycle pulse when a frame's last byte is
 *                                taken
 *
 * Latency: the SOF is offered 2 clocks after the word that closes a
 * fragment; a fragment of n words occupies the output for 11 + 4n byte
 * transfers, after which s_axis_tready rises again.
 */
module proto_tx #(
    parameter FRAG_WORDS = 256
) (
    input  wire        clk,
    input  wire        rst,

    input  wire [7:0]  s_type,
    input  wire [15:0] s_seq,
    input  wire        s_link,
    input  wire [47:0] s_mac,
    input  wire [31:0] s_axis_tdata,
    input  wire        s_axis_tvalid,
    output wire        s_axis_tready,
    input  wire        s_axis_tlast,
    input  wire        s_axis_tuser,

    output wire [7:0]  m_axis_tdata,
    output wire        m_axis_tvalid,
    input  wire        m_axis_tready,
    output wire        m_axis_tlast,
    output wire        m_link,
    output wire [47:0] m_mac,

    output wire        busy,
    output wire        frame_sent
);

localparam integer AW = $clog2(FRAG_WORDS);
localparam integer NW = AW + 1;                       // word count width
localparam [NW-1:0] FULL = NW'(FRAG_WORDS);

localparam [1:0] P_HDR  = 2'd0;
localparam [1:0] P_PAY  = 2'd1;
localparam [1:0] P_CRC  = 2'd2;
localparam [1:0] P_DONE = 2'd3;

reg          emit = 1'b0;          // 0: fill, 1: emit
reg [1:0]    phase = P_HDR;
reg [NW-1:0] wcnt = {NW{1'b0}};    // words written into the fragment
reg [6:0]    frag = 7'd0;          // fragment index within the response
reg          more;

reg [2:0]    hidx;                 // header byte index
reg [AW-1:0] ridx;                 // word being sent
reg [1:0]    bidx;                 // byte within the word
reg [1:0]    cidx;                 // CRC byte index
reg [31:0]   crc;
reg [23:0]   cur;                  // bytes 1..3 of the current word

(* no_rw_check *)
reg [31:0]   mem [0:FRAG_WORDS-1];       // written while filling, read while emitting
reg [31:0]   rdata;

reg [7:0]    out_data;
reg          out_valid = 1'b0;
reg          out_last = 1'b0;
reg          sent_reg = 1'b0;

wire fill_xfer = !emit && s_axis_tvalid;              // s_axis_tready = !emit
wire wr_word   = fill_xfer && !s_axis_tuser;
wire close     = fill_xfer && (s_axis_tlast || wcnt == FULL - 1'b1);
wire [NW-1:0] nwords = wcnt;                          // valid while emitting
wire [15:0]   nbytes = 16'(nwords) << 2;              // payload length

wire load     = emit && (phase != P_DONE) && (!out_valid || m_axis_tready);
wire last_out = out_valid && m_axis_tready && out_last;

// header byte hidx
reg [7:0] hdr_byte;
always @* begin
    case (hidx)
        3'd0:    hdr_byte = 8'hA5;
        3'd1:    hdr_byte = s_type;
        3'd2:    hdr_byte = {frag, more};
        3'd3:    hdr_byte = s_seq[7:0];
        3'd4:    hdr_byte = s_seq[15:8];
        3'd5:    hdr_byte = nbytes[7:0];
        default: hdr_byte = nbytes[15:8];
    endcase
end

wire [7:0] pay_byte = (bidx == 2'd0) ? rdata[7:0] : cur[7:0];
wire [7:0] crc_byte = (phase == P_HDR) ? hdr_byte : pay_byte;

wire [31:0] crc_next;
crc32 crc_inst (
    .crc_in(crc),
    .data_in(crc_byte),
    .crc_out(crc_next)
);

assign s_axis_tready = !emit;
assign m_axis_tdata  = out_data;
assign m_axis_tvalid = out_valid;
assign m_axis_tlast  = out_last;
assign m_link        = s_link;
assign m_mac         = s_mac;
assign busy          = emit || (wcnt != {NW{1'b0}});
assign frame_sent    = sent_reg;

// payload RAM: write while filling, registered read while emitting
wire          rd_en   = (emit && phase == P_HDR && hidx == 3'd0) ||
                        (load && phase == P_PAY && bidx == 2'd0);
wire [AW-1:0] rd_addr = (phase == P_HDR) ? {AW{1'b0}} : ridx + 1'b1;

always @(posedge clk) begin
    if (wr_word) begin
        mem[wcnt[AW-1:0]] <= s_axis_tdata;
    end
    if (rd_en) begin
        rdata <= mem[rd_addr];
    end
end

// datapath (no reset)
always @(posedge clk) begin
    if (fill_xfer) begin
        more <= !s_axis_tlast;
    end
    if (load) begin
        case (phase)
            P_HDR: begin
                out_data <= hdr_byte;
                crc      <= (hidx == 3'd0) ? 32'hFFFFFFFF : crc_next;
            end
            P_PAY: begin
                out_data <= pay_byte;
                crc      <= crc_next;
                cur      <= (bidx == 2'd0) ? rdata[31:8] : {8'h00, cur[23:8]};
            end
            default: begin // P_CRC
                out_data <= ~crc[7:0];
                crc      <= {8'hFF, crc[31:8]};
            end
        endcase
    end
end

// control
always @(posedge clk) begin
    sent_reg <= 1'b0;

    if (!emit) begin
        phase <= P_HDR;
        hidx  <= 3'd0;
        ridx  <= {AW{1'b0}};
        bidx  <= 2'd0;
        cidx  <= 2'd0;
        if (wr_word) begin
            wcnt <= wcnt + 1'b1;
        end
        if (close) begin
            emit <= 1'b1;
        end
    end

    if (load) begin
        out_valid <= 1'b1;
        case (phase)
            P_HDR: begin
                hidx <= hidx + 1'b1;
                if (hidx == 3'd6) begin
                    phase <= (nwords == {NW{1'b0}}) ? P_CRC : P_PAY;
                end
            end
            P_PAY: begin
                bidx <= bidx + 1'b1;
                if (bidx == 2'd3) begin
                    ridx <= ridx + 1'b1;
                    if ({1'b0, ridx} == nwords - 1'b1) begin
                        phase <= P_CRC;
                    end
                end
            end
            default: begin // P_CRC
                cidx <= cidx + 1'b1;
                if (cidx == 2'd3) begin
                    out_last <= 1'b1;
                    phase    <= P_DONE;
                end
            end
        endcase
    end else if (last_out) begin
        out_valid <= 1'b0;
        out_last  <= 1'b0;
        emit      <= 1'b0;
        wcnt      <= {NW{1'b0}};
        sent_reg  <= 1'b1;
        frag      <= more ? frag + 1'b1 : 7'd0;
    end

    if (rst) begin
        emit      <= 1'b0;
        phase     <= P_HDR;
        wcnt      <= {NW{1'b0}};
        frag      <= 7'd0;
        out_valid <= 1'b0;
        out_last  <= 1'b0;
        sent_reg  <= 1'b0;
    end
end

endmodule

`default_nettype wire
