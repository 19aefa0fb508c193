// Package synth is the iCE40 synthesis flow of the PTM board: it takes a
// generated inference core (package hw), wraps it in a device top of
// rtl/boards (iCEBreaker UP5K or HX8K breakout board: PLL, power-on
// reset, UART, Ethernet over an MII PHY, protocol engine; or the core
// alone with CoreOnly) and runs
//
//	icepll                         PLL setting for the target clock
//	yosys synth_ice40 (2 stages)   with the bank pass between them
//	nextpnr-ice40                  --pcf, --freq, fixed --seed, --report
//	icepack                        bitstream
//
// keeping every script, netlist, report and log in the build folder. The
// bank pass (PassBanks) drops the banks' read/write collision logic, which
// the core's interface makes dead, and packs two 8-bit lanes into one
// 256 x 16 block RAM, doubling the lanes a device's block RAMs can feed.
//
// Run returns a Result: utilization, Fmax per clock, and the throughput
// the core reaches at that Fmax (cycles per sample from the layout plus the
// per-request overhead of docs/cycles.md at K = 100, RequestCycles) and
// the bounds of the UART and Ethernet links. Failures are one-line errors
// wrapping ErrNoFit, ErrTiming, ErrToolMissing, ErrDevice, ErrTool or
// ErrOptions, naming the log to read.
//
// The board's Verilog comes from package rtl (embedded), its parameters
// from hw.Design.BoardParams. Cached runs the flow through a result cache
// (a repeated run runs no tool); Auto chooses the largest core that fits
// and meets timing among Candidates (docs/synthesis.md); a timing failure
// is an error and leaves no bitstream. ModuleCells measures the board
// shell per module (TestShellBudget keeps it from growing).
//
// RunConv, CachedConv and AutoConv do the same for a convolutional core
// (hw.ConvDesign): the UART-only board with board_top KIND = 1, one yosys
// stage with SPRAM inference, CheckConvFit before any tool, ConvResult
// with the rates at K = 16 (docs/synthesis-flow.md, "Convolutional
// models").
//
// The command `ptm synth` drives it; scripts/synth.sh and `make synth`,
// `make synth-all` (the design-space sweep of docs/synthesis.md) and
// `make lint-top` wrap it.
package synth
