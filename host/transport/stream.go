package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptmhw/ptm/host/frame"
)

// StreamOpts configures a Stream.
type StreamOpts struct {
	// Name is returned by Name (default "stream").
	Name string
	// LineRate is the line's bit rate in bits/s, if known (UART baud).
	LineRate int
	// BitsPerByte is the number of line bits per byte (default 10, 8N1).
	BitsPerByte int
	// Pace emulates a line at LineRate on the transmit side: Send returns
	// (and the bytes reach the other end) when a line at that rate would
	// have finished sending them, give or take PaceSlack. For
	// pseudo-terminals and pipes, which have no line rate of their own.
	Pace bool
	// IdleTimeout drops a partially received frame when no byte arrives
	// for this long (the bytes after its SOF are rescanned). 0 uses the
	// default: 16 byte times at LineRate but at least 20 ms, or 20 ms when
	// the line rate is unknown. Negative disables it. A reader that was
	// itself kept from running past the idle time reads once more before
	// dropping (IdleClock), so a busy host does not cut frames whose
	// bytes are waiting.
	IdleTimeout time.Duration
	// EOFIsTimeout makes a (0, io.EOF) read mean "no data within the read
	// timeout" instead of the end of the stream (tarm/serial on Linux).
	EOFIsTimeout bool
	// QueueFrames is the number of received frames buffered for Recv
	// (default 256). When full, the reader stops reading.
	QueueFrames int
	// OnDrop, if set, is called (from the reader goroutine) for every
	// frame the receiver drops.
	OnDrop func(frame.Drop)
}

type deadliner interface {
	SetReadDeadline(time.Time) error
}

// Stream is a Transport over a byte stream: a reader goroutine feeds a
// frame.Parser and queues complete frames for Recv.
type Stream struct {
	rw   io.ReadWriteCloser
	opts StreamOpts

	txMu     sync.Mutex
	lineFree time.Time

	frames chan *[]byte
	free   chan *[]byte
	last   *[]byte

	done     chan struct{} // closed when the reader exits
	closing  chan struct{}
	closeMu  sync.Mutex
	closed   bool
	readErr  error // set before done is closed
	closeErr error

	framesSent, bytesSent, framesRecv, bytesRecv atomic.Uint64
	crcErrs, framingErrs, skipped                atomic.Uint64
	txBusy                                       atomic.Int64
	dropHook                                     atomic.Pointer[func(frame.Drop)]
}

// SetDropHook implements DropNotifier.
func (s *Stream) SetDropHook(fn func(frame.Drop)) { s.dropHook.Store(&fn) }

// NewStream starts a Stream over rw. The Stream owns rw: Close closes it.
func NewStream(rw io.ReadWriteCloser, opts StreamOpts) *Stream {
	if opts.Name == "" {
		opts.Name = "stream"
	}
	if opts.BitsPerByte <= 0 {
		opts.BitsPerByte = 10
	}
	if opts.QueueFrames <= 0 {
		opts.QueueFrames = 256
	}
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = 20 * time.Millisecond
		if opts.LineRate > 0 {
			opts.IdleTimeout = max(opts.IdleTimeout, time.Duration(16*opts.BitsPerByte)*time.Second/time.Duration(opts.LineRate))
		}
	}
	s := &Stream{
		rw: rw, opts: opts,
		frames:  make(chan *[]byte, opts.QueueFrames),
		free:    make(chan *[]byte, opts.QueueFrames+2),
		done:    make(chan struct{}),
		closing: make(chan struct{}),
	}
	go s.readLoop()
	return s
}

// Name implements Transport.
func (s *Stream) Name() string { return s.opts.Name }

// Stats implements Transport.
func (s *Stream) Stats() Stats {
	return Stats{
		FramesSent: s.framesSent.Load(), BytesSent: s.bytesSent.Load(),
		FramesRecv: s.framesRecv.Load(), BytesRecv: s.bytesRecv.Load(),
		CRCErrors: s.crcErrs.Load(), FramingErrors: s.framingErrs.Load(), Skipped: s.skipped.Load(),
		LineRate: s.opts.LineRate, BitsPerByte: s.opts.BitsPerByte, TxBusy: time.Duration(s.txBusy.Load()),
	}
}

// byteTime returns the line time of n bytes.
func (s *Stream) byteTime(n int) time.Duration {
	if s.opts.LineRate <= 0 {
		return 0
	}
	return time.Duration(int64(n) * int64(s.opts.BitsPerByte) * int64(time.Second) / int64(s.opts.LineRate))
}

// Send implements Transport. With Pace it blocks for the frame's line time.
func (s *Stream) Send(b []byte) error {
	select {
	case <-s.closing:
		return ErrClosed
	default:
	}
	s.txMu.Lock()
	defer s.txMu.Unlock()
	start := time.Now()
	if s.opts.Pace && s.opts.LineRate > 0 {
		begin := start
		if s.lineFree.After(begin) {
			begin = s.lineFree
		}
		s.lineFree = begin.Add(s.byteTime(len(b)))
		// Sleeping per frame would round every frame up to the timer
		// granularity (about 1 ms); instead the bytes go out when the
		// emulated line is at most PaceSlack behind, so the long-run rate
		// is exact and a frame arrives at most PaceSlack early.
		if d := time.Until(s.lineFree) - PaceSlack; d > 0 {
			time.Sleep(d)
		}
		s.txBusy.Add(int64(s.byteTime(len(b))))
	}
	_, err := s.rw.Write(b)
	if !s.opts.Pace {
		s.txBusy.Add(int64(time.Since(start)))
	}
	if err != nil {
		select {
		case <-s.closing:
			return ErrClosed
		default:
		}
		return fmt.Errorf("transport: %s: sending %d-byte frame: %w", s.opts.Name, len(b), err)
	}
	s.framesSent.Add(1)
	s.bytesSent.Add(uint64(len(b)))
	return nil
}

// Recv implements Transport.
func (s *Stream) Recv(ctx context.Context) ([]byte, error) {
	if s.last != nil {
		select {
		case s.free <- s.last:
		default:
		}
		s.last = nil
	}
	select {
	case b := <-s.frames:
		s.last = b
		return *b, nil
	default:
	}
	select {
	case b := <-s.frames:
		s.last = b
		return *b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.done:
		select { // frames queued before the end still count
		case b := <-s.frames:
			s.last = b
			return *b, nil
		default:
		}
		return nil, s.readErr
	}
}

// Close implements Transport: it closes the byte stream and waits (up to
// a second) for the reader goroutine to finish.
func (s *Stream) Close() error {
	s.closeMu.Lock()
	if s.closed {
		s.closeMu.Unlock()
		return nil
	}
	s.closed = true
	close(s.closing)
	s.closeErr = s.rw.Close()
	s.closeMu.Unlock()
	select {
	case <-s.done:
	case <-time.After(time.Second):
	}
	return s.closeErr
}

// PaceSlack is how far ahead of an emulated line (StreamOpts.Pace) bytes
// may be delivered.
const PaceSlack = 2 * time.Millisecond

// hangupReads is the number of consecutive instant (0, io.EOF) reads after
// which an EOFIsTimeout stream is considered hung up.
const hangupReads = 50

func (s *Stream) readLoop() {
	defer close(s.done)
	var p frame.Parser
	p.OnDrop = func(d frame.Drop) {
		if s.opts.OnDrop != nil {
			s.opts.OnDrop(d)
		}
		if h := s.dropHook.Load(); h != nil {
			(*h)(d)
		}
	}
	buf := make([]byte, 4096)
	dl, _ := s.rw.(deadliner)
	idle := IdleClock{Timeout: s.opts.IdleTimeout, Deadlines: dl != nil}
	idle.Start(time.Now())
	instantEOFs := 0
	var prev frame.ParserStats
	// syncStats publishes the parser's drop counts; it runs before every
	// delivery, so Stats after a Recv include the drops that preceded the
	// frame.
	syncStats := func() {
		st := p.Stats()
		s.crcErrs.Add(st.CRCErrors - prev.CRCErrors)
		s.framingErrs.Add(st.FramingErrors - prev.FramingErrors)
		s.skipped.Add(st.Skipped - prev.Skipped)
		prev = st
	}
	deliver := func(f frame.Frame) bool {
		syncStats()
		var b *[]byte
		select {
		case b = <-s.free:
		default:
			nb := make([]byte, 0, frame.MaxFrameLen)
			b = &nb
		}
		*b, _ = f.AppendTo((*b)[:0])
		select {
		case s.frames <- b:
			s.framesRecv.Add(1)
			return true
		case <-s.closing:
			return false
		}
	}
	drain := func() bool {
		for {
			f, ok := p.Next()
			if !ok {
				return true
			}
			if !deliver(f) {
				return false
			}
		}
	}
	for {
		if dl != nil && s.opts.IdleTimeout > 0 {
			_ = dl.SetReadDeadline(idle.Deadline(p.Buffered() > 0))
		}
		t0 := time.Now()
		n, err := s.rw.Read(buf)
		now := time.Now()
		if n > 0 {
			instantEOFs = 0
			s.bytesRecv.Add(uint64(n))
			rest := buf[:n]
			for len(rest) > 0 {
				k := p.Push(rest)
				rest = rest[k:]
				if !drain() {
					s.readErr = ErrClosed
					return
				}
			}
		}
		if idle.Expired(n, now, p.Buffered() > 0) {
			for p.Expire() > 0 {
				if !drain() {
					s.readErr = ErrClosed
					return
				}
			}
		}
		syncStats()
		if err == nil {
			continue
		}
		select {
		case <-s.closing:
			s.readErr = ErrClosed
			return
		default:
		}
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			continue
		case s.opts.EOFIsTimeout && n == 0 && err == io.EOF:
			// tarm/serial: the read timeout expired. A device that has
			// gone away returns this instantly, again and again.
			if now.Sub(t0) < time.Millisecond {
				instantEOFs++
				if instantEOFs >= hangupReads {
					s.readErr = fmt.Errorf("transport: %s: device hung up (%d reads returned end of file at once)", s.opts.Name, instantEOFs)
					return
				}
				time.Sleep(time.Millisecond)
			} else {
				instantEOFs = 0
			}
			continue
		case err == io.EOF:
			s.readErr = fmt.Errorf("transport: %s: link closed by the other end: %w", s.opts.Name, io.EOF)
			return
		default:
			s.readErr = fmt.Errorf("transport: %s: reading: %w", s.opts.Name, err)
			return
		}
	}
}
