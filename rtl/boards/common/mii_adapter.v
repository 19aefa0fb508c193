`default_nettype none
/*
 * mii_adapter - 100 Mb/s MII PHY <-> the byte (GMII-style) interface of
 *               board_top, with one byte strobe eth_clk_en for both MACs
 *
 *   PHY rx_clk domain: nibbles -> bytes (low nibble first, aligned to the
 *       rising edge of rx_dv) -> rx FIFO. Only frame bytes are queued, and
 *       one end marker (dv = 0) after each frame; an odd trailing
 *       (dribble) nibble is dropped. rx_er anywhere in a byte marks it.
 *   clk domain: eth_clk_en is raised at most every second clock, when the
 *       tx FIFO has room for the byte eth_mac_tx will emit and a receive
 *       byte can be presented: the rx FIFO head, or an idle byte (dv = 0)
 *       when the receiver is between frames. A receive frame that arrives
 *       slower than it is consumed stalls the strobe instead of being cut.
 *       The byte eth_mac_tx emits after each strobe (its outputs change in
 *       the clock after clk_en) goes into the tx FIFO, idle bytes included:
 *       the tx FIFO stays nearly full, so the PHY's tx_clk paces both MACs
 *       at the wire rate and a few stalled strobes never starve a frame.
 *   PHY tx_clk domain: one FIFO byte every two tx_clk cycles, low nibble
 *       first; tx_en low while the FIFO is empty.
 *
 * The two PHY clocks and clk are unrelated; each crossing is a
 * brd_cdc_fifo. clk must be faster than 2 x 12.5 MHz (the strobe is at
 * most clk/2 and must keep up with the 12.5 MB/s wire rate).
 *
 * Parameters:
 *   AW       log2 of each FIFO's depth (3: 8 bytes)
 *
 * Ports:
 *   clk                                   board clock (board_top's clk)
 *   mii_rx_clk, mii_rxd, mii_rx_dv, mii_rx_er     from the PHY
 *   mii_tx_clk                            from the PHY (25 MHz at 100 Mb/s)
 *   mii_txd, mii_tx_en, mii_tx_er         to the PHY (registered in tx_clk)
 *   eth_clk_en                            byte strobe for board_top
 *   gmii_rxd, gmii_rx_dv, gmii_rx_er      receive byte, valid with eth_clk_en
 *   gmii_txd, gmii_tx_en, gmii_tx_er      board_top's transmit byte
 *
 * No reset: the FIFOs and both nibble phases start from their power-up
 * state. board_top's MACs ignore a burst that is in progress when their
 * reset ends, so bytes queued while board_top is in reset are harmless.
 */
module mii_adapter #(
    parameter AW = 3
) (
    input  wire       clk,

    input  wire       mii_rx_clk,
    input  wire [3:0] mii_rxd,
    input  wire       mii_rx_dv,
    input  wire       mii_rx_er,
    input  wire       mii_tx_clk,
    output reg  [3:0] mii_txd,
    output reg        mii_tx_en,
    output reg        mii_tx_er,

    output wire       eth_clk_en,
    output wire [7:0] gmii_rxd,
    output wire       gmii_rx_dv,
    output wire       gmii_rx_er,
    input  wire [7:0] gmii_txd,
    input  wire       gmii_tx_en,
    input  wire       gmii_tx_er
);

// ------------------------------------------------------------ rx_clk domain
reg  [3:0] rxd_q = 4'd0;
reg        rxdv_q = 1'b0;
reg        rxer_q = 1'b0;
reg        rx_in = 1'b0;        // previous nibble was inside a frame
reg        rx_odd = 1'b0;       // low nibble held
reg  [3:0] rx_lo = 4'd0;
reg        rx_lo_er = 1'b0;
reg        rx_push = 1'b0;
reg  [9:0] rx_word = 10'd0;     // {er, dv, byte}
wire       rx_full;
wire [AW:0] rx_free_unused;

always @(posedge mii_rx_clk) begin
    rxd_q   <= mii_rxd;
    rxdv_q  <= mii_rx_dv;
    rxer_q  <= mii_rx_er;
    rx_push <= 1'b0;
    rx_in   <= rxdv_q;
    if (rxdv_q) begin
        if (!rx_odd) begin
            rx_lo    <= rxd_q;
            rx_lo_er <= rxer_q;
            rx_odd   <= 1'b1;
        end else begin
            rx_word <= {rx_lo_er || rxer_q, 1'b1, rxd_q, rx_lo};
            rx_push <= 1'b1;
            rx_odd  <= 1'b0;
        end
    end else begin
        rx_odd <= 1'b0;
        if (rx_in) begin                 // end of frame: one end marker
            rx_word <= 10'd0;
            rx_push <= 1'b1;
        end
    end
end

// ------------------------------------------------------------ clk domain
wire [9:0]  rx_head;
wire        rx_empty;
wire [AW:0] rx_count_unused;
wire [AW:0] tx_free;
wire        tx_full;
reg         en_q = 1'b0;        // eth_clk_en of the previous clock
reg         rx_frame = 1'b0;    // last byte given to the MAC had dv = 1

brd_cdc_fifo #(.W(10), .AW(AW)) u_rx_fifo (
    .wclk(mii_rx_clk), .w_en(rx_push), .w_data(rx_word),
    .w_full(rx_full), .w_free(rx_free_unused),
    .rclk(clk), .r_en(eth_clk_en), .r_data(rx_head),
    .r_empty(rx_empty), .r_count(rx_count_unused)
);

// Strobe: not twice in a row; room for this byte and the one pending from
// the previous strobe; a receive byte (or idle, between frames) to give.
assign eth_clk_en = !en_q && (tx_free >= 2) && (!rx_empty || !rx_frame);
assign gmii_rxd   = rx_empty ? 8'd0 : rx_head[7:0];
assign gmii_rx_dv = !rx_empty && rx_head[8];
assign gmii_rx_er = !rx_empty && rx_head[9];

always @(posedge clk) begin
    en_q <= eth_clk_en;
    if (eth_clk_en)
        rx_frame <= gmii_rx_dv;
end

wire [9:0]  tx_head;
wire        tx_empty;
wire [AW:0] tx_count;
reg         tx_odd = 1'b0;      // tx_clk domain: the high nibble goes next
wire        tx_pop = !tx_odd && !tx_empty;

brd_cdc_fifo #(.W(10), .AW(AW)) u_tx_fifo (
    .wclk(clk), .w_en(en_q), .w_data({gmii_tx_er, gmii_tx_en, gmii_txd}),
    .w_full(tx_full), .w_free(tx_free),
    .rclk(mii_tx_clk), .r_en(tx_pop), .r_data(tx_head),
    .r_empty(tx_empty), .r_count(tx_count)
);

// ------------------------------------------------------------ tx_clk domain
reg [3:0] tx_hi = 4'd0;
reg       tx_hi_en = 1'b0;
reg       tx_hi_er = 1'b0;

initial begin
    mii_txd   = 4'd0;
    mii_tx_en = 1'b0;
    mii_tx_er = 1'b0;
end

always @(posedge mii_tx_clk) begin
    if (tx_odd) begin
        mii_txd   <= tx_hi;
        mii_tx_en <= tx_hi_en;
        mii_tx_er <= tx_hi_er;
        tx_odd    <= 1'b0;
    end else if (!tx_empty) begin
        mii_txd   <= tx_head[3:0];
        mii_tx_en <= tx_head[8];
        mii_tx_er <= tx_head[9];
        tx_hi     <= tx_head[7:4];
        tx_hi_en  <= tx_head[8];
        tx_hi_er  <= tx_head[9];
        tx_odd    <= 1'b1;
    end else begin
        mii_txd   <= 4'd0;
        mii_tx_en <= 1'b0;
        mii_tx_er <= 1'b0;
    end
end

wire unused_ok = &{1'b0, rx_full, rx_free_unused, rx_count_unused, tx_full, tx_count};

endmodule

`default_nettype wire
