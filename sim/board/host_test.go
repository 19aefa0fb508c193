package board

// A minimal protocol host for the tests (docs/protocol.md): frame encoder,
// frame reader with resynchronisation, fragment reassembly, retries. The
// real host driver lives in host/; this one only needs to be obviously
// right.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"time"
)

const sof = 0xA5

// Command and response types.
const (
	tInfo, tBegin, tData, tCommit, tInfer, tStatus, tReset, tError = 0x01, 0x02, 0x03, 0x04, 0x10, 0x20, 0x21, 0xE0
)

type frame struct {
	typ, flags byte
	seq        uint16
	payload    []byte
}

func encode(typ byte, seq uint16, payload []byte) []byte {
	b := []byte{sof, typ, 0, byte(seq), byte(seq >> 8), byte(len(payload)), byte(len(payload) >> 8)}
	b = append(b, payload...)
	return binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b[1:]))
}

// link moves protocol frames.
type link interface {
	send(b []byte) error
	// recv returns the next CRC-good frame or an error at the deadline.
	recv(deadline time.Time) (frame, error)
}

var errTimeout = errors.New("timeout")

// ptyLink reads frames from a byte stream (the UART's pseudo-terminal).
type ptyLink struct {
	f   *os.File
	buf []byte
	bad int // bytes skipped while resynchronising
}

func (l *ptyLink) send(b []byte) error {
	_, err := l.f.Write(b)
	return err
}

func (l *ptyLink) recv(deadline time.Time) (frame, error) {
	for {
		// parse what is buffered
		for len(l.buf) > 0 && l.buf[0] != sof {
			l.buf = l.buf[1:]
			l.bad++
		}
		if len(l.buf) >= 7 {
			n := int(l.buf[5]) | int(l.buf[6])<<8
			if n > 1024 {
				l.buf = l.buf[1:]
				l.bad++
				continue
			}
			if len(l.buf) >= 11+n {
				fr := l.buf[:11+n]
				if crc32.ChecksumIEEE(fr[1:7+n]) == binary.LittleEndian.Uint32(fr[7+n:]) {
					f := frame{typ: fr[1], flags: fr[2], seq: uint16(fr[3]) | uint16(fr[4])<<8,
						payload: append([]byte(nil), fr[7:7+n]...)}
					l.buf = l.buf[11+n:]
					return f, nil
				}
				l.buf = l.buf[1:]
				l.bad++
				continue
			}
		}
		if time.Now().After(deadline) {
			return frame{}, errTimeout
		}
		if err := l.f.SetReadDeadline(deadline); err != nil {
			return frame{}, err
		}
		var tmp [4096]byte
		n, err := l.f.Read(tmp[:])
		l.buf = append(l.buf, tmp[:n]...)
		if err != nil && n == 0 {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return frame{}, errTimeout
			}
			return frame{}, err
		}
	}
}

// host speaks the protocol on a link: one request at a time, with retries
// (same seq and payload) when no complete response arrives in time.
type host struct {
	l       link
	seq     uint16
	timeout time.Duration
	retries int
	tries   int // attempts made by the last call
}

type response struct {
	typ     byte
	payload []byte
	frags   int
}

// call sends a command and returns its reassembled response.
func (h *host) call(typ byte, payload []byte) (response, error) {
	h.seq++
	req := encode(typ, h.seq, payload)
	for h.tries = 1; h.tries <= 1+h.retries; h.tries++ {
		if err := h.l.send(req); err != nil {
			return response{}, err
		}
		r, err := h.collect(h.seq, time.Now().Add(h.timeout))
		if err == nil {
			return r, nil
		}
		if !errors.Is(err, errTimeout) {
			return response{}, err
		}
	}
	return response{}, fmt.Errorf("command 0x%02x seq %d: no response after %d attempts", typ, h.seq, h.tries-1)
}

// collect reassembles the fragments of seq (responses to other seqs, such
// as late answers to earlier attempts, are skipped).
func (h *host) collect(seq uint16, deadline time.Time) (response, error) {
	var r response
	for {
		f, err := h.l.recv(deadline)
		if err != nil {
			return r, err
		}
		if f.seq != seq {
			continue
		}
		if int(f.flags>>1) != r.frags {
			// a fragment was lost (faults): start over on the retry
			return r, fmt.Errorf("fragment %d, want %d: %w", f.flags>>1, r.frags, errTimeout)
		}
		r.typ = f.typ
		r.payload = append(r.payload, f.payload...)
		r.frags++
		if f.flags&1 == 0 {
			return r, nil
		}
	}
}

func u32s(v ...uint32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, x)
	}
	return b
}

func words(b []byte) []uint32 {
	w := make([]uint32, len(b)/4)
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return w
}
