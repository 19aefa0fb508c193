`default_nettype none
/*
 * skid_buffer - 2-entry register slice for a valid/ready stream
 *
 * Breaks every combinational path between the two sides: m_axis_tvalid,
 * m_axis_tdata and s_axis_tready all come straight from flip-flops, and
 * m_axis_tready only feeds flip-flop enables. When the output stalls, the
 * word accepted in the same cycle (s_axis_tready was already high) lands in
 * the skid register; s_axis_tready drops one cycle later. Full throughput:
 * one word per clock when the output is always ready.
 *
 * Parameters:
 *   DATA_WIDTH  width of the data word (pack tlast/tuser into it), >= 1
 *
 * Ports:
 *   clk, rst                     clock; synchronous active-high reset empties
 *                                both entries (valid flags only)
 *   s_axis_tdata/tvalid/tready   input stream (tready registered)
 *   m_axis_tdata/tvalid/tready   output stream (tdata/tvalid registered)
 *
 * Latency: 1 clock (input word visible on the output in the next cycle).
 */
module skid_buffer #(
    parameter DATA_WIDTH = 8
) (
    input  wire                  clk,
    input  wire                  rst,

    input  wire [DATA_WIDTH-1:0] s_axis_tdata,
    input  wire                  s_axis_tvalid,
    output wire                  s_axis_tready,

    output wire [DATA_WIDTH-1:0] m_axis_tdata,
    output wire                  m_axis_tvalid,
    input  wire                  m_axis_tready
);

reg [DATA_WIDTH-1:0] m_data_reg;
reg                  m_valid_reg = 1'b0;
reg [DATA_WIDTH-1:0] skid_data_reg;
reg                  skid_valid_reg = 1'b0;

assign s_axis_tready = !skid_valid_reg;
assign m_axis_tdata  = m_data_reg;
assign m_axis_tvalid = m_valid_reg;

always @(posedge clk) begin
    if (!m_valid_reg || m_axis_tready) begin
        // output register is free (or being taken): refill it, skid first
        if (skid_valid_reg) begin
            m_data_reg     <= skid_data_reg;
            m_valid_reg    <= 1'b1;
            skid_valid_reg <= 1'b0;
        end else begin
            m_data_reg  <= s_axis_tdata;
            m_valid_reg <= s_axis_tvalid;
        end
    end else if (s_axis_tvalid && !skid_valid_reg) begin
        // output stalled, the input word was accepted: park it
        skid_data_reg  <= s_axis_tdata;
        skid_valid_reg <= 1'b1;
    end

    if (rst) begin
        m_valid_reg    <= 1'b0;
        skid_valid_reg <= 1'b0;
    end
end

endmodule

`default_nettype wire
