// Package transport moves protocol frames (docs/protocol.md) between the
// host and a board, so that the driver (host/driver) works the same over
// every link.
//
// A [Transport] sends one encoded frame per Send and returns one complete,
// CRC-checked frame per Recv. Implementations:
//
//   - [Stream]: any byte stream (io.ReadWriteCloser) with a reader goroutine
//     feeding a [frame.Parser]; the base of the UART and the pipe.
//   - [OpenUART]: a serial port through github.com/tarm/serial (a real UART
//     or a pseudo-terminal slave). tarm/serial's ReadTimeout has a
//     resolution of 0.1 s and a timeout comes back as (0, io.EOF) on Linux;
//     the UART transport treats that as "no data yet", not as the end of the
//     stream, and detects a hung-up device separately.
//   - [OpenEthernet] (Linux with cgo): raw Ethernet II frames with EtherType
//     0x88B5 through gopacket/afpacket, one protocol frame per Ethernet
//     frame, receiving only frames of that EtherType from the board's MAC
//     to ours. The MAC pads short frames to 60 bytes; the frame's len field
//     tells where it ends.
//   - [NewPipe]: an in-memory byte stream for tests; the other end is a
//     plain io.ReadWriteCloser (where a software board runs).
//
// [Recorder] wraps a transport and records its traffic; [Playback] replays a
// recording as a transport, checking that the host sends exactly the
// recorded frames (in the style of periph.io's conntest record/playback).
//
// # Link utilization
//
// [Stats] counts bytes and frames in each direction. For a UART the
// transmit utilization over a wall-clock interval is defined as
//
//	U_tx = BytesSent * BitsPerByte / (LineRate * wall seconds)
//
// with 10 bits per byte for 8N1: the fraction of the interval the host's
// transmitter, sending at the line rate whenever it has bytes to send,
// would have been busy. A real UART's transmitter runs exactly while its
// queue is non-empty, so this equals the measured busy fraction. On a
// pseudo-terminal, which has no line rate, the figure is what a line at the
// nominal baud would have needed and can exceed 1 unless the transport
// paces its transmissions ([StreamOpts].Pace), emulating the line.
package transport
