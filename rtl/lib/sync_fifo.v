`default_nettype none
/*
 * sync_fifo - single-clock first-word-fall-through FIFO with valid/ready ports
 *
 * Storage is a simple dual-port memory with a synchronous (registered) read,
 * which yosys maps to iCE40 SB_RAM40_4K block RAM when it is large enough
 * (e.g. DEPTH*DATA_WIDTH >= 2 kbit; smaller FIFOs use logic cells). The read
 * port register doubles as the output register: a word is read from memory
 * whenever the output register is empty or being emptied, so the output is
 * first-word-fall-through (m_axis_tdata is valid whenever m_axis_tvalid is
 * high, no separate read strobe).
 *
 * Parameters:
 *   DATA_WIDTH  width of a word, >= 1
 *   DEPTH       memory words, power of two, >= 2. The FIFO holds up to
 *               DEPTH+1 words (DEPTH in memory plus one in the output register).
 *
 * Ports:
 *   clk, rst                  clock; synchronous active-high reset empties
 *                             the FIFO (pointers and valid flags only)
 *   s_axis_tdata/tvalid/tready  input stream; tready = memory not full
 *   m_axis_tdata/tvalid/tready  output stream (registered, FWFT)
 *   count [$clog2(DEPTH):0]   words held (0 .. DEPTH+1), registered
 *
 * Latency: a word written in cycle t is on m_axis_* in cycle t+2 (two clocks)
 * when the FIFO was empty. Full throughput (one word per clock) in and out.
 * Every stored word is readable; there is no read-during-write hazard because
 * only words written in earlier cycles are ever read.
 */
module sync_fifo #(
    parameter DATA_WIDTH = 8,
    parameter DEPTH      = 512
) (
    input  wire                  clk,
    input  wire                  rst,

    input  wire [DATA_WIDTH-1:0] s_axis_tdata,
    input  wire                  s_axis_tvalid,
    output wire                  s_axis_tready,

    output wire [DATA_WIDTH-1:0] m_axis_tdata,
    output wire                  m_axis_tvalid,
    input  wire                  m_axis_tready,

    output wire [$clog2(DEPTH):0] count
);

localparam integer ADDR_W = $clog2(DEPTH);

reg [DATA_WIDTH-1:0] mem [0:DEPTH-1];
reg [ADDR_W:0]       wr_ptr = {(ADDR_W+1){1'b0}};
reg [ADDR_W:0]       rd_ptr = {(ADDR_W+1){1'b0}};
reg [DATA_WIDTH-1:0] m_data_reg;
reg                  m_valid_reg = 1'b0;
reg [ADDR_W:0]       count_reg = {(ADDR_W+1){1'b0}};

wire mem_empty = (wr_ptr == rd_ptr);
wire mem_full  = (wr_ptr == {~rd_ptr[ADDR_W], rd_ptr[ADDR_W-1:0]});
wire wr_en     = s_axis_tvalid && !mem_full;
wire rd_en     = !mem_empty && (!m_valid_reg || m_axis_tready);
wire out_xfer  = m_valid_reg && m_axis_tready;

assign s_axis_tready = !mem_full;
assign m_axis_tdata  = m_data_reg;
assign m_axis_tvalid = m_valid_reg;
assign count         = count_reg;

// memory: write port and registered read port (block RAM template)
always @(posedge clk) begin
    if (wr_en) begin
        mem[wr_ptr[ADDR_W-1:0]] <= s_axis_tdata;
    end
    if (rd_en) begin
        m_data_reg <= mem[rd_ptr[ADDR_W-1:0]];
    end
end

// control
always @(posedge clk) begin
    if (wr_en) begin
        wr_ptr <= wr_ptr + 1'b1;
    end
    if (rd_en) begin
        rd_ptr      <= rd_ptr + 1'b1;
        m_valid_reg <= 1'b1;
    end else if (m_axis_tready) begin
        m_valid_reg <= 1'b0;
    end
    if (wr_en && !out_xfer) begin
        count_reg <= count_reg + 1'b1;
    end else if (!wr_en && out_xfer) begin
        count_reg <= count_reg - 1'b1;
    end

    if (rst) begin
        wr_ptr      <= {(ADDR_W+1){1'b0}};
        rd_ptr      <= {(ADDR_W+1){1'b0}};
        m_valid_reg <= 1'b0;
        count_reg   <= {(ADDR_W+1){1'b0}};
    end
end

endmodule

`default_nettype wire
