// Package board holds the hand-written Verilog of the PTM board: the UART
// and Ethernet front ends of the framed protocol (docs/protocol.md), the
// protocol engine that executes it on the generated inference core
// (docs/core-interface.md), and the board top level. There is no Go API
// here: the package exists so that `go test ./rtl/board/` lints, simulates
// and synthesizes the RTL.
//
// Layout (one module per file, module name = file name):
//
//	proto_rx.v       UART frame parser: the received frames are queued in
//	                 block RAM as records (header, payload); SOF hunt,
//	                 header, length check, CRC-32 check (on the UART-only
//	                 board bit-serial, stepped by uart_rx's data bits:
//	                 CRC_SERIAL = 2), idle timeout (an LFSR on bit times);
//	                 after a dropped candidate hunting restarts at the next
//	                 byte; busy descriptors for good frames that found no
//	                 room for their payload
//	proto_rx_eth.v   Ethernet frame parser: one protocol frame per packet;
//	                 a commit/drop payload FIFO, only CRC-good frames come
//	                 out, with the source MAC
//	proto_tx.v       frame builder: buffers a fragment (<= 1024 bytes, block
//	                 RAM), emits SOF/header/payload/CRC gap-free, cuts long
//	                 responses into fragments with MORE and an index
//	link_arb.v       frame-by-frame round-robin arbiter of the two links
//	stat_counters.v  the STATUS counters (u32, wrapping) in one block RAM,
//	                 swept a byte per clock, read out a byte at a time
//	proto_engine.v   command executor of protocol version 6 (the board
//	                 checks only what protects it and echoes nothing the
//	                 host knows; the host checks the rest):
//	                 INFO, LOAD_BEGIN/DATA/COMMIT, INFER, INFER_WINDOW
//	                 (INFER's answer cut to a window of its items), STATUS,
//	                 RESET_STATUS, ERROR responses; a bit-serial unit for
//	                 the upload CRC and the query seed; the answers' bytes
//	                 from response programs in a block RAM ROM
//	board_top.v      uart_rx/uart_tx + eth_mac_rx/eth_mac_tx (rtl/uart,
//	                 rtl/eth) + the blocks above + the core (`PTM_CORE`);
//	                 ETH_ENABLE = 0 leaves Ethernet out
//	tb/*_tb.cpp      Verilator C++ benches, one per module
//	tb/proto_util.h  shared bench helpers (CRC-32, frame encoder/decoder)
//
// Shell size (hw/synth TestShellBudget: yosys synth_ice40 -noflatten of
// the UART-only board, LUT4 + SB_CARRY, every instance counted; measured
// 2026-11-26): SETS_MAX 1 (no set loop, the lean option), 958 (proto_engine 429 and
// one block RAM, proto_rx 198, proto_tx 147, stat_counters 74,
// board_top 33, uart_rx 33, uart_tx 18, crc32_serial 2 x 15), SETS_MAX 8 (the default, make demo's image)
// 1,177 (engine 640); flattened as the image is built (ShellFlatCells,
// the core a blackbox) 947 and 1,137; in the device's unit, logic cells
// packed by nextpnr (ShellPackedCells, which also counts the flip-flops
// that cannot share a cell with a LUT4), 1,181 and 1,358. The last step
// (branches eng9 and rxtx9, from 1,031 / 1,232 and 1,327 / 1,496 packed)
// stored once what was held twice: STATUS bytes read from a snapshot in
// stat_counters' block RAM (its 32-bit read register gone) with 2-bit
// pending counts, the core's K and the bank word and address driven from
// the engine's own registers, the response ROM addressed by the pc
// register; proto_tx's RAM written at its fill count with the length kept
// there (no write-address or length copies); proto_rx's payload fetched
// on demand (PREFETCH = 0, no byte counter) and uart_rx without an output
// register (BUFFER = 0). The step before
// (branches eng8 and rxtx8, from 1,071 / 1,291): the engine's response
// program counter an 8-bit LFSR, the bank lane and address from next's
// bits when LANES is a power of two, K's range checked byte by byte
// (463 -> 428); proto_tx's CRC stepped by uart_tx's data bits as they go
// out (164 -> 156). Before it, SETS_MAX 1 / 8: 1,071 / 1,291, flattened
// 1,046 and 1,232, packed 1,376 and 1,537.
//
// Two earlier steps got there from 1,219 / 1,426:
// the engine's non-INFER answers as programs in a block-RAM ROM (branch
// eng7: engine 525 -> 467) and a leaner receiver, transmitter, UARTs and
// board_top (branch rxtx7: 726 -> 608): proto_rx's CRC stepped by
// uart_rx's data bits and its FCS compared bit by bit while the register
// rotates (no 32-bit residue compare, no stepping counter), the frames
// held counted by LFSRs, the payload counted up and compared with len,
// the idle timer on bit times (289 -> 238); uart_tx one shift register on
// board_top's bit tick (31 -> 18); board_top's bit timer and LED holds
// XNOR LFSRs from the power-up 0, the LED state without reset (48 -> 34);
// uart_rx's data bits behind a marker (46 -> 40). Before them: 1,219 /
// 1,426 (proto_engine 525, proto_rx 289, proto_tx 165, stat_counters 85,
// board_top 48, uart_rx 46, uart_tx 31, crc32_serial 2 x 15);
// 1,299 / 1,508 with protocol version 4 and every STATUS counter, 1,628
// and 1,774 before. What paid, in that order: comparisons with
// constants written as AND/OR chains (yosys maps a < or > to a carry
// chain, one SB_CARRY a bit, and ABC cannot fold it: engine 748 -> 616,
// proto_rx -46), stat_counters with PEND_W 3 instead of 5 (-42), the
// response length kept as its last word index (-23), wcnt dropped (LOAD_DATA
// words counted from rem, -21), the LFSR idle timer (-19), the counters
// read out through a shift register (-18), the response byte as a one-hot
// AND-OR (-10), proto_rx's bit-serial CRC (-11), then (branch shell6)
// STATUS_ALL = 0 on the UART-only board, the optional counters 0 and
// 8-10 left out (stat_counters 120 -> 85, engine -4), and protocol
// version 5's empty LOAD_BEGIN / LOAD_COMMIT answers, LOAD_DATA answered
// with next alone and ERROR 7 without the board's CRC (engine 571 ->
// 525). Issue 12 asks for 1,000. The UP5K image with this shell (`make
// demo`: 60 lanes, SETS_MAX 8, core 54 / shell 27 MHz, nextpnr seed 1)
// places in 4,161 of 5,280 cells and 23 block RAMs with core / shell Fmax
// 54.41 / 33.86 MHz, timing met (with protocol version 6's INFER_WINDOW:
// 4,056 cells, 58.18 / 31.13 MHz before it, measured 2026-11-28); the HX8K full board (64 lanes, 96 / 48
// MHz) in 5,855 of 7,680 and 31 block RAMs, 124.22 / 53.86 MHz, timing
// met (docs/physical-limits.md; their history is in CHANGELOG.md).
//
// Conventions are those of package rtl (rtl/doc.go): `default_nettype none
// ... `default_nettype wire around each file, a header comment naming the
// module with its parameters (UPPER_CASE), ports and latency, valid/ready
// streams, one clock and a synchronous active-high reset of control state.
//
// The tests (board_test.go) need verilator, yosys and g++ (and, for the
// board_top bench and lint, generate a small core with package hw):
//
//   - TestConventions: file layout, header, documented parameters, bench
//     present.
//   - TestLint: verilator --lint-only -Wall of every module as top, for the
//     default and alternative parameter sets; board_top with a generated
//     core named through PTM_CORE. Any warning fails.
//   - TestBench: builds (or takes from the build cache, keyed by the
//     hash of the tools, arguments and sources) and runs every bench; each prints
//     "PASS <name> <checks>". The board_top bench gets a data file written
//     by the test with a random bank and requests whose expected result
//     words come from golden/fixed, and speaks the protocol on the UART pin
//     (bit level) and the GMII interface at once.
//   - TestSynth: yosys synth_ice40 of every module and of board_top with
//     the generated core; logs SB_LUT4, SB_DFF*, SB_CARRY and SB_RAM40_4K.
//     Under make test-long (PTM_LONG_TESTS=1) or with
//     PTM_BOARD_SYNTH_IRIS=1 it also synthesizes board_top with
//     Iris-like cores (3 classes, 20 clauses, 16 features; 16 and 8 lanes)
//     and, when nextpnr-ice40 is installed, packs them for an UP5K.
//
// With -short, TestBench and TestSynth are skipped.
package board
