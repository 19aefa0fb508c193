package softboard

import (
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Faults describes link faults to inject, per byte and per direction.
type Faults struct {
	// Seed makes the faults reproducible.
	Seed uint64
	// FlipToBoard and DropToBoard are the probabilities that a byte from
	// the host to the board has one random bit flipped or is lost.
	FlipToBoard, DropToBoard float64
	// FlipToHost and DropToHost are the same for bytes from the board.
	FlipToHost, DropToHost float64
	// MaxDelay delays every write of the board by a random time in
	// [0, MaxDelay] (order is kept: a write is never delivered before an
	// earlier one; the delays do not accumulate, the link is a delay line).
	MaxDelay time.Duration
	// MinDelay is the least delay of every write when MaxDelay is set
	// (the delays are drawn from [MinDelay, MaxDelay]).
	MinDelay time.Duration
}

// FaultStats counts injected faults.
type FaultStats struct {
	FlippedToBoard, DroppedToBoard uint64
	FlippedToHost, DroppedToHost   uint64
}

// FaultyLink is the board's end of a link with faults injected: reads see
// the host's bytes after the to-board faults, writes reach the host after
// the to-host faults. It forwards SetReadDeadline.
type FaultyLink struct {
	rw     io.ReadWriteCloser
	f      Faults
	rmu    sync.Mutex
	rrng   *rand.Rand
	wmu    sync.Mutex
	wrng   *rand.Rand
	wbuf   []byte
	line   chan delayed
	lastAt time.Time
	once   sync.Once
	quit   chan struct{}
	fb, db atomic.Uint64
	fh, dh atomic.Uint64
}

type delayed struct {
	at   time.Time
	data []byte
}

// Wrap returns rw (the board's end of a link) with the faults applied.
func (f Faults) Wrap(rw io.ReadWriteCloser) *FaultyLink {
	l := &FaultyLink{rw: rw, f: f, quit: make(chan struct{}),
		rrng: rand.New(rand.NewPCG(f.Seed, 0x746f626f617264)), wrng: rand.New(rand.NewPCG(f.Seed, 0x746f686f7374))}
	if f.MaxDelay > 0 {
		l.line = make(chan delayed, 1024)
		go l.deliver()
	}
	return l
}

// deliver is the delay line.
func (l *FaultyLink) deliver() {
	for {
		select {
		case d := <-l.line:
			if w := time.Until(d.at); w > 0 {
				time.Sleep(w)
			}
			if _, err := l.rw.Write(d.data); err != nil {
				return
			}
		case <-l.quit:
			return
		}
	}
}

// Stats returns the faults injected so far.
func (l *FaultyLink) Stats() FaultStats {
	return FaultStats{FlippedToBoard: l.fb.Load(), DroppedToBoard: l.db.Load(), FlippedToHost: l.fh.Load(), DroppedToHost: l.dh.Load()}
}

// mangle applies flips and drops in place and returns the surviving bytes.
func mangle(b []byte, rng *rand.Rand, flip, drop float64, flipped, dropped *atomic.Uint64) []byte {
	if flip <= 0 && drop <= 0 {
		return b
	}
	out := b[:0]
	for _, c := range b {
		if drop > 0 && rng.Float64() < drop {
			dropped.Add(1)
			continue
		}
		if flip > 0 && rng.Float64() < flip {
			c ^= 1 << rng.IntN(8)
			flipped.Add(1)
		}
		out = append(out, c)
	}
	return out
}

// Read reads host bytes with the to-board faults applied. It may return
// (0, nil) when every byte read was dropped.
func (l *FaultyLink) Read(p []byte) (int, error) {
	n, err := l.rw.Read(p)
	l.rmu.Lock()
	n = len(mangle(p[:n], l.rrng, l.f.FlipToBoard, l.f.DropToBoard, &l.fb, &l.db))
	l.rmu.Unlock()
	return n, err
}

// Write sends board bytes with the to-host faults applied.
func (l *FaultyLink) Write(p []byte) (int, error) {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if l.f.MaxDelay > 0 {
		lo := min(l.f.MinDelay, l.f.MaxDelay)
		at := time.Now().Add(lo + time.Duration(l.wrng.Int64N(int64(l.f.MaxDelay-lo)+1)))
		if at.Before(l.lastAt) {
			at = l.lastAt
		}
		l.lastAt = at
		b := mangle(append([]byte(nil), p...), l.wrng, l.f.FlipToHost, l.f.DropToHost, &l.fh, &l.dh)
		select {
		case l.line <- delayed{at: at, data: b}:
			return len(p), nil
		case <-l.quit:
			return 0, io.ErrClosedPipe
		}
	}
	l.wbuf = append(l.wbuf[:0], p...)
	b := mangle(l.wbuf, l.wrng, l.f.FlipToHost, l.f.DropToHost, &l.fh, &l.dh)
	if _, err := l.rw.Write(b); err != nil {
		return 0, err
	}
	return len(p), nil
}

// SetReadDeadline forwards to the wrapped link if it supports deadlines.
func (l *FaultyLink) SetReadDeadline(t time.Time) error {
	if d, ok := l.rw.(deadliner); ok {
		return d.SetReadDeadline(t)
	}
	return nil
}

// Close closes the wrapped link (frames still in the delay line are lost).
func (l *FaultyLink) Close() error {
	l.once.Do(func() { close(l.quit) })
	return l.rw.Close()
}
