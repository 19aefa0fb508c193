`timescale 1ps/1ps
`default_nettype none
/*
 * mii_adapter_tb - Icarus Verilog bench of mii_adapter (run by
 * scripts/synth TestMIIAdapterSim).
 *
 * Three unrelated clocks: the board clock (CLK_PS), the PHY's receive
 * clock (25 MHz) and its transmit clock (25 MHz + TX_PPM). A PHY model
 * sends frames of random bytes as nibbles (low first, RX_DV framing, a
 * 12-byte gap); the bench checks that the board side sees every frame's
 * bytes, in order, once, on eth_clk_en strobes. A MAC model answers
 * eth_clk_en like eth_mac_tx (its byte changes in the clock after the
 * strobe) with frames separated by 12 idle bytes; the bench checks on the
 * MII transmit pins that every frame comes out whole, TX_EN never
 * dropping inside a frame, low nibble first.
 */
module mii_adapter_tb;

parameter integer CLK_PS = 20833;   // 48 MHz
parameter integer TX_PPM = 100;     // TX clock offset from RX, ppm
localparam integer RX_PS = 40000;
localparam integer TX_PS = 40000 + 40000 * TX_PPM / 1000000;
localparam integer NFRAMES = 6;

reg clk = 0, rx_clk = 0, tx_clk = 0;
always #(CLK_PS / 2) clk = !clk;
always #(RX_PS / 2) rx_clk = !rx_clk;
initial begin
    #7000;
    forever #(TX_PS / 2) tx_clk = !tx_clk;
end

reg  [3:0] rxd = 4'd0;
reg        rx_dv = 1'b0, rx_er = 1'b0;
wire [3:0] txd;
wire       tx_en, tx_er;
wire       eth_clk_en;
wire [7:0] gmii_rxd;
wire       gmii_rx_dv, gmii_rx_er;
reg  [7:0] gmii_txd = 8'd0;
reg        gmii_tx_en = 1'b0;

mii_adapter dut (
    .clk(clk),
    .mii_rx_clk(rx_clk), .mii_rxd(rxd), .mii_rx_dv(rx_dv), .mii_rx_er(rx_er),
    .mii_tx_clk(tx_clk), .mii_txd(txd), .mii_tx_en(tx_en), .mii_tx_er(tx_er),
    .eth_clk_en(eth_clk_en),
    .gmii_rxd(gmii_rxd), .gmii_rx_dv(gmii_rx_dv), .gmii_rx_er(gmii_rx_er),
    .gmii_txd(gmii_txd), .gmii_tx_en(gmii_tx_en), .gmii_tx_er(1'b0)
);

// Frame contents: frame f, byte i = hash(f, i); lengths vary.
function automatic [7:0] fbyte(input integer f, input integer i);
    fbyte = (f * 37 + i * 11 + (i >> 3) * 5) & 8'hff;
endfunction
function automatic integer flen(input integer f);
    flen = 64 + (f * 97) % 200;
endfunction

integer errors = 0;

// ------------------------------------------------------------ receive path
integer f, i;
initial begin
    @(posedge rx_clk);
    repeat (50) @(posedge rx_clk);
    for (f = 0; f < NFRAMES; f = f + 1) begin
        for (i = 0; i < flen(f); i = i + 1) begin
            rx_dv <= 1'b1; rxd <= fbyte(f, i) & 4'hf;
            @(posedge rx_clk);
            rxd <= fbyte(f, i) >> 4;
            @(posedge rx_clk);
        end
        rx_dv <= 1'b0; rxd <= 4'd0;
        repeat (24) @(posedge rx_clk);
    end
end

integer rf = 0, ri = 0, rx_frames = 0;
reg     in_rx = 1'b0;
always @(posedge clk) if (eth_clk_en) begin
    if (gmii_rx_er) begin
        errors = errors + 1;
        $display("ERROR rx_er at frame %0d byte %0d", rf, ri);
    end
    if (gmii_rx_dv) begin
        if (gmii_rxd !== fbyte(rf, ri)) begin
            errors = errors + 1;
            if (errors < 5) $display("ERROR rx frame %0d byte %0d: %h, want %h", rf, ri, gmii_rxd, fbyte(rf, ri));
        end
        ri = ri + 1;
        in_rx = 1'b1;
    end else if (in_rx) begin
        if (ri != flen(rf)) begin
            errors = errors + 1;
            $display("ERROR rx frame %0d: %0d bytes, want %0d", rf, ri, flen(rf));
        end
        rf = rf + 1; ri = 0; in_rx = 1'b0; rx_frames = rx_frames + 1;
    end
end

// ------------------------------------------------------------ transmit path
// MAC model: state advances on strobes; its byte shows after the strobe.
integer tf = 0, ti = 0, gap = 40;
always @(posedge clk) if (eth_clk_en) begin
    if (gap > 0) begin
        gap = gap - 1;
        gmii_tx_en <= 1'b0; gmii_txd <= 8'd0;
    end else if (tf < NFRAMES) begin
        gmii_tx_en <= 1'b1; gmii_txd <= fbyte(tf + 100, ti);
        ti = ti + 1;
        if (ti == flen(tf)) begin
            ti = 0; tf = tf + 1; gap = 12;
        end
    end else begin
        gmii_tx_en <= 1'b0; gmii_txd <= 8'd0;
    end
end

integer of = 0, oi = 0, tx_frames = 0;
reg     lo = 1'b1, in_tx = 1'b0;
reg [3:0] low = 4'd0;
always @(posedge tx_clk) begin
    if (tx_en) begin
        in_tx = 1'b1;
        if (lo) begin
            low = txd; lo = 1'b0;
        end else begin
            if ({txd, low} !== fbyte(of + 100, oi)) begin
                errors = errors + 1;
                if (errors < 5) $display("ERROR tx frame %0d byte %0d: %h, want %h", of, oi, {txd, low}, fbyte(of + 100, oi));
            end
            oi = oi + 1; lo = 1'b1;
        end
    end else if (in_tx) begin
        if (oi != flen(of) || !lo) begin
            errors = errors + 1;
            $display("ERROR tx frame %0d: %0d bytes (half byte %b), want %0d", of, oi, !lo, flen(of));
        end
        of = of + 1; oi = 0; lo = 1'b1; in_tx = 1'b0; tx_frames = tx_frames + 1;
    end
end

initial begin
    #120000000;  // 120 us: all frames both ways (about 1150 byte times of 80 ns)
    if (rx_frames != NFRAMES || tx_frames != NFRAMES) begin
        errors = errors + 1;
        $display("ERROR %0d frames received, %0d sent, want %0d each", rx_frames, tx_frames, NFRAMES);
    end
    if (errors == 0) $display("PASS mii_adapter %0d frames each way", NFRAMES);
    else $display("FAIL mii_adapter %0d errors", errors);
    $finish;
end

endmodule

`default_nettype wire
