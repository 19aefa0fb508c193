// Package frame encodes and decodes the board protocol's frames
// (docs/protocol.md, version 1) and their payloads.
//
// A frame is
//
//	SOF(0xA5) type flags seq(u16) len(u16) payload[len] crc(u32)
//
// with all integers little-endian and the CRC-32 (IEEE) computed over
// everything but the SOF. [Frame] decodes one frame in place
// ([Frame.DecodeFromBytes], the payload aliases the input, nothing is
// allocated) and encodes append-style ([Frame.AppendTo], [Append], or
// [Begin] and [Finish] to build a payload directly in the output buffer).
//
// [Parser] recovers frames from a byte stream (a UART, a pseudo-terminal,
// an in-memory pipe): it hunts for SOF, enforces [MaxPayload], checks the
// CRC and reports every dropped frame with a [Reason]. After a dropped frame
// it resumes hunting at the byte after the dropped frame's SOF, so the bytes
// of a corrupted frame are rescanned and a valid frame hidden behind a false
// SOF is still found (the protocol only requires this for a bad length; doing
// it for CRC errors as well is what makes "garbage costs at most one frame"
// true; see host/PROTOCOL-REVIEW.md).
//
// The payload types ([Info], [LoadBegin], [LoadData], [LoadDataAck],
// [LoadCommit], [InferRequest], [Status], [BoardError]) have a
// DecodeFromBytes method that checks the length and the reserved fields and
// an AppendTo method; decoding then re-encoding gives the same bytes.
// Result words (INFER responses) are plain little-endian u32s: see
// [AppendWords] and [Uint32s].
package frame
