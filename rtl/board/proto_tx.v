`default_nettype none
/*
 * proto_tx - board protocol frame builder with fragmenting
 *
 * Takes responses as byte streams (the payload, least significant byte of
 * every protocol word first) and sends them as protocol frames
 * (docs/protocol.md section 1) on a byte stream:
 *
 *     SOF(0xA5) type flags seq[2] len[2] payload[len] crc[4]
 *
 * A response longer than FRAG_BYTES bytes is cut into fragments of
 * FRAG_BYTES bytes: every fragment but the last has flags bit 0 (MORE)
 * set, flags bits 7..1 count the fragments of the response from 0 (the
 * producer must keep a response within 128 fragments; the index wraps).
 *
 *   - Fill: bytes are written into a FRAG_BYTES x 8 block RAM (iCE40: 2
 *     SB_RAM40_4K for 1024 bytes) while s_axis_tready is high. A fragment
 *     is closed by the byte with s_axis_tlast (MORE = 0) or by its
 *     FRAG_BYTES-th byte (MORE = 1). An empty response is one transfer with
 *     s_axis_tlast and s_axis_tuser both high (no data byte).
 *   - Emit: s_axis_tready is low while the fragment is sent. The header is
 *     built from the side band, the payload read back from the RAM (one
 *     byte prefetched) and the CRC-32 (rtl/lib/crc32.v, over type ..
 *     payload) computed on the fly and appended least significant byte
 *     first. m_axis_tlast marks the last CRC byte.
 *   - Once the first byte is offered, a byte is offered on every clock
 *     (m_axis_tvalid stays high to the end of the frame), so the output can
 *     feed a MAC that cannot wait (eth_mac_tx) directly.
 *
 * Side band: s_type, s_seq, s_link, s_mac describe the response the bytes
 * belong to. They must stay stable from the first byte of a response to
 * its last (s_axis_tlast); they are latched with the byte that closes each
 * fragment, so the producer may move on to its next command while the
 * fragment is sent (proto_engine executes the next frame meanwhile, and
 * its response waits for s_axis_tready). m_link and m_mac are the latched
 * link and MAC of the fragment being sent.
 *
 * Parameters:
 *   FRAG_BYTES  payload bytes per fragment, power of two, 4..32768 (1024 =
 *               the protocol's MAX_PAYLOAD)
 *
 * Ports:
 *   clk, rst                     clock; synchronous active-high reset of
 *                                the control state (a frame being sent is
 *                                cut off, buffered bytes are forgotten)
 *   s_type, s_seq, s_link, s_mac response side band (type is the response
 *                                type, e.g. 0x81; link 0 UART, 1 Ethernet)
 *   s_axis_tdata/tvalid/tready/tlast/tuser   response bytes; tuser = empty
 *   m_axis_tdata/tvalid/tready/tlast         frame bytes
 *   m_link, m_mac                frame side band
 *   busy                         bytes buffered or a frame being sent
 *   frame_sent                   1-cycle pulse when a frame's last byte is
 *                                taken
 *
 * Latency: the SOF is offered 2 clocks after the byte that closes a
 * fragment; a fragment of n bytes occupies the output for 11 + n byte
 * transfers, after which s_axis_tready rises again.
 */
module proto_tx #(
    parameter FRAG_BYTES = 1024
) (
    input  wire        clk,
    input  wire        rst,

    input  wire [7:0]  s_type,
    input  wire [15:0] s_seq,
    input  wire        s_link,
    input  wire [47:0] s_mac,
    input  wire [7:0]  s_axis_tdata,
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

localparam integer AW = $clog2(FRAG_BYTES);
localparam integer NW = AW + 1;                       // byte count width
localparam [NW-1:0] FULL = NW'(FRAG_BYTES);

localparam [1:0] P_HDR  = 2'd0;
localparam [1:0] P_PAY  = 2'd1;
localparam [1:0] P_CRC  = 2'd2;
localparam [1:0] P_DONE = 2'd3;

reg          emit = 1'b0;          // 0: fill, 1: emit
reg [1:0]    phase = P_HDR;
reg [NW-1:0] cnt = {NW{1'b0}};     // bytes written into the fragment
reg [6:0]    frag = 7'd0;          // fragment index within the response
reg          more;

reg [2:0]    hidx;                 // header byte index
reg [AW-1:0] ridx;                 // payload byte being sent
reg [1:0]    cidx;                 // CRC byte index
reg [31:0]   crc;

// side band of the fragment being sent, latched when it closes
reg [7:0]    l_type;
reg [15:0]   l_seq;
reg          l_link;
reg [47:0]   l_mac;

(* no_rw_check *)
reg [7:0]    mem [0:FRAG_BYTES-1];       // written while filling, read while emitting
reg [7:0]    rdata;

reg [7:0]    out_data;
reg          out_valid = 1'b0;
reg          out_last = 1'b0;
reg          sent_reg = 1'b0;

wire fill_xfer = !emit && s_axis_tvalid;              // s_axis_tready = !emit
wire wr_byte   = fill_xfer && !s_axis_tuser;
wire close     = fill_xfer && (s_axis_tlast || cnt == FULL - 1'b1);
wire [15:0] nbytes = 16'(cnt);                        // payload length

wire load     = emit && (phase != P_DONE) && (!out_valid || m_axis_tready);
wire last_out = out_valid && m_axis_tready && out_last;

// header byte hidx
reg [7:0] hdr_byte;
always @* begin
    case (hidx)
        3'd0:    hdr_byte = 8'hA5;
        3'd1:    hdr_byte = l_type;
        3'd2:    hdr_byte = {frag, more};
        3'd3:    hdr_byte = l_seq[7:0];
        3'd4:    hdr_byte = l_seq[15:8];
        3'd5:    hdr_byte = nbytes[7:0];
        default: hdr_byte = nbytes[15:8];
    endcase
end

wire [7:0] crc_byte = (phase == P_HDR) ? hdr_byte : rdata;

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
assign m_link        = l_link;
assign m_mac         = l_mac;
assign busy          = emit || (cnt != {NW{1'b0}});
assign frame_sent    = sent_reg;

// payload RAM: write while filling, a clock after the byte is taken (the
// producer's byte goes into a register first, so no combinational path
// runs from it to the RAM); registered read while emitting (byte 0 at
// header byte 1, after the fragment's last write; byte i+1 while byte i is
// loaded)
reg           w_en = 1'b0;
reg [AW-1:0]  w_addr;
reg [7:0]     w_data;
wire          rd_en   = (emit && phase == P_HDR && hidx == 3'd1) || (load && phase == P_PAY);
wire [AW-1:0] rd_addr = (phase == P_HDR) ? {AW{1'b0}} : ridx + 1'b1;

always @(posedge clk) begin
    w_en   <= wr_byte && !rst;
    w_addr <= cnt[AW-1:0];
    w_data <= s_axis_tdata;
    if (w_en) begin
        mem[w_addr] <= w_data;
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
    if (close) begin
        l_type <= s_type;
        l_seq  <= s_seq;
        l_link <= s_link;
        l_mac  <= s_mac;
    end
    if (load) begin
        case (phase)
            P_HDR: begin
                out_data <= hdr_byte;
                crc      <= (hidx == 3'd0) ? 32'hFFFFFFFF : crc_next;
            end
            P_PAY: begin
                out_data <= rdata;
                crc      <= crc_next;
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
        cidx  <= 2'd0;
        if (wr_byte) begin
            cnt <= cnt + 1'b1;
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
                    phase <= (cnt == {NW{1'b0}}) ? P_CRC : P_PAY;
                end
            end
            P_PAY: begin
                ridx <= ridx + 1'b1;
                if ({1'b0, ridx} == cnt - 1'b1) begin
                    phase <= P_CRC;
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
        cnt       <= {NW{1'b0}};
        sent_reg  <= 1'b1;
        frag      <= more ? frag + 1'b1 : 7'd0;
    end

    if (rst) begin
        emit      <= 1'b0;
        phase     <= P_HDR;
        cnt       <= {NW{1'b0}};
        frag      <= 7'd0;
        out_valid <= 1'b0;
        out_last  <= 1'b0;
        sent_reg  <= 1'b0;
    end
end

endmodule

`default_nettype wire
