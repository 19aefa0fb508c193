// Package softboard is an in-process software PTM board: the protocol
// engine of docs/protocol.md on top of the bit-exact golden core
// (golden/fixed). It is the reference the host driver is tested against
// and the behavioural reference for the Verilated board.
//
// [Board.Execute] is the engine: one valid frame in, its response frames
// out. [Board.Serve] attaches it to a byte-stream link (an in-memory pipe,
// a pseudo-terminal master, a UART) with a frame.Parser receiver, an
// optional idle timeout and an optional line-rate emulation;
// [Board.ServeEthernet] attaches it to a raw Ethernet interface (Linux);
// [Board.Pipe] wires a board to a host transport.NewPipe in one call, with
// optional fault injection ([Faults]: random bit flips and byte drops in
// either direction, write delays).
//
// # Behaviour where docs/protocol.md leaves a choice
//
//   - Buffering: the board executes one frame at a time and buffers
//     Config.QueueFrames (default 1) more; a frame that finds the buffer
//     full is answered with ERROR 8 (busy) and not executed.
//   - Receiver: after a CRC error or an idle timeout, as after a bad
//     length, hunting restarts at the byte after the dropped SOF (the
//     dropped frame's bytes are rescanned).
//   - INFER payload: u8 mode, u8 0, u16 K, u32 seed, u16 count = 10 header
//     bytes (the field list), so the length check is 10 + count*FB.
//     Checks in this order: header shorter than 10 bytes (ERROR 3, detail
//     10); mode > 1 or reserved byte != 0 (ERROR 3, detail 0); count = 0
//     (ERROR 3, detail 10 + FB); length (ERROR 3, detail 10 + count*FB);
//     K = 0 or K > KMAX (ERROR 5, detail KMAX); no model (ERROR 4); a
//     response longer than 128 fragments (ERROR 3, detail 10 + the largest
//     count that fits times FB). Every vector of a multi-vector INFER is
//     run with the same seed.
//   - LOAD_DATA: a payload of odd length or shorter than 6 bytes is ERROR 3
//     (detail 6, or the length minus one); a chunk at next that would run
//     past W is ERROR 3 (detail 4 + 2*(W - offset)); a chunk at next while
//     no load is in progress (no LOAD_BEGIN since power-up or the last
//     commit) is ERROR 6 with detail next. Words are stored as received;
//     the core uses their low B bits (the bank is B bits wide) and the
//     CRC is computed over the words as received.
//   - LOAD_COMMIT succeeds only when next == W == L*D and the CRC matches;
//     otherwise ERROR 7 with the CRC of the words written so far (or, when
//     no load is in progress, of the valid model).
//   - Counters: "executed" counts every frame handed to the engine
//     (including those answered with an ERROR other than busy); "response
//     frames sent" counts every frame sent, each INFER fragment and every
//     ERROR included. RESET_STATUS clears all counters, then its own
//     response is counted (so a STATUS right after shows executed = 1,
//     sent = 1).
package softboard
