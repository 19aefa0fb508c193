package driver

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/transport"
)

// Opts configures a Driver. The zero value gives the defaults.
type Opts struct {
	// Window is the largest number of requests in flight (default
	// DefaultWindow). Once INFO has been read, the window is also capped
	// at the board's receive buffer depth + 1 (INFO word 18: frames it
	// holds while it executes one), since more would be answered busy:
	// by default the board's buffer sets the window. The driver halves its
	// effective window when the board answers busy anyway and grows it
	// back by one per window of successes (AIMD), never above the cap.
	//
	// A line stays busy only while the requests in flight cover the round
	// trip: on a 3 Mbaud UART with about 2 ms of USB and host latency that
	// is about 600 bytes, 25 small INFER requests; a board that buffers
	// few frames caps the utilization below that (docs/synthesis.md, "The
	// line at 3 Mbaud").
	Window int
	// Timeout is the initial retransmission timeout (RTO), used until a
	// round trip has been measured (default 200 ms). After that the RTO
	// follows RFC 6298: the smoothed round trip time plus four times its
	// deviation, sampled only from requests answered at their first
	// transmission (Karn's rule). Every timeout doubles it (exponential
	// back-off, kept for new requests until the next valid sample), up
	// to MaxTimeout. It never drops below MinTimeout plus the line time
	// of everything in flight (requests and expected responses) when the
	// line rate is known.
	Timeout time.Duration
	// MinTimeout is the lower bound of the RTO (default 20 ms).
	MinTimeout time.Duration
	// MaxTimeout is the upper bound of the backed-off RTO (default 30 s,
	// at least MinTimeout).
	MaxTimeout time.Duration
	// Deadline bounds how long the driver keeps resending one request
	// that has no complete response, counted from its first transmission
	// (default DefaultDeadline). When it passes, the request fails with a
	// *DeadlineError (which wraps ErrTimeout); Stream then stops and
	// reports every request left unanswered, and Load reports the words
	// the board has not acknowledged. For Load the deadline bounds the
	// time without progress: the upload fails when the board has not
	// acknowledged new words for Deadline.
	Deadline time.Duration
	// MaxRetries, if positive, also bounds the number of times a request
	// is resent (same seq, same bytes) before it fails with ErrTimeout.
	// By default (0) only Deadline bounds the resends, so a slow board
	// never loses a request. Resends after a busy answer do not count.
	MaxRetries int
	// MaxBusy, if positive, bounds the busy answers a request tolerates
	// (default 0: only Deadline bounds them).
	MaxBusy int
	// BusyBackoff is how long a request answered busy waits before it is
	// resent (default 1 ms).
	BusyBackoff time.Duration
	// ChunkWords is the largest number of words per LOAD_DATA frame
	// (default and maximum frame.MaxLoadWords = 510). Load starts with it
	// and shrinks the chunks when frames get lost (a noisy link loses a
	// long frame more often than a short one).
	ChunkWords int
	// LineRate is the link's bit rate for timeout scaling (default: the
	// transport's Stats().LineRate, else the board's INFO bit rate).
	LineRate int
	// FirstSeq, if set, is the first sequence number (for reproducible
	// traffic). By default the driver starts at a time-derived one, so
	// that responses left over from an earlier session do not match.
	FirstSeq *uint16
	// NoFastRetransmit disables resending a request as soon as a response
	// to a later request shows that it was lost (the board answers in
	// arrival order); only timeouts then trigger resends.
	NoFastRetransmit bool
	// NoWindows makes Stream send every request whole (INFER) even to a
	// board that answers windows (protocol version 6). By default Stream
	// asks such a board for each answer in windows of its result items
	// sized from the loss the line shows (the whole answer on a clean
	// line; docs/protocol.md section 4, "Windows"), so that a long
	// answer gets through a noisy line.
	NoWindows bool
}

func (o *Opts) defaults() {
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	if o.Timeout <= 0 {
		o.Timeout = 200 * time.Millisecond
	}
	if o.MinTimeout <= 0 {
		o.MinTimeout = 20 * time.Millisecond
	}
	if o.MaxTimeout <= 0 {
		o.MaxTimeout = 30 * time.Second
	}
	o.MaxTimeout = max(o.MaxTimeout, o.MinTimeout)
	if o.Deadline <= 0 {
		o.Deadline = DefaultDeadline
	}
	if o.BusyBackoff <= 0 {
		o.BusyBackoff = time.Millisecond
	}
	if o.ChunkWords <= 0 || o.ChunkWords > frame.MaxLoadWords {
		o.ChunkWords = frame.MaxLoadWords
	}
}

// DefaultWindow is the default of Opts.Window: more than any board
// buffers, so that the board's INFO word 18 sets the window.
const DefaultWindow = 64

// DefaultDeadline is the default of Opts.Deadline: generous, so that a
// board slowed down by a loaded host (a Verilated board at a tenth of its
// usual speed) or a noisy link never loses a request; a dead board is
// reported after it.
const DefaultDeadline = 5 * time.Minute

// Seq returns a pointer to s, for Opts.FirstSeq.
func Seq(s uint16) *uint16 { return &s }

type counters struct {
	frames, retries, timeouts, fast, hints, busy, loadGaps atomic.Uint64
	stray, fragGaps, fragReset, completed, failed          atomic.Uint64
	lateAcks                                               atomic.Uint64
	goBacks, expired                                       atomic.Uint64
	srtt, rto                                              atomic.Int64 // nanoseconds
	backoff, maxBackoff                                    atomic.Int64
	spurious                                               atomic.Uint64
	crcMatched, crcUnmatched                               atomic.Uint64
	windows, splits                                        atomic.Uint64
	minChunk                                               atomic.Int64 // smallest LOAD_DATA chunk used (words)
	window                                                 atomic.Int64 // the window cap in effect
}

// Stats counts the driver's work.
type Stats struct {
	Completed       uint64 `json:"completed"`        // requests answered
	Failed          uint64 `json:"failed"`           // requests failed (timeout, refusal, cancellation)
	Frames          uint64 `json:"frames"`           // transmissions, resends included
	Retries         uint64 `json:"retries"`          // resends of any cause
	Timeouts        uint64 `json:"timeouts"`         // resends after a timeout
	FastRetransmits uint64 `json:"fast_retransmits"` // resends after evidence of a loss
	DropHints       uint64 `json:"drop_hints"`       // resends after the transport dropped a frame claiming the request's seq
	Busy            uint64 `json:"busy"`             // busy answers
	LoadGaps        uint64 `json:"load_gaps"`        // LOAD_DATA gap answers (resume from next)
	Stray           uint64 `json:"stray"`            // responses for no pending request: late duplicates
	FragmentGaps    uint64 `json:"fragment_gaps"`    // fragments that arrived after a lost one
	FragmentResets  uint64 `json:"fragment_resets"`  // reassemblies restarted because attempts disagreed
	LoadGoBacks     uint64 `json:"load_go_backs"`    // LOAD_DATA restarts from the board's next offset after a lost chunk
	LateLoadAcks    uint64 `json:"late_load_acks"`   // LOAD_DATA answers that came after their chunk was given up, counted as written
	Expired         uint64 `json:"expired"`          // requests that failed because Opts.Deadline passed
	// CRCMatched counts response fragments that arrived garbled but
	// whose intact CRC equals the CRC of the expected payload
	// (Request.Expect, frame.CRCMatches): taken as received.
	CRCMatched uint64 `json:"crc_matched"`
	// CRCUnmatched counts garbled fragments claiming a request in flight
	// with an expected payload whose CRC did not match it (their CRC or
	// header garbled too, or a board answering something else).
	CRCUnmatched uint64 `json:"crc_unmatched"`
	// Windows counts INFER_WINDOW answers received (parts of answers);
	// Splits counts windows given up after a lost transmission because
	// the line then called for windows half as long or less, their items
	// asked for again in shorter windows.
	Windows uint64 `json:"windows"`
	Splits  uint64 `json:"window_splits"`
	// SRTT is the smoothed round trip time (0 before the first sample),
	// RTO the retransmission timeout a new request would get now, and
	// Backoff the number of doublings in effect (RFC 6298).
	SRTT    time.Duration `json:"srtt_ns"`
	RTO     time.Duration `json:"rto_ns"`
	Backoff int           `json:"backoff"`
	// MaxBackoff is the most doublings any transmission used.
	MaxBackoff int `json:"max_backoff"`
	// SpuriousTimeouts counts timeouts shown to have fired before the
	// board answered: answers that arrived after their request had been
	// resent (or handed back) on a timeout, and busy refusals of a copy
	// resent on a timeout (the board's queue was full, so it still held
	// the earlier copy). Each doubles the RTO at once and raises the
	// back-off cap (2 doublings, engine.go lossBackoff) by one; the
	// raise expires one step per 8 RTT samples.
	SpuriousTimeouts uint64 `json:"spurious_timeouts"`
	// MinChunkWords is the smallest LOAD_DATA chunk Load used (0 before
	// any upload).
	MinChunkWords int `json:"min_chunk_words"`
	// Window is the most requests in flight allowed now: Opts.Window,
	// capped by the board's receive buffer depth + 1 once INFO was read.
	Window int `json:"window"`
	// Link is the transport's counters: host-side CRC and framing drops,
	// bytes and frames each way.
	Link transport.Stats `json:"link"`
}

// Driver talks to one board over a transport. Its methods are safe for
// concurrent use; Load should not run concurrently with Stream.
type Driver struct {
	t      transport.Transport
	opts   Opts
	e      *engine
	cancel context.CancelFunc
	rdone  chan struct{} // closed when the reader goroutine has returned
	once   sync.Once
	info   atomic.Pointer[frame.Info]
	aest   answerEst // answer window sizes (Stream on a version-6 board)
}

// New starts a driver on t (which the caller still owns: close it after
// the driver).
func New(t transport.Transport, opts Opts) *Driver {
	opts.defaults()
	seq := uint16(time.Now().UnixNano() >> 10)
	if opts.FirstSeq != nil {
		seq = *opts.FirstSeq
	}
	rate := opts.LineRate
	if rate == 0 {
		rate = t.Stats().LineRate
	}
	e := &engine{
		t: t, opts: opts, st: &counters{},
		submit: make(chan *call), cancel: make(chan cancelReq), frames: make(chan []byte, 256), hints: make(chan uint16, 64), garbled: make(chan garbled, 64), late: make(chan lateAck, 64),
		window: make(chan int), maxWin: opts.Window,
		readErr: make(chan error, 1), quit: make(chan struct{}), dead: make(chan struct{}),
		pending: map[uint16]*call{}, nextSeq: seq, cwnd: float64(opts.Window), lineRate: rate, sinceLoss: lossMemory,
	}
	e.st.window.Store(int64(opts.Window))
	ctx, cancel := context.WithCancel(context.Background())
	d := &Driver{t: t, opts: opts, e: e, cancel: cancel, rdone: make(chan struct{})}
	if dn, ok := t.(transport.DropNotifier); ok {
		dn.SetDropHook(func(dr frame.Drop) {
			if dr.Have < 5 { // the seq bytes did not arrive
				return
			}
			if dr.Type == frame.TypeInfer.Response() && len(dr.Bytes) >= frame.Overhead {
				// A garbled INFER answer: its CRC may still verify it
				// against the expected payload (onGarbled).
				select {
				case e.garbled <- garbled{seq: dr.Seq, b: append([]byte(nil), dr.Bytes...)}:
					return
				default:
				}
			}
			if !opts.NoFastRetransmit {
				select {
				case e.hints <- dr.Seq:
				default:
				}
			}
		})
	}
	go e.run()
	go func() {
		defer close(d.rdone)
		e.reader(ctx)
	}()
	return d
}

// Close stops the driver; pending requests fail with ErrClosed. It does
// not close the transport, which another driver may then use (Close
// returns after the driver's receiver has stopped calling Recv).
func (d *Driver) Close() error {
	d.once.Do(func() {
		d.cancel()
		close(d.e.quit)
		<-d.e.dead
		<-d.rdone
	})
	return nil
}

// Opts returns the options in effect (defaults filled in).
func (d *Driver) Opts() Opts { return d.opts }

// Stats returns the counters.
func (d *Driver) Stats() Stats {
	s := d.e.st
	return Stats{
		Completed: s.completed.Load(), Failed: s.failed.Load(), Frames: s.frames.Load(), Retries: s.retries.Load(),
		Timeouts: s.timeouts.Load(), FastRetransmits: s.fast.Load(), DropHints: s.hints.Load(), Busy: s.busy.Load(), LoadGaps: s.loadGaps.Load(),
		Stray: s.stray.Load(), FragmentGaps: s.fragGaps.Load(), FragmentResets: s.fragReset.Load(), Link: d.t.Stats(),
		LoadGoBacks: s.goBacks.Load(), LateLoadAcks: s.lateAcks.Load(), Expired: s.expired.Load(), SRTT: time.Duration(s.srtt.Load()), RTO: time.Duration(s.rto.Load()),
		Backoff: int(s.backoff.Load()), MaxBackoff: int(s.maxBackoff.Load()),
		SpuriousTimeouts: s.spurious.Load(), CRCMatched: s.crcMatched.Load(), Windows: s.windows.Load(), Splits: s.splits.Load(), CRCUnmatched: s.crcUnmatched.Load(), MinChunkWords: int(s.minChunk.Load()), Window: int(s.window.Load()),
	}
}

// BoardInfo returns the INFO words of the last successful Info call, or
// nil.
func (d *Driver) BoardInfo() *frame.Info { return d.info.Load() }

// submitCall hands c to the engine.
func (d *Driver) submitCall(ctx context.Context, c *call) error {
	select {
	case d.e.submit <- c:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-d.e.dead:
		return fmt.Errorf("driver: %s: %w", c.label, d.deadErr())
	}
}

func (d *Driver) deadErr() error {
	<-d.e.dead
	return d.e.deadErr
}

// cancelCalls asks the engine to fail calls with err.
func (d *Driver) cancelCalls(calls []*call, err error) {
	select {
	case d.e.cancel <- cancelReq{calls: calls, err: err}:
	case <-d.e.dead:
	}
}

// exec runs one call to completion.
func (d *Driver) exec(ctx context.Context, c *call) (*call, error) {
	done := make(chan *call, 1)
	c.notify = done
	if err := d.submitCall(ctx, c); err != nil {
		return nil, err
	}
	select {
	case c = <-done:
		return c, c.err
	case <-ctx.Done():
		d.cancelCalls([]*call{c}, fmt.Errorf("driver: %s: %w", c.label, ctx.Err()))
		c = <-done
		return c, c.err
	}
}

// Exec sends one command with retries and returns the response's type and
// (reassembled) payload. An ERROR answer is returned as an error wrapping
// *frame.BoardError.
func (d *Driver) Exec(ctx context.Context, typ frame.Type, payload []byte) (frame.Type, []byte, error) {
	c, err := d.exec(ctx, &call{typ: typ, payload: payload, label: typ.String(), loadOffset: -1, respBytes: 64, index: -1})
	if err != nil {
		return 0, nil, err
	}
	return c.respType, c.resp, nil
}

// Info reads the board's INFO words and checks the magic, the protocol
// version and the shape's sanity.
func (d *Driver) Info(ctx context.Context) (*frame.Info, error) {
	_, p, err := d.Exec(ctx, frame.TypeInfo, nil)
	if err != nil {
		return nil, err
	}
	in := new(frame.Info)
	if err := in.DecodeFromBytes(p); err != nil {
		return nil, fmt.Errorf("driver: INFO: %w", err)
	}
	if err := in.Check(); err != nil {
		return nil, fmt.Errorf("driver: %w", err)
	}
	d.info.Store(in)
	if in.RxBuffer > 0 {
		// The board holds one frame executing and RxBuffer waiting: more
		// in flight would only be answered busy.
		select {
		case d.e.window <- int(min(in.RxBuffer, 1<<20)) + 1:
		case <-d.e.dead:
		}
	}
	return in, nil
}

// Status reads the board's counters.
func (d *Driver) Status(ctx context.Context) (frame.Status, error) {
	var s frame.Status
	_, p, err := d.Exec(ctx, frame.TypeStatus, nil)
	if err != nil {
		return s, err
	}
	if err := s.DecodeFromBytes(p); err != nil {
		return s, fmt.Errorf("driver: STATUS: %w", err)
	}
	return s, nil
}

// ResetStatus clears the board's counters.
func (d *Driver) ResetStatus(ctx context.Context) error {
	_, p, err := d.Exec(ctx, frame.TypeResetStatus, nil)
	if err == nil && len(p) != 0 {
		err = fmt.Errorf("driver: RESET_STATUS answered with %d payload bytes, want 0: %w", len(p), ErrProtocol)
	}
	return err
}
