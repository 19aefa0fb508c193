// Package board runs the PTM board (rtl/board/board_top.v with a generated
// inference core) as a Verilator simulation that a host talks to over a
// pseudo-terminal (the UART) and a Linux TAP device (Ethernet), exactly as
// it would talk to the FPGA: docs/protocol.md on the wire.
//
// Start generates the core for a model with package hw (from a model file,
// a bank, or just a shape when the host uploads the bank itself; a
// convolutional model, Options.ConvBank or a convolutional model file,
// makes the convolutional board of protocol version 7: board_top with
// KIND = 1, rtl/board/conv_query.v and hw.GenerateConv's core, which the
// host uploads thresholds and weights to), builds
// the board with `verilator --cc --exe --build` together with the C++ main
// board_main.cpp (cached by a hash of every source, the parameters, the
// flags and the Verilator version, so only the first start of a design
// compiles), and starts it:
//
//   - UART: the program opens a pseudo-terminal itself (posix_openpt,
//     raw mode on both sides) and prints its slave path; Process.UART
//     holds it. Bytes written to it are driven on the board's uart_rxd
//     pin as 8N1 bits, each bit Options.ClksPerBit clocks long; the
//     uart_txd pin is sampled in the middle of every bit and the decoded
//     bytes are written back. The pty ignores baud rates, so any serial
//     library works on it (set raw mode, e.g. with golang.org/x/term).
//   - Ethernet: with Options.TAP the program opens that TAP device
//     (IFF_TAP | IFF_NO_PI, created if needed, brought up), adds
//     preamble, SFD, padding to 60 bytes and the FCS to every frame the
//     kernel sends and clocks it into the GMII receive interface (one byte
//     per clock); frames from the GMII transmit interface are stripped of
//     preamble and SFD, FCS-checked (bad ones dropped and counted) and
//     written to the TAP. Options.NetNS runs the simulator inside a
//     network namespace (`ip netns exec`).
//   - Faults: Options.Faults flips one bit of, or drops, wire bytes at a
//     given rate in each direction of each link (seeded by Options.Seed),
//     and can hold every response for a fixed delay. Ethernet faults hit
//     the frame after its FCS, so a hit frame is dropped by the receiving
//     MAC (or by the bridge), as on a real wire.
//
// # Simulated time and UART bit rate
//
// The model is clocked as fast as the host CPU allows while anything is in
// flight (bits or bytes to drive, a frame being received, executed or
// sent) and for a short tail after the board's idle output rises; then it
// waits without clocking, so an idle board costs no CPU and a retried
// request is not a function of wall time. Simulated time is counted in
// board clocks. With the default ClksPerBit = 8 a UART byte takes 80
// clocks, so the simulated link carries one byte per 80 simulated clocks:
// the bit-time to clock ratio of a 6 Mbaud link on a 48 MHz board, or of a
// real 3 Mbaud link (CLKS_PER_BIT = 16 at 48 MHz) with the board logic
// running at half speed relative to the line. At the measured 1.5 to 2.7
// million simulated clocks per second (Iris-like core on 8 lanes, one host
// core, Verilator 5.006 -O3, g++ -O2) this is 19 to 34 kB/s of UART
// traffic, about ten times slower than a real 3 Mbaud link (300 kB/s):
// simulated transfers take about ten times longer than on the board.
// Ethernet bytes are clocked in at one per clock (1.5 to 2.7 MB/s). Set ClksPerBit = 16 to model the real 3 Mbaud ratio
// exactly, at half the simulated byte rate. The board reports
// Options.ReportedBaud in INFO word 17 (default 115200, a conservative rate
// for host timeouts that the simulation always exceeds).
//
// The board measures its own UART receive line (STATUS counters 11 and
// 12: bytes received and bit times elapsed, docs/protocol.md section 5),
// so a host gets the line utilization in simulated time, whatever the
// simulation speed. Because the model is not clocked while the whole board
// is idle, bit times while nothing at all is in flight are not counted:
// the figure is the utilization while the board has work, which is the
// whole stream whenever pipelining keeps a request on its way (a stream
// whose host lets the board go idle between requests still shows the gaps
// while a request is executed and answered). To reproduce a real board's
// ratio of line time to compute time, set ClksPerBit to its divisor, e.g.
// 156 for 115,200 baud from an 18 MHz clock (182 at the 21 MHz the demo
// design closes at).
//
// # Lifetime
//
// Start returns once the board is out of reset and its links are open;
// Stop ends it (SIGTERM, then SIGKILL after a grace period) and Stats
// reports simulated clocks, wall and active time and link counters. The
// simulator also exits when its parent's stdin pipe closes, so it never
// outlives the Go process. Run wraps Start/Stop for a command that serves
// until its context is cancelled (the `ptm board` command).
//
// The tests (board_test.go) start the board on a pty, speak the protocol
// with a minimal encoder, upload a random bank, compare INFER results in
// both modes word for word with fixed.Core, throw 100,000 random bytes at
// the UART and check that the next request is answered; as root they also
// exchange raw Ethernet frames with the board through a TAP device inside
// a network namespace. conformance_test.go runs the host's conformance
// suite (host/conformance, strict mode) through the host's own transports
// on the pty and, as root, on the TAP.
//
// # Training board
//
// BuildTrainer, StartTrainer and RunTrainer do the same for the training
// board (rtl/trainboard/train_board_top.v with the trainer of
// hw.GenerateTrainer, docs/protocol.md section 8): the same C++ main
// (Verilator's --prefix Vboard_top; the top has board_top's ports), UART
// only, cached under "trainboard-<hash>". `ptm board --trainer` runs it,
// `ptm train --board` trains on it (host/trainboard). trainer_test.go
// trains Iris on it over the pty and requires the model file of the golden
// host-shuffled trainer byte for byte (TestTrainBoardIris), checks every
// ERROR of the TRAIN commands (TestTrainBoardErrors), and lints the top
// (TestTrainBoardLint).
package board
