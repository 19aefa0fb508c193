`default_nettype none
/*
 * proto_rx - board protocol frame receiver for a byte stream (the UART):
 *            a frame queue in block RAM, committed or rolled back per frame
 *
 * Parses the byte stream of a link that cannot wait (uart_rx) into protocol
 * frames (docs/protocol.md section 1):
 *
 *     SOF(0xA5) type flags seq[2] len[2] payload[len] crc[4]
 *
 * and releases only CRC-good frames to the consumer, as a descriptor
 * (type, seq, len, busy) plus the payload bytes.
 *
 * The block RAM is a queue of frame records, each
 *
 *     type  seq lo  seq hi  len lo  {busy, len hi}  payload (none if busy)
 *
 * written behind an uncommitted write pointer while the frame arrives
 * (s_axis_tready is always high; flags, SOF and CRC are not stored).
 *
 *   - Hunt: bytes before a SOF are skipped.
 *   - Header: the 6 bytes after SOF; len > MAX_PAYLOAD drops the candidate.
 *     At the header's end the payload is given room or not: it is stored
 *     when the queue's bytes in use and len, each rounded up to whole
 *     128-byte blocks (so it may refuse up to 256 bytes early; 32-byte
 *     blocks cost about 16 LUT4 + carry more), fit beside RESERVE = 5 * (FRAMES
 *     + 1) bytes kept for headers; else the record is marked busy and its
 *     payload is not stored (the consumer answers it busy, ERROR 8).
 *   - Payload and CRC: CRC-32 (rtl/lib/crc32.v) over type .. payload and
 *     the 4 CRC bytes; the frame is good when the state equals the residue
 *     32'hDEBB20E3. With CRC_SERIAL (rtl/lib/crc32_serial.v) the register
 *     steps over type .. payload and is then rotated past the 4 CRC bytes,
 *     each of their bits compared with the complemented register bit
 *     (checked when the last byte's 8 steps are done; no 32-bit compare).
 *   - End: a good frame is committed (its record becomes readable) when
 *     fewer than FRAMES frames are held (committed and not yet taken by the
 *     consumer; counted by LFSRs, see HL_W); otherwise it is discarded
 *     whole (ev_overflow). A bad one is rolled back: the write pointer
 *     returns to the commit pointer.
 *   - Drops (bad length, bad CRC, idle timeout): hunting restarts at the
 *     next byte; the bytes of the dropped candidate are not rescanned. A
 *     false SOF in garbage, or a frame that lost a byte, may therefore
 *     swallow the frames that follow within its claimed length; each of
 *     them is then lost like a corrupt frame (never executed, never
 *     answered) and the host resends it after its timeout.
 *   - Idle timeout (IDLE_CYCLES > 0): a candidate is dropped when the line
 *     has been idle (no byte arrived) for IDLE_CYCLES clocks inside it
 *     (with TICK_CLKS > 1: for IDLE_CYCLES / TICK_CLKS ticks of idle_tick,
 *     IDLE_CYCLES - TICK_CLKS + 1 to IDLE_CYCLES clocks).
 *
 * Room: payloads are admitted only while the bytes in use stay below
 * FIFO_DEPTH - RESERVE; after that at most FRAMES records and one
 * candidate add their 5 header bytes each, so the queue never overflows,
 * and a good frame that ends while fewer than FRAMES are held always gets
 * a record: with its payload, or busy.
 *
 * Consumer rules: read the m_desc_len payload bytes of the offered
 * descriptor (none when m_desc_busy) from m_axis_*, then take the
 * descriptor (the payload stream serves the offered descriptor only).
 * With PREFETCH = 0 the consumer must also hold m_axis_tready low unless
 * it still wants a byte of that payload (proto_engine does): a byte is
 * fetched when m_axis_tready is high and none is offered, so the payload
 * comes at most every second clock, with no byte count of its own.
 *
 * Parameters:
 *   MAX_PAYLOAD  largest accepted len (1024; 256..32767)
 *   FIFO_DEPTH   queue bytes, power of two, >= 5 * FRAMES + 261 + MAX_PAYLOAD
 *                (a maximal payload then fits in an empty queue)
 *                (2048; iCE40: FIFO_DEPTH/512 SB_RAM40_4K)
 *   FRAMES       frames held at most, the one being executed included
 *                (>= 1; INFO word 18 reports FRAMES - 1)
 *   IDLE_CYCLES  idle timeout in clocks, 0 = off, at most 2^24 - 1 (UART:
 *                16 byte times = 160*CLKS_PER_BIT); counted by an LFSR
 *                (no carry chain: 19 logic cells less than a counter)
 *   TICK_CLKS    1: the idle timer steps every clock (idle_tick ignored);
 *                > 1: it steps on idle_tick, which comes every TICK_CLKS
 *                clocks (board_top: the UART bit tick, so the LFSR has 8
 *                bits instead of 12)
 *   CRC_SERIAL   0: byte-wide CRC (rtl/lib/crc32.v), a byte per clock;
 *                1: bit-serial CRC (rtl/lib/crc32_serial.v), stepped over
 *                8 clocks after each byte, so input bytes must be at least
 *                9 clocks apart (a UART byte is 10 bit times; about 20
 *                logic cells less, measured with yosys);
 *                2: bit-serial CRC stepped by the line's receiver: each
 *                data bit of a byte on crc_d with a crc_step pulse as it
 *                is sampled, all 8 before the byte arrives (uart_rx's
 *                bit_step, bit_d; board_top without Ethernet). A byte the
 *                receiver drops (bad stop bit) has been stepped in: its
 *                frame, short of a byte, fails its CRC as before.
 *   PREFETCH     1: payload bytes are fetched ahead, one per clock, up to
 *                m_desc_len (a byte counter); 0: fetched when the consumer
 *                asks (m_axis_tready with no byte offered), at most every
 *                second clock, no counter (board_top; consumer rules below)
 *
 * Ports:
 *   clk, rst                     clock; synchronous active-high reset of
 *                                the control state (parser, queue)
 *   idle_tick                    TICK_CLKS > 1: one clock in every TICK_CLKS
 *   crc_step, crc_d              CRC_SERIAL = 2: a received data bit
 *   s_axis_tdata/tvalid/tready   input bytes (tready is always high; one
 *                                per clock at most)
 *   m_desc_valid/ready           descriptor stream (FWFT)
 *   m_desc_type, m_desc_seq, m_desc_len, m_desc_busy
 *                                descriptor fields (stable while valid)
 *   m_axis_tdata/tvalid/tready   payload bytes of the offered descriptor
 *   in_frame                     the parser is inside a candidate, or the
 *                                queue holds committed records
 *   ev_good, ev_crc_error, ev_frame_error, ev_overflow
 *                                1-cycle status pulses: frame committed
 *                                with its payload, CRC mismatch, framing
 *                                error (bad len, idle timeout), frame
 *                                committed busy or discarded whole
 *
 * Latency: a good frame's descriptor is valid 7 clocks after its last CRC
 * byte when the queue was empty (its header is read back from the RAM into
 * the descriptor registers); payload bytes follow at up to one per clock
 * (PREFETCH = 0: one per two clocks).
 */
module proto_rx #(
    parameter MAX_PAYLOAD = 1024,
    parameter FIFO_DEPTH  = 2048,
    parameter FRAMES      = 32,
    parameter IDLE_CYCLES = 0,
    parameter TICK_CLKS   = 1,
    parameter CRC_SERIAL  = 0,
    parameter PREFETCH    = 1
) (
    input  wire        clk,
    input  wire        rst,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire        crc_step,       // CRC_SERIAL = 2 only
    input  wire        crc_d,
    /* verilator lint_on UNUSEDSIGNAL */
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire        idle_tick,      // unused when TICK_CLKS = 1
    /* verilator lint_on UNUSEDSIGNAL */

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

localparam integer LEN_W   = $clog2(MAX_PAYLOAD + 1);
localparam integer AW      = $clog2(FIFO_DEPTH);          // queue address
localparam integer PW      = AW + 1;                      // pointer (with wrap bit)
localparam integer HL_W    = ($clog2(FRAMES + 2) < 2) ? 2 : $clog2(FRAMES + 2);   // frame LFSRs: period > FRAMES
// the idle timer's steps to the timeout: clocks, or ticks of idle_tick
localparam integer IDLE_N  = (TICK_CLKS > 1) ? IDLE_CYCLES / TICK_CLKS : IDLE_CYCLES - 1;
localparam integer IDLE_W  = (IDLE_N > 3) ? $clog2(IDLE_N + 2) : 3;   // LFSR: 3..24 bits
localparam integer RESERVE = 5 * (FRAMES + 1);
localparam integer BLK_LOG = 7;                           // room blocks of 2^BLK_LOG bytes
localparam integer BLK_W   = PW - BLK_LOG;                // used, in blocks
// The idle timer is a maximal-length LFSR (no carry chain): it starts
// from 1 and times out at its state after IDLE_N steps (its period,
// 2^IDLE_W - 1, is longer)
`include "../lib/lfsr_taps.vh"
localparam [IDLE_W-1:0] IDLE_TAPS = IDLE_W'(lfsr_taps(IDLE_W));
localparam [IDLE_W-1:0] IDLE_SEED = {{(IDLE_W-1){1'b0}}, 1'b1};
// the state after n steps (loops of at most 1000 for the simulators'
// constant-function limits)
function automatic [IDLE_W-1:0] lfsr_after(input integer n);
    integer i, j;
    reg [IDLE_W-1:0] x;
    begin
        x = IDLE_SEED;
        for (i = 0; i < n / 1000; i = i + 1)
            for (j = 0; j < 1000; j = j + 1) x = {x[IDLE_W-2:0], ^(x & IDLE_TAPS)};
        for (i = 0; i < n % 1000; i = i + 1) x = {x[IDLE_W-2:0], ^(x & IDLE_TAPS)};
        lfsr_after = x;
    end
endfunction
localparam [IDLE_W-1:0] IDLE_LAST = lfsr_after((IDLE_N > 0) ? IDLE_N : 0);
localparam [LEN_W-1:0]  LEN_MAX   = LEN_W'(MAX_PAYLOAD);
// Frames held (committed, not yet taken) are counted by LFSRs of HL_W
// bits, no up/down counter: one stepped on each commit, two on each
// descriptor taken, the second FRAMES steps ahead of the first; held is
// 0 when the commit LFSR equals the first, FRAMES when it equals the
// second (held stays within 0..FRAMES, below the period 2^HL_W - 1).
localparam [HL_W-1:0] HL_TAPS = HL_W'(lfsr_taps(HL_W));
localparam [HL_W-1:0] HL_SEED = {{(HL_W-1){1'b0}}, 1'b1};
function automatic [HL_W-1:0] hl_after(input integer n);
    integer i;
    reg [HL_W-1:0] x;
    begin
        x = HL_SEED;
        for (i = 0; i < n; i = i + 1) x = {x[HL_W-2:0], ^(x & HL_TAPS)};
        hl_after = x;
    end
endfunction
localparam [HL_W-1:0] HL_FULL = hl_after(FRAMES);
localparam [BLK_W:0]    BLK_MAX   = (BLK_W+1)'((FIFO_DEPTH - RESERVE) / (1 << BLK_LOG) - 2);
localparam [31:0] RESIDUE = 32'hDEBB20E3;
localparam [7:0]  SOF     = 8'hA5;

// the parser is one 4-bit sequencer over the frame: the next byte is
localparam [3:0] P_HUNT = 4'd0;    // a SOF (hunted)
localparam [3:0] P_TYPE = 4'd1;    // 1..6: type, flags, seq lo, seq hi, len lo, len hi
localparam [3:0] P_FLAGS = 4'd2;
localparam [3:0] P_LENL = 4'd5;
localparam [3:0] P_LENH = 4'd6;
localparam [3:0] P_PAY  = 4'd7;    // every payload byte
localparam [3:0] P_CRC0 = 4'd8;    // 8..11: the CRC bytes
localparam [3:0] P_CRC3 = 4'd11;
localparam [3:0] P_END  = 4'd12;   // the candidate is complete (a byte here is hunted)

`include "../lib/const_cmp.vh"


// ------------------------------------------------------------ queue
(* no_rw_check *)                      // a slot is never read while written
reg [7:0]    mem [0:FIFO_DEPTH-1];
reg [7:0]    rdata;                    // RAM read register
reg [PW-1:0] wr = {PW{1'b0}};          // next write (uncommitted)
reg [PW-1:0] cm = {PW{1'b0}};          // end of the committed records
reg [PW-1:0] rd = {PW{1'b0}};          // next read
reg [BLK_W-1:0] used_b = {BLK_W{1'b0}}; // bytes in use / 2^BLK_LOG, a clock old
reg [HL_W-1:0] n_cm = HL_SEED;         // LFSR: frames committed
reg [HL_W-1:0] n_tk = HL_SEED;         // LFSR: descriptors taken
reg [HL_W-1:0] n_tf = HL_FULL;         // LFSR: n_tk, FRAMES steps ahead

// ------------------------------------------------------------ parser state
reg [3:0]        ph = P_HUNT;          // the sequencer
reg [7:0]        len_lo;
reg [LEN_W-9:0]  len_hi;               // len's high bits (len_lo the low byte)
reg [LEN_W-1:0]  pos;                  // the arriving payload byte's number (1..len)
reg [31:0]       crc;
reg              crc_ok;
reg              busy_f;               // this candidate's payload is not stored
reg [IDLE_W-1:0] idle_cnt = IDLE_SEED;   // LFSR: idle clocks inside a candidate

reg ev_good_reg = 1'b0;
reg ev_crc_reg = 1'b0;
reg ev_frame_reg = 1'b0;
reg ev_ovf_reg = 1'b0;

// ------------------------------------------------------------ read side
reg [39:0]      hdr;                   // the offered record's header bytes
reg [2:0]       hcnt = 3'd0;           // header bytes fetched
reg             hcap = 1'b0;           // rdata holds a fetched header byte
reg             d_valid = 1'b0;
reg             out_valid = 1'b0;

// ------------------------------------------------------------ input byte
wire       step    = s_axis_tvalid;
wire [7:0] in_b    = s_axis_tdata;
wire       hunting = (ph == P_HUNT) || (ph == P_END);
wire       in_crc  = (ph >= P_CRC0) && (ph <= P_CRC3);   // the next byte is a CRC byte
// bytes in use in blocks, rounded up at most by one block (conservative)
wire [BLK_W-1:0] used_blk = wr[PW-1:BLK_LOG] - rd[PW-1:BLK_LOG];

// the CRC: a byte per clock (crc32), or bit-serial (crc32_serial, 8
// clocks after each byte; the frame's end waits for them)
wire [31:0] crc_next;              // CRC_SERIAL = 0: the state after in_b
wire        crc_good;              // the candidate's CRC state equals the residue
wire        crc_busy;              // CRC_SERIAL = 1: steps over the last byte to do
generate
    if (CRC_SERIAL >= 2) begin : g_crc_line
        // stepped by the line's receiver, a data bit at a time as it is
        // sampled (crc_step, crc_d), so every bit of a byte is in before
        // the byte arrives: no stepping of its own, no byte register
        reg bad;                   // a CRC bit differed
        wire [31:0] cr;
        wire rot = in_crc;         // the arriving byte is a CRC byte
        crc32_serial u_crc (
            .clk(clk), .init(step && hunting), .step(crc_step), .rot(rot),
            .d(crc_d), .crc(cr)
        );
        always @(posedge clk) begin
            if (crc_step && rot && (crc_d == cr[0])) begin
                bad <= 1'b1;       // the frame's CRC bit k is ~crc[k]
            end
            if (step && hunting) begin
                bad <= 1'b0;
            end
        end
        assign crc_next = 32'd0;
        assign crc_good = !bad;
        assign crc_busy = 1'b0;
        wire unused_crc = &{1'b0, crc, crc_ok, cr[31:1]};
    end else if (CRC_SERIAL != 0) begin : g_crc_serial
        // over type .. payload; the 4 CRC bytes are not stepped in but
        // compared a bit at a time with the complemented register, rotated
        // past them (32 rotations: no 32-bit comparison with the residue)
        reg       stepping = 1'b0;
        reg [2:0] bc = 3'd0;       // bit of cb stepped in
        reg [7:0] cb;              // the byte being stepped in
        reg       rot;             // cb is a CRC byte: compare and rotate
        reg       bad;             // a CRC bit differed
        wire [31:0] cr;
        crc32_serial u_crc (
            .clk(clk), .init(step && hunting), .step(stepping), .rot(rot),
            .d(cb[bc]), .crc(cr)
        );
        always @(posedge clk) begin
            if (stepping) begin
                bc <= bc + 1'b1;
                if (bc == 3'd7) begin
                    stepping <= 1'b0;
                end
                if (rot && (cb[bc] == cr[0])) begin
                    bad <= 1'b1;   // the frame's CRC bit k is ~crc[k]
                end
            end
            if (step) begin
                if (hunting) begin
                    bad <= 1'b0;
                end else begin
                    stepping <= 1'b1;
                    bc       <= 3'd0;
                    cb       <= in_b;
                    rot      <= in_crc;
                end
            end
            if (rst) begin
                stepping <= 1'b0;
            end
        end
        assign crc_next = 32'd0;
        assign crc_good = !bad;
        assign crc_busy = stepping;
        wire unused_crc = &{1'b0, crc, crc_ok, cr[31:1]};
    end else begin : g_crc_byte
        crc32 crc_inst (
            .crc_in(crc),
            .data_in(in_b),
            .crc_out(crc_next)
        );
        assign crc_good = crc_ok;
        assign crc_busy = 1'b0;
    end
endgenerate

wire [LEN_W-1:0] hdr_len    = {in_b[LEN_W-9:0], len_lo};
wire             len_hi_bad = (LEN_W < 16) ? (in_b[7:LEN_W-8] != {(16-LEN_W){1'b0}}) : 1'b0;
wire             len_bad    = len_hi_bad || gt_c(32'(hdr_len), 32'(LEN_MAX));
// (used_b + 1) * B + (len / B + 1) * B <= FIFO_DEPTH - RESERVE (B the
// block, 2^BLK_LOG bytes): the
// candidate's own header bytes are counted, the queue only frees bytes
// meanwhile
wire [BLK_W:0]   need_b     = {1'b0, used_b} + (BLK_W+1)'(hdr_len[LEN_W-1:BLK_LOG]);
wire             pay_ok     = !gt_c(32'(need_b), 32'(BLK_MAX));
wire             hdr_end    = step && (ph == P_LENH);

// header bytes stored: type (0), seq (2, 3), len lo (4), {busy, len hi} (5)
wire hdr_byte  = (ph >= P_TYPE) && (ph <= P_LENH) && (ph != P_FLAGS);
wire store     = step && (hdr_byte || ((ph == P_PAY) && !busy_f));
wire [7:0] wdata = hdr_end ? {!pay_ok, in_b[6:0]} : in_b;

wire timeout   = (IDLE_CYCLES > 1) && !hunting && !step && (idle_cnt == IDLE_LAST);
wire drop_len  = hdr_end && len_bad;
wire at_end    = (ph == P_END) && !crc_busy;       // the candidate is complete
wire commit    = at_end && crc_good && (n_cm != n_tf);   // held < FRAMES
wire rollback  = drop_len || timeout || (at_end && !commit);

// read side: header fetch, then payload; a committed record is queued
// (not yet taken) exactly when held is not 0 (the one being fetched or
// offered counts until it is taken), so no pointer comparison rd != cm
wire queued    = (n_cm != n_tk);
wire desc_pop  = d_valid && m_desc_ready;
wire fetch_h   = !d_valid && (hcnt != 3'd5) && queued;
wire fetch_p;                          // a payload byte is fetched
generate
    if (PREFETCH != 0) begin : g_prefetch
        // the next byte is fetched while one is offered, up to the length
        // (counters that count up from a reset and compare with the
        // length cost fewer logic cells than loaded down-counters)
        reg [LEN_W-1:0] got;           // payload bytes fetched
        always @(posedge clk) begin
            if (hcap && hcnt == 3'd5) begin
                got <= {LEN_W{1'b0}};
            end
            if (fetch_p) begin
                got <= got + 1'b1;
            end
        end
        assign fetch_p = d_valid && !m_desc_busy && (got != m_desc_len) && (!out_valid || m_axis_tready);
    end else begin : g_on_demand
        // a byte is fetched when the consumer asks for one and none is
        // offered: it asks only for the payload's bytes, so no count
        assign fetch_p = d_valid && !m_desc_busy && !out_valid && m_axis_tready;
    end
endgenerate
wire fetch     = fetch_h || fetch_p;

assign s_axis_tready  = 1'b1;
assign in_frame       = (ph != P_HUNT) || queued;
assign ev_good        = ev_good_reg;
assign ev_crc_error   = ev_crc_reg;
assign ev_frame_error = ev_frame_reg;
assign ev_overflow    = ev_ovf_reg;

assign m_desc_valid = d_valid;
assign m_desc_type  = hdr[7:0];
assign m_desc_seq   = hdr[23:8];
assign m_desc_len   = {hdr[32 +: LEN_W-8], hdr[31:24]};
assign m_desc_busy  = hdr[39];
assign m_axis_tdata  = rdata;
assign m_axis_tvalid = out_valid;

// queue memory (block RAM template: write port, registered read port)
always @(posedge clk) begin
    if (store) begin
        mem[wr[AW-1:0]] <= wdata;
    end
    if (fetch) begin
        rdata <= mem[rd[AW-1:0]];
    end
end

// datapath registers (no reset)
always @(posedge clk) begin
    if (step) begin
        crc <= crc_next;
        if (hunting) begin
            crc <= 32'hFFFFFFFF;
        end
        if (ph == P_LENL) begin
            len_lo <= in_b;
        end
        if (hdr_end) begin
            len_hi <= in_b[LEN_W-9:0];
            pos    <= {{(LEN_W-1){1'b0}}, 1'b1};
            busy_f <= !pay_ok;
        end
        if (ph == P_PAY) begin
            pos <= pos + 1'b1;
        end
        if (in_crc) begin
            crc_ok <= (crc_next == RESIDUE);
        end
    end
    used_b <= used_blk;
    if (hcap) begin
        hdr <= {rdata, hdr[39:8]};
    end
end

// control
always @(posedge clk) begin
    ev_good_reg  <= 1'b0;
    ev_crc_reg   <= 1'b0;
    ev_frame_reg <= 1'b0;
    ev_ovf_reg   <= 1'b0;

    if (store) begin
        wr <= wr + 1'b1;
    end
    if (step && !hunting) begin
        idle_cnt <= IDLE_SEED;
    end else if (hunting) begin
        idle_cnt <= IDLE_SEED;
    end else if (IDLE_CYCLES > 1 && (TICK_CLKS <= 1 || idle_tick)) begin
        idle_cnt <= {idle_cnt[IDLE_W-2:0], ^(idle_cnt & IDLE_TAPS)};
    end

    if (hunting) begin
        if (!crc_busy) ph <= P_HUNT;
        if (step && in_b == SOF) begin
            ph <= P_TYPE;
        end
    end else if (step) begin
        if (ph == P_LENH) begin
            ph <= (hdr_len == {LEN_W{1'b0}}) ? P_CRC0 : P_PAY;
        end else if (ph == P_PAY) begin
            if (pos == {len_hi, len_lo}) ph <= P_CRC0;
        end else begin
            ph <= ph + 1'b1;           // header, CRC3 -> END
        end
    end

    if (at_end) begin
        ev_crc_reg  <= !crc_good;
        ev_good_reg <= commit && !busy_f;
        ev_ovf_reg  <= crc_good && (!commit || busy_f);   // busy, or discarded whole
    end
    if (commit) begin
        cm <= wr;
    end
    if (drop_len || timeout) begin
        ev_frame_reg <= 1'b1;
        ph           <= P_HUNT;
    end
    if (rollback) begin
        wr <= cm;
    end

    // frames held: committed, not yet taken
    if (commit) begin
        n_cm <= {n_cm[HL_W-2:0], ^(n_cm & HL_TAPS)};
    end
    if (desc_pop) begin
        n_tk <= {n_tk[HL_W-2:0], ^(n_tk & HL_TAPS)};
        n_tf <= {n_tf[HL_W-2:0], ^(n_tf & HL_TAPS)};
    end

    // read side
    if (fetch) begin
        rd <= rd + 1'b1;
    end
    hcap <= fetch_h;
    if (fetch_h) begin
        hcnt <= hcnt + 1'b1;
    end
    if (hcap && hcnt == 3'd5) begin
        d_valid <= 1'b1;
    end
    if (desc_pop) begin
        d_valid <= 1'b0;
        hcnt    <= 3'd0;
    end
    if (fetch_p) begin
        out_valid <= 1'b1;
    end else if (m_axis_tready) begin
        out_valid <= 1'b0;
    end

    if (rst) begin
        ph           <= P_HUNT;
        wr           <= {PW{1'b0}};
        cm           <= {PW{1'b0}};
        rd           <= {PW{1'b0}};
        n_cm         <= HL_SEED;
        n_tk         <= HL_SEED;
        n_tf         <= HL_FULL;
        idle_cnt     <= IDLE_SEED;
        hcnt         <= 3'd0;
        hcap         <= 1'b0;
        d_valid      <= 1'b0;
        out_valid    <= 1'b0;
        ev_good_reg  <= 1'b0;
        ev_crc_reg   <= 1'b0;
        ev_frame_reg <= 1'b0;
        ev_ovf_reg   <= 1'b0;
    end
end

endmodule

`default_nettype wire
