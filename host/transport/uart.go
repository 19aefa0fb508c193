package transport

import (
	"fmt"
	"time"

	"github.com/ptmhw/ptm/host/frame"
	"github.com/tarm/serial"
)

// UARTOpts configures OpenUART.
type UARTOpts struct {
	// Baud is the line rate (default 115200). tarm/serial accepts the
	// standard rates up to 4,000,000. On a pseudo-terminal it is ignored by
	// the kernel but still used for Stats.LineRate and pacing.
	Baud int
	// ReadTimeout bounds each read so the reader notices Close (default
	// 100 ms; tarm/serial rounds it to tenths of a second, 0.1 s to 25.5 s).
	ReadTimeout time.Duration
	// IdleTimeout, Pace, QueueFrames and OnDrop are as in StreamOpts.
	IdleTimeout time.Duration
	Pace        bool
	QueueFrames int
	OnDrop      func(frame.Drop)
	// KeepInput keeps bytes that were waiting in the port's receive
	// buffer at open; by default they are flushed (stale responses of an
	// earlier session would only be dropped later).
	KeepInput bool
}

// OpenUART opens a serial port (8N1, no flow control) with tarm/serial and
// returns a Stream transport over it.
func OpenUART(path string, opts UARTOpts) (*Stream, error) {
	if opts.Baud == 0 {
		opts.Baud = 115200
	}
	if opts.ReadTimeout <= 0 {
		opts.ReadTimeout = 100 * time.Millisecond
	}
	if opts.ReadTimeout < 100*time.Millisecond || opts.ReadTimeout > 25500*time.Millisecond {
		return nil, fmt.Errorf("transport: uart %s: read timeout %v, tarm/serial supports 0.1 s to 25.5 s", path, opts.ReadTimeout)
	}
	port, err := serial.OpenPort(&serial.Config{Name: path, Baud: opts.Baud, ReadTimeout: opts.ReadTimeout})
	if err != nil {
		return nil, fmt.Errorf("transport: uart %s at %d baud: %w", path, opts.Baud, err)
	}
	if !opts.KeepInput {
		if err := port.Flush(); err != nil {
			port.Close()
			return nil, fmt.Errorf("transport: uart %s: flushing stale input: %w", path, err)
		}
	}
	return NewStream(port, StreamOpts{
		Name:         fmt.Sprintf("uart %s @ %d", path, opts.Baud),
		LineRate:     opts.Baud,
		BitsPerByte:  10,
		Pace:         opts.Pace,
		IdleTimeout:  opts.IdleTimeout,
		EOFIsTimeout: true,
		QueueFrames:  opts.QueueFrames,
		OnDrop:       opts.OnDrop,
	}), nil
}
