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
 *     byte prefetched) and the CRC-32 (over type .. payload) computed on
 *     the fly and appended least significant byte first. m_axis_tlast
 *     marks the last CRC byte. One 4-bit sequencer walks the frame: bytes
 *     0..6 of the header, the payload, the 4 CRC bytes.
 *   - CRC_SERIAL = 0: the CRC is rtl/lib/crc32.v, a byte per clock. Once
 *     the first byte is offered, a byte is offered on every clock
 *     (m_axis_tvalid stays high to the end of the frame), so the output can
 *     feed a MAC that cannot wait (eth_mac_tx) directly.
 *   - CRC_SERIAL = 1: the CRC is rtl/lib/crc32_serial.v, stepped 8 clocks
 *     over each byte after it is offered (the CRC bytes: 8 rotations); the
 *     next byte is offered when the byte was taken and its steps are done,
 *     so m_axis_tvalid may drop between the bytes of a frame (at most 9
 *     clocks a byte: nothing lost on a UART, whose byte takes 10 bit
 *     times). About 60 logic cells less; for a board without Ethernet.
 *   - CRC_SERIAL = 2: the rtl/lib/crc32_serial.v register is stepped by
 *     the line's transmitter, one data bit at a time as it goes onto the
 *     line (crc_step, crc_d: uart_tx's bit_step, bit_d; board_top without
 *     Ethernet): no stepping of its own, so bytes are offered as with
 *     CRC_SERIAL = 0. It is initialised when the type byte is taken and
 *     rotated by the CRC bytes' bits; a CRC byte offered follows
 *     ~crc[7:0] until it is taken (m_axis_tdata may change while it
 *     waits), so the consumer must take each byte after the previous
 *     byte's 8 steps and at least 2 clocks after the last of them (uart_tx
 *     takes it as the previous stop bit ends, 2 bit times later). About 13
 *     logic cells less than CRC_SERIAL = 1.
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
 *   CRC_SERIAL  0: byte-wide CRC, a byte per clock (default); 1: bit-serial
 *               CRC, up to 9 clocks a byte (UART only); 2: bit-serial CRC
 *               stepped by the line's transmitter (uart_tx only)
 *
 * Ports:
 *   clk, rst                     clock; synchronous active-high reset of
 *                                the control state (a frame being sent is
 *                                cut off, buffered bytes are forgotten)
 *   crc_step, crc_d              CRC_SERIAL = 2: a data bit going onto the
 *                                line (the 8 of each byte taken, LSB first)
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
 * transfers (CRC_SERIAL = 1: at least 9 clocks each but the SOF's),
 * after which s_axis_tready rises again.
 */
module proto_tx #(
    parameter FRAG_BYTES = 1024,
    parameter CRC_SERIAL = 0
) (
    input  wire        clk,
    input  wire        rst,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire        crc_step,       // CRC_SERIAL = 2 only
    input  wire        crc_d,
    /* verilator lint_on UNUSEDSIGNAL */

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

// sequencer: the next frame byte to offer
localparam [3:0] S_SOF  = 4'd0;    // 1..6: type, flags, seq[2], len[2]
localparam [3:0] S_LENH = 4'd6;
localparam [3:0] S_PAY  = 4'd7;    // every payload byte
localparam [3:0] S_CRC0 = 4'd8;    // 8..11: the CRC, least significant byte first
localparam [3:0] S_CRC3 = 4'd11;
localparam [3:0] S_DONE = 4'd12;   // the last CRC byte is offered

reg          emit = 1'b0;          // 0: fill, 1: emit
reg [3:0]    seq = S_SOF;
reg [NW-1:0] cnt = {NW{1'b0}};     // bytes written: while emitting, the fragment's length
reg [AW-1:0] rc = {AW{1'b0}};      // emit: the next payload byte to fetch
reg          empty;                // it has no payload
reg [6:0]    frag = 7'd0;          // fragment index within the response
reg          more;
reg          filled = 1'b0;        // bytes of an open fragment are buffered
reg          w_en = 1'b0;          // a taken byte is written to the RAM (a clock later)
reg [7:0]    w_data;

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

wire [7:0]   crc_lo;               // the CRC register's byte 0 (not complemented)
wire         crc_busy;             // CRC_SERIAL: steps over the byte offered still to do

wire fill_xfer = !emit && s_axis_tvalid;              // s_axis_tready = !emit
wire wr_byte   = fill_xfer && !s_axis_tuser;
// the fragment's FRAG_BYTES-th byte: its number is cnt + w_en (cnt counts
// the bytes written, a clock after they are taken), so cnt's low AW bits
// are all 1 with no write pending or all 1 but bit 0 with one (cnt stays
// below FRAG_BYTES while filling)
wire close     = fill_xfer && (s_axis_tlast || ((&cnt[AW-1:1]) && (cnt[0] != w_en)));

wire load     = emit && (seq != S_DONE) && !crc_busy && (!out_valid || m_axis_tready);
wire last_out = out_valid && m_axis_tready && out_last;
wire [15:0] len16 = 16'(cnt);

// the byte offered next
reg [7:0] next_byte;
always @* begin
    case (seq)
        4'd0:    next_byte = 8'hA5;
        4'd1:    next_byte = l_type;
        4'd2:    next_byte = {frag, more};
        4'd3:    next_byte = l_seq[7:0];
        4'd4:    next_byte = l_seq[15:8];
        4'd5:    next_byte = len16[7:0];
        4'd6:    next_byte = len16[15:8];
        4'd7:    next_byte = rdata;
        default: next_byte = ~crc_lo;
    endcase
end

assign s_axis_tready = !emit;
assign m_axis_tdata  = out_data;
assign m_axis_tvalid = out_valid;
assign m_axis_tlast  = out_last;
assign m_link        = l_link;
assign m_mac         = l_mac;
assign busy          = emit || filled;
assign frame_sent    = sent_reg;

// payload RAM: write while filling, a clock after the byte is taken (the
// producer's byte goes into a register first, so no combinational path
// runs from it to the RAM), at cnt, which counts the writes (no copy of
// the address) and holds the length while the fragment is sent; registered
// read at rc while emitting, one byte ahead (byte 0 when type is offered,
// after the fragment's last write; byte i+1 when byte i is)
wire          rd_en = load && (seq == 4'd1 || seq == S_PAY);

always @(posedge clk) begin
    w_en   <= wr_byte && !rst;
    w_data <= s_axis_tdata;
    if (w_en) begin
        mem[cnt[AW-1:0]] <= w_data;
    end
    if (rd_en) begin
        rdata <= mem[rc];
    end
end

// ------------------------------------------------------------ CRC
// over type .. payload: initialised when the SOF is offered, every later
// byte stepped in, the CRC bytes rotated out
wire crc_init = load && (seq == S_SOF);
wire crc_rot  = (seq >= S_CRC0);      // the byte being loaded is a CRC byte
generate
    if (CRC_SERIAL >= 2) begin : g_crc_line
        // stepped by the line's transmitter, a data bit at a time as it
        // goes onto the line (crc_step, crc_d; uart_tx's bit_step, bit_d):
        // initialised when the type byte is taken (the SOF's bits are all
        // out, the type's to come), rotated by the CRC bytes' bits (taken
        // at seq 9..11: seq 10..12 while their bits go out). A byte is
        // taken only after the previous one's 8 bits (uart_tx takes it as
        // the previous stop bit ends), so the register holds the CRC of
        // type .. payload when the first CRC byte is taken, and its next
        // byte in crc[7:0] when each further one is: m_axis_tdata shows
        // ~crc[7:0] while a CRC byte is offered
        wire [31:0] crc;
        crc32_serial u_crc (
            .clk(clk), .init(out_valid && m_axis_tready && (seq == 4'd2)), .step(crc_step),
            .rot(seq > S_CRC0 + 4'd1), .d(crc_d), .crc(crc)
        );
        assign crc_lo   = crc[7:0];
        assign crc_busy = 1'b0;
        wire unused_crc = &{1'b0, crc[31:8], crc_rot, crc_init};
    end else if (CRC_SERIAL != 0) begin : g_crc_serial
        reg       stepping = 1'b0;
        reg [2:0] bc = 3'd0;           // bit of out_data stepped in
        reg       rot;                 // out_data is a CRC byte: rotate
        wire [31:0] crc;
        crc32_serial u_crc (
            .clk(clk), .init(crc_init), .step(stepping), .rot(rot),
            .d(out_data[bc]), .crc(crc)
        );
        assign crc_lo = crc[7:0];
        wire unused_crc = &{1'b0, crc[31:8]};
        always @(posedge clk) begin
            if (stepping) begin
                bc <= bc + 1'b1;
                if (bc == 3'd7) begin
                    stepping <= 1'b0;
                end
            end
            if (load && !crc_init) begin
                stepping <= 1'b1;
                bc       <= 3'd0;
                rot      <= crc_rot;
            end
            if (rst) begin
                stepping <= 1'b0;
            end
        end
        assign crc_busy = stepping;
    end else begin : g_crc_byte
        reg  [31:0] r;
        wire [31:0] r_next;
        crc32 u_crc (.crc_in(r), .data_in(next_byte), .crc_out(r_next));
        always @(posedge clk) begin
            if (load) begin
                r <= crc_init ? 32'hFFFFFFFF : crc_rot ? {r[7:0], r[31:8]} : r_next;
            end
        end
        assign crc_lo   = r[7:0];
        assign crc_busy = 1'b0;
    end
endgenerate

// ------------------------------------------------------------ datapath (no reset)
always @(posedge clk) begin
    if (fill_xfer) begin
        more  <= !s_axis_tlast;
        empty <= s_axis_tuser;
    end
    if (close) begin
        l_type <= s_type;
        l_seq  <= s_seq;
        l_link <= s_link;
        l_mac  <= s_mac;
    end
    // CRC_SERIAL = 2: a CRC byte offered (loaded at seq 8..11) follows
    // ~crc_lo until it is taken
    if (load || (CRC_SERIAL >= 2 && seq > S_CRC0)) begin
        out_data <= next_byte;
    end
end

// ------------------------------------------------------------ control
// the counters: an increment and a clear each (the last write may fall in
// emit's first clock; the frame's end clears the count)
always @(posedge clk) begin
    if (w_en) begin
        cnt <= cnt + 1'b1;
    end
    if (rst || last_out) begin
        cnt <= {NW{1'b0}};
    end
    if (rd_en) begin
        rc <= rc + 1'b1;
    end
    if (!emit) begin
        rc <= {AW{1'b0}};
    end
end

always @(posedge clk) begin
    sent_reg <= 1'b0;

    if (emit) begin
        filled <= 1'b0;                // emit covers the closed fragment
    end else begin
        if (wr_byte) begin
            filled <= 1'b1;
        end
        if (close) begin
            emit <= 1'b1;
        end
    end

    if (load) begin
        out_valid <= 1'b1;
        seq       <= seq + 1'b1;
        case (seq)
            S_LENH: begin
                if (empty) begin
                    seq <= S_CRC0;
                end
            end
            S_PAY: begin
                // the last byte is offered when the fetch count reaches
                // the length (AW bits: FRAG_BYTES bytes wrap rc to 0)
                if (rc != cnt[AW-1:0]) begin
                    seq <= S_PAY;
                end
            end
            S_CRC3: begin
                out_last <= 1'b1;
            end
            default: begin
            end
        endcase
    end else if (last_out) begin
        out_valid <= 1'b0;
        out_last  <= 1'b0;
        emit      <= 1'b0;
        seq       <= S_SOF;
        sent_reg  <= 1'b1;
        frag      <= more ? frag + 1'b1 : 7'd0;
    end else if (out_valid && m_axis_tready) begin
        out_valid <= 1'b0;             // taken; the next byte waits for its CRC steps
    end

    if (rst) begin
        emit      <= 1'b0;
        filled    <= 1'b0;
        seq       <= S_SOF;
        frag      <= 7'd0;
        out_valid <= 1'b0;
        out_last  <= 1'b0;
        sent_reg  <= 1'b0;
    end
end

endmodule

`default_nettype wire
