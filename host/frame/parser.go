package frame

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// Reason says why a Parser dropped a frame.
type Reason uint8

// Drop reasons.
const (
	// ReasonCRC: the CRC did not match (a CRC error).
	ReasonCRC Reason = iota + 1
	// ReasonTooLong: the len field exceeded MaxPayload (a framing error).
	ReasonTooLong
	// ReasonIdle: the link went idle inside a frame (a framing error,
	// reported by Expire).
	ReasonIdle
)

// String names the reason.
func (r Reason) String() string {
	switch r {
	case ReasonCRC:
		return "CRC mismatch"
	case ReasonTooLong:
		return "len exceeds MAX_PAYLOAD"
	case ReasonIdle:
		return "idle inside a frame"
	}
	return fmt.Sprintf("reason %d", uint8(r))
}

// Drop describes a frame the Parser dropped. The header fields come from
// the dropped bytes and cannot be trusted.
type Drop struct {
	Reason Reason
	Offset int64  // stream byte offset of the dropped frame's SOF
	Type   Type   // claimed type
	Seq    uint16 // claimed seq (only if at least 5 bytes had arrived)
	Len    int    // claimed payload length (only if the header was complete)
	Have   int    // bytes of the frame that had arrived
	// Bytes are the candidate's bytes from its SOF as received (Have of
	// them, at most the claimed frame length). They alias the receiver's
	// buffer: valid only during the OnDrop call, copy to keep them.
	Bytes []byte
}

// String describes the drop, naming the stream offset.
func (d Drop) String() string {
	return fmt.Sprintf("dropped frame at stream byte %d (claimed %v seq %d len %d, %d bytes seen): %v",
		d.Offset, d.Type, d.Seq, d.Len, d.Have, d.Reason)
}

// ParserStats counts what a Parser saw.
type ParserStats struct {
	Bytes         uint64 // bytes pushed
	Frames        uint64 // valid frames returned
	CRCErrors     uint64 // frames dropped for a bad CRC
	FramingErrors uint64 // frames dropped for a bad length or an idle timeout
	Skipped       uint64 // bytes discarded while hunting for SOF
}

// parserBuf is the Parser's buffer size: one frame being assembled plus
// room for at least one more maximal frame, so Push always makes progress.
const parserBuf = 4 * MaxFrameLen

// Parser recovers frames from a byte stream. The zero value is ready to
// use. It is not safe for concurrent use.
//
// Feed bytes with Push (or Feed) and take frames with Next. A frame is
// dropped and counted when its len exceeds MaxPayload or its CRC does not
// match; hunting for SOF then resumes at the byte after the dropped SOF,
// so no byte that might start a valid frame is ever discarded.
type Parser struct {
	buf        [parserBuf]byte
	start, end int   // buf[start:end] is unparsed
	base       int64 // stream offset of buf[0]
	stats      ParserStats
	// OnDrop, if set, is called for every dropped frame.
	OnDrop func(Drop)
	// NoRescan makes the parser follow the minimum receiver rule of
	// docs/protocol.md section 1 (the version 4 board's): after a drop,
	// hunting restarts at the next byte after the candidate's bytes
	// seen so far (the header of a frame too long, the whole claimed
	// frame after a CRC error, everything buffered after an idle
	// timeout), which are not rescanned. Used to emulate the board.
	NoRescan bool
}

// Stats returns the counters.
func (p *Parser) Stats() ParserStats { return p.stats }

// Buffered returns the number of bytes held that do not form a complete
// frame yet (after Next has returned false).
func (p *Parser) Buffered() int { return p.end - p.start }

// Offset returns the stream offset of the next byte Push will take.
func (p *Parser) Offset() int64 { return p.base + int64(p.end) }

// Reset discards everything buffered (the counters are kept).
func (p *Parser) Reset() {
	p.base += int64(p.end)
	p.start, p.end = 0, 0
}

// Push copies as much of b as fits into the parser and returns the number
// of bytes taken; call Next until it returns false before pushing the
// rest. At least MaxFrameLen bytes fit after Next has returned false.
func (p *Parser) Push(b []byte) int {
	if p.start > 0 && len(p.buf)-p.end < len(b) {
		n := copy(p.buf[:], p.buf[p.start:p.end])
		p.base += int64(p.start)
		p.start, p.end = 0, n
	}
	n := copy(p.buf[p.end:], b)
	p.end += n
	p.stats.Bytes += uint64(n)
	return n
}

// Feed pushes all of b, calling fn for every complete valid frame. The
// frame's payload aliases the parser's buffer and is valid only during the
// call.
func (p *Parser) Feed(b []byte, fn func(Frame)) {
	for {
		n := p.Push(b)
		b = b[n:]
		for {
			f, ok := p.Next()
			if !ok {
				break
			}
			fn(f)
		}
		if len(b) == 0 {
			return
		}
	}
}

// Next returns the next valid frame, or false when the buffered bytes do
// not hold a complete frame. The frame's payload aliases the parser's
// buffer and stays valid until the next Push, Feed, Expire or Reset.
func (p *Parser) Next() (Frame, bool) {
	for {
		if !p.hunt() {
			return Frame{}, false
		}
		b := p.buf[p.start:p.end]
		if len(b) < HeaderLen {
			return Frame{}, false
		}
		l := int(binary.LittleEndian.Uint16(b[5:]))
		if l > MaxPayload {
			p.drop(ReasonTooLong, b, HeaderLen)
			continue
		}
		n := Overhead + l
		if len(b) < n {
			return Frame{}, false
		}
		if crc32.ChecksumIEEE(b[1:n-CRCLen]) != binary.LittleEndian.Uint32(b[n-CRCLen:]) {
			p.drop(ReasonCRC, b, n)
			continue
		}
		p.start += n
		p.stats.Frames++
		return Frame{Type: Type(b[1]), Flags: Flags(b[2]), Seq: binary.LittleEndian.Uint16(b[3:]), Payload: b[HeaderLen : n-CRCLen]}, true
	}
}

// hunt advances start to the next SOF, counting skipped bytes; it reports
// whether one is buffered.
func (p *Parser) hunt() bool {
	b := p.buf[p.start:p.end]
	i := bytes.IndexByte(b, SOF)
	if i < 0 {
		p.stats.Skipped += uint64(len(b))
		p.base += int64(p.end)
		p.start, p.end = 0, 0
		return false
	}
	p.stats.Skipped += uint64(i)
	p.start += i
	return true
}

// drop counts the frame starting at b[0] (= buf[start]) as dropped and
// moves past its SOF, or (NoRescan) past the seen bytes of the candidate
// (its first seen bytes).
func (p *Parser) drop(r Reason, b []byte, seen int) {
	if r == ReasonCRC {
		p.stats.CRCErrors++
	} else {
		p.stats.FramingErrors++
	}
	if p.OnDrop != nil {
		d := Drop{Reason: r, Offset: p.base + int64(p.start), Have: len(b)}
		if len(b) > 1 {
			d.Type = Type(b[1])
		}
		if len(b) >= 5 {
			d.Seq = binary.LittleEndian.Uint16(b[3:])
		}
		if len(b) >= HeaderLen {
			d.Len = int(binary.LittleEndian.Uint16(b[5:]))
		}
		d.Bytes = b[:min(len(b), seen)]
		p.OnDrop(d)
	}
	if p.NoRescan {
		p.start += seen
		return
	}
	p.start++
}

// Expire handles an idle link: if a partial frame is buffered (an SOF was
// seen but the frame is incomplete), it is dropped with ReasonIdle and the
// bytes after its SOF are kept for rescanning. It returns the number of
// frames dropped (0 or 1). Call Next afterwards, since the rescan may
// uncover frames, and repeat until Buffered is 0 to flush a stale stream.
// A complete frame is never expired: Expire returns 0 when Next would
// return a frame.
func (p *Parser) Expire() int {
	if !p.hunt() {
		return 0
	}
	b := p.buf[p.start:p.end]
	if len(b) >= HeaderLen {
		l := int(binary.LittleEndian.Uint16(b[5:]))
		if l > MaxPayload || len(b) >= Overhead+l {
			return 0 // Next decides about it
		}
	}
	p.drop(ReasonIdle, b, len(b))
	return 1
}

// MaxCRCShift is the most payload bytes CRCMatches assumes lost on the
// line: the CRC is looked for up to that many bytes before its place.
const MaxCRCShift = 32

// CRCMatches reports whether the dropped frame b (the bytes a receiver
// saw from its SOF, Drop.Bytes) carries the CRC of a frame with b's
// header and the payload p: then the sender sent exactly p, and only
// payload bytes were garbled on the line (flipped, or up to MaxCRCShift
// of them lost, which moves the CRC earlier). The header (type, flags,
// seq, len) and the four CRC bytes must have arrived intact; the claimed
// len must be len(p). A sender that sent another payload matches only by
// a CRC-32 collision at one of the MaxCRCShift+1 places tried (about
// 2^-27).
//
// This lets a host that knows what a correct answer is (the golden model
// of docs/fixed-point.md) verify a long answer whose bytes a noisy line
// garbled: only its 11 framing bytes have to arrive intact, not all of it.
func CRCMatches(b, p []byte) bool {
	if len(b) < Overhead || b[0] != SOF || int(binary.LittleEndian.Uint16(b[5:])) != len(p) {
		return false
	}
	crc := crc32.Update(crc32.ChecksumIEEE(b[1:HeaderLen]), crc32.IEEETable, p)
	for d := 0; d <= MaxCRCShift && d <= len(p); d++ {
		at := HeaderLen + len(p) - d
		if at+CRCLen > len(b) {
			continue
		}
		if binary.LittleEndian.Uint32(b[at:]) == crc {
			return true
		}
	}
	return false
}
