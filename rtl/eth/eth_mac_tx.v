`default_nettype none
/*
 * eth_mac_tx - byte-wide (GMII-style) Ethernet transmit MAC
 *
 * Sends one frame per input packet: 7 x 0x55 preamble, SFD 0xD5, destination
 * MAC (s_dest_mac), source MAC (local_mac), EtherType (s_ethertype), the
 * payload bytes up to and including the one with s_axis_tlast, zero padding
 * up to 60 bytes (destination..padding, i.e. a 46-byte minimum payload), the
 * FCS (CRC-32, least significant byte first), then an inter-frame gap of 12
 * byte times with gmii_tx_en low. Padding is not removed by the receiver, so
 * the payload must carry its own length at protocol level.
 *
 * Input rules:
 *   - s_dest_mac and s_ethertype are side-band signals of the packet: they
 *     are read while the header is sent, which is before the first payload
 *     byte is accepted, so the valid/ready rule (everything stable while
 *     tvalid is high and no transfer happened) keeps them valid.
 *   - The wire cannot wait: once the payload has started, a byte must be
 *     available on every enabled clock. Feed the MAC from a FIFO that holds
 *     the whole packet before it is started (store and forward). On an
 *     underflow (s_axis_tvalid low during the payload) the MAC sends one byte
 *     with gmii_tx_er high, ends the frame (the receiver drops it), pulses
 *     underflow, discards the rest of the packet up to s_axis_tlast and then
 *     keeps the inter-frame gap.
 *   - s_axis_tready is high only in the payload phase on clk_en clocks (and
 *     while discarding after an underflow).
 *
 * 100 Mb/s MII: assert clk_en for one clk per byte time (every second
 * 25 MHz clock) and split each gmii_txd byte into two nibbles, low nibble
 * first, in the clock after clk_en and the one after that. The outputs only
 * change on clocks following a clk_en. With GMII at 125 MHz tie clk_en high.
 *
 * Parameters: none (IFG 12 byte times, 7-byte preamble, 60-byte minimum).
 *
 * Ports:
 *   clk, rst                clock; synchronous active-high reset (control
 *                           only); a frame in progress is cut off at once
 *   clk_en                  byte strobe (tie high for GMII)
 *   local_mac [47:0]        source address (quasi-static)
 *   s_dest_mac [47:0], s_ethertype [15:0]   per-packet header side band
 *   s_axis_tdata/tvalid/tready/tlast        payload stream
 *   gmii_txd, gmii_tx_en, gmii_tx_er        registered byte outputs
 *   busy                    a frame or its inter-frame gap is in progress
 *   underflow               1-cycle pulse: payload underflow, frame aborted
 *
 * Latency: the first preamble byte is on gmii_txd one clock after the first
 * clk_en clock that sees s_axis_tvalid (when idle); the first payload byte is
 * accepted 22 byte times later. Back-to-back packets are sent with exactly
 * 12 idle byte times between frames.
 *
 * Timing: standalone on HX8K, nextpnr reaches about 110 MHz (payload byte ->
 * CRC -> CRC register).
 */
module eth_mac_tx (
    input  wire        clk,
    input  wire        rst,
    input  wire        clk_en,

    input  wire [47:0] local_mac,

    input  wire [47:0] s_dest_mac,
    input  wire [15:0] s_ethertype,
    input  wire [7:0]  s_axis_tdata,
    input  wire        s_axis_tvalid,
    output wire        s_axis_tready,
    input  wire        s_axis_tlast,

    output wire [7:0]  gmii_txd,
    output wire        gmii_tx_en,
    output wire        gmii_tx_er,

    output wire        busy,
    output wire        underflow
);

localparam [2:0] ST_IDLE  = 3'd0;
localparam [2:0] ST_PRE   = 3'd1;  // preamble bytes 1..6 and SFD
localparam [2:0] ST_HDR   = 3'd2;  // 14 header bytes
localparam [2:0] ST_PAY   = 3'd3;  // payload
localparam [2:0] ST_PAD   = 3'd4;  // zero padding
localparam [2:0] ST_FCS   = 3'd5;  // 4 FCS bytes
localparam [2:0] ST_IFG   = 3'd6;  // 12 idle byte times
localparam [2:0] ST_DRAIN = 3'd7;  // after underflow: discard up to tlast

reg [2:0]  state = ST_IDLE;
reg [3:0]  cnt = 4'd0;             // byte index within a state
reg [5:0]  len = 6'd0;             // bytes dst..payload so far, saturates at 60
reg [31:0] crc;
reg [7:0]  txd_reg;
reg        tx_en_reg = 1'b0;
reg        tx_er_reg = 1'b0;
reg        underflow_reg = 1'b0;

// header byte for position cnt (0..13)
reg [7:0] hdr_byte;
always @* begin
    case (cnt)
        4'd0:    hdr_byte = s_dest_mac[47:40];
        4'd1:    hdr_byte = s_dest_mac[39:32];
        4'd2:    hdr_byte = s_dest_mac[31:24];
        4'd3:    hdr_byte = s_dest_mac[23:16];
        4'd4:    hdr_byte = s_dest_mac[15:8];
        4'd5:    hdr_byte = s_dest_mac[7:0];
        4'd6:    hdr_byte = local_mac[47:40];
        4'd7:    hdr_byte = local_mac[39:32];
        4'd8:    hdr_byte = local_mac[31:24];
        4'd9:    hdr_byte = local_mac[23:16];
        4'd10:   hdr_byte = local_mac[15:8];
        4'd11:   hdr_byte = local_mac[7:0];
        4'd12:   hdr_byte = s_ethertype[15:8];
        default: hdr_byte = s_ethertype[7:0];
    endcase
end

// FCS byte cnt (0..3), least significant first
reg [7:0] fcs_byte;
always @* begin
    case (cnt[1:0])
        2'd0:    fcs_byte = ~crc[7:0];
        2'd1:    fcs_byte = ~crc[15:8];
        2'd2:    fcs_byte = ~crc[23:16];
        default: fcs_byte = ~crc[31:24];
    endcase
end

// the byte sent on the next enabled clock; the CRC covers it in the header,
// payload and padding states (one shared multiplexer for both)
reg [7:0] tx_byte;
always @* begin
    case (state)
        ST_PRE:  tx_byte = (cnt == 4'd7) ? 8'hD5 : 8'h55;
        ST_HDR:  tx_byte = hdr_byte;
        ST_PAY:  tx_byte = s_axis_tvalid ? s_axis_tdata : 8'h00;
        ST_FCS:  tx_byte = fcs_byte;
        ST_IDLE: tx_byte = 8'h55;
        default: tx_byte = 8'h00;   // padding, underflow byte
    endcase
end

wire [31:0] crc_next;
crc32 crc_inst (
    .crc_in(crc),
    .data_in(tx_byte),
    .crc_out(crc_next)
);

wire       len_next_short = (len < 6'd59);   // after this byte, still < 60
wire [5:0] len_inc = (len == 6'd60) ? len : len + 1'b1;

assign s_axis_tready = ((state == ST_PAY) && clk_en) || (state == ST_DRAIN);
assign gmii_txd      = txd_reg;
assign gmii_tx_en    = tx_en_reg;
assign gmii_tx_er    = tx_er_reg;
assign busy          = (state != ST_IDLE);
assign underflow     = underflow_reg;

always @(posedge clk) begin
    underflow_reg <= 1'b0;

    if (clk_en) begin
        tx_er_reg <= 1'b0;
        txd_reg   <= tx_byte;
        case (state)
            ST_IDLE: begin
                tx_en_reg <= 1'b0;
                cnt       <= 4'd1;
                if (s_axis_tvalid) begin
                    tx_en_reg <= 1'b1;
                    state     <= ST_PRE;
                end
            end
            ST_PRE: begin
                cnt     <= cnt + 1'b1;
                crc     <= 32'hFFFFFFFF;
                len     <= 6'd0;
                if (cnt == 4'd7) begin
                    cnt   <= 4'd0;
                    state <= ST_HDR;
                end
            end
            ST_HDR: begin
                crc     <= crc_next;
                len     <= len_inc;
                cnt     <= cnt + 1'b1;
                if (cnt == 4'd13) begin
                    state <= ST_PAY;
                end
            end
            ST_PAY: begin
                if (s_axis_tvalid) begin
                    crc     <= crc_next;
                    len     <= len_inc;
                    if (s_axis_tlast) begin
                        state <= len_next_short ? ST_PAD : ST_FCS;
                        cnt   <= 4'd0;
                    end
                end else begin
                    // underflow: poison the frame and end it
                    tx_er_reg     <= 1'b1;
                    underflow_reg <= 1'b1;
                    state         <= ST_DRAIN;
                end
            end
            ST_PAD: begin
                crc     <= crc_next;
                len     <= len_inc;
                if (!len_next_short) begin
                    state <= ST_FCS;
                end
            end
            ST_FCS: begin
                cnt     <= cnt + 1'b1;
                if (cnt == 4'd3) begin
                    cnt   <= 4'd0;
                    state <= ST_IFG;
                end
            end
            ST_IFG: begin
                tx_en_reg <= 1'b0;
                cnt       <= cnt + 1'b1;
                if (cnt == 4'd11) begin
                    state <= ST_IDLE;
                end
            end
            default: begin // ST_DRAIN
                tx_en_reg <= 1'b0;
                cnt       <= 4'd0;
            end
        endcase
    end

    // discarding after an underflow runs at full clock rate
    if (state == ST_DRAIN && s_axis_tvalid && s_axis_tlast) begin
        state <= ST_IFG;
        cnt   <= 4'd0;
    end

    if (rst) begin
        state         <= ST_IDLE;
        tx_en_reg     <= 1'b0;
        tx_er_reg     <= 1'b0;
        underflow_reg <= 1'b0;
    end
end

endmodule

`default_nettype wire
