// Package rtl holds the hand-written Verilog blocks of the PTM board design
// and the Go test that checks them (`go test ./rtl/` lints, simulates and
// synthesizes the RTL). Its Go API is the board's source of truth for the
// tools: FS embeds the Verilog and the pin files, and ShellSources,
// TopSources and CoreTopSources are the source lists of the board shell
// (board_top: the Verilated board), the device tops (the synthesis flow)
// and the core-only tops, so sim/board and hw/synth need no checkout.
//
// Layout (one module per file, module name = file name):
//
//	uart/uart_rx.v      8N1 receiver: 2-flop synchronizer, 3-sample majority,
//	                    start-bit validation, frame_error and overrun pulses,
//	                    valid/ready byte output, each data bit as sampled
//	                    (bit_step, bit_d: proto_rx's CRC follows the line)
//	uart/uart_tx.v      8N1 transmitter, valid/ready byte input, busy; one
//	                    shift register on a free-running bit tick (its own
//	                    or board_top's, EXT_TICK); each data bit as it goes
//	                    out (bit_step, bit_d: proto_tx's CRC follows the line)
//	lib/crc32.v         combinational CRC-32 (IEEE 802.3) byte update
//	lib/crc32_serial.v  bit-serial CRC-32 register with rotation (UART-only
//	                    boards: proto_tx and proto_rx CRC_SERIAL = 2)
//	lib/sync_fifo.v     first-word-fall-through FIFO on block RAM, count
//	lib/skid_buffer.v   2-entry register slice (breaks the ready path)
//	eth/eth_mac_rx.v    GMII-style byte receive MAC: preamble/SFD strip, FCS
//	                    check, MAC and EtherType filter, store-and-forward
//	                    buffer that releases only good frames
//	eth/eth_mac_tx.v    GMII-style byte transmit MAC: preamble, header,
//	                    padding to 60 bytes, FCS, inter-frame gap
//	train/train_engine.v the on-chip PTM trainer (docs/fixed-point-training.md
//	                    5.2-5.3, 11): controller, clause lanes, phase A/B
//	train/train_tpm_lane.v one literal lane's streamed integer TPM
//	train/train_draws.v  chained 16-bit draws of a 64-bit trainer lane
//	train/train_ram.v    single-port 16-bit RAM (SB_SPRAM256KA on the UP5K)
//	                    The trainer is verified bit for bit by sim/traincosim
//	                    and linted by hw's TestTrainerLint, not by this package.
//	trainboard/train_board_top.v the training board: UART, proto_rx/proto_tx,
//	                    train_proto and the generated trainer (PTM_TRAINER)
//	trainboard/train_proto.v the TRAIN commands' engine (docs/protocol.md 8)
//	                    Built, tested and linted by sim/board (BuildTrainer,
//	                    TestTrainBoard*); sources: TrainBoardSources.
//	*/tb/*_tb.cpp       Verilator C++ benches, one per module
//	lib/tb/tb_util.h    shared bench helpers (CHECK, tracing, --seed)
//
// Conventions: `default_nettype none ... `default_nettype wire around each
// file; a header comment naming the module, its parameters, ports and
// latency; valid/ready streams in AXI-stream style (a transfer happens when
// valid && ready, valid never depends on ready); a single clock clk and a
// synchronous active-high reset rst that clears control registers only.
//
// The tests (rtl_test.go) need verilator, yosys and g++ on PATH
// (scripts/install-deps.sh installs them):
//
//   - TestLint: verilator --lint-only -Wall on every .v file in uart/, eth/
//     and lib/ as a top (dependencies found with -y), for the default and
//     the alternative parameter sets; any warning fails. It also checks the
//     file conventions above.
//   - TestBench: builds each bench with verilator --cc --exe --build into
//     t.TempDir() and runs it; the bench prints "PASS <name> <checks>".
//   - TestSynth: yosys synth_ice40 for each top module; logs SB_LUT4,
//     SB_DFF*, SB_CARRY and SB_RAM40_4K counts; any warning fails.
//
// With -short, TestBench and TestSynth are skipped (they compile C++ and
// take tens of seconds); without -short a missing tool is a failure, not a
// skip. To debug a bench by hand, build it with --trace-fst and run the
// binary with --trace (writes <name>.fst) and optionally --seed N.
package rtl
