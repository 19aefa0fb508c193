`default_nettype none
/*
 * proto_rx - board protocol frame parser for a byte stream (the UART),
 *            rescanning after every dropped candidate frame
 *
 * Parses the byte stream of a link that cannot wait (uart_rx) into protocol
 * frames (docs/protocol.md section 1):
 *
 *     SOF(0xA5) type flags seq[2] len[2] payload[len] crc[4]
 *
 * and releases only CRC-good frames to the consumer, as a descriptor
 * (type, seq, len) plus the payload bytes.
 *
 * The block RAM is a queue of the raw received bytes (every byte is
 * written at the tail as it arrives; s_axis_tready is always high). The
 * parser reads the queue through a parse pointer; when it has caught up
 * with the tail it takes each arriving byte directly.
 *
 *   - Hunt: bytes before a SOF are skipped.
 *   - Header: the 6 bytes after SOF; len > MAX_PAYLOAD drops the candidate.
 *   - Payload and CRC: CRC-32 (rtl/lib/crc32.v) over type .. payload and
 *     the 4 CRC bytes; the frame is good when the state equals the residue
 *     32'hDEBB20E3.
 *   - Good frame: its descriptor (with the queue address of its payload) is
 *     pushed; the bytes stay in the queue until the consumer has read them.
 *   - Any drop (bad length, bad CRC, idle timeout): the parse pointer goes
 *     back to the byte after the candidate's SOF and the bytes already
 *     received are parsed again, so a false SOF in garbage, or a frame that
 *     lost a byte, never swallows good frames received after it (the queue
 *     holds them). New bytes keep arriving at the tail meanwhile.
 *   - Idle timeout (IDLE_CYCLES > 0): a candidate is dropped when the line
 *     has been idle (no byte arrived) for IDLE_CYCLES clocks while the
 *     parser waits inside it; after that, until the next byte arrives, a
 *     candidate that runs out of received bytes is dropped at once.
 *   - No room: a byte that arrives while the queue is full (every slot
 *     holds a byte still needed: an unread payload or the candidate being
 *     parsed) is lost and pulses ev_overflow. When the parser has caught up
 *     with the tail it still parses the byte (CRC included), so a CRC-good
 *     frame that lost bytes gets a descriptor with m_desc_busy set and no
 *     payload (the engine answers it with ERROR 8, busy); a candidate that
 *     lost bytes is not rescanned. When the parser is behind (rescanning
 *     after a drop) the byte is simply missing from the stream: the
 *     candidate that will contain it fails its CRC (or length) and is
 *     dropped like a frame hit by a line error.
 *   - A CRC-good frame parsed at the tail (caught up: its last byte has
 *     just arrived) that finds the descriptor FIFO full (the consumer
 *     holds DESC_DEPTH frames, busy ones included) is discarded: no
 *     descriptor, ev_overflow instead of ev_good. The parser thus stays
 *     caught up and a full FIFO costs exactly the frames that end while it
 *     is full (waiting there used to leave the parser behind a queue that
 *     then lost bytes of later frames unnoticed: they vanished as CRC or
 *     framing errors). A good frame found by a rescan (the parser behind
 *     the tail) waits for descriptor room instead: a rescan can parse
 *     buffered frames faster than they are executed, and the bytes
 *     arriving meanwhile are queued (lost, as above, if the queue fills).
 *
 * Consumer rules: read the m_desc_len payload bytes of the offered
 * descriptor (none when m_desc_busy) from m_axis_*, then take the
 * descriptor (the read side serves the head descriptor's payload only).
 *
 * Parameters:
 *   MAX_PAYLOAD  largest accepted len (1024; 256..32767)
 *   FIFO_DEPTH   queue bytes, power of two, > 11 + MAX_PAYLOAD (2048: a
 *                frame being executed and a maximal frame arriving;
 *                iCE40: FIFO_DEPTH/512 SB_RAM40_4K)
 *   DESC_DEPTH   descriptor FIFO entries (flip-flops), >= 1 (4)
 *   IDLE_CYCLES  idle timeout in clocks, 0 = off (UART: 16 byte times =
 *                160*CLKS_PER_BIT)
 *
 * Ports:
 *   clk, rst                     clock; synchronous active-high reset of
 *                                the control state (parser, queue)
 *   s_axis_tdata/tvalid/tready   input bytes (tready is always high)
 *   m_desc_valid/ready           descriptor stream (FWFT)
 *   m_desc_type, m_desc_seq, m_desc_len, m_desc_busy
 *                                descriptor fields (stable while valid)
 *   m_axis_tdata/tvalid/tready   payload bytes of the offered descriptor
 *   in_frame                     the parser is inside a candidate or has
 *                                bytes left to (re)parse, or a descriptor
 *                                is about to be offered
 *   ev_good, ev_crc_error, ev_frame_error, ev_overflow
 *                                1-cycle status pulses: frame committed
 *                                with its payload, CRC mismatch, framing
 *                                error (bad len, idle timeout), byte lost
 *                                or busy frame for lack of room, good
 *                                frame discarded (descriptor FIFO full)
 *                                (ev_overflow may coincide with another
 *                                pulse)
 *
 * Latency: a good frame's descriptor is valid 3 clocks after its last CRC
 * byte is parsed (it is offered from registers), its first payload byte 2 clocks after that at the
 * earliest. The parser takes one byte per clock (one clock more per
 * rewind and per frame end); the payload is read out at up to one byte per
 * 2 clocks, and not while the parser is rescanning.
 */
module proto_rx #(
    parameter MAX_PAYLOAD = 1024,
    parameter FIFO_DEPTH  = 2048,
    parameter DESC_DEPTH  = 4,
    parameter IDLE_CYCLES = 0
) (
    input  wire        clk,
    input  wire        rst,

    input  wire [7:0]  s_axis_tdata,
    input  wire        s_axis_tvalid,
    output wire        s_axis_tready,

    output wire        m_desc_valid,
    input  wire        m_desc_ready,
    output wire [7:0]  m_desc_type,
    output wire [15:0] m_desc_seq,
    output wire [$clog2(MAX_PAYLOAD+1)-1:0] m_desc_len,
    output wire        m_desc_busy,

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
localparam integer AW     = $clog2(FIFO_DEPTH);          // queue address
localparam integer PW     = AW + 1;                      // pointer (with wrap bit)
localparam integer DA_W   = (DESC_DEPTH > 1) ? $clog2(DESC_DEPTH) : 1;
localparam integer DC_W   = $clog2(DESC_DEPTH + 1);
localparam integer DW     = PW + 1 + LEN_W + 16 + 8;     // descriptor word
localparam integer IDLE_W = (IDLE_CYCLES > 1) ? $clog2(IDLE_CYCLES + 1) : 1;
localparam [IDLE_W-1:0] IDLE_LAST = IDLE_W'((IDLE_CYCLES > 1) ? IDLE_CYCLES - 1 : 0);
localparam [LEN_W-1:0]  LEN_MAX   = LEN_W'(MAX_PAYLOAD);
localparam [DA_W-1:0]   DA_LAST   = DA_W'(DESC_DEPTH - 1);
localparam [DC_W-1:0]   DC_FULL   = DC_W'(DESC_DEPTH);
localparam [31:0] RESIDUE = 32'hDEBB20E3;
localparam [7:0]  SOF     = 8'hA5;

localparam [2:0] ST_HUNT = 3'd0;
localparam [2:0] ST_HDR  = 3'd1;
localparam [2:0] ST_PAY  = 3'd2;
localparam [2:0] ST_CRC  = 3'd3;
localparam [2:0] ST_END  = 3'd4;

localparam [1:0] R_NONE   = 2'd0;   // owner of the RAM read register
localparam [1:0] R_PARSE  = 2'd1;
localparam [1:0] R_READ   = 2'd2;

// ------------------------------------------------------------ queue
(* no_rw_check *)                      // the byte at the tail is never read
reg [7:0]    mem [0:FIFO_DEPTH-1];
reg [7:0]    rdata;
reg [1:0]    r_tag = R_NONE;           // what rdata holds
reg [PW-1:0] tail = {PW{1'b0}};        // next write
reg [PW-1:0] pp = {PW{1'b0}};          // next byte to fetch for the parser

// ------------------------------------------------------------ parser state
reg [2:0]       state = ST_HUNT;
reg [2:0]       cnt = 3'd0;            // header / CRC byte index
// hist: the header bytes after SOF, shifted in at the top; after the
// header it holds {len hi, len lo, seq hi, seq lo, flags, type}
reg [47:0]      hist;
reg [LEN_W-1:0] rem;                   // payload bytes still to come
reg [31:0]      crc;
reg             crc_ok;
reg [PW-1:0]    sof_at;                // queue address of the candidate's SOF
reg             lost = 1'b0;           // the candidate lost bytes (no room)
reg [IDLE_W-1:0] idle_cnt = {IDLE_W{1'b0}};
reg             line_idle = 1'b0;      // timed out, no byte since

wire [7:0]       f_type = hist[7:0];
wire [15:0]      f_seq  = hist[31:16];
wire [LEN_W-1:0] f_len  = hist[32 +: LEN_W];

reg ev_good_reg = 1'b0;
reg ev_crc_reg = 1'b0;
reg ev_frame_reg = 1'b0;
reg ev_ovf_reg = 1'b0;

// ------------------------------------------------------------ descriptors
reg [DW-1:0]   dmem [0:DESC_DEPTH-1];
reg [DA_W-1:0] dwr = {DA_W{1'b0}};
reg [DA_W-1:0] drd = {DA_W{1'b0}};
reg [DC_W-1:0] dcount = {DC_W{1'b0}};
wire           desc_full  = (dcount == DC_FULL);
wire           desc_empty = (dcount == {DC_W{1'b0}});
wire [DW-1:0]  desc_head  = dmem[drd];
wire [PW-1:0]  head_start = desc_head[DW-1 -: PW];
// the offered descriptor, registered (the consumer's decode starts from
// flip-flops, not from the FIFO's read multiplexer): out_head is a copy of
// the head entry, out_ok says it is current (cleared by a pop, set again a
// clock after the new head is in dmem)
reg [DW-1:0]   out_head;
reg            out_ok = 1'b0;

// ------------------------------------------------------------ read side
reg            c_active = 1'b0;        // the head frame's payload is being read
reg [PW-1:0]   c_ptr;                  // next payload byte to read
reg [LEN_W-1:0] c_left;                // payload bytes not yet read
reg [7:0]      out_data;
reg            out_valid = 1'b0;

// ------------------------------------------------------------ input byte
wire caught   = (pp == tail) && (r_tag != R_PARSE);     // parse arriving bytes directly
wire arrive   = s_axis_tvalid;
wire in_valid = caught ? arrive : (r_tag == R_PARSE);
wire [7:0] in_b = caught ? s_axis_tdata : rdata;
wire [PW-1:0] in_at = caught ? tail : pp - 1'b1;        // address of in_b
wire step     = in_valid && (state != ST_END);
wire used_p   = !caught && step;                        // the fetched byte is parsed

// oldest byte still needed: the head frame's unread payload, else the
// candidate's first byte after SOF, else the next byte to parse
wire in_cand      = (state != ST_HUNT);
wire [PW-1:0] parse_at = caught ? tail : ((r_tag == R_PARSE) ? pp - 1'b1 : pp);
wire [PW-1:0] keep     = in_cand ? sof_at + 1'b1 : parse_at;
wire [PW-1:0] oldest   = desc_empty ? keep : (c_active ? c_ptr : head_start);
wire          q_full   = (tail[AW] != oldest[AW]) && (tail[AW-1:0] == oldest[AW-1:0]);
wire          store    = arrive && !q_full;

wire [31:0] crc_next;
crc32 crc_inst (
    .crc_in(crc),
    .data_in(in_b),
    .crc_out(crc_next)
);

wire [LEN_W-1:0] hdr_len    = {in_b[LEN_W-9:0], hist[47:40]};
wire             len_hi_bad = (LEN_W < 16) ? (in_b[7:LEN_W-8] != {(16-LEN_W){1'b0}}) : 1'b0;
wire             len_bad    = len_hi_bad || (hdr_len > LEN_MAX);

// drops: bad length, bad CRC (END), timeout, or data exhausted after a timeout
wire waiting   = in_cand && (state != ST_END) && caught && !arrive;
wire timeout   = (IDLE_CYCLES > 1) && waiting && (line_idle || idle_cnt == IDLE_LAST);
wire drop_len  = step && (state == ST_HDR) && (cnt == 3'd5) && len_bad;
wire drop_crc  = (state == ST_END) && !crc_ok;
wire drop      = drop_len || drop_crc || timeout;
wire rewind    = drop && !lost;        // rescan from the byte after the SOF

// RAM read port: the parser (rescanning) has priority over the consumer.
// No byte is fetched across a frame end, so a parser waiting in END never
// holds the read register (the consumer must be able to read and free a
// descriptor).
wire rd_free   = (r_tag != R_PARSE) || used_p;          // rdata may be replaced
wire end_next  = step && (state == ST_CRC) && (cnt == 3'd3);
wire fetch     = !rewind && (pp != tail) && rd_free && (state != ST_END) && !end_next;
wire c_want    = c_active && (c_left != {LEN_W{1'b0}}) && (r_tag != R_READ) &&
                 (!out_valid || m_axis_tready);
wire c_read    = c_want && !fetch && rd_free;
wire [AW-1:0] raddr = fetch ? pp[AW-1:0] : c_ptr[AW-1:0];

assign s_axis_tready = 1'b1;
assign in_frame      = in_cand || !caught || (!desc_empty && !out_ok);
assign ev_good       = ev_good_reg;
assign ev_crc_error  = ev_crc_reg;
assign ev_frame_error = ev_frame_reg;
assign ev_overflow   = ev_ovf_reg;

assign m_desc_valid = out_ok;
assign m_desc_type  = out_head[7:0];
assign m_desc_seq   = out_head[23:8];
assign m_desc_len   = out_head[24 +: LEN_W];
assign m_desc_busy  = out_head[24 + LEN_W];
assign m_axis_tdata  = out_data;
assign m_axis_tvalid = out_valid;

// queue memory (block RAM template: write port, registered read port)
always @(posedge clk) begin
    if (store) begin
        mem[tail[AW-1:0]] <= s_axis_tdata;
    end
    if (fetch || c_read) begin
        rdata <= mem[raddr];
    end
end

// descriptor memory (flip-flops)
wire desc_push = (state == ST_END) && crc_ok && !desc_full;
wire desc_pop  = m_desc_valid && m_desc_ready;
always @(posedge clk) begin
    if (desc_push) begin
        dmem[dwr] <= {sof_at + PW'(7), lost, f_len, f_seq, f_type};
    end
    out_head <= desc_head;
end

// datapath registers (no reset)
always @(posedge clk) begin
    if (step) begin
        crc <= crc_next;
        if (state == ST_HUNT) begin
            crc    <= 32'hFFFFFFFF;
            sof_at <= in_at;
        end
        if (state == ST_HDR) begin
            hist <= {in_b, hist[47:8]};
        end
        if (state == ST_HDR && cnt == 3'd5) begin
            rem <= hdr_len;
        end
        if (state == ST_PAY) begin
            rem <= rem - 1'b1;
        end
        if (state == ST_CRC) begin
            crc_ok <= (crc_next == RESIDUE);
        end
    end
end

// control
always @(posedge clk) begin
    ev_good_reg  <= 1'b0;
    ev_crc_reg   <= 1'b0;
    ev_frame_reg <= 1'b0;
    ev_ovf_reg   <= 1'b0;

    // arrivals
    if (store) begin
        tail <= tail + 1'b1;
    end
    if (arrive) begin
        line_idle <= 1'b0;
        if (!store) begin
            ev_ovf_reg <= 1'b1;
            if (caught) begin          // else a byte not yet parsed: the
                lost <= 1'b1;          // candidate it is in fails its CRC
            end                        // (this candidate, or the next)
        end
    end
    if (arrive || !waiting) begin
        idle_cnt <= {IDLE_W{1'b0}};
    end else if (IDLE_CYCLES > 1) begin
        idle_cnt <= idle_cnt + 1'b1;
    end

    // parse pointer and RAM read ownership
    if (caught && step && store) begin
        pp <= pp + 1'b1;               // parsed directly, stays caught up
    end
    if (fetch) begin
        pp    <= pp + 1'b1;
        r_tag <= R_PARSE;
    end else if (c_read) begin
        r_tag <= R_READ;
    end else if (rd_free) begin
        r_tag <= R_NONE;
    end

    case (state)
        ST_HUNT: begin
            cnt <= 3'd0;
            if (step && in_b == SOF) begin
                state <= ST_HDR;
                lost  <= caught && arrive && !store;
            end
        end
        ST_HDR: begin
            if (step) begin
                cnt <= cnt + 1'b1;
                if (cnt == 3'd5) begin
                    cnt   <= 3'd0;
                    state <= (hdr_len == {LEN_W{1'b0}}) ? ST_CRC : ST_PAY;
                end
            end
        end
        ST_PAY: begin
            if (step && rem == {{(LEN_W-1){1'b0}}, 1'b1}) begin
                state <= ST_CRC;
            end
        end
        ST_CRC: begin
            if (step) begin
                cnt <= cnt + 1'b1;
                if (cnt == 3'd3) begin
                    state <= ST_END;
                end
            end
        end
        default: begin // ST_END
            if (!crc_ok) begin
                ev_crc_reg <= 1'b1;
                state      <= ST_HUNT;
            end else if (!desc_full || caught) begin
                // with the FIFO full, a frame parsed at the tail is
                // discarded (waiting would leave the parser behind a queue
                // that may fill and lose bytes of later frames unnoticed);
                // one found by a rescan waits for room
                ev_good_reg <= !lost && !desc_full;
                ev_ovf_reg  <= lost || desc_full;  // busy (payload lost) or discarded
                state       <= ST_HUNT;
            end
        end
    endcase

    if (drop_len || timeout) begin
        ev_frame_reg <= 1'b1;
        state        <= ST_HUNT;
    end
    if (timeout) begin
        line_idle <= 1'b1;
    end
    if (rewind) begin
        pp <= sof_at + 1'b1;
        if (!c_read) begin
            r_tag <= R_NONE;           // a fetched byte is discarded
        end
    end

    // descriptor FIFO
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

    // read side: the head frame's payload
    if (!c_active && !desc_empty && !desc_pop) begin
        c_active <= 1'b1;
        c_ptr    <= head_start;
        c_left   <= desc_head[24 + LEN_W] ? {LEN_W{1'b0}} : desc_head[24 +: LEN_W];
    end
    if (c_read) begin
        c_ptr  <= c_ptr + 1'b1;
        c_left <= c_left - 1'b1;
    end
    if (desc_pop) begin
        c_active <= 1'b0;
    end
    out_ok <= !desc_empty && !desc_pop;
    if (r_tag == R_READ) begin
        out_data  <= rdata;
        out_valid <= 1'b1;
    end else if (m_axis_tready) begin
        out_valid <= 1'b0;
    end

    if (rst) begin
        state        <= ST_HUNT;
        tail         <= {PW{1'b0}};
        pp           <= {PW{1'b0}};
        r_tag        <= R_NONE;
        lost         <= 1'b0;
        idle_cnt     <= {IDLE_W{1'b0}};
        line_idle    <= 1'b0;
        dwr          <= {DA_W{1'b0}};
        drd          <= {DA_W{1'b0}};
        dcount       <= {DC_W{1'b0}};
        c_active     <= 1'b0;
        out_ok       <= 1'b0;
        out_valid    <= 1'b0;
        ev_good_reg  <= 1'b0;
        ev_crc_reg   <= 1'b0;
        ev_frame_reg <= 1'b0;
        ev_ovf_reg   <= 1'b0;
    end
end

endmodule

`default_nettype wire
