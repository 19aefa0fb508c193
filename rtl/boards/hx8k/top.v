`default_nettype none
/*
 * top - PTM inference board on the iCE40-HX8K breakout board
 *       (iCE40HX8K-CT256)
 *
 *   12 MHz (J3, global buffer pin) -> SB_PLL40_CORE -> clk (CLK_HZ, 48 MHz
 *       by default)
 *   with CORE_CLK = 1: 12 MHz (J3) -> SB_PLL40_2F_CORE -> clk_core (port A,
 *       GENCLK: the PLL's output, 2 x CLK_HZ) for the inference core and
 *       clk (port B, GENCLK_HALF: CLK_HZ) for the board shell
 *   FTDI channel B UART: RX B10 (into the FPGA), TX B12, 8N1 at
 *       CLK_HZ / CLKS_PER_BIT (3 Mbaud at 48 MHz)
 *   Ethernet: a 10/100 PHY in MII mode on the header by bank 1
 *       (rtl/boards/README.md and hx8k.pcf give the pin out), through
 *       mii_adapter
 *   LEDs D2..D9 (active high) LED[0..7]: heartbeat, model loaded,
 *       activity, error, PLL locked, in reset, off, off
 *   Reset: brd_por holds board_top in reset after configuration and while
 *       the PLL is not locked (the board has no user button)
 *
 * core_top.v beside this file is the core alone on the same clock (ptm
 * synth --core-only).
 *
 * Parameters: the PLL (DIVR, DIVF, DIVQ, FILTER_RANGE from icepll for
 * CLK_HZ, or for 2 x CLK_HZ with CORE_CLK = 1; the defaults give 48 MHz
 * from 12 MHz), CLK_HZ and CLKS_PER_BIT (board_top), CORE_CLK (board_top:
 * 0 one clock, 1 the core on its own clock at twice CLK_HZ; board_top's
 * core_xing synchronises the reset into the core's clock), board_top's
 * core parameters, which must match the
 * generated core (scripts/synth sets all of them), and ETH_ENABLE (0: the
 * UART-only board, without mii_adapter and board_top's Ethernet path; the
 * PHY pins stay idle) and SETS_MAX (board_top: the most sets of an INFER
 * query).
 */
module top #(
    parameter [3:0] DIVR         = 4'd0,
    parameter [6:0] DIVF         = 7'd63,
    parameter [2:0] DIVQ         = 3'd4,
    parameter [2:0] FILTER_RANGE = 3'd1,
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
    input  wire       CLK,
    input  wire       RX,
    output wire       TX,
    output wire [7:0] LED,

    input  wire       ETH_RX_CLK,
    input  wire [3:0] ETH_RXD,
    input  wire       ETH_RX_DV,
    input  wire       ETH_RX_ER,
    input  wire       ETH_TX_CLK,
    output wire [3:0] ETH_TXD,
    output wire       ETH_TX_EN,
    output wire       ETH_TX_ER,
    output wire       ETH_RST_N
);

// ------------------------------------------------------------ clock, reset
wire clk, clk_core, pll_lock, pll_core_unused, pll_sdo_unused;

generate
    if (CORE_CLK == 0) begin : g_pll
        SB_PLL40_CORE #(
            .FEEDBACK_PATH("SIMPLE"),
            .DIVR(DIVR),
            .DIVF(DIVF),
            .DIVQ(DIVQ),
            .FILTER_RANGE(FILTER_RANGE)
        ) u_pll (
            .REFERENCECLK(CLK),
            .PLLOUTCORE(pll_core_unused),
            .PLLOUTGLOBAL(clk),
            .EXTFEEDBACK(1'b0),
            .DYNAMICDELAY(8'd0),
            .LOCK(pll_lock),
            .BYPASS(1'b0),
            .RESETB(1'b1),
            .LATCHINPUTVALUE(1'b0),
            .SDO(pll_sdo_unused),
            .SDI(1'b0),
            .SCLK(1'b0)
        );
        assign clk_core = 1'b0;
    end else begin : g_pll2
        // port A: the PLL's clock for the core; port B: half of it for the
        // shell (both on global buffers)
        wire core_a_unused, core_b_unused;
        SB_PLL40_2F_CORE #(
            .FEEDBACK_PATH("SIMPLE"),
            .PLLOUT_SELECT_PORTA("GENCLK"),
            .PLLOUT_SELECT_PORTB("GENCLK_HALF"),
            .DIVR(DIVR),
            .DIVF(DIVF),
            .DIVQ(DIVQ),
            .FILTER_RANGE(FILTER_RANGE)
        ) u_pll (
            .REFERENCECLK(CLK),
            .PLLOUTCOREA(core_a_unused),
            .PLLOUTGLOBALA(clk_core),
            .PLLOUTCOREB(core_b_unused),
            .PLLOUTGLOBALB(clk),
            .EXTFEEDBACK(1'b0),
            .DYNAMICDELAY(8'd0),
            .LOCK(pll_lock),
            .BYPASS(1'b0),
            .RESETB(1'b1),
            .LATCHINPUTVALUE(1'b0),
            .SDO(pll_sdo_unused),
            .SDI(1'b0),
            .SCLK(1'b0)
        );
        assign pll_core_unused = core_a_unused ^ core_b_unused;
    end
endgenerate

// reset, MII, board_top, PHY reset: rtl/boards/common/brd_board.v
wire rst;
wire led_heartbeat, led_loaded, led_activity, led_error;

brd_board #(
    .CLK_HZ(CLK_HZ), .CLKS_PER_BIT(CLKS_PER_BIT), .BOARD_MAC(BOARD_MAC),
    .UART_FIFO_DEPTH(UART_FIFO_DEPTH), .ETH_FIFO_DEPTH(ETH_FIFO_DEPTH),
    .ETH_BUFFER_DEPTH(ETH_BUFFER_DEPTH),
    .FEATURES(FEATURES), .BITS(BITS), .LANES(LANES), .DEPTH(DEPTH),
    .LANE_W(LANE_W), .ADDR_W(ADDR_W), .K_W(K_W), .NT(NT), .NC(NC), .KMAX(KMAX), .CLIP_T(CLIP_T), .SETS_MAX(SETS_MAX),
    .GEN_VERSION(GEN_VERSION), .INIT_LOADED(INIT_LOADED), .INIT_CRC(INIT_CRC),
    .ETH_ENABLE(ETH_ENABLE), .CORE_CLK(CORE_CLK)
) u_brd (
    .clk(clk), .clk_core(clk_core), .hold(!pll_lock), .rst(rst),
    .RX(RX), .TX(TX),
    .ETH_RX_CLK(ETH_RX_CLK), .ETH_RXD(ETH_RXD), .ETH_RX_DV(ETH_RX_DV), .ETH_RX_ER(ETH_RX_ER),
    .ETH_TX_CLK(ETH_TX_CLK), .ETH_TXD(ETH_TXD), .ETH_TX_EN(ETH_TX_EN), .ETH_TX_ER(ETH_TX_ER),
    .ETH_RST_N(ETH_RST_N),
    .led_heartbeat(led_heartbeat), .led_loaded(led_loaded),
    .led_activity(led_activity), .led_error(led_error)
);

wire unused_ok = &{1'b0, pll_core_unused, pll_sdo_unused};

assign LED = {2'b00, rst, pll_lock, led_error, led_activity, led_loaded, led_heartbeat};

endmodule

`default_nettype wire
