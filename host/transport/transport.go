package transport

import (
	"context"

	"errors"
	"github.com/ptmhw/ptm/host/frame"
	"time"
)

// Transport carries protocol frames over one link.
//
// Send and Recv may be called concurrently with each other; Send is safe
// for concurrent use (frames are never interleaved). Recv is meant for one
// reader goroutine.
type Transport interface {
	// Send transmits one encoded frame (frame.Append's output).
	Send(frame []byte) error
	// Recv returns the next complete, CRC-checked frame's bytes (SOF to
	// CRC). The slice is valid until the next Recv call.
	Recv(ctx context.Context) ([]byte, error)
	// Close releases the link; a blocked Recv returns ErrClosed.
	Close() error
	// Name describes the link ("uart /dev/ttyUSB1 @ 115200", ...).
	Name() string
	// Stats returns the traffic counters.
	Stats() Stats
}

// DropNotifier is implemented by transports that can report the frames
// their receiver drops (bad CRC, bad length, idle inside a frame) as they
// happen. The driver uses the claimed sequence number as a hint to resend
// that request at once instead of waiting for its timeout (the hint may
// be wrong, since the header is part of what was corrupted, but a resend
// is always harmless).
type DropNotifier interface {
	// SetDropHook installs fn, called from the receiving goroutine.
	SetDropHook(fn func(frame.Drop))
}

// ErrClosed is returned by Send and Recv after Close.
var ErrClosed = errors.New("transport: closed")

// Stats counts a transport's traffic. Byte counts are of protocol frames
// plus, on byte streams, any garbage received between them.
type Stats struct {
	FramesSent uint64 `json:"frames_sent"`
	BytesSent  uint64 `json:"bytes_sent"`
	FramesRecv uint64 `json:"frames_recv"` // valid frames delivered by Recv's parser
	BytesRecv  uint64 `json:"bytes_recv"`
	// CRCErrors and FramingErrors count frames the host's receiver dropped
	// (bad CRC; bad length or idle inside a frame).
	CRCErrors     uint64 `json:"crc_errors"`
	FramingErrors uint64 `json:"framing_errors"`
	// Skipped counts garbage bytes discarded while hunting for SOF.
	Skipped uint64 `json:"skipped_bytes"`
	// Filtered counts link frames ignored (Ethernet: another EtherType or
	// source MAC).
	Filtered uint64 `json:"filtered"`
	// LineRate is the link's bit rate in bits/s (UART baud) when known,
	// else 0; BitsPerByte is the line bits per data byte (10 for 8N1).
	LineRate    int `json:"line_rate"`
	BitsPerByte int `json:"bits_per_byte"`
	// TxBusy is the time Send spent transmitting: with pacing, the emulated
	// line time; otherwise the time the write calls blocked.
	TxBusy time.Duration `json:"tx_busy_ns"`
}

// Sub returns s - o counter by counter (LineRate and BitsPerByte are
// kept), for the traffic of an interval.
func (s Stats) Sub(o Stats) Stats {
	s.FramesSent -= o.FramesSent
	s.BytesSent -= o.BytesSent
	s.FramesRecv -= o.FramesRecv
	s.BytesRecv -= o.BytesRecv
	s.CRCErrors -= o.CRCErrors
	s.FramingErrors -= o.FramingErrors
	s.Skipped -= o.Skipped
	s.Filtered -= o.Filtered
	s.TxBusy -= o.TxBusy
	return s
}

// TxUtilization is the host-to-board line utilization over wall (see the
// package documentation), or 0 when the line rate is unknown.
func (s Stats) TxUtilization(wall time.Duration) float64 {
	return utilization(s.BytesSent, s.LineRate, s.BitsPerByte, wall)
}

// RxUtilization is the board-to-host line utilization over wall, computed
// like TxUtilization from the bytes received.
func (s Stats) RxUtilization(wall time.Duration) float64 {
	return utilization(s.BytesRecv, s.LineRate, s.BitsPerByte, wall)
}

func utilization(bytes uint64, rate, bpb int, wall time.Duration) float64 {
	if rate <= 0 || wall <= 0 {
		return 0
	}
	if bpb <= 0 {
		bpb = 10
	}
	return float64(bytes) * float64(bpb) / float64(rate) / wall.Seconds()
}
