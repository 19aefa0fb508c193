package transport_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/transport"
)

// stalledReader plays a reader that was kept from running past its idle
// deadline while the rest of a frame waited in the kernel: its reads hand
// out the given pieces in turn, but a piece marked stalled is preceded by
// a read that sleeps past the deadline and returns the deadline error
// without looking at the waiting bytes, as Go's poller does.
type stalledReader struct {
	mu       sync.Mutex
	pieces   [][]byte
	stalled  map[int]bool
	next     int
	stallNow bool
	deadline time.Time
	done     chan struct{}
}

func (r *stalledReader) SetReadDeadline(t time.Time) error {
	r.mu.Lock()
	r.deadline = t
	r.mu.Unlock()
	return nil
}

func (r *stalledReader) Read(p []byte) (int, error) {
	r.mu.Lock()
	if r.next >= len(r.pieces) {
		r.mu.Unlock()
		<-r.done
		return 0, io.EOF
	}
	if r.stalled[r.next] && !r.stallNow {
		r.stallNow = true
		d := r.deadline
		r.mu.Unlock()
		time.Sleep(time.Until(d) + 5*time.Millisecond)
		return 0, os.ErrDeadlineExceeded
	}
	r.stallNow = false
	n := copy(p, r.pieces[r.next])
	r.next++
	r.mu.Unlock()
	return n, nil
}

func (r *stalledReader) Write(p []byte) (int, error) { return len(p), nil }
func (r *stalledReader) Close() error                { close(r.done); return nil }

// A reader stalled past the idle deadline in the middle of a frame whose
// next bytes are already waiting does not drop the frame: the expiry is
// confirmed by one more read first (IdleClock). Before, this lost a frame
// on a clean link whenever the machine was busy.
func TestIdleStallKeepsFrame(t *testing.T) {
	f, _ := frame.Append(nil, frame.TypeInfo.Response(), 0, 9, bytes.Repeat([]byte{0x5a}, 40))
	r := &stalledReader{pieces: [][]byte{f[:20], f[20:]}, stalled: map[int]bool{1: true}, done: make(chan struct{})}
	s := transport.NewStream(r, transport.StreamOpts{IdleTimeout: 10 * time.Millisecond})
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := s.Recv(ctx)
	if err != nil || !bytes.Equal(got, f) {
		t.Fatalf("Recv: % x, %v", got, err)
	}
	if st := s.Stats(); st.FramingErrors != 0 || st.Skipped != 0 {
		t.Fatalf("a frame whose bytes were waiting was dropped: %+v", st)
	}
}

func TestIdleClock(t *testing.T) {
	t0 := time.Now()
	c := transport.IdleClock{Timeout: 10 * time.Millisecond, Deadlines: true}
	c.Start(t0)
	if d := c.Deadline(false); !d.IsZero() {
		t.Fatalf("deadline %v with nothing buffered", d)
	}
	if d := c.Deadline(true); !d.Equal(t0.Add(10 * time.Millisecond)) {
		t.Fatalf("deadline %v, want the idle end", d)
	}
	if c.Expired(0, t0.Add(5*time.Millisecond), true) {
		t.Fatal("expired before the timeout")
	}
	// First expiry: a probe, not a drop.
	if c.Expired(0, t0.Add(12*time.Millisecond), true) {
		t.Fatal("dropped without a confirming read")
	}
	if d := time.Until(c.Deadline(true)); d > transport.IdleProbe {
		t.Fatalf("probe deadline %v away, want at most %v", d, transport.IdleProbe)
	}
	if !c.Expired(0, t0.Add(14*time.Millisecond), true) {
		t.Fatal("an empty confirming read did not drop the frame")
	}
	// Bytes in the probe restart the clock.
	c.Start(t0)
	c.Expired(0, t0.Add(12*time.Millisecond), true)
	if c.Expired(3, t0.Add(13*time.Millisecond), true) || c.Expired(0, t0.Add(20*time.Millisecond), true) {
		t.Fatal("bytes read in the probe did not restart the idle time")
	}
	// A reader without deadlines (its own read timeout) drops at once.
	c = transport.IdleClock{Timeout: 10 * time.Millisecond}
	c.Start(t0)
	if !c.Expired(0, t0.Add(12*time.Millisecond), true) {
		t.Fatal("no drop on a reader without deadlines")
	}
	// Timeout <= 0 never drops.
	c = transport.IdleClock{Timeout: -1, Deadlines: true}
	c.Start(t0)
	if c.Expired(0, t0.Add(time.Hour), true) || c.Expired(0, t0.Add(2*time.Hour), true) {
		t.Fatal("dropped with the idle rule off")
	}
}
