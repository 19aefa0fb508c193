package driver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/transport"
)

// callState is where a call is in its life.
type callState uint8

const (
	stQueued   callState = iota // waiting for a window slot
	stInflight                  // sent, waiting for the response
	stBackoff                   // answered busy, waiting to be resent
	stDone
)

// call is one command in the engine: a request frame that is sent (and
// resent with the same seq and bytes) until its response is complete.
type call struct {
	typ     frame.Type
	payload []byte // command payload (built by the op)
	label   string // names the request in errors ("INFER request 17")
	// expectWords is the number of result items expected (INFER), 0 if
	// unknown, of itemBytes bytes each (4, 2 for u16 votes, 1 or 2 for sums); respBytes
	// estimates the response size for timeouts.
	expectWords int
	itemBytes   int
	mode        frame.Mode // INFER mode (how items decode)
	respBytes   int
	loadOffset  int64 // LOAD_DATA chunk offset, -1 for other commands
	notify      chan<- *call

	seq      uint16
	req      []byte // the encoded frame, identical on every attempt
	state    callState
	attempts int
	busies   int       // busy answers (resends after them do not use up retries)
	firstTx  uint64    // earliest transmission whose answer may still come
	copies   int       // transmissions since firstTx (the board may hold all of them)
	firstAt  time.Time // when firstTx was sent
	// evTx is the transmission an answer to c is known to postdate, for
	// loss evidence (evidence, expireGhosts): firstTx, except after a
	// drop-hint resend, which keeps the earlier transmission's: the hint
	// may be wrong (a garbled frame's seq field names another request),
	// and the earlier transmission's answer may still come. Taking it for
	// the resend's would resend every request sent in between while the
	// board still holds them: they vanish in its full queue, and the
	// answers to their originals start the same again (a resend storm).
	evTx uint64
	// held: every copy of the request resent on a timeout was refused
	// busy, so the board held the transmission firstTx in its full queue
	// (the timeout was spurious) and the answer is that transmission's.
	held     bool
	lastTx   uint64
	due      time.Time // when the timer of the current state fires
	inWindow bool
	// handBack: the engine does not resend the call after a timeout but
	// fails it with errLost, and takes no loss evidence from other
	// answers (LOAD_DATA chunks: Load decides what to resend).
	handBack bool
	lastRTO  time.Duration // the RTO of the last transmission
	rxAtSend uint64        // rxActivity at the last transmission
	lastSent time.Time     // the last transmission
	txShift  int           // the back-off (doublings) of the last transmission

	// Fragments by index. Retries return the same words (results are a
	// pure function of the request), so fragments of different attempts
	// are combined as long as they agree; a disagreement (a board that
	// fragments differently each time) restarts the reassembly.
	frags    [][]byte
	nfrags   int // fragments held
	lastFrag int // index of the fragment without MORE, -1 if not seen
	resp     []byte
	sentAt   time.Time // first transmission (RTT samples use calls sent once; the deadline counts from it)
	timeouts int       // silent timeouts (for the exponential back-off)
	resent   bool      // resent (or handed back) after a timeout: a late answer then shows the timeout early

	// expect is the expected response payload (Request.Expect encoded),
	// or nil; crcMatched counts the fragments taken by their CRC.
	expect     []byte
	crcMatched int

	// Answer windows (Stream on a version-6 board): the request the call
	// belongs to, the items it asks for, and the hook asked before every
	// resend that is not after a busy answer (true: end the call with
	// errSplit instead).
	job      *job
	win      span
	onResend func(*call) bool

	// results
	respType frame.Type
	err      error
	index    int // the op's own index
}

// Retries is the number of retransmissions the call needed.
func (c *call) retries() int { return max(0, c.attempts-1) }

type cancelReq struct {
	calls []*call
	err   error
}

// engine owns the window, the pending table, the timers and all sends. It
// runs in one goroutine; ops talk to it through channels.
type engine struct {
	t    transport.Transport
	opts Opts
	st   *counters

	submit  chan *call
	cancel  chan cancelReq
	frames  chan []byte
	hints   chan uint16  // claimed seqs of frames the transport dropped
	garbled chan garbled // dropped INFER answers, to check against the expected payload
	late    chan lateAck // LOAD_DATA answers that came after their chunk was handed back
	window  chan int     // a new window limit (from INFO's receive buffer depth)
	readErr chan error
	quit    chan struct{}
	dead    chan struct{} // closed when run returns
	deadErr error

	pending  map[uint16]*call
	active   []*call // calls holding a window slot (inflight or backoff)
	queue    []*call
	nextSeq  uint16
	txCount  uint64
	maxWin   int     // window limit: Opts.Window, lowered to the board's buffer depth + 1
	cwnd     float64 // congestion window (AIMD on busy answers)
	wmax     float64 // cwnd when the board last answered busy
	lastCut  uint64
	lineRate int
	// RTT estimate from calls answered at their first attempt (Karn),
	// smoothed as in RFC 6298; backoff is the number of RTO doublings in
	// effect for new transmissions, cleared by the next valid sample.
	srtt, rttvar time.Duration
	backoff      int
	// minRTT is the shortest valid RTT sample: a lone request's round
	// trip, how soon a resend's own answer can come.
	minRTT time.Duration
	// slowCredit is the doublings allowed beyond lossBackoff: one more
	// for every spurious timeout (an answer after its request was resent
	// or handed back on a timeout, or a busy refusal of such a copy: the
	// board is slower than the RTO), one less per slowDecay RTT samples.
	slowCredit, slowSamples int
	// rxSeen is the bytes received when the timers last looked (or the
	// last frame arrived): bytes received since then show the board
	// working through its queue. postponed counts the timer rounds
	// those bytes put off since the last frame (at most maxPostpone).
	rxSeen, dropSeen uint64
	postponed        int
	// sinceLoss counts the answers since the last sign of loss (a frame
	// dropped by the receiver, a fast retransmit, a drop hint, a timed-out
	// head whose resend was answered at once); lossDrops is the
	// receiver's drop count when last looked at.
	sinceLoss int
	lossDrops uint64
	// timedOut remembers the last calls that ended after a timeout resend
	// (or were handed back on a timeout), so that a late answer to one of
	// them is recognized as a spurious timeout.
	timedOut     [timedOutRing]uint16
	timedOutOK   [timedOutRing]bool
	timedOutNext int
	// ghosts are resent copies of answered requests that the board may
	// still hold in its receive queue (a timeout resent the request while
	// its original was queued): they take window slots until their late
	// answer arrives or a request sent after them is answered (the board
	// answers in arrival order, so by then they were answered or lost).
	ghosts []ghost
}

// ghost is a resent copy of an answered request that may still be queued
// on the board.
// maxGhosts bounds the ghosts remembered.
const maxGhosts = 256

type ghost struct {
	seq uint16
	tx  uint64 // the request's last transmission
}

// copiesHeld is the number of frames beyond one per request in flight
// that the board may hold: resent copies of requests in flight and
// ghosts.
//
// On a lossy link the copies are not counted: a request resent there was
// mostly lost, and counting its copies would shrink the window for
// frames the board does not hold.
func (e *engine) copiesHeld() int {
	if e.sinceLoss < lossMemory {
		return 0
	}
	n := len(e.ghosts)
	for _, c := range e.active {
		if c.state == stInflight {
			n += c.copies - 1
		}
	}
	return n
}

// expireGhosts drops the ghosts that an answer to a request first sent
// at tx shows gone (answered or lost), and the ghost of seq (its late
// answer) if late.
func (e *engine) expireGhosts(tx uint64, seq uint16, late bool) {
	k := 0
	for _, g := range e.ghosts {
		if g.tx < tx || late && g.seq == seq {
			if late && g.seq == seq {
				late = false
			}
			continue
		}
		e.ghosts[k] = g
		k++
	}
	clear(e.ghosts[k:])
	e.ghosts = e.ghosts[:k]
}

// lossMemory is the number of answers after the last sign of loss during
// which the link counts as lossy: a timeout then resends every request
// due, not only the head of the window.
const lossMemory = 64

// lossy reports whether the link has shown loss in the last lossMemory
// answers.
func (e *engine) lossy() bool {
	if _, d := e.rxBytes(); d != e.lossDrops {
		e.lossDrops = d
		e.sinceLoss = 0
	}
	return e.sinceLoss < lossMemory
}

// maxPostpone bounds the timer rounds that received bytes put off without
// a complete frame (a line that delivers only garbage does not hold the
// timers forever).
const maxPostpone = 8

// lossBackoff is the number of RTO doublings silence earns without
// evidence that the board is slow. On a point-to-point link, silence
// after a well-estimated RTO is mostly loss (a request or its answer
// garbled, or swallowed by a corrupt frame on a board that does not
// rescan), and loss is not slowness: backing off for every silent timeout
// made a 1%-noisy UART wait seconds per lost window, since once more than
// half the exchanges fail, k losses in a row are likelier than 2^-k
// (sim/board TestIrisStreamFaults: RTO 6.8 s, the simulator idle 172 s of
// 183; host/driver TestNoisyLinkNoRescan: 8 doublings with SRTT 20 ms).
// A board that is really slower than the RTO answers the early resends
// too, and each such late answer raises the cap by one (slowCredit) and
// doubles the RTO at once: a board a hundred times slower than the RTO
// gets there within seven late answers, while one late answer on a lossy
// link (a host descheduled for a moment) allows one doubling more, for
// slowDecay samples. (Lifting the cap altogether for 32 samples at the
// first late answer let the Verilated fault run double 9 times after a
// single spurious timeout.)
const lossBackoff = 2

// slowDecay is the number of RTT samples after which a spurious timeout's
// extra doubling expires.
const slowDecay = 8

// spurious counts a spurious timeout: one more doubling is allowed, and
// taken at once.
func (e *engine) spurious() {
	e.st.spurious.Add(1)
	e.slowCredit = min(maxBackoff-lossBackoff, e.slowCredit+1)
	e.slowSamples = 0
	e.backoff = min(e.backoffCap(), e.backoff+1)
	e.publish()
}

// timedOutRing is the number of timed-out calls remembered for
// recognizing their late answers.
const timedOutRing = 256

// noteTimedOut remembers that the call with seq ended after a timeout
// resend (or was handed back on a timeout).
func (e *engine) noteTimedOut(seq uint16) {
	e.timedOut[e.timedOutNext] = seq
	e.timedOutOK[e.timedOutNext] = true
	e.timedOutNext = (e.timedOutNext + 1) % timedOutRing
}

// lateAnswer handles an answer for no pending call: if it answers a call
// that ended after a timeout resend, that timeout fired before the board
// had answered (a spurious timeout): the board is slower than the RTO,
// and the back-off cap rises by one (spurious).
func (e *engine) lateAnswer(seq uint16) {
	for i, s := range e.timedOut {
		if e.timedOutOK[i] && s == seq {
			e.timedOutOK[i] = false
			e.spurious()
			return
		}
	}
}

// backoffCap is the most doublings in effect now: lossBackoff plus one
// per recent spurious timeout (slowCredit).
func (e *engine) backoffCap() int {
	return lossBackoff + e.slowCredit
}

// rxBytes returns the bytes received and the receiver's drops (frames
// with CRC or framing errors, bytes skipped): bytes received with no new
// frame and no new drop are a frame still arriving.
func (e *engine) rxBytes() (bytes, drops uint64) {
	s := e.t.Stats()
	return s.BytesRecv, s.CRCErrors + s.FramingErrors + s.Skipped
}

// rxActivity counts everything the transport has received: bytes, and
// frames dropped before they were counted as bytes (Ethernet). It
// changes whenever the board sends anything, even garbled.
func (e *engine) rxActivity() uint64 {
	s := e.t.Stats()
	return s.BytesRecv + s.CRCErrors + s.FramingErrors + s.Filtered + s.Skipped
}

// maxBackoff bounds the number of RTO doublings (MaxTimeout caps the
// result anyway).
const maxBackoff = 16

// baseRTO is the RTO before back-off: Opts.Timeout until the first RTT
// sample, then SRTT + 4 RTTVAR (RFC 6298 section 2).
func (e *engine) baseRTO() time.Duration {
	if e.srtt == 0 {
		return e.opts.Timeout
	}
	return e.srtt + 4*e.rttvar
}

// rto is the time to wait for c's response after a transmission: the
// base RTO doubled for every timeout of c or of the link since the last
// valid RTT sample (whichever is more), capped at MaxTimeout, and at
// least MinTimeout plus the line time of everything in flight.
func (e *engine) rto(c *call) time.Duration {
	return e.rtoShift(e.shift(c))
}

// shift is the number of doublings for c's next transmission.
func (e *engine) shift(c *call) int {
	if c == nil {
		return min(e.backoff, e.backoffCap())
	}
	return min(e.backoffCap(), max(e.backoff, c.timeouts))
}

func (e *engine) rtoShift(shift int) time.Duration {
	t := e.baseRTO()
	for range shift {
		if t >= e.opts.MaxTimeout {
			break
		}
		t *= 2
	}
	t = min(t, e.opts.MaxTimeout)
	return max(t, e.opts.MinTimeout+e.lineTime(e.inflightBytes()))
}

// sampleRTT takes a round trip of a call answered at its first
// transmission (Karn's rule) into the estimate and clears the back-off.
func (e *engine) sampleRTT(d time.Duration) {
	if e.srtt == 0 {
		e.srtt, e.rttvar = d, d/2
	} else {
		diff := e.srtt - d
		if diff < 0 {
			diff = -diff
		}
		e.rttvar = (3*e.rttvar + diff) / 4
		e.srtt = (7*e.srtt + d) / 8
	}
	e.backoff = 0
	if e.slowCredit > 0 {
		if e.slowSamples++; e.slowSamples >= slowDecay {
			e.slowCredit--
			e.slowSamples = 0
		}
	}
	e.publish()
}

// publish makes the estimator's state visible to Stats.
func (e *engine) publish() {
	e.st.srtt.Store(int64(e.srtt))
	e.st.rto.Store(int64(e.rto(nil)))
	e.st.backoff.Store(int64(e.backoff))
}

func (e *engine) lineTime(bytes int) time.Duration {
	if e.lineRate <= 0 {
		return 0
	}
	return time.Duration(int64(bytes) * 10 * int64(time.Second) / int64(e.lineRate))
}

func (e *engine) run() {
	defer close(e.dead)
	e.publish()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		e.pump()
		next := e.earliest()
		if !next.IsZero() {
			timer.Reset(max(0, time.Until(next)))
		} else {
			timer.Reset(time.Hour)
		}
		select {
		case c := <-e.submit:
			e.queue = append(e.queue, c)
		case b := <-e.frames:
			e.onFrame(b)
		case seq := <-e.hints:
			e.onDropHint(seq)
		case g := <-e.garbled:
			e.onGarbled(g)
		case w := <-e.window:
			e.maxWin = max(1, min(e.opts.Window, w))
			e.cwnd = min(e.cwnd, float64(e.maxWin))
			e.st.window.Store(int64(e.maxWin))
		case <-timer.C:
			// Answers that arrived while the host was busy elsewhere (or
			// descheduled) are taken first: a timer that fires late must
			// not resend a request whose answer is already waiting.
			e.drainFrames()
			e.onTimer(time.Now())
		case cr := <-e.cancel:
			for _, c := range cr.calls {
				if c.state != stDone {
					e.finish(c, cr.err)
				}
			}
		case err := <-e.readErr:
			e.die(err)
			return
		case <-e.quit:
			e.die(ErrClosed)
			return
		}
	}
}

// die fails every call and stops the engine.
func (e *engine) die(err error) {
	e.deadErr = err
	for _, c := range append(append([]*call(nil), e.active...), e.queue...) {
		if c.state != stDone {
			e.finish(c, fmt.Errorf("driver: %s (seq %d): %w", c.label, c.seq, err))
		}
	}
	e.queue = nil
}

// drainFrames handles every frame the reader has already queued.
func (e *engine) drainFrames() {
	for {
		select {
		case b := <-e.frames:
			e.onFrame(b)
		default:
			return
		}
	}
}

// progress restarts the timers of the requests in flight other than c
// when an answer for c arrived (RFC 6298 section 5.3: restart the timer
// when new data is acknowledged): the board is working through its
// queue, so the request now at its front gets a full RTO from now, not
// what is left of a timer armed while it waited behind c.
func (e *engine) progress(c *call, now time.Time) {
	for _, o := range e.active {
		if o == c || o.state != stInflight {
			continue
		}
		if at := now.Add(e.rto(o)); o.due.Before(at) {
			e.arm(o, at)
		}
	}
}

func (e *engine) earliest() time.Time {
	var t time.Time
	for _, c := range e.active {
		if t.IsZero() || c.due.Before(t) {
			t = c.due
		}
	}
	return t
}

// pump sends queued calls while the window has room.
func (e *engine) pump() {
	// The window counts the frames the board may hold: requests in flight
	// and the copies of them a timeout resent (ghosts). One request is
	// always let through: its answer expires the ghosts before it.
	for len(e.queue) > 0 && (len(e.active) == 0 || len(e.active)+e.copiesHeld() < max(1, int(e.cwnd))) {
		c := e.queue[0]
		e.queue[0] = nil
		e.queue = e.queue[1:]
		if c.state == stDone { // cancelled while queued
			continue
		}
		for e.pending[e.nextSeq] != nil {
			e.nextSeq++
		}
		c.seq = e.nextSeq
		e.nextSeq++
		var err error
		c.req, err = frame.Append(c.req[:0], c.typ, 0, c.seq, c.payload)
		if err != nil {
			e.finish(c, fmt.Errorf("driver: %s: %w", c.label, err))
			continue
		}
		c.lastFrag = -1
		e.pending[c.seq] = c
		e.active = append(e.active, c)
		c.inWindow = true
		e.transmit(c, true)
	}
}

// inflightBytes is the line bytes of everything in flight (for timeouts).
func (e *engine) inflightBytes() int {
	n := 0
	for _, c := range e.active {
		n += len(c.req) + c.respBytes
	}
	return n
}

// transmit sends (or resends) c. fresh says that no earlier transmission
// of c can still be answered.
func (e *engine) transmit(c *call, fresh bool) {
	if c.attempts > 0 && c.state == stInflight && c.onResend != nil && c.onResend(c) {
		e.finish(c, errSplit)
		return
	}
	if e.opts.MaxRetries > 0 && c.attempts-c.busies > e.opts.MaxRetries {
		e.finish(c, fmt.Errorf("driver: %s (seq %d): no complete response after %d attempts (last timeout %v): %w",
			c.label, c.seq, c.attempts, c.lastRTO, ErrTimeout))
		return
	}
	now := time.Now()
	if c.attempts > 0 {
		if e.expired(c, now) {
			return
		}
		e.st.retries.Add(1)
	}
	c.attempts++
	tx := e.txCount
	e.txCount++
	if fresh {
		c.firstTx = tx
		c.evTx = tx
		c.copies = 0
		c.firstAt = now
	}
	c.copies++
	c.held = false // until every copy but the first is refused again
	c.lastTx = tx
	c.state = stInflight
	if c.attempts == 1 {
		c.sentAt = now
	}
	if err := e.t.Send(c.req); err != nil {
		e.finish(c, fmt.Errorf("driver: %s (seq %d): %w", c.label, c.seq, err))
		return
	}
	e.st.frames.Add(1)
	c.rxAtSend = e.rxActivity()
	c.lastSent = now
	c.txShift = e.shift(c)
	if int64(c.txShift) > e.st.maxBackoff.Load() {
		e.st.maxBackoff.Store(int64(c.txShift))
	}
	c.lastRTO = e.rtoShift(c.txShift)
	e.arm(c, time.Now().Add(c.lastRTO))
}

// arm sets c's timer to at, or to its deadline if that comes first.
func (e *engine) arm(c *call, at time.Time) {
	if !c.sentAt.IsZero() {
		if dl := c.sentAt.Add(e.opts.Deadline); dl.Before(at) {
			at = dl
		}
	}
	c.due = at
}

// expired fails c with a *DeadlineError if its deadline has passed.
func (e *engine) expired(c *call, now time.Time) bool {
	if c.sentAt.IsZero() || now.Sub(c.sentAt) < e.opts.Deadline {
		return false
	}
	e.st.expired.Add(1)
	e.finish(c, &DeadlineError{Deadline: e.opts.Deadline, Unanswered: []Unanswered{c.unanswered(now, true)}})
	return true
}

// finish completes c with err (nil: success) and tells its owner.
func (e *engine) finish(c *call, err error) {
	if c.state == stDone {
		return
	}
	if e.pending[c.seq] == c {
		delete(e.pending, c.seq)
	}
	if c.inWindow {
		for i, a := range e.active {
			if a == c {
				last := len(e.active) - 1
				e.active[i] = e.active[last]
				e.active[last] = nil
				e.active = e.active[:last]
				break
			}
		}
		c.inWindow = false
	}
	c.state = stDone
	c.err = err
	if err == nil && c.resent {
		e.noteTimedOut(c.seq)
	}
	if c.copies > 1 {
		for range min(c.copies-1, maxGhosts-len(e.ghosts)) {
			e.ghosts = append(e.ghosts, ghost{seq: c.seq, tx: c.lastTx})
		}
		c.copies = 1
	}
	if err == nil {
		// Additive increase: one per window of successes up to one below
		// the window at which the board last said busy, then slowly (one
		// per 16 windows), so that probing the board's buffer costs few
		// busy answers.
		inc := 1 / max(1, e.cwnd)
		if e.wmax > 0 && e.cwnd >= e.wmax-1 {
			inc /= 16
		}
		e.cwnd = min(float64(e.maxWin), e.cwnd+inc)
		e.st.completed.Add(1)
		e.sinceLoss++
	} else if !c.handBack && !errors.Is(err, errSplit) { // a LOAD_DATA chunk's or a split window's end is its owner's business (resent in new pieces)
		e.st.failed.Add(1)
	}
	c.notify <- c
}

func (e *engine) onTimer(now time.Time) {
	// Bytes received since the timers last looked (or since the last
	// frame), none of them dropped: an answer is arriving, i.e. the board
	// is working through its queue (an
	// answer takes longer on the line than the RTO allows, e.g. a
	// simulated board whose line runs slower than its nominal rate). The
	// timers restart from now, like progress does for a complete answer:
	// no request queued behind that answer is resent for it.
	rx, drops := e.rxBytes()
	sending := rx != e.rxSeen && drops == e.dropSeen && e.postponed < maxPostpone
	e.rxSeen, e.dropSeen = rx, drops
	if sending {
		e.postponed++
	}
	// The head is the request in flight that the board answers first (it
	// answers in arrival order): the one with the earliest transmission
	// whose answer may still come. It is handled first.
	var head *call
	for _, c := range e.active {
		if c.state == stInflight && (head == nil || c.firstTx < head.firstTx) {
			head = c
		}
	}
	lossy := e.lossy()
	calls := append([]*call(nil), e.active...)
	for i, c := range calls {
		if c == head {
			calls[0], calls[i] = calls[i], calls[0]
			break
		}
	}
	for _, c := range calls {
		if c.state == stDone || c.due.After(now) || e.expired(c, now) {
			continue
		}
		if c.state == stBackoff {
			e.transmit(c, true)
			continue
		}
		if sending {
			e.arm(c, now.Add(e.rto(c)))
			continue
		}
		if c != head && head != nil && head.state == stInflight && !lossy {
			// A request behind the head cannot be answered before it, so
			// on a clean link only the head times out; after its answer
			// the next request is the head, with a full RTO (progress).
			// Resending the whole window into a board that still queues
			// it overflows the board's receive queue. A window that was
			// lost is resent at once when the head's resend is answered
			// within a round trip (onFrame), else one request per RTO. On
			// a lossy link (loss seen in the last lossMemory answers),
			// every request due is resent: silence there is mostly loss.
			e.arm(c, maxTime(head.due, now.Add(e.rto(c))))
			continue
		}
		// Silent since the transmission: nothing at all received.
		silent := e.rxActivity() == c.rxAtSend
		e.st.timeouts.Add(1)
		// Back off when the link has been silent since the transmission:
		// the board (or the link) is slower than the estimate, or gone,
		// or (mostly, on a noisy link) the request was lost; at most
		// lossBackoff times unless a spurious timeout shows the board
		// slow (backoffCap). When the board kept sending meanwhile
		// (answers, or bytes garbled on the way), it is alive and this
		// request or its answer was lost: resend at the same timeout.
		if silent {
			c.timeouts++
			// Back off for every request until a valid RTT sample. Only
			// the first timeout of a request sent at the current back-off
			// doubles it again: the requests in flight together double it
			// once, a request sent before a valid sample cleared it
			// raises it one step only, and the further timeouts of one
			// unlucky request only back off that request.
			if c.timeouts == 1 && c.txShift >= min(e.backoff, e.backoffCap()) && e.backoff < e.backoffCap() {
				e.backoff++
				e.publish()
			}
		}
		c.resent = true
		if c.handBack {
			e.noteTimedOut(c.seq)
			e.finish(c, errLost)
			continue
		}
		e.transmit(c, false)
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// evidence handles the arrival of an in-order response to a transmission
// numbered at least tx: every call whose last transmission came before
// it has lost its request or its response (the board answers in arrival
// order), so it is resent at once.
func (e *engine) evidence(tx uint64, except *call) {
	if e.opts.NoFastRetransmit {
		return
	}
	for _, c := range append([]*call(nil), e.active...) {
		if c != except && c.state == stInflight && c.lastTx < tx && !c.handBack {
			e.st.fast.Add(1)
			e.sinceLoss = 0
			e.transmit(c, true)
		}
	}
}

// lateAck is a LOAD_DATA acknowledgement that came after its chunk was
// handed back to Load as lost: the board did write the chunk, so Load can
// count it written instead of resending it (a timeout shorter than the
// round trip must not make the upload crawl).
type lateAck struct {
	seq uint16
	ack frame.LoadDataAck
	// gap: the answer was an ERROR 6 naming the board's next offset
	// (protocol version 4 answers a resend of written words so): every
	// word below next is written.
	gap  bool
	next uint32
}

// lateLoadAck passes a late LOAD_DATA acknowledgement to Load, if Load
// has room for it (it is a hint: Load resends what it does not learn).
func (e *engine) lateLoadAck(f frame.Frame) {
	var a frame.LoadDataAck
	if a.DecodeFromBytes(f.Payload) != nil {
		return
	}
	select {
	case e.late <- lateAck{seq: f.Seq, ack: a}:
	default:
	}
}

// lateLoadGap passes a late ERROR 6 to a LOAD_DATA to Load, like
// lateLoadAck.
func (e *engine) lateLoadGap(f frame.Frame) {
	var be frame.BoardError
	if be.DecodeFromBytes(f.Payload) != nil || be.Cmd != frame.TypeLoadData || be.Code != frame.CodeLoadGap {
		return
	}
	select {
	case e.late <- lateAck{seq: f.Seq, gap: true, next: be.Detail}:
	default:
	}
}

func (e *engine) onFrame(b []byte) {
	e.rxSeen, e.dropSeen = e.rxBytes()
	e.postponed = 0
	var f frame.Frame
	if err := f.DecodeFromBytes(b); err != nil { // transports check CRCs; be safe
		e.st.stray.Add(1)
		return
	}
	c := e.pending[f.Seq]
	if c == nil || c.state == stQueued {
		e.st.stray.Add(1) // late duplicate or unknown seq
		if c == nil {
			e.lateAnswer(f.Seq)
			e.expireGhosts(0, f.Seq, true)
		}
		if c == nil && f.Type == frame.TypeLoadData.Response() {
			e.lateLoadAck(f)
		}
		if c == nil && f.Type == frame.TypeError {
			e.lateLoadGap(f)
		}
		return
	}
	e.progress(c, time.Now())
	e.expireGhosts(c.evTx, 0, false)
	if f.Type == frame.TypeError {
		var be frame.BoardError
		if err := be.DecodeFromBytes(f.Payload); err != nil {
			e.finish(c, fmt.Errorf("driver: %s (seq %d): undecodable ERROR frame: %w", c.label, c.seq, err))
			return
		}
		if be.Code == frame.CodeBusy {
			// Busy answers come from the board's receiver, out of band:
			// no evidence about other calls.
			e.st.busy.Add(1)
			if c.state == stInflight && c.copies > 1 {
				// A copy of a request resent on a timeout was refused: the
				// board's queue is full, so it still holds the earlier
				// transmission (the timeout was spurious): wait for it.
				c.copies--
				c.held = c.copies == 1
				e.spurious()
				return
			}
			c.busies++
			if e.opts.MaxBusy > 0 && c.busies > e.opts.MaxBusy {
				e.finish(c, fmt.Errorf("driver: %s (seq %d): board busy %d times: %w", c.label, c.seq, c.busies, &be))
				return
			}
			if c.lastTx >= e.lastCut {
				e.wmax = e.cwnd
				e.cwnd = max(1, e.cwnd/2)
				e.lastCut = e.txCount
			}
			if c.state == stInflight {
				c.state = stBackoff
				// Doubling per busy answer, up to the RTO: a slow board
				// is not hammered with refused frames.
				wait := e.opts.BusyBackoff
				for i := 1; i < c.busies && wait < e.rto(c); i++ {
					wait *= 2
				}
				e.arm(c, time.Now().Add(min(wait, max(e.opts.BusyBackoff, e.rto(c)))))
			}
			return
		}
		e.evidence(c.evTx, c)
		e.finish(c, fmt.Errorf("driver: %s (seq %d): %w", c.label, c.seq, &be))
		return
	}
	if f.Type != c.typ.Response() {
		e.st.stray.Add(1)
		return
	}
	if c.resent && e.slowCredit == 0 && c.copies > 1 && e.minRTT > 0 && time.Since(c.lastSent) <= 2*e.minRTT+time.Millisecond {
		// The head, resent on a timeout, was answered about a lone round
		// trip after the resend: the answer is taken to be the resend's
		// (an original still queued is answered after the board's service
		// time, not within a round trip of a resend), so the requests sent
		// before the resend and not answered were lost: resent at once
		// (go-back-N), not one per RTO. Not while a spurious timeout shows
		// the board slow. The silence was loss, not slowness: the
		// back-off is undone.
		e.evidence(c.lastTx, c)
		e.sinceLoss = 0
		if e.backoff > 0 {
			e.backoff = 0
			e.publish()
		}
	} else {
		e.evidence(c.evTx, c)
	}
	e.fragment(c, f)
}

// fragment adds one response fragment to c and completes c when every
// fragment is there.
func (e *engine) fragment(c *call, f frame.Frame) {
	idx := f.Flags.Index()
	if len(c.frags) <= idx {
		c.frags = append(c.frags, make([][]byte, idx+1-len(c.frags))...)
	}
	if old := c.frags[idx]; old != nil && !bytes.Equal(old, f.Payload) {
		e.st.fragReset.Add(1)
		clear(c.frags)
		c.nfrags, c.lastFrag = 0, -1
	}
	if c.frags[idx] == nil {
		c.frags[idx] = append([]byte(nil), f.Payload...)
		c.nfrags++
		if idx > 0 && c.frags[idx-1] == nil {
			e.st.fragGaps.Add(1)
		}
	}
	if !f.Flags.More() {
		if c.lastFrag >= 0 && c.lastFrag != idx {
			e.st.fragReset.Add(1)
			keep := c.frags[idx]
			clear(c.frags)
			c.frags[idx], c.nfrags = keep, 1
		}
		c.lastFrag = idx
	}
	if c.lastFrag < 0 || c.nfrags != c.lastFrag+1 || len(c.frags) > c.lastFrag+1 && c.frags[c.lastFrag+1] != nil {
		if !f.Flags.More() {
			// This attempt's answer is over and incomplete: only a later
			// attempt can still help. If there is none, resend now.
			if c.firstTx == c.lastTx && !e.opts.NoFastRetransmit && !c.handBack {
				e.st.fast.Add(1)
				e.sinceLoss = 0
				e.transmit(c, true)
			} else {
				c.firstTx, c.evTx = c.lastTx, c.lastTx
			}
		} else {
			e.arm(c, time.Now().Add(e.rto(c)))
		}
		return
	}
	n := 0
	for _, p := range c.frags[:c.lastFrag+1] {
		n += len(p)
	}
	c.resp = c.resp[:0]
	for _, p := range c.frags[:c.lastFrag+1] {
		c.resp = append(c.resp, p...)
	}
	c.frags = nil
	if c.expectWords > 0 && n != c.itemBytes*c.expectWords {
		e.finish(c, fmt.Errorf("driver: %s (seq %d): response of %d bytes in %d fragments, want %d items of %d bytes: %w",
			c.label, c.seq, n, idx+1, c.expectWords, c.itemBytes, ErrProtocol))
		return
	}
	if c.attempts == c.busies+1 {
		// Sent once, or refused busy every time but the last (a refused
		// frame is not kept, so only the last can have been answered).
		d := time.Since(c.lastSent)
		if e.minRTT == 0 || d < e.minRTT {
			e.minRTT = d
		}
		e.sampleRTT(d)
	} else if c.held {
		// The resent copies were refused busy: the answer is the first
		// transmission's, a valid sample (no ambiguity for Karn).
		e.sampleRTT(time.Since(c.firstAt))
	} else if lb := time.Since(c.lastSent); e.srtt > 0 && lb > e.srtt {
		// An answer to a resent request is no RTT sample (Karn): it may
		// answer any transmission. But the one it answers was sent at the
		// latest at the last one, so lb is a lower bound of a real round
		// trip; when it exceeds the estimate, the estimate is too small
		// (the board got slower) and lb is taken as a sample. A lower
		// bound never starts the estimate: with no estimate yet, lb may be
		// any fraction of the real round trip (the answer to the first
		// transmission arriving just after a resend), and an estimate
		// started low stays below the real round trip for dozens of
		// samples, each costing spurious resends. The backed-off timeout
		// is kept until a request answered at its first transmission
		// gives a real sample.
		e.sampleRTT(lb)
	} else if c.txShift < e.backoff {
		// The back-off of its last transmission was enough.
		e.backoff = c.txShift
		e.publish()
	}
	c.respType = f.Type
	e.finish(c, nil)
}

// onDropHint handles a frame the transport dropped that claimed seq: if
// that request is in flight with a single outstanding transmission, its
// answer was probably that frame, so it is resent now. A wrong hint (the
// header was corrupted too) costs one harmless resend.
func (e *engine) onDropHint(seq uint16) {
	c := e.pending[seq]
	if c == nil || c.state != stInflight || c.firstTx != c.lastTx || e.opts.NoFastRetransmit || c.handBack {
		return
	}
	e.st.hints.Add(1)
	e.sinceLoss = 0
	ev := c.evTx
	e.transmit(c, true)
	c.evTx = ev
}

// garbled is an INFER answer the transport dropped: its claimed seq and
// its bytes from the SOF as received.
type garbled struct {
	seq uint16
	b   []byte
}

// onGarbled handles a dropped INFER answer. If it claims a request in
// flight that expects a known payload, and its intact header and CRC
// match that payload's fragment (frame.CRCMatches), the board sent
// exactly that fragment: it is taken as received. Otherwise the drop is
// a hint that the request's answer was lost (onDropHint).
func (e *engine) onGarbled(g garbled) {
	c := e.pending[g.seq]
	if c != nil && c.state == stInflight && c.expect != nil && len(g.b) >= frame.HeaderLen {
		e.st.crcUnmatched.Add(1) // until it matches
		fl := frame.Flags(g.b[2])
		lo := fl.Index() * frame.MaxPayload
		if lo < len(c.expect) {
			hi := min(len(c.expect), lo+frame.MaxPayload)
			frag := c.expect[lo:hi]
			if fl.More() == (hi < len(c.expect)) && frame.CRCMatches(g.b, frag) {
				// Answers queued before this one are taken first, so
				// that they are not mistaken for lost ones (evidence).
				e.drainFrames()
				if c.state != stInflight {
					return
				}
				b, err := frame.Append(nil, frame.TypeInfer.Response(), fl, g.seq, frag)
				if err == nil {
					e.st.crcUnmatched.Add(^uint64(0))
					e.st.crcMatched.Add(1)
					c.crcMatched++
					e.onFrame(b)
					return
				}
			}
		}
	}
	if !e.opts.NoFastRetransmit {
		e.onDropHint(g.seq)
	}
}

// errors of the driver.
var (
	// ErrTimeout: a request got no complete response within
	// Opts.Deadline (then the error is a *DeadlineError) or within
	// Opts.MaxRetries resends.
	ErrTimeout = errors.New("driver: timeout")
	// errLost: a hand-back call (LOAD_DATA) timed out; Load resends.
	errLost = errors.New("driver: no answer within the timeout")
	// ErrClosed: the driver was closed.
	ErrClosed = errors.New("driver: closed")
	// ErrProtocol: the board answered something the protocol does not
	// allow.
	ErrProtocol = errors.New("driver: protocol violation")
)

// reader feeds the engine with received frames.
func (e *engine) reader(ctx context.Context) {
	for {
		b, err := e.t.Recv(ctx)
		if err != nil {
			if ctx.Err() == nil {
				select {
				case e.readErr <- fmt.Errorf("receiving: %w", err):
				case <-e.dead:
				}
			}
			return
		}
		cp := append([]byte(nil), b...)
		select {
		case e.frames <- cp:
		case <-e.dead:
			return
		}
	}
}
