`default_nettype none
/*
 * eth_mac_rx - byte-wide (GMII-style) Ethernet receive MAC with FCS check,
 *              MAC/EtherType filter and a store-and-forward frame buffer
 *
 * Receive path (one byte per enabled clock):
 *   1. gmii_rxd/gmii_rx_dv/gmii_rx_er are registered when clk_en is high.
 *   2. Preamble: any number (0..n) of 0x55 bytes followed by the SFD 0xD5
 *      starts a frame; any other byte before the SFD makes the burst a frame
 *      error. The frame runs while gmii_rx_dv stays high.
 *   3. Every frame byte (destination .. FCS) goes through crc32; the FCS is
 *      good when the state after the last byte equals the CRC-32 residue
 *      32'hDEBB20E3 (no need to locate the FCS in advance).
 *   4. Destination MAC must equal local_mac (byte 0 = local_mac[47:40], the
 *      first byte on the wire) or ff:ff:ff:ff:ff:ff. EtherType must equal the
 *      ETHERTYPE parameter.
 *   5. The source MAC (6 bytes) and the payload (everything between the
 *      EtherType and the FCS, including any padding: the MAC does not know
 *      the protocol's length) are written into a block-RAM frame buffer
 *      through a 5-byte delay line, so the 4 FCS bytes are never written and
 *      the last payload byte can be tagged with tlast when gmii_rx_dv falls.
 *   6. Because the FCS is only known at the end, the buffer has a write
 *      pointer and a committed pointer. At the end of a frame it is either
 *      committed (good frame: becomes visible to the output) or rolled back
 *      (any error: the frame disappears entirely). Bad frames never reach
 *      the output.
 *
 * Exactly one status pulse (one clk wide) is given per gmii_rx_dv burst, at
 * its end, in this priority order:
 *   frame_error  gmii_rx_er during the frame, no/bad preamble or SFD, runt
 *                (destination..FCS shorter than 64 bytes) or too long
 *                (longer than MAX_FRAME bytes)
 *   crc_error    FCS mismatch
 *   rx_filtered  destination MAC or EtherType not accepted
 *   rx_overflow  the frame did not fit in the free buffer space (the
 *                consumer is too slow); also counted in overflow_count
 *   rx_good      frame committed to the output
 * A burst that is in progress when rst is released is ignored silently.
 *
 * Output: the payload bytes of each good frame as a valid/ready stream with
 * m_axis_tlast on the last byte; m_src_mac holds the frame's source MAC and
 * is stable while m_axis_tvalid is high (it changes only between frames).
 * Each stored frame costs 6 + payload buffer bytes; BUFFER_DEPTH must be at
 * least MAX_FRAME - 12 (one maximum frame), and 2048 holds one full-size
 * frame plus change, in 5 SB_RAM40_4K (9-bit words: data + last flag).
 *
 * 100 Mb/s MII: put a nibble-to-byte gearbox in front (low nibble first) and
 * assert clk_en for one clk per assembled byte (every second 25 MHz clock).
 * All receive processing advances only on clk_en cycles; the output side runs
 * at full clk rate regardless. With GMII at 125 MHz, tie clk_en high.
 *
 * Parameters:
 *   ETHERTYPE     accepted EtherType (default 16'h88B5, IEEE local experimental)
 *   MAX_FRAME     longest accepted frame, destination..FCS, bytes (1518)
 *   BUFFER_DEPTH  frame buffer words, power of two (2048)
 *
 * Ports:
 *   clk, rst               clock; synchronous active-high reset (control
 *                          only); empties the frame buffer
 *   clk_en                 byte strobe for the gmii_* inputs (tie high for GMII)
 *   gmii_rxd, gmii_rx_dv, gmii_rx_er   receive byte, data valid, error
 *   local_mac [47:0]       this station's address (quasi-static)
 *   m_axis_tdata/tvalid/tready/tlast   payload stream
 *   m_src_mac [47:0]       source MAC of the frame on m_axis_*
 *   rx_good, crc_error, frame_error, rx_filtered, rx_overflow  status pulses
 *   overflow_count [15:0]  frames dropped for lack of buffer space (wraps)
 *
 * Latency: the status pulse comes 2 clocks after the clk_en clock that sees
 * gmii_rx_dv low; when the output is idle, a good frame's first payload byte
 * is on m_axis_* 7 clocks after rx_good (the 6 source-MAC words are read into
 * m_src_mac first). Output throughput is one byte per clock.
 *
 * Timing: standalone on HX8K, nextpnr reaches about 99 MHz (critical path:
 * read-pointer compare to the output register enable), ample for MII with
 * clk_en at 25 MHz or a 48-60 MHz system clock; 125 MHz GMII on iCE40 would
 * need the output side pipelined.
 */
module eth_mac_rx #(
    parameter [15:0] ETHERTYPE    = 16'h88B5,
    parameter        MAX_FRAME    = 1518,
    parameter        BUFFER_DEPTH = 2048
) (
    input  wire        clk,
    input  wire        rst,
    input  wire        clk_en,

    input  wire [7:0]  gmii_rxd,
    input  wire        gmii_rx_dv,
    input  wire        gmii_rx_er,

    input  wire [47:0] local_mac,

    output wire [7:0]  m_axis_tdata,
    output wire        m_axis_tvalid,
    input  wire        m_axis_tready,
    output wire        m_axis_tlast,
    output wire [47:0] m_src_mac,

    output wire        rx_good,
    output wire        crc_error,
    output wire        frame_error,
    output wire        rx_filtered,
    output wire        rx_overflow,
    output wire [15:0] overflow_count
);

localparam integer ADDR_W = $clog2(BUFFER_DEPTH);
localparam integer LEN_W  = $clog2(MAX_FRAME + 2);
localparam [LEN_W-1:0] LEN_MAX = LEN_W'(MAX_FRAME);
localparam [31:0] RESIDUE = 32'hDEBB20E3;

localparam [2:0] ST_WAIT = 3'd0;   // after reset: ignore the rest of a burst
localparam [2:0] ST_IDLE = 3'd1;
localparam [2:0] ST_PRE  = 3'd2;   // preamble seen, waiting for SFD
localparam [2:0] ST_DATA = 3'd3;   // destination .. FCS
localparam [2:0] ST_BAD  = 3'd4;   // bad preamble: wait for end of burst

// ---------------------------------------------------------------- input regs
reg [7:0] rxd_r;
reg       dv_r = 1'b0;
reg       er_r = 1'b0;
reg       en_r = 1'b0;

always @(posedge clk) begin
    en_r <= clk_en;
    if (clk_en) begin
        rxd_r <= gmii_rxd;
        dv_r  <= gmii_rx_dv;
        er_r  <= gmii_rx_er;
    end
    if (rst) begin
        dv_r <= 1'b0;
        er_r <= 1'b0;
        en_r <= 1'b0;
    end
end

// ---------------------------------------------------------------- frame buffer
reg [8:0]      mem [0:BUFFER_DEPTH-1];
reg [ADDR_W:0] wr_ptr = {(ADDR_W+1){1'b0}};     // next write (uncommitted)
reg [ADDR_W:0] commit_ptr = {(ADDR_W+1){1'b0}}; // end of committed frames
reg [ADDR_W:0] rd_ptr = {(ADDR_W+1){1'b0}};

wire buf_full = (wr_ptr == {~rd_ptr[ADDR_W], rd_ptr[ADDR_W-1:0]});

// ---------------------------------------------------------------- parser
reg [2:0]       state = ST_WAIT;
reg [31:0]      crc;
reg [LEN_W-1:0] len = {LEN_W{1'b0}};  // bytes since SFD (saturates)
reg             f_err = 1'b0;         // gmii_rx_er seen
reg             f_long = 1'b0;        // longer than MAX_FRAME
reg             f_ovf = 1'b0;         // ran out of buffer space
reg             f_local = 1'b0;       // destination == local_mac so far
reg             f_bcast = 1'b0;       // destination == broadcast so far
reg             f_type = 1'b0;        // EtherType matched
reg             f_runt = 1'b0;        // fewer than 64 bytes so far
reg             f_dst = 1'b0;         // current byte is in the destination MAC
reg             f_store = 1'b0;       // current byte goes to the buffer
reg [39:0]      dly_data;             // 5-byte delay line, newest in [7:0]
reg [4:0]       dly_store = 5'd0;     // per-byte store flags (control)

reg             good_reg = 1'b0;
reg             crc_err_reg = 1'b0;
reg             frame_err_reg = 1'b0;
reg             filt_reg = 1'b0;
reg             ovf_reg = 1'b0;
reg [15:0]      ovf_cnt = 16'd0;

wire [31:0] crc_next;
crc32 crc_inst (
    .crc_in(crc),
    .data_in(rxd_r),
    .crc_out(crc_next)
);

// expected destination byte for the current position
reg [7:0] mac_byte;
always @* begin
    case (len[2:0])
        3'd0:    mac_byte = local_mac[47:40];
        3'd1:    mac_byte = local_mac[39:32];
        3'd2:    mac_byte = local_mac[31:24];
        3'd3:    mac_byte = local_mac[23:16];
        3'd4:    mac_byte = local_mac[15:8];
        default: mac_byte = local_mac[7:0];
    endcase
end

// position flags are registers (f_dst, f_store, f_runt) so that no
// magnitude comparator on len sits in the end-of-frame commit path
wire byte_cyc = en_r && dv_r && (state == ST_DATA);
wire end_cyc  = en_r && !dv_r && (state == ST_DATA);

// buffer write: the byte leaving the delay line (last flag at frame end)
wire       mem_we    = (byte_cyc || end_cyc) && dly_store[4] && !f_ovf && !f_long && !buf_full;
wire       write_lost = (byte_cyc || end_cyc) && dly_store[4] && !f_ovf && !f_long && buf_full;
wire [8:0] mem_wdata = {end_cyc, dly_data[39:32]};

wire bad_frame = f_err || f_long || f_runt;
wire bad_crc   = (crc != RESIDUE);
wire filtered  = !(f_local || f_bcast) || !f_type;
wire overflow  = f_ovf || write_lost;

always @(posedge clk) begin
    if (mem_we) begin
        mem[wr_ptr[ADDR_W-1:0]] <= mem_wdata;
    end
end

always @(posedge clk) begin
    good_reg      <= 1'b0;
    crc_err_reg   <= 1'b0;
    frame_err_reg <= 1'b0;
    filt_reg      <= 1'b0;
    ovf_reg       <= 1'b0;

    if (mem_we) begin
        wr_ptr <= wr_ptr + 1'b1;
    end
    if (write_lost) begin
        f_ovf <= 1'b1;
    end

    if (en_r) begin
        case (state)
            ST_WAIT: begin
                if (!dv_r) begin
                    state <= ST_IDLE;
                end
            end
            ST_IDLE, ST_PRE: begin
                crc       <= 32'hFFFFFFFF;
                len       <= {LEN_W{1'b0}};
                // gmii_rx_er anywhere in the burst (preamble included)
                f_err     <= (state == ST_PRE) ? (f_err || er_r) : (dv_r && er_r);
                f_long    <= 1'b0;
                f_ovf     <= 1'b0;
                f_local   <= 1'b1;
                f_bcast   <= 1'b1;
                f_type    <= 1'b0;
                f_runt    <= 1'b1;
                f_dst     <= 1'b1;
                f_store   <= 1'b0;
                dly_store <= 5'd0;
                if (dv_r) begin
                    if (rxd_r == 8'hD5) begin
                        state <= ST_DATA;
                    end else if (rxd_r == 8'h55) begin
                        state <= ST_PRE;
                    end else begin
                        state <= ST_BAD;
                    end
                end else if (state == ST_PRE) begin
                    state <= ST_IDLE;           // preamble only
                    frame_err_reg <= 1'b1;
                end
            end
            ST_DATA: begin
                if (dv_r) begin
                    crc <= crc_next;
                    if (len != LEN_MAX + 1'b1) begin
                        len <= len + 1'b1;
                    end
                    if (len == LEN_MAX) begin
                        f_long <= 1'b1;
                    end
                    if (er_r) begin
                        f_err <= 1'b1;
                    end
                    if (len == LEN_W'(63)) f_runt  <= 1'b0;
                    if (len == LEN_W'(5))  f_dst   <= 1'b0;
                    if (len == LEN_W'(5))  f_store <= 1'b1;   // source MAC
                    if (len == LEN_W'(11)) f_store <= 1'b0;   // EtherType
                    if (len == LEN_W'(13)) f_store <= 1'b1;   // payload
                    if (f_dst) begin
                        if (rxd_r != mac_byte) f_local <= 1'b0;
                        if (rxd_r != 8'hFF)    f_bcast <= 1'b0;
                    end
                    if (len == LEN_W'(12)) begin
                        f_type <= (rxd_r == ETHERTYPE[15:8]);
                    end
                    if (len == LEN_W'(13)) begin
                        f_type <= f_type && (rxd_r == ETHERTYPE[7:0]);
                    end
                    dly_store <= {dly_store[3:0], f_store};
                end else begin
                    // end of frame: classify, then commit or roll back
                    state <= ST_IDLE;
                    if (bad_frame) begin
                        frame_err_reg <= 1'b1;
                    end else if (bad_crc) begin
                        crc_err_reg <= 1'b1;
                    end else if (filtered) begin
                        filt_reg <= 1'b1;
                    end else if (overflow) begin
                        ovf_reg <= 1'b1;
                        ovf_cnt <= ovf_cnt + 1'b1;
                    end else begin
                        good_reg <= 1'b1;
                    end
                    if (!bad_frame && !bad_crc && !filtered && !overflow) begin
                        commit_ptr <= wr_ptr + 1'b1;     // includes the last byte
                        wr_ptr     <= wr_ptr + 1'b1;
                    end else begin
                        wr_ptr     <= commit_ptr;
                    end
                end
            end
            default: begin // ST_BAD
                if (!dv_r) begin
                    state <= ST_IDLE;
                    frame_err_reg <= 1'b1;
                end
            end
        endcase
    end

    if (rst) begin
        state         <= ST_WAIT;
        wr_ptr        <= {(ADDR_W+1){1'b0}};
        commit_ptr    <= {(ADDR_W+1){1'b0}};
        dly_store     <= 5'd0;
        f_ovf         <= 1'b0;
        good_reg      <= 1'b0;
        crc_err_reg   <= 1'b0;
        frame_err_reg <= 1'b0;
        filt_reg      <= 1'b0;
        ovf_reg       <= 1'b0;
        ovf_cnt       <= 16'd0;
    end
end

// delay line data (no reset)
always @(posedge clk) begin
    if (byte_cyc) begin
        dly_data <= {dly_data[31:0], rxd_r};
    end
end

// ---------------------------------------------------------------- output side
reg [8:0]  out_word;
reg        out_valid = 1'b0;
reg [2:0]  hdr_cnt = 3'd0;           // source MAC bytes taken (6 = payload)
reg [47:0] src_mac;

wire in_hdr    = (hdr_cnt != 3'd6);
wire out_ready = in_hdr || m_axis_tready;
wire rd_en     = (rd_ptr != commit_ptr) && (!out_valid || out_ready);

assign m_axis_tdata   = out_word[7:0];
assign m_axis_tlast   = out_word[8];
assign m_axis_tvalid  = out_valid && !in_hdr;
assign m_src_mac      = src_mac;
assign rx_good        = good_reg;
assign crc_error      = crc_err_reg;
assign frame_error    = frame_err_reg;
assign rx_filtered    = filt_reg;
assign rx_overflow    = ovf_reg;
assign overflow_count = ovf_cnt;

always @(posedge clk) begin
    if (rd_en) begin
        out_word <= mem[rd_ptr[ADDR_W-1:0]];
    end
end

always @(posedge clk) begin
    if (rd_en) begin
        rd_ptr    <= rd_ptr + 1'b1;
        out_valid <= 1'b1;
    end else if (out_ready) begin
        out_valid <= 1'b0;
    end
    if (out_valid && in_hdr) begin
        src_mac <= {src_mac[39:0], out_word[7:0]};
        hdr_cnt <= hdr_cnt + 1'b1;
    end
    if (out_valid && !in_hdr && m_axis_tready && out_word[8]) begin
        hdr_cnt <= 3'd0;
    end

    if (rst) begin
        rd_ptr    <= {(ADDR_W+1){1'b0}};
        out_valid <= 1'b0;
        hdr_cnt   <= 3'd0;
    end
end

endmodule

`default_nettype wire
