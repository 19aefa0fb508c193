`default_nettype none
/*
 * brd_board - what every device top holds besides its PLL and its LEDs:
 * the power-on reset (brd_por), the Ethernet PHY's MII (mii_adapter, or
 * idle PHY pins on the UART-only board, ETH_ENABLE = 0), board_top and the
 * PHY's reset. rtl/boards/icebreaker/top.v and rtl/boards/hx8k/top.v
 * instantiate it with their own clocks, reset hold and pins.
 *
 *   clk, clk_core  the board shell's clock and, with CORE_CLK = 1, the
 *                  core's (board_top)
 *   hold           brd_por keeps the board in reset while it is high (the
 *                  PLL not locked, a reset button) and for 4096 clocks
 *                  after configuration
 *   rst            the board's reset, for the top's LEDs
 *   led_*          board_top's LED signals
 *
 * The parameters are board_top's (the device tops pass theirs through).
 */
module brd_board #(
    parameter CLK_HZ             = 48000000,
    parameter CLKS_PER_BIT       = 16,
    parameter [47:0] BOARD_MAC   = 48'h02_50_54_4D_00_01,
    parameter UART_FIFO_DEPTH    = 2048,
    parameter ETH_FIFO_DEPTH     = 1024,
    parameter ETH_BUFFER_DEPTH   = 2048,
    parameter FEATURES           = 16,
    parameter BITS               = 8,
    parameter LANES              = 32,
    parameter DEPTH              = 60,
    parameter LANE_W             = 5,
    parameter ADDR_W             = 6,
    parameter K_W                = 8,
    parameter NT                 = 3,
    parameter NC                 = 3,
    parameter KMAX               = 255,
    parameter CLIP_T             = 10,
    parameter SETS_MAX           = 8,
    parameter GEN_VERSION        = 32'h00000100,
    parameter INIT_LOADED        = 0,
    parameter INIT_CRC           = 32'h00000000,
    parameter ETH_ENABLE         = 1,
    parameter CORE_CLK           = 0
) (
    input  wire       clk,
    input  wire       clk_core,
    input  wire       hold,
    output wire       rst,

    input  wire       RX,
    output wire       TX,

    input  wire       ETH_RX_CLK,
    input  wire [3:0] ETH_RXD,
    input  wire       ETH_RX_DV,
    input  wire       ETH_RX_ER,
    input  wire       ETH_TX_CLK,
    output wire [3:0] ETH_TXD,
    output wire       ETH_TX_EN,
    output wire       ETH_TX_ER,
    output wire       ETH_RST_N,

    output wire       led_heartbeat,
    output wire       led_loaded,
    output wire       led_activity,
    output wire       led_error
);

brd_por #(.CYCLES(4096)) u_por (
    .clk(clk), .hold(hold), .rst(rst)
);

wire       eth_clk_en;
wire [7:0] gmii_rxd, gmii_txd;
wire       gmii_rx_dv, gmii_rx_er, gmii_tx_en, gmii_tx_er;
wire       board_idle;

generate
    if (ETH_ENABLE != 0) begin : g_mii
        mii_adapter u_mii (
            .clk(clk),
            .mii_rx_clk(ETH_RX_CLK), .mii_rxd(ETH_RXD), .mii_rx_dv(ETH_RX_DV), .mii_rx_er(ETH_RX_ER),
            .mii_tx_clk(ETH_TX_CLK), .mii_txd(ETH_TXD), .mii_tx_en(ETH_TX_EN), .mii_tx_er(ETH_TX_ER),
            .eth_clk_en(eth_clk_en),
            .gmii_rxd(gmii_rxd), .gmii_rx_dv(gmii_rx_dv), .gmii_rx_er(gmii_rx_er),
            .gmii_txd(gmii_txd), .gmii_tx_en(gmii_tx_en), .gmii_tx_er(gmii_tx_er)
        );
    end else begin : g_no_mii
        // UART only: the PHY pins stay idle.
        assign ETH_TXD    = 4'd0;
        assign ETH_TX_EN  = 1'b0;
        assign ETH_TX_ER  = 1'b0;
        assign eth_clk_en = 1'b0;
        assign gmii_rxd   = 8'd0;
        assign gmii_rx_dv = 1'b0;
        assign gmii_rx_er = 1'b0;
        wire unused_mii = &{1'b0, ETH_RX_CLK, ETH_RXD, ETH_RX_DV, ETH_RX_ER, ETH_TX_CLK,
                            gmii_txd, gmii_tx_en, gmii_tx_er};
    end
endgenerate

board_top #(
    .CLK_HZ(CLK_HZ), .CLKS_PER_BIT(CLKS_PER_BIT), .BOARD_MAC(BOARD_MAC),
    .UART_FIFO_DEPTH(UART_FIFO_DEPTH), .ETH_FIFO_DEPTH(ETH_FIFO_DEPTH),
    .ETH_BUFFER_DEPTH(ETH_BUFFER_DEPTH),
    .FEATURES(FEATURES), .BITS(BITS), .LANES(LANES), .DEPTH(DEPTH),
    .LANE_W(LANE_W), .ADDR_W(ADDR_W), .K_W(K_W), .NT(NT), .NC(NC), .KMAX(KMAX), .CLIP_T(CLIP_T), .SETS_MAX(SETS_MAX),
    .GEN_VERSION(GEN_VERSION), .INIT_LOADED(INIT_LOADED), .INIT_CRC(INIT_CRC),
    .ETH_ENABLE(ETH_ENABLE), .CORE_CLK(CORE_CLK)
) u_board (
    .clk(clk), .rst(rst), .clk_core(clk_core),
    .uart_rxd(RX), .uart_txd(TX),
    .eth_clk_en(eth_clk_en),
    .gmii_rxd(gmii_rxd), .gmii_rx_dv(gmii_rx_dv), .gmii_rx_er(gmii_rx_er),
    .gmii_txd(gmii_txd), .gmii_tx_en(gmii_tx_en), .gmii_tx_er(gmii_tx_er),
    .led_heartbeat(led_heartbeat), .led_loaded(led_loaded),
    .led_activity(led_activity), .led_error(led_error),
    .idle(board_idle)
);

wire unused_ok = &{1'b0, board_idle};

// The PHY is reset with the board (after configuration, and on the
// iCEBreaker by its button; it has its own power-on reset too). Its
// straps select MII and auto-negotiation: there is no MDIO management.
assign ETH_RST_N = !rst;

endmodule

`default_nettype wire
