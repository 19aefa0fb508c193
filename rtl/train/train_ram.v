`default_nettype none
/*
 * train_ram - single-port 16-bit RAM of SPV words or include masses
 *
 * Holds the 2N-word SPVs of the TAs of one literal lane
 * (docs/fixed-point-training.md section 11: lane k holds literals i with
 * i mod LL = k, TA (c, i) at word ((c*G + i div LL)*2N + n)). One access
 * per cycle, read or write, read data registered (available the cycle
 * after the address), held while the RAM is not selected and undefined
 * (X) after a write: the behaviour of the UP5K's SB_SPRAM256KA (16K x 16
 * bit, yosys's cells_sim.v), so a simulation with --x-assign unique
 * catches any use of read data across a write.
 *
 * With USE_SPRAM = 1 and the macro ICE40 defined (the synthesis flow), the
 * RAM is one SB_SPRAM256KA (DEPTH <= 16384); otherwise it is a plain
 * register array, which Verilator simulates and yosys may map to EBR.
 *
 * Parameters:
 *   DEPTH      words (>= 2)
 *   AW         address width (>= clog2(DEPTH))
 *   USE_SPRAM  1: SB_SPRAM256KA under `ifdef ICE40
 *
 * Ports:
 *   clk        clock
 *   en         access this cycle
 *   we         write (with en); otherwise read
 *   addr       word address
 *   wdata      write data
 *   rdata      read data of the last read, one cycle after it
 */
module train_ram #(
    parameter DEPTH     = 64,
    parameter AW        = 6,
    parameter USE_SPRAM = 0
) (
    input  wire          clk,
    input  wire          en,
    input  wire          we,
    input  wire [AW-1:0] addr,
    input  wire [15:0]   wdata,
    output wire [15:0]   rdata
);
`ifdef ICE40
    generate
        if (USE_SPRAM != 0) begin : g_spram
            wire [13:0] a14 = 14'(addr);
            SB_SPRAM256KA spram (
                .ADDRESS(a14), .DATAIN(wdata), .MASKWREN(4'b1111),
                .WREN(we), .CHIPSELECT(en), .CLOCK(clk),
                .STANDBY(1'b0), .SLEEP(1'b0), .POWEROFF(1'b1),
                .DATAOUT(rdata)
            );
        end else begin : g_regs
            reg [15:0] mem [0:DEPTH-1];
            reg [15:0] q;
            always @(posedge clk) begin
                if (en) begin
                    if (we) begin
                        mem[addr] <= wdata;
                        q <= 16'bx;
                    end else begin
                        q <= mem[addr];
                    end
                end
            end
            assign rdata = q;
        end
    endgenerate
`else
    /* verilator lint_off UNUSEDPARAM */
    localparam SPRAM_UNUSED = USE_SPRAM;
    /* verilator lint_on UNUSEDPARAM */
    reg [15:0] mem [0:DEPTH-1];
    reg [15:0] q;
    always @(posedge clk) begin
        if (en) begin
            if (we) begin
                mem[addr] <= wdata;
                q <= 16'bx;
            end else begin
                q <= mem[addr];
            end
        end
    end
    assign rdata = q;
`endif
endmodule
`default_nettype wire
