// Package softboard is an in-process software PTM board: the protocol
// engine of docs/protocol.md on top of the bit-exact golden core
// (golden/fixed; with Config.Conv, protocol version 7, the convolutional
// core of golden/conv, its INFER vectors booleanized images). It is the
// reference the host driver is tested against and the behavioural
// reference for the Verilated board.
//
// [Board.ServePTY] serves it on a pseudo-terminal (`ptm board --soft`).
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
// # Behaviour
//
// The board follows docs/protocol.md (revised after host/PROTOCOL-REVIEW.md)
// including: rescanning after every dropped frame; INFO word 18 = the
// receive buffer depth (Config.QueueFrames, default 1), a frame that finds
// the buffer full being answered with ERROR 8 (busy) out of order; vector i
// of an INFER run with seed + i; the INFER check order (header, mode and
// reserved byte, count, length, K, model, response size); LOAD_DATA with no
// load in progress answered with ERROR 9; LOAD_COMMIT requiring
// W == next == L*D (ERROR 6 with next otherwise, ERROR 7 with the board's
// CRC on a CRC mismatch); the counter rules of section 5.
//
// Known difference from the Verilated board (docs/protocol.md section 7,
// "UART overload, exactly"): the board decides BUSY by receive-buffer bytes,
// answers BUSY in request order and discards (never answers) a good frame
// that ends while it holds 4 frames, BUSY ones included; Serve decides BUSY
// by frame count (Config.QueueFrames), answers it at once and never
// discards. A host within the documented window (INFO word 18 + 1 requests
// unanswered) sees neither discards nor a difference in answers.
//
// Where the document still leaves a choice:
//
//   - ERROR 3 details: INFO/STATUS/RESET_STATUS with a payload: 0;
//     LOAD_BEGIN of the wrong length: 4; LOAD_DATA of odd length or shorter
//     than 6 bytes: 6, or the length minus one; a chunk at next that would
//     run past W: 4 + 2*(W - offset); LOAD_COMMIT of the wrong length: 8;
//     INFER count = 0: 10 + FB.
//   - LOAD_COMMIT when no load is in progress and the model is valid but
//     W or the CRC differ: ERROR 7 with the valid model's CRC.
//   - Commands with flags != 0 are executed as if flags were 0.
package softboard
