package transport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Dir is the direction of a recorded frame.
type Dir byte

// Directions.
const (
	Tx Dir = '>' // host to board (Send)
	Rx Dir = '<' // board to host (Recv)
)

// Event is one recorded frame.
type Event struct {
	Dir  Dir
	At   time.Duration // since the recording started
	Data []byte        // the whole frame
}

// Recording is a transport's traffic, in the order it happened.
type Recording []Event

const recordingHeader = "# ptm host traffic v1: <dir> <seconds> <frame hex>; > host to board, < board to host"

// WriteTo writes the recording as text, one frame per line.
func (r Recording) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriter(w)
	var n int64
	k, err := fmt.Fprintln(bw, recordingHeader)
	n += int64(k)
	for _, e := range r {
		if err != nil {
			break
		}
		k, err = fmt.Fprintf(bw, "%c %.6f %s\n", e.Dir, e.At.Seconds(), hex.EncodeToString(e.Data))
		n += int64(k)
	}
	if err != nil {
		return n, err
	}
	return n, bw.Flush()
}

// ReadRecording parses what Recording.WriteTo wrote; errors name the line.
func ReadRecording(rd io.Reader) (Recording, error) {
	var r Recording
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" || s[0] == '#' {
			continue
		}
		f := strings.Fields(s)
		if len(f) != 3 || len(f[0]) != 1 || (f[0][0] != byte(Tx) && f[0][0] != byte(Rx)) {
			return nil, fmt.Errorf("transport: recording line %d: want \"<dir> <seconds> <hex>\", got %q", line, s)
		}
		sec, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			return nil, fmt.Errorf("transport: recording line %d: time: %w", line, err)
		}
		data, err := hex.DecodeString(f[2])
		if err != nil {
			return nil, fmt.Errorf("transport: recording line %d: frame: %w", line, err)
		}
		r = append(r, Event{Dir: Dir(f[0][0]), At: time.Duration(sec * float64(time.Second)), Data: data})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("transport: reading recording: %w", err)
	}
	return r, nil
}

// Recorder is a Transport that records the traffic of another.
type Recorder struct {
	Transport
	mu     sync.Mutex
	start  time.Time
	events Recording
}

// NewRecorder wraps t.
func NewRecorder(t Transport) *Recorder { return &Recorder{Transport: t, start: time.Now()} }

// Send records the frame, then sends it. A frame is recorded before it is
// sent, so a response is always recorded after its request.
func (r *Recorder) Send(b []byte) error {
	r.mu.Lock()
	r.events = append(r.events, Event{Dir: Tx, At: time.Since(r.start), Data: bytes.Clone(b)})
	r.mu.Unlock()
	return r.Transport.Send(b)
}

// Recv receives a frame and records it.
func (r *Recorder) Recv(ctx context.Context) ([]byte, error) {
	b, err := r.Transport.Recv(ctx)
	if err == nil {
		r.mu.Lock()
		r.events = append(r.events, Event{Dir: Rx, At: time.Since(r.start), Data: bytes.Clone(b)})
		r.mu.Unlock()
	}
	return b, err
}

// Recording returns a copy of what has been recorded so far.
func (r *Recorder) Recording() Recording {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append(Recording(nil), r.events...)
}

// Playback is a Transport that replays a Recording: Send checks that the
// host sends exactly the recorded frames in order; Recv returns the
// recorded responses, each only after every frame recorded before it has
// been sent. Timing is not replayed.
type Playback struct {
	rec    Recording
	name   string
	mu     sync.Mutex
	tx, rx int // next event index to look at for each direction
	notify chan struct{}
	closed chan struct{}
	once   sync.Once
	stats  Stats
}

// NewPlayback returns a transport replaying rec.
func NewPlayback(rec Recording) *Playback {
	return &Playback{rec: rec, name: fmt.Sprintf("playback of %d frames", len(rec)), notify: make(chan struct{}, 1), closed: make(chan struct{})}
}

func (p *Playback) next(from int, d Dir) int {
	for from < len(p.rec) && p.rec[from].Dir != d {
		from++
	}
	return from
}

// Name implements Transport.
func (p *Playback) Name() string { return p.name }

// Stats implements Transport.
func (p *Playback) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

// Send implements Transport: b must equal the next recorded host frame.
func (p *Playback) Send(b []byte) error {
	select {
	case <-p.closed:
		return ErrClosed
	default:
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	i := p.next(p.tx, Tx)
	if i >= len(p.rec) {
		return fmt.Errorf("transport: playback: host sent a frame beyond the recording (% x)", b)
	}
	want := p.rec[i].Data
	if !bytes.Equal(b, want) {
		k := 0
		for k < len(b) && k < len(want) && b[k] == want[k] {
			k++
		}
		return fmt.Errorf("transport: playback: event %d: host frame differs from the recording at byte offset %d:\n got  % x\n want % x", i, k, b, want)
	}
	p.tx = i + 1
	p.stats.FramesSent++
	p.stats.BytesSent += uint64(len(b))
	select {
	case p.notify <- struct{}{}:
	default:
	}
	return nil
}

// Recv implements Transport.
func (p *Playback) Recv(ctx context.Context) ([]byte, error) {
	for {
		p.mu.Lock()
		i := p.next(p.rx, Rx)
		if i < len(p.rec) && p.next(p.tx, Tx) > i {
			p.rx = i + 1
			p.stats.FramesRecv++
			p.stats.BytesRecv += uint64(len(p.rec[i].Data))
			p.mu.Unlock()
			return p.rec[i].Data, nil
		}
		p.mu.Unlock()
		select {
		case <-p.notify:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-p.closed:
			return nil, ErrClosed
		}
	}
}

// Close implements Transport. It reports recorded frames that were never
// sent or received.
func (p *Playback) Close() error {
	p.once.Do(func() { close(p.closed) })
	p.mu.Lock()
	defer p.mu.Unlock()
	tx, rx := 0, 0
	for i := p.tx; i < len(p.rec); i++ {
		if p.rec[i].Dir == Tx {
			tx++
		}
	}
	for i := p.rx; i < len(p.rec); i++ {
		if p.rec[i].Dir == Rx {
			rx++
		}
	}
	if tx+rx > 0 {
		return fmt.Errorf("transport: playback closed with %d host frames never sent and %d board frames never received", tx, rx)
	}
	return nil
}
