package softboard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/transport"
)

// StreamOpts configures Serve.
type StreamOpts struct {
	// IdleTimeout drops a partially received frame when the line is idle
	// this long inside it (docs/protocol.md: IDLE_TIMEOUT, 16 byte times).
	// The bytes after the dropped frame's SOF are rescanned. 0 uses 16
	// byte times at the board's BitRate but at least 10 ms (a software
	// board's reads are not paced by a line); negative disables it.
	IdleTimeout time.Duration
	// Pace emulates a line at the board's BitRate (10 bits per byte) on
	// the board's transmit side (within transport.PaceSlack).
	Pace bool
	// PaceBytes, with Pace, sends each frame in pieces of at most
	// PaceBytes bytes, each when the emulated line has sent it, as a UART
	// delivers bytes one by one (a long answer on a slow line arrives
	// over its line time, not at its end). 0 sends whole frames.
	PaceBytes int
	// OnDrop, if set, is called for every frame the receiver drops.
	OnDrop func(frame.Drop)
	// NoRescan receives like the version 4 board (frame.Parser.NoRescan):
	// a dropped candidate's bytes are not rescanned, so a corrupt frame
	// swallows the frames that begin within its claimed extent. By
	// default the software board rescans (docs/protocol.md allows both).
	NoRescan bool
}

type deadliner interface {
	SetReadDeadline(time.Time) error
}

// txLine serializes (and optionally paces) the board's transmissions.
type txLine struct {
	mu       sync.Mutex
	w        io.Writer
	rate     int
	pace     bool
	piece    int
	lineFree time.Time
}

func (t *txLine) write(b []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for t.pace && t.piece > 0 && len(b) > t.piece {
		if err := t.writePiece(b[:t.piece]); err != nil {
			return err
		}
		b = b[t.piece:]
	}
	return t.writePiece(b)
}

func (t *txLine) writePiece(b []byte) error {
	if t.pace && t.rate > 0 {
		now := time.Now()
		if t.lineFree.Before(now) {
			t.lineFree = now
		}
		t.lineFree = t.lineFree.Add(time.Duration(int64(len(b)) * 10 * int64(time.Second) / int64(t.rate)))
		if d := time.Until(t.lineFree) - transport.PaceSlack; d > 0 {
			time.Sleep(d) // see transport.PaceSlack
		}
	}
	_, err := t.w.Write(b)
	return err
}

// Serve runs the board on a byte-stream link (a UART, a pseudo-terminal
// master, a pipe end) until ctx is done or the stream fails. It closes rw
// when it returns. It returns nil when ctx ended it.
//
// A receiver goroutine hunts frames (frame.Parser: CRC and framing errors
// are counted in STATUS) and hands them to the executor through a buffer of
// Config.QueueFrames frames; a frame that finds the buffer full is
// answered with ERROR code 8 (busy).
func (b *Board) Serve(ctx context.Context, rw io.ReadWriteCloser, opts StreamOpts) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = 10 * time.Millisecond
		if b.cfg.BitRate > 0 {
			opts.IdleTimeout = max(opts.IdleTimeout, time.Duration(160*int64(time.Second)/int64(b.cfg.BitRate)))
		}
	}
	tx := &txLine{w: rw, rate: b.cfg.BitRate, pace: opts.Pace, piece: opts.PaceBytes}
	b.startLine()
	queue := make(chan []byte, b.cfg.QueueFrames)
	free := make(chan []byte, b.cfg.QueueFrames+2)
	rxErr := make(chan error, 1)
	go func() {
		rxErr <- b.receive(ctx, rw, opts, tx, queue, free)
		close(queue)
	}()
	stop := context.AfterFunc(ctx, func() { rw.Close() })
	defer stop()
	var out []byte
	var txErr error
	for fb := range queue {
		var f frame.Frame
		if err := f.DecodeFromBytes(fb); err == nil && txErr == nil {
			if d := time.Duration(b.execTime.Load()); d > 0 {
				time.Sleep(d)
			}
			out = b.Execute(out[:0], f)
			if err := tx.write(out); err != nil && ctx.Err() == nil {
				txErr = fmt.Errorf("softboard: sending: %w", err)
				cancel()
			}
		}
		select {
		case free <- fb:
		default:
		}
	}
	rw.Close()
	err := <-rxErr
	if txErr != nil {
		return txErr
	}
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// SetExecTime adds d (wall time) to the execution of every command Serve
// runs from now on: a slow board, e.g. a simulation on a loaded host.
// Frames arriving meanwhile wait in the receive buffer (or are answered
// busy when it is full).
func (b *Board) SetExecTime(d time.Duration) { b.execTime.Store(int64(d)) }

// receive is Serve's receiver: bytes to frames to the queue.
func (b *Board) receive(ctx context.Context, rw io.Reader, opts StreamOpts, tx *txLine, queue, free chan []byte) error {
	var p frame.Parser
	p.OnDrop = opts.OnDrop
	p.NoRescan = opts.NoRescan
	buf := make([]byte, 4096)
	dl, _ := rw.(deadliner)
	idle := transport.IdleClock{Timeout: opts.IdleTimeout, Deadlines: dl != nil}
	idle.Start(time.Now())
	var prev frame.ParserStats
	var busy []byte
	handle := func(f frame.Frame) {
		var fb []byte
		select {
		case fb = <-free:
		default:
			fb = make([]byte, 0, frame.MaxFrameLen)
		}
		fb, _ = f.AppendTo(fb[:0])
		select {
		case queue <- fb:
		default:
			busy = b.BusyFrame(busy[:0], f)
			_ = tx.write(busy)
		}
	}
	for {
		if dl != nil && opts.IdleTimeout > 0 {
			_ = dl.SetReadDeadline(idle.Deadline(p.Buffered() > 0))
		}
		n, err := rw.Read(buf)
		now := time.Now()
		if n > 0 {
			if b.cfg.BitRate > 0 {
				b.Count(frame.CounterUARTBytes, uint32(n)) // a UART: every byte received
			}
			p.Feed(buf[:n], handle)
		}
		if idle.Expired(n, now, p.Buffered() > 0) {
			for p.Expire() > 0 {
				for {
					f, ok := p.Next()
					if !ok {
						break
					}
					handle(f)
				}
			}
		}
		st := p.Stats()
		if d := st.CRCErrors - prev.CRCErrors; d > 0 {
			b.Count(frame.CounterCRCErrors, uint32(d))
		}
		if d := st.FramingErrors - prev.FramingErrors; d > 0 {
			b.Count(frame.CounterFraming, uint32(d))
		}
		prev = st
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				continue
			}
			if errors.Is(err, io.EOF) {
				return fmt.Errorf("softboard: link closed by the host: %w", err)
			}
			return fmt.Errorf("softboard: reading: %w", err)
		}
	}
}

// Pipe connects the board to a new in-memory pipe (optionally through
// fault injection) and serves it until ctx is done. It returns the host's
// transport; hostOpts configures it (Name defaults to "pipe to softboard").
// The returned function stops the board and waits for it.
func (b *Board) Pipe(ctx context.Context, hostOpts transport.StreamOpts, opts StreamOpts, faults *Faults) (*transport.Stream, *FaultyLink, func() error) {
	if hostOpts.Name == "" {
		hostOpts.Name = "pipe to softboard"
	}
	if hostOpts.LineRate == 0 {
		hostOpts.LineRate = b.cfg.BitRate
	}
	host, end := transport.NewPipe(hostOpts)
	var link io.ReadWriteCloser = end
	var fl *FaultyLink
	if faults != nil {
		fl = faults.Wrap(end)
		link = fl
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- b.Serve(ctx, link, opts) }()
	return host, fl, func() error {
		cancel()
		return <-done
	}
}
