package transport

import (
	"io"
	"os"
	"sync"
	"time"
)

// halfPipe is one direction of an in-memory byte pipe: writes never block
// (like a line, it does not push back), reads block until data, close or
// deadline.
type halfPipe struct {
	mu     sync.Mutex
	buf    []byte
	off    int
	closed bool
	notify chan struct{}
}

func newHalfPipe() *halfPipe { return &halfPipe{notify: make(chan struct{}, 1)} }

func (h *halfPipe) signal() {
	select {
	case h.notify <- struct{}{}:
	default:
	}
}

func (h *halfPipe) write(p []byte) (int, error) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return 0, io.ErrClosedPipe
	}
	if h.off > 0 && h.off == len(h.buf) {
		h.buf, h.off = h.buf[:0], 0
	}
	h.buf = append(h.buf, p...)
	h.mu.Unlock()
	h.signal()
	return len(p), nil
}

func (h *halfPipe) read(p []byte, deadline <-chan time.Time, closedSelf <-chan struct{}) (int, error) {
	for {
		h.mu.Lock()
		if h.off < len(h.buf) {
			n := copy(p, h.buf[h.off:])
			h.off += n
			h.mu.Unlock()
			return n, nil
		}
		closed := h.closed
		h.mu.Unlock()
		if closed {
			return 0, io.EOF
		}
		select {
		case <-h.notify:
		case <-deadline:
			return 0, os.ErrDeadlineExceeded
		case <-closedSelf:
			return 0, io.ErrClosedPipe
		}
	}
}

func (h *halfPipe) close() {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.signal()
}

// PipeEnd is one end of an in-memory full-duplex byte pipe. It implements
// io.ReadWriteCloser and SetReadDeadline. Closing an end makes the other
// end's reads return io.EOF once drained, and this end's reads return
// io.ErrClosedPipe.
type PipeEnd struct {
	r, w      *halfPipe
	mu        sync.Mutex
	deadline  time.Time
	closed    chan struct{}
	closeOnce sync.Once
}

// Read reads what the other end wrote.
func (e *PipeEnd) Read(p []byte) (int, error) {
	e.mu.Lock()
	d := e.deadline
	e.mu.Unlock()
	var dc <-chan time.Time
	if !d.IsZero() {
		wait := time.Until(d)
		if wait <= 0 {
			// Still return data that is already there.
			dc = closedTimeChan
		} else {
			t := time.NewTimer(wait)
			defer t.Stop()
			dc = t.C
		}
	}
	return e.r.read(p, dc, e.closed)
}

var closedTimeChan = func() <-chan time.Time {
	c := make(chan time.Time)
	close(c)
	return c
}()

// Write sends p to the other end; it never blocks.
func (e *PipeEnd) Write(p []byte) (int, error) {
	select {
	case <-e.closed:
		return 0, io.ErrClosedPipe
	default:
	}
	return e.w.write(p)
}

// SetReadDeadline makes Read return os.ErrDeadlineExceeded after t (zero:
// no deadline).
func (e *PipeEnd) SetReadDeadline(t time.Time) error {
	e.mu.Lock()
	e.deadline = t
	e.mu.Unlock()
	return nil
}

// Close closes this end.
func (e *PipeEnd) Close() error {
	e.closeOnce.Do(func() {
		close(e.closed)
		e.w.close()
	})
	return nil
}

// BytePipe returns the two ends of an in-memory full-duplex byte stream.
func BytePipe() (a, b *PipeEnd) {
	ab, ba := newHalfPipe(), newHalfPipe()
	a = &PipeEnd{r: ba, w: ab, closed: make(chan struct{})}
	b = &PipeEnd{r: ab, w: ba, closed: make(chan struct{})}
	return a, b
}

// NewPipe returns a Stream transport over an in-memory byte pipe and the
// pipe's other end, where a board (host/softboard) reads commands and
// writes responses. opts.Name defaults to "pipe".
func NewPipe(opts StreamOpts) (*Stream, *PipeEnd) {
	if opts.Name == "" {
		opts.Name = "pipe"
	}
	a, b := BytePipe()
	return NewStream(a, opts), b
}
