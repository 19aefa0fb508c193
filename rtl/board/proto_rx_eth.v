`default_nettype none
/*
 * proto_rx_eth - board protocol frame parser for Ethernet payloads, with a
 *                commit/drop frame FIFO
 *
 * Parses the payload stream of eth_mac_rx (one Ethernet frame per packet,
 * s_axis_tlast on its last byte) into protocol frames (docs/protocol.md
 * section 1):
 *
 *     SOF(0xA5) type flags seq[2] len[2] payload[len] crc[4]
 *
 * and releases only CRC-good frames to the consumer, as a descriptor
 * (type, seq, len, source MAC) plus the payload bytes.
 *
 *   - An Ethernet frame carries exactly one protocol frame starting at its
 *     first payload byte: any other first byte is a framing error and the
 *     packet is skipped up to s_axis_tlast (there is nothing to rescan).
 *   - Header: the 6 bytes after SOF. len > MAX_PAYLOAD is a framing error;
 *     the rest of the packet is skipped.
 *   - Payload: written into the frame FIFO (block RAM) behind an
 *     uncommitted write pointer. CRC-32 (rtl/lib/crc32.v) runs over type ..
 *     payload and the 4 CRC bytes; the frame is good when the state equals
 *     the residue 32'hDEBB20E3.
 *   - End: a good frame is committed (its payload becomes readable and its
 *     descriptor is pushed); a bad one is rolled back (the write pointer
 *     returns to the commit pointer) and never seen by the consumer. An
 *     s_axis_tlast before the last CRC byte is a framing error (truncated
 *     frame); bytes after the CRC up to s_axis_tlast (padding) are skipped.
 *   - DESC_DEPTH = 0: the packet's last byte (s_axis_tlast) is taken only
 *     after the frame's descriptor has been taken (a last CRC byte with
 *     s_axis_tlast is checked while offered, not taken), so s_mac, the
 *     MAC's m_src_mac, stays the frame's and is the descriptor's MAC
 *     itself, without a copy.
 *   - No room: the parser stalls (s_axis_tready low) until there is room;
 *     nothing is lost, the MAC's buffer absorbs the wait.
 *
 * Consumer rules: read the m_desc_len payload bytes of the offered
 * descriptor from m_axis_* (none when m_desc_busy, never set here) and
 * take the descriptor (before, while or after reading them); the payloads
 * of several frames follow each other in the FIFO without separators.
 *
 * Parameters:
 *   MAX_PAYLOAD  largest accepted len (1024; 256..32767)
 *   FIFO_DEPTH   payload FIFO bytes, power of two, >= MAX_PAYLOAD (1024;
 *                iCE40: FIFO_DEPTH/512 SB_RAM40_4K)
 *   DESC_DEPTH   descriptor FIFO entries (flip-flops). 0: no FIFO, the
 *                frame's own registers are the descriptor and the parser
 *                waits at the next SOF until it is taken (the default: the
 *                MAC's buffer queues the next frames)
 *
 * Ports:
 *   clk, rst                     clock; synchronous active-high reset of
 *                                the control state (parser, FIFO pointers)
 *   s_axis_tdata/tvalid/tready   payload bytes from eth_mac_rx
 *   s_axis_tlast                 last byte of a packet
 *   s_mac [47:0]                 source MAC of the packet, stable from its
 *                                first byte until its last byte is taken
 *                                (gaps included: eth_mac_rx's m_src_mac)
 *   m_desc_valid/ready           descriptor stream (FWFT)
 *   m_desc_type, m_desc_seq, m_desc_len, m_desc_busy (0), m_desc_mac
 *                                descriptor fields (stable while valid)
 *   m_axis_tdata/tvalid/tready   payload bytes of committed frames (FWFT)
 *   in_frame                     the parser is inside a packet
 *   ev_good, ev_crc_error, ev_frame_error
 *                                1-cycle status pulses (at most one per
 *                                cycle): frame committed, CRC mismatch,
 *                                framing error (bad len, truncation, bad
 *                                first byte)
 *
 * Latency: a good frame's descriptor is valid 2 clocks after its last CRC
 * byte is taken, its first payload byte one clock after that at the
 * earliest. Throughput: one input byte per clock except one END cycle per
 * frame.
 */
module proto_rx_eth #(
    parameter MAX_PAYLOAD = 1024,
    parameter FIFO_DEPTH  = 1024,
    parameter DESC_DEPTH  = 0
) (
    input  wire        clk,
    input  wire        rst,

    input  wire [7:0]  s_axis_tdata,
    input  wire        s_axis_tvalid,
    output wire        s_axis_tready,
    input  wire        s_axis_tlast,
    input  wire [47:0] s_mac,

    output wire        m_desc_valid,
    input  wire        m_desc_ready,
    output wire [7:0]  m_desc_type,
    output wire [15:0] m_desc_seq,
    output wire [$clog2(MAX_PAYLOAD+1)-1:0] m_desc_len,
    output wire        m_desc_busy,
    output wire [47:0] m_desc_mac,

    output wire [7:0]  m_axis_tdata,
    output wire        m_axis_tvalid,
    input  wire        m_axis_tready,

    output wire        in_frame,
    output wire        ev_good,
    output wire        ev_crc_error,
    output wire        ev_frame_error
);

localparam integer LEN_W  = $clog2(MAX_PAYLOAD + 1);
localparam integer ADDR_W = $clog2(FIFO_DEPTH);
localparam integer DW     = 48 + LEN_W + 16 + 8;   // descriptor word
localparam [LEN_W-1:0]  LEN_MAX   = LEN_W'(MAX_PAYLOAD);
localparam [31:0] RESIDUE = 32'hDEBB20E3;
localparam [7:0]  SOF     = 8'hA5;

localparam [2:0] ST_HUNT = 3'd0;   // first byte of a packet
localparam [2:0] ST_HDR  = 3'd1;
localparam [2:0] ST_PAY  = 3'd2;
localparam [2:0] ST_CRC  = 3'd3;
localparam [2:0] ST_END  = 3'd4;
localparam [2:0] ST_SKIP = 3'd5;   // discard up to s_axis_tlast

// ------------------------------------------------------------ parser state
reg [2:0]       state = ST_HUNT;
reg [2:0]       cnt = 3'd0;          // header / CRC byte index
// the header fields after SOF (type flags seq[2] len[2]), each written at
// its byte (the flags byte is not kept)
reg [7:0]       f_type;
reg [15:0]      f_seq;
reg [LEN_W-1:0] f_len;               // low byte first, then the high bits
reg [LEN_W-1:0] rem;                 // payload bytes still to come
reg [31:0]      crc;
reg             crc_ok;
reg             last_seen;           // the last CRC byte had tlast

reg ev_good_reg = 1'b0;
reg ev_crc_reg = 1'b0;
reg ev_frame_reg = 1'b0;

// ------------------------------------------------------------ payload FIFO
(* no_rw_check *)                      // never reads the word being written
reg [7:0]      mem [0:FIFO_DEPTH-1];
reg [ADDR_W:0] wr_ptr = {(ADDR_W+1){1'b0}};
reg [ADDR_W:0] commit_ptr = {(ADDR_W+1){1'b0}};
reg [ADDR_W:0] rd_ptr = {(ADDR_W+1){1'b0}};
reg [7:0]      out_data;
reg            out_valid = 1'b0;

wire fifo_full = (wr_ptr == {~rd_ptr[ADDR_W], rd_ptr[ADDR_W-1:0]});

// ------------------------------------------------------------ descriptor store
wire          desc_full;
wire          desc_empty;
wire [DW-1:0] desc_head;
wire          desc_pop  = m_desc_valid && m_desc_ready;
wire          desc_push = (state == ST_END) && crc_ok && !desc_full;

// ------------------------------------------------------------ input byte
wire       in_last = s_axis_tlast;
// DESC_DEPTH = 0: a packet's last byte waits until the descriptor is taken
// (and a last CRC byte with tlast is checked without being taken)
wire       crc_end   = (state == ST_CRC) && (cnt == 3'd3);
wire       hold_last = (DESC_DEPTH == 0) && in_last && (desc_full || crc_end);
assign     s_axis_tready = (state != ST_END) && !((state == ST_PAY) && fifo_full) && !hold_last;
wire       step   = s_axis_tvalid && s_axis_tready;
wire       peek   = s_axis_tvalid && crc_end && hold_last;   // checked, not taken
wire [7:0] in_b   = s_axis_tdata;

wire [31:0] crc_next;
crc32 crc_inst (
    .crc_in(crc),
    .data_in(in_b),
    .crc_out(crc_next)
);

wire [LEN_W-1:0] hdr_len = {in_b[LEN_W-9:0], f_len[7:0]};
wire             len_hi_bad = (LEN_W < 16) ? (in_b[7:LEN_W-8] != {(16-LEN_W){1'b0}}) : 1'b0;
wire             len_bad = len_hi_bad || (hdr_len > LEN_MAX);
wire             pay_we = step && (state == ST_PAY);

assign in_frame       = (state != ST_HUNT);
assign ev_good        = ev_good_reg;
assign ev_crc_error   = ev_crc_reg;
assign ev_frame_error = ev_frame_reg;

assign m_desc_valid = !desc_empty;
assign m_desc_type  = desc_head[7:0];
assign m_desc_seq   = desc_head[23:8];
assign m_desc_len   = desc_head[24 +: LEN_W];
assign m_desc_busy  = 1'b0;
assign m_desc_mac   = desc_head[DW-1 -: 48];


assign m_axis_tdata  = out_data;
assign m_axis_tvalid = out_valid;

// FIFO memory (block RAM template: write port, registered read port)
wire rd_en = (rd_ptr != commit_ptr) && (!out_valid || m_axis_tready);

always @(posedge clk) begin
    if (pay_we) begin
        mem[wr_ptr[ADDR_W-1:0]] <= in_b;
    end
    if (rd_en) begin
        out_data <= mem[rd_ptr[ADDR_W-1:0]];
    end
end

// descriptor store: a FIFO of DESC_DEPTH entries, or (DESC_DEPTH == 0) the
// frame registers themselves, held until the descriptor is taken
generate
    if (DESC_DEPTH == 0) begin : g_direct
        reg held = 1'b0;
        assign desc_full  = held;
        assign desc_empty = !held;
        // s_mac is the packet's until its last byte is taken (after this)
        assign desc_head  = {s_mac, f_len, f_seq, f_type};
        always @(posedge clk) begin
            if (desc_push) begin
                held <= 1'b1;
            end else if (desc_pop) begin
                held <= 1'b0;
            end
            if (rst) begin
                held <= 1'b0;
            end
        end
    end else begin : g_fifo
        localparam integer DA_W = (DESC_DEPTH > 1) ? $clog2(DESC_DEPTH) : 1;
        localparam integer DC_W = $clog2(DESC_DEPTH + 1);
        localparam [DA_W-1:0] DA_LAST = DA_W'(DESC_DEPTH - 1);
        localparam [DC_W-1:0] DC_FULL = DC_W'(DESC_DEPTH);
        reg [DW-1:0]   dmem [0:DESC_DEPTH-1];
        reg [DA_W-1:0] dwr = {DA_W{1'b0}};
        reg [DA_W-1:0] drd = {DA_W{1'b0}};
        reg [DC_W-1:0] dcount = {DC_W{1'b0}};
        reg [47:0]     f_mac;
        assign desc_full  = (dcount == DC_FULL);
        assign desc_empty = (dcount == {DC_W{1'b0}});
        assign desc_head  = dmem[drd];
        always @(posedge clk) begin
            if (step && state == ST_HUNT) begin
                f_mac <= s_mac;
            end
            if (desc_push) begin
                dmem[dwr] <= {f_mac, f_len, f_seq, f_type};
            end
        end
        always @(posedge clk) begin
            if (desc_push) begin
                dwr <= (dwr == DA_LAST) ? {DA_W{1'b0}} : dwr + 1'b1;
            end
            if (desc_pop) begin
                drd <= (drd == DA_LAST) ? {DA_W{1'b0}} : drd + 1'b1;
            end
            if (desc_push && !desc_pop) begin
                dcount <= dcount + 1'b1;
            end else if (!desc_push && desc_pop) begin
                dcount <= dcount - 1'b1;
            end
            if (rst) begin
                dwr    <= {DA_W{1'b0}};
                drd    <= {DA_W{1'b0}};
                dcount <= {DC_W{1'b0}};
            end
        end
    end
endgenerate

// datapath registers (no reset)
always @(posedge clk) begin
    if (step) begin
        crc <= crc_next;
        if (state == ST_HUNT) begin
            crc   <= 32'hFFFFFFFF;
        end
        if (state == ST_HDR) begin
            case (cnt)
                3'd0:    f_type      <= in_b;
                3'd2:    f_seq[7:0]  <= in_b;
                3'd3:    f_seq[15:8] <= in_b;
                3'd4:    f_len[7:0]  <= in_b;
                3'd5:    begin
                    f_len[LEN_W-1:8] <= in_b[LEN_W-9:0];
                    rem              <= hdr_len;
                end
                default: ;
            endcase
        end
        if (state == ST_PAY) begin
            rem <= rem - 1'b1;
        end
    end
    if ((step || peek) && state == ST_CRC) begin
        crc_ok    <= (crc_next == RESIDUE);
        last_seen <= in_last;
    end
end

// control
always @(posedge clk) begin
    ev_good_reg  <= 1'b0;
    ev_crc_reg   <= 1'b0;
    ev_frame_reg <= 1'b0;

    if (pay_we) begin
        wr_ptr <= wr_ptr + 1'b1;
    end

    case (state)
        ST_HUNT: begin
            cnt <= 3'd0;
            if (step) begin
                if (in_b == SOF && !in_last) begin
                    state <= ST_HDR;
                end else begin
                    ev_frame_reg <= 1'b1;           // packet does not start with SOF
                    state <= in_last ? ST_HUNT : ST_SKIP;
                end
            end
        end
        ST_HDR: begin
            if (step) begin
                cnt <= cnt + 1'b1;
                if (in_last) begin
                    ev_frame_reg <= 1'b1;           // truncated
                    state <= ST_HUNT;
                end else if (cnt == 3'd5) begin
                    cnt <= 3'd0;
                    if (len_bad) begin
                        ev_frame_reg <= 1'b1;
                        state <= ST_SKIP;
                    end else begin
                        state <= (hdr_len == {LEN_W{1'b0}}) ? ST_CRC : ST_PAY;
                    end
                end
            end
        end
        ST_PAY: begin
            if (step) begin
                if (in_last) begin
                    ev_frame_reg <= 1'b1;
                    wr_ptr <= commit_ptr;
                    state  <= ST_HUNT;
                end else if (rem == {{(LEN_W-1){1'b0}}, 1'b1}) begin
                    state <= ST_CRC;
                end
            end
        end
        ST_CRC: begin
            if (step || peek) begin
                cnt <= cnt + 1'b1;
                if (in_last && cnt != 3'd3) begin
                    ev_frame_reg <= 1'b1;
                    wr_ptr <= commit_ptr;
                    state  <= ST_HUNT;
                end else if (cnt == 3'd3) begin
                    state <= ST_END;
                end
            end
        end
        ST_END: begin
            // DESC_DEPTH = 0: the packet's last byte is still to be taken
            // (in ST_SKIP, after the descriptor), peeked or not yet seen
            if (!crc_ok) begin
                ev_crc_reg <= 1'b1;
                wr_ptr <= commit_ptr;
                state  <= (last_seen && DESC_DEPTH != 0) ? ST_HUNT : ST_SKIP;
            end else if (!desc_full) begin
                ev_good_reg <= 1'b1;
                commit_ptr  <= wr_ptr;
                state       <= (last_seen && DESC_DEPTH != 0) ? ST_HUNT : ST_SKIP;
            end
        end
        default: begin // ST_SKIP
            if (step && in_last) begin
                state <= ST_HUNT;
            end
        end
    endcase

    if (rst) begin
        state        <= ST_HUNT;
        wr_ptr       <= {(ADDR_W+1){1'b0}};
        commit_ptr   <= {(ADDR_W+1){1'b0}};
        ev_good_reg  <= 1'b0;
        ev_crc_reg   <= 1'b0;
        ev_frame_reg <= 1'b0;
    end
end

// output side of the payload FIFO
always @(posedge clk) begin
    if (rd_en) begin
        rd_ptr    <= rd_ptr + 1'b1;
        out_valid <= 1'b1;
    end else if (m_axis_tready) begin
        out_valid <= 1'b0;
    end
    if (rst) begin
        rd_ptr    <= {(ADDR_W+1){1'b0}};
        out_valid <= 1'b0;
    end
end

endmodule

`default_nettype wire
