`default_nettype none
/*
 * proto_rx - board protocol frame parser with a commit/drop frame FIFO
 *
 * Parses the byte stream of one link into protocol frames
 * (docs/protocol.md section 1):
 *
 *     SOF(0xA5) type flags seq[2] len[2] payload[len] crc[4]
 *
 * and releases only CRC-good frames to the consumer, as a descriptor
 * (type, seq, len, source MAC) plus the payload bytes.
 *
 *   - Hunt: bytes before a SOF are discarded. In ETH_MODE the frame must
 *     start at the first byte of the input packet (s_axis_tlast marks the
 *     end of each Ethernet payload); any other first byte is a framing
 *     error and the packet is skipped up to s_axis_tlast.
 *   - Header: the 6 bytes after SOF. len > MAX_PAYLOAD is a framing error.
 *     In UART mode hunting then restarts at the byte after that SOF: the 6
 *     header bytes are replayed into the parser (s_axis_tready is low for
 *     those 6 cycles), so a SOF inside them is found. In ETH_MODE the rest
 *     of the packet is skipped.
 *   - Payload: written into the frame FIFO (block RAM) behind an
 *     uncommitted write pointer. CRC-32 (rtl/lib/crc32.v) runs over type ..
 *     payload and the 4 CRC bytes; the frame is good when the state equals
 *     the residue 32'hDEBB20E3.
 *   - End: a good frame is committed (its payload becomes readable and its
 *     descriptor is pushed); a bad one is rolled back (wr_ptr returns to
 *     the commit pointer) and never seen by the consumer.
 *   - UART idle timeout (IDLE_CYCLES > 0): inside a frame, IDLE_CYCLES
 *     clocks without an input byte abandon the frame (framing error).
 *   - ETH_MODE: an s_axis_tlast before the last CRC byte is a framing error
 *     (truncated frame); bytes after the CRC up to s_axis_tlast (Ethernet
 *     padding) are discarded.
 *   - No room (UART mode, the input cannot wait): payload bytes that do not
 *     fit in the FIFO are lost; a CRC-good frame that lost bytes is rolled
 *     back but still gets a descriptor with m_desc_busy set and no payload
 *     (the engine answers it with ERROR 8, busy). A CRC-good frame that
 *     finds the descriptor FIFO full is dropped. Both pulse ev_overflow.
 *     In ETH_MODE the parser stalls instead (s_axis_tready low) until there
 *     is room, so nothing is lost (the MAC's buffer absorbs the wait).
 *
 * Consumer rules: take a descriptor (m_desc_valid && m_desc_ready), then
 * read exactly m_desc_len payload bytes from m_axis_* (none when
 * m_desc_busy). The payloads of several frames follow each other in the
 * FIFO without separators, so reading a different count breaks framing.
 * The descriptor may be taken before, while or after its bytes are read.
 *
 * Parameters:
 *   MAX_PAYLOAD  largest accepted len (1024; 256..32767)
 *   FIFO_DEPTH   payload FIFO bytes, power of two, >= MAX_PAYLOAD (2048:
 *                one maximum frame being executed and one arriving;
 *                iCE40: FIFO_DEPTH/512 SB_RAM40_4K)
 *   DESC_DEPTH   descriptor FIFO entries (flip-flops). 0: no FIFO, the
 *                frame's own registers are the descriptor and the parser
 *                waits at the next SOF until it is taken (only for inputs
 *                that can wait: Ethernet, where the MAC's buffer queues
 *                the next frames). UART: 4.
 *   IDLE_CYCLES  idle timeout inside a frame in clocks, 0 = off (UART:
 *                16 byte times = 160*CLKS_PER_BIT)
 *   ETH_MODE     0: byte stream link (UART); 1: packet link (Ethernet)
 *
 * Ports:
 *   clk, rst                     clock; synchronous active-high reset of
 *                                the control state (parser, FIFO pointers)
 *   s_axis_tdata/tvalid/tready   input bytes
 *   s_axis_tlast                 ETH_MODE: last byte of a packet (UART: 0)
 *   s_mac [47:0]                 ETH_MODE: source MAC of the packet, stable
 *                                while its bytes are offered (UART: not
 *                                used, m_desc_mac is 0)
 *   m_desc_valid/ready           descriptor stream (FWFT)
 *   m_desc_type, m_desc_seq, m_desc_len, m_desc_busy, m_desc_mac
 *                                descriptor fields (stable while valid)
 *   m_axis_tdata/tvalid/tready   payload bytes of committed frames (FWFT)
 *   in_frame                     the parser is inside a frame (not hunting)
 *   ev_good, ev_crc_error, ev_frame_error, ev_overflow
 *                                1-cycle status pulses (at most one per
 *                                cycle): frame committed with its payload,
 *                                CRC mismatch, framing error (bad len,
 *                                idle timeout, truncation, ETH_MODE bad
 *                                first byte), frame lost or payload lost
 *                                for lack of room
 *
 * Latency: a good frame's descriptor is valid 2 clocks after its last CRC
 * byte is taken, its first payload byte one clock after that at the
 * earliest. Throughput: one input byte per clock except the END cycle of
 * each frame (and 6 replay cycles after a bad length in UART mode).
 */
module proto_rx #(
    parameter MAX_PAYLOAD = 1024,
    parameter FIFO_DEPTH  = 2048,
    parameter DESC_DEPTH  = 4,
    parameter IDLE_CYCLES = 0,
    parameter ETH_MODE    = 0
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
    output wire        ev_frame_error,
    output wire        ev_overflow
);

localparam integer LEN_W  = $clog2(MAX_PAYLOAD + 1);
localparam integer ADDR_W = $clog2(FIFO_DEPTH);
localparam integer MW     = (ETH_MODE != 0) ? 48 : 1;  // stored MAC bits (UART: none)
localparam integer DW     = MW + 1 + LEN_W + 16 + 8;   // descriptor word
localparam integer IDLE_W = (IDLE_CYCLES > 1) ? $clog2(IDLE_CYCLES + 1) : 1;
localparam [IDLE_W-1:0] IDLE_LAST = IDLE_W'((IDLE_CYCLES > 1) ? IDLE_CYCLES - 1 : 0);
localparam [LEN_W-1:0]  LEN_MAX   = LEN_W'(MAX_PAYLOAD);
localparam [31:0] RESIDUE = 32'hDEBB20E3;
localparam [7:0]  SOF     = 8'hA5;

localparam [2:0] ST_HUNT = 3'd0;
localparam [2:0] ST_HDR  = 3'd1;
localparam [2:0] ST_PAY  = 3'd2;
localparam [2:0] ST_CRC  = 3'd3;
localparam [2:0] ST_END  = 3'd4;
localparam [2:0] ST_SKIP = 3'd5;   // ETH_MODE: discard up to s_axis_tlast

// ------------------------------------------------------------ parser state
reg [2:0]       state = ST_HUNT;
reg [2:0]       cnt = 3'd0;          // header / CRC byte index
// hist: the header bytes after SOF, shifted in at the top. After the
// header it holds {len hi, len lo, seq hi, seq lo, flags, type} (the
// frame's fields); after a bad length it is the replay buffer, rotated
// while replaying, which leaves it holding the next header again.
reg [47:0]      hist;
reg [LEN_W-1:0] rem;                 // payload bytes still to come
reg [31:0]      crc;
reg             crc_ok;
reg             last_seen;           // ETH_MODE: the last CRC byte had tlast
reg             f_ovf = 1'b0;        // payload bytes lost (no room)
wire [7:0]       f_type = hist[7:0];
wire [15:0]      f_seq  = hist[31:16];
wire [LEN_W-1:0] f_len  = hist[32 +: LEN_W];
reg [MW-1:0]    f_mac;
reg [2:0]       rp_cnt = 3'd0;       // bytes of hist still to replay
reg [IDLE_W-1:0] idle_cnt = {IDLE_W{1'b0}};

reg ev_good_reg = 1'b0;
reg ev_crc_reg = 1'b0;
reg ev_frame_reg = 1'b0;
reg ev_ovf_reg = 1'b0;

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
wire          desc_push;

// ------------------------------------------------------------ input byte
wire       replaying = (rp_cnt != 3'd0);
wire       stall_eth = (ETH_MODE != 0) && (state == ST_PAY) && fifo_full;
wire       hold_desc = (DESC_DEPTH == 0) && (state == ST_HUNT) && desc_full;
assign     s_axis_tready = !replaying && (state != ST_END) && !stall_eth && !hold_desc;
wire       step   = replaying ? (state != ST_END) && !hold_desc : (s_axis_tvalid && s_axis_tready);
wire [7:0] in_b   = replaying ? hist[7:0] : s_axis_tdata;
wire       in_last = (ETH_MODE != 0) && !replaying && s_axis_tlast;

wire [31:0] crc_next;
crc32 crc_inst (
    .crc_in(crc),
    .data_in(in_b),
    .crc_out(crc_next)
);

wire [LEN_W-1:0] hdr_len = {in_b[LEN_W-9:0], hist[47:40]};
wire             len_hi_bad = (LEN_W < 16) ? (in_b[7:LEN_W-8] != {(16-LEN_W){1'b0}}) : 1'b0;
wire             len_bad = len_hi_bad || (hdr_len > LEN_MAX);

wire pay_we = step && (state == ST_PAY) && !fifo_full;

wire in_body  = (state == ST_HDR) || (state == ST_PAY) || (state == ST_CRC);
wire timeout  = (IDLE_CYCLES > 1) && in_body && !step && (idle_cnt == IDLE_LAST);
wire push_ok  = crc_ok && !desc_full;

assign in_frame       = (state != ST_HUNT);
wire   unused_ok      = ^s_mac;               // UART mode: no MAC
assign ev_good        = ev_good_reg;
assign ev_crc_error   = ev_crc_reg;
assign ev_frame_error = ev_frame_reg;
assign ev_overflow    = ev_ovf_reg;

assign m_desc_valid = !desc_empty;
assign m_desc_type  = desc_head[7:0];
assign m_desc_seq   = desc_head[23:8];
assign m_desc_len   = desc_head[24 +: LEN_W];
assign m_desc_busy  = desc_head[24 + LEN_W];
assign m_desc_mac   = (ETH_MODE != 0) ? 48'(desc_head[DW-1 -: MW]) : 48'd0;

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
assign desc_push = (state == ST_END) && push_ok;

generate
    if (DESC_DEPTH == 0) begin : g_direct
        reg held = 1'b0;
        assign desc_full  = held;
        assign desc_empty = !held;
        assign desc_head  = {f_mac, f_ovf, f_len, f_seq, f_type};
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
        assign desc_full  = (dcount == DC_FULL);
        assign desc_empty = (dcount == {DC_W{1'b0}});
        assign desc_head  = dmem[drd];
        always @(posedge clk) begin
            if (desc_push) begin
                dmem[dwr] <= {f_mac, f_ovf, f_len, f_seq, f_type};
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
            f_mac <= MW'(s_mac);
        end
        if (state == ST_HDR || replaying) begin
            hist <= {in_b, hist[47:8]};      // shift in (rotate while replaying)
        end
        if (state == ST_HDR && cnt == 3'd5) begin
            rem <= hdr_len;
        end
        if (state == ST_PAY) begin
            rem <= rem - 1'b1;
        end
        if (state == ST_CRC) begin
            crc_ok    <= (crc_next == RESIDUE);
            last_seen <= in_last;
        end
    end
end

// control
always @(posedge clk) begin
    ev_good_reg  <= 1'b0;
    ev_crc_reg   <= 1'b0;
    ev_frame_reg <= 1'b0;
    ev_ovf_reg   <= 1'b0;

    if (replaying && step) begin
        rp_cnt <= rp_cnt - 1'b1;
    end
    if (pay_we) begin
        wr_ptr <= wr_ptr + 1'b1;
    end
    if (step || !in_body) begin
        idle_cnt <= {IDLE_W{1'b0}};
    end else if (IDLE_CYCLES > 1) begin
        idle_cnt <= idle_cnt + 1'b1;
    end

    case (state)
        ST_HUNT: begin
            cnt <= 3'd0;
            if (step) begin
                if (in_b == SOF && !in_last) begin
                    state <= ST_HDR;
                    f_ovf <= 1'b0;
                end else if (ETH_MODE != 0) begin
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
                        if (ETH_MODE != 0) begin
                            state <= ST_SKIP;
                        end else begin
                            state  <= ST_HUNT;
                            rp_cnt <= 3'd6;
                        end
                    end else begin
                        state <= (hdr_len == {LEN_W{1'b0}}) ? ST_CRC : ST_PAY;
                    end
                end
            end
        end
        ST_PAY: begin
            if (step) begin
                if (fifo_full) begin
                    f_ovf <= 1'b1;                  // UART mode only
                end
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
            if (step) begin
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
            if (!crc_ok) begin
                ev_crc_reg <= 1'b1;
                wr_ptr <= commit_ptr;
            end else if (!desc_full) begin
                if (f_ovf) begin
                    ev_ovf_reg <= 1'b1;             // answered busy, payload dropped
                    wr_ptr <= commit_ptr;
                end else begin
                    ev_good_reg <= 1'b1;
                    commit_ptr  <= wr_ptr;
                end
            end else if (ETH_MODE == 0) begin
                ev_ovf_reg <= 1'b1;                 // no descriptor room: dropped
                wr_ptr <= commit_ptr;
            end
            if (!crc_ok || !desc_full || ETH_MODE == 0) begin
                state <= (ETH_MODE != 0 && !last_seen) ? ST_SKIP : ST_HUNT;
            end
        end
        default: begin // ST_SKIP
            if (step && in_last) begin
                state <= ST_HUNT;
            end
        end
    endcase

    if (timeout) begin
        ev_frame_reg <= 1'b1;
        wr_ptr <= commit_ptr;
        state  <= ST_HUNT;
    end


    if (rst) begin
        state        <= ST_HUNT;
        rp_cnt       <= 3'd0;
        f_ovf        <= 1'b0;
        idle_cnt     <= {IDLE_W{1'b0}};
        wr_ptr       <= {(ADDR_W+1){1'b0}};
        commit_ptr   <= {(ADDR_W+1){1'b0}};
        ev_good_reg  <= 1'b0;
        ev_crc_reg   <= 1'b0;
        ev_frame_reg <= 1'b0;
        ev_ovf_reg   <= 1'b0;
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
