package driver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/ptmhw/ptm/host/frame"
)

// Load uploads a model: LOAD_BEGIN(W), the words in LOAD_DATA chunks in
// increasing offset order, then LOAD_COMMIT(W, CRC-32 of the words).
// W = len(words); word w = addr*L + lane (softboard.BankWords builds them
// from a bank). When the board's INFO is known, W is checked against L*D
// before anything is sent.
//
// The board writes a chunk only at its next offset, so everything below
// the end of an acknowledged chunk, or below the next offset named by a
// gap answer (ERROR 6; a resend of words already written gets one too,
// naming an offset past its end), is written. Load keeps chunks in flight from
// that point on. A chunk that gets no answer within the retransmission
// timeout, or a gap answer (a chunk before it was lost), makes Load go
// back to the first word not known to be written and send again from
// there, in fresh chunks (go-back-N; chunks already written are
// acknowledged again, not rewritten).
//
// Chunk size and window follow the link's loss: Load estimates the
// probability that a frame byte is lost from the chunks answered and
// lost, and sends the chunk size that carries the most words per line
// byte at that rate (up to Opts.ChunkWords; 510 words on a clean link,
// about 10 at 2% byte loss each way), with about as many chunks in
// flight as are expected to get through in a row (at least 2, at most
// Opts.Window).
//
// The upload fails with a *DeadlineError when the board acknowledges no
// new words for Opts.Deadline; it names the words the board is waiting
// for.
func (d *Driver) Load(ctx context.Context, words []uint16) error {
	w := len(words)
	if in := d.BoardInfo(); in != nil && w != in.BankWords() {
		return fmt.Errorf("driver: load: %d words, the board's bank holds L*D = %d*%d = %d", w, in.Lanes(), in.D, in.BankWords())
	}
	if w == 0 {
		return fmt.Errorf("driver: load: no words")
	}
	begin := frame.LoadBegin{Words: uint32(w)}
	c, err := d.exec(ctx, &call{typ: frame.TypeLoadBegin, payload: begin.AppendTo(nil), label: "LOAD_BEGIN", loadOffset: -1, respBytes: frame.Overhead, index: -1})
	if err != nil {
		return fmt.Errorf("driver: load: %w", err)
	}
	if len(c.resp) != 0 {
		// Protocol version 5 answers LOAD_BEGIN with an empty payload.
		return fmt.Errorf("driver: load: LOAD_BEGIN(%d) acknowledged with % x, want an empty payload: %w", w, c.resp, ErrProtocol)
	}

	u := &upload{d: d, words: words}
	if err := u.run(ctx); err != nil {
		return fmt.Errorf("driver: load: %w", err)
	}

	commit := frame.LoadCommit{Words: uint32(w), CRC: frame.WordsCRC(words)}
	c, err = d.exec(ctx, &call{typ: frame.TypeLoadCommit, payload: commit.AppendTo(nil), label: "LOAD_COMMIT", loadOffset: -1, respBytes: frame.Overhead, index: -1})
	if err != nil {
		return fmt.Errorf("driver: load: commit of %d words with CRC 0x%08x: %w", w, commit.CRC, err)
	}
	if len(c.resp) != 0 {
		// Protocol version 5 answers a matching commit with an empty payload.
		return fmt.Errorf("driver: load: LOAD_COMMIT(%d, 0x%08x) acknowledged with % x, want an empty payload: %w", w, commit.CRC, c.resp, ErrProtocol)
	}
	return nil
}

// Line bytes of a LOAD_DATA exchange besides the words: the command's
// frame overhead and offset, and the whole acknowledgement frame.
const (
	loadCmdOverhead = frame.Overhead + 4
	loadAckBytes    = frame.Overhead + 4
)

// errCancelled cancels chunks that Load no longer needs.
var errCancelled = errors.New("driver: chunk no longer needed")

// upload is the LOAD_DATA phase of Load.
type upload struct {
	d     *Driver
	words []uint16

	acked    int     // the board has written every word below acked
	sendOff  int     // the next word to send
	inflight []*call // chunks in flight that still matter, by offset
	stale    int     // cancelled chunks whose notification is still due
	est      lossEstimator

	// lost: chunks handed back as lost, by seq, so that a late answer to
	// one of them still counts (see lateAck).
	lost map[uint16]chunkRef

	progress time.Time // when acked last advanced
	tries    int       // chunks sent at offset acked since then
	lastSeq  uint16    // the last answered or lost chunk at acked
	lastRTO  time.Duration
}

func (u *upload) run(ctx context.Context) error {
	d, w := u.d, len(u.words)
	maxWin := d.opts.Window
	// Every call submitted and not yet reported fits in done, so that the
	// engine never blocks on a notification.
	done := make(chan *call, 2*maxWin+1)
	u.progress = time.Now()
	u.lost = map[uint16]chunkRef{}
	for drained := false; !drained; { // late answers from an earlier load
		select {
		case <-d.e.late:
		default:
			drained = true
		}
	}
	timer := time.NewTimer(d.opts.Deadline)
	defer timer.Stop()
	fail := func(err error) error {
		u.cancel(u.inflight)
		for range u.stale {
			<-done
		}
		return err
	}
	for u.acked < w {
		win := u.est.window(maxWin, d.opts.ChunkWords)
		for u.sendOff < w && len(u.inflight) < win && len(u.inflight)+u.stale < cap(done) {
			n := min(u.est.chunk(d.opts.ChunkWords), w-u.sendOff)
			off := u.sendOff
			c := &call{typ: frame.TypeLoadData, payload: frame.AppendLoadData(nil, uint32(off), u.words[off:off+n]),
				label: fmt.Sprintf("LOAD_DATA words %d..%d", off, off+n-1), loadOffset: int64(off), respBytes: loadAckBytes,
				notify: done, index: n, handBack: true}
			if err := d.submitCall(ctx, c); err != nil {
				return fail(err)
			}
			if cw := int64(n); d.e.st.minChunk.Load() == 0 || cw < d.e.st.minChunk.Load() {
				d.e.st.minChunk.Store(cw)
			}
			u.inflight = append(u.inflight, c)
			if off == u.acked {
				u.tries++
			}
			u.sendOff += n
		}
		var c *call
		select {
		case c = <-done:
		case la := <-d.e.late:
			if u.late(la) {
				u.madeProgress(timer)
			}
			continue
		case <-ctx.Done():
			return fail(ctx.Err())
		case <-timer.C:
			if err := u.checkDeadline(); err != nil {
				return fail(err)
			}
			timer.Reset(max(time.Millisecond, time.Until(u.progress.Add(d.opts.Deadline))))
			continue
		}
		acked0 := u.acked
		if err := u.answer(c); err != nil {
			return fail(err)
		}
		if u.acked > acked0 {
			u.madeProgress(timer)
		}
	}
	// Chunks still in flight (answers to chunks already known written)
	// are not needed.
	return fail(nil)
}

// madeProgress restarts the deadline after acked advanced.
func (u *upload) madeProgress(timer *time.Timer) {
	u.progress, u.tries = time.Now(), 0
	if !timer.Stop() {
		select {
		case <-timer.C:
		default:
		}
	}
	timer.Reset(u.d.opts.Deadline)
}

// checkDeadline returns the deadline error if the board has acknowledged
// nothing new for Opts.Deadline.
func (u *upload) checkDeadline() error {
	waited := time.Since(u.progress)
	if waited < u.d.opts.Deadline {
		return nil
	}
	u.d.e.st.expired.Add(1)
	end := min(len(u.words), u.acked+max(1, u.est.chunk(u.d.opts.ChunkWords))) - 1
	return &DeadlineError{Deadline: u.d.opts.Deadline, Unanswered: []Unanswered{{
		Label: fmt.Sprintf("LOAD_DATA words %d..%d (of %d; the board has acknowledged words 0..%d)", u.acked, end, len(u.words), u.acked-1),
		Index: u.acked, Seq: u.lastSeq, Attempts: u.tries, Waited: waited, Expired: true, LastTimeout: u.lastRTO,
	}}}
}

// cancel makes the engine drop calls; their notifications still come.
func (u *upload) cancel(calls []*call) {
	if len(calls) == 0 {
		return
	}
	u.d.cancelCalls(calls, errCancelled)
	u.stale += len(calls)
}

// advance records that the board has written every word below to, and
// retires the chunks in flight that lie below it.
func (u *upload) advance(to int) {
	if to <= u.acked {
		return
	}
	u.acked = to
	var keep, drop []*call
	for _, c := range u.inflight {
		if int(c.loadOffset)+c.index <= to {
			drop = append(drop, c)
		} else {
			keep = append(keep, c)
		}
	}
	u.inflight = keep
	u.cancel(drop)
	u.sendOff = max(u.sendOff, to)
}

// goBack abandons the chunks in flight (the board will refuse them) and
// resends from the first word not known to be written.
func (u *upload) goBack() {
	u.cancel(u.inflight)
	u.inflight = nil
	u.sendOff = u.acked
	u.d.e.st.goBacks.Add(1)
}

// answer handles the end of chunk c.
func (u *upload) answer(c *call) error {
	live := false
	for i, x := range u.inflight {
		if x == c {
			u.inflight = append(u.inflight[:i], u.inflight[i+1:]...)
			live = true
			break
		}
	}
	if !live {
		u.stale--
	}
	off, n := int(c.loadOffset), c.index
	bytes := len(c.req) + loadAckBytes
	if off == u.acked && c.attempts > 0 {
		u.lastSeq, u.lastRTO = c.seq, c.lastRTO
	}
	var be *frame.BoardError
	var de *DeadlineError
	switch {
	case c.err == nil:
		var a frame.LoadDataAck
		if err := a.DecodeFromBytes(c.resp); err != nil || int64(a.Next) != int64(off+n) {
			return fmt.Errorf("%s (seq %d, offset %d, %d words) acknowledged with next offset %d (% x), want %d: %w", c.label, c.seq, off, n, a.Next, c.resp, off+n, ErrProtocol)
		}
		u.est.add(bytes, false)
		u.advance(off + n)
	case errors.Is(c.err, errCancelled):
		if c.attempts > 0 { // sent: its answer may still come
			u.lost[c.seq] = chunkRef{off, n}
		}
	case errors.Is(c.err, errLost):
		u.est.add(bytes, true)
		u.lost[c.seq] = chunkRef{off, n}
		if live && off+n > u.acked {
			u.goBack()
		}
	case errors.As(c.err, &de):
		u.est.add(bytes, true)
		if live && off+n > u.acked {
			u.goBack()
		}
	case errors.As(c.err, &be) && be.Code == frame.CodeLoadGap && int(be.Detail) >= off+n && int(be.Detail) <= len(u.words):
		// A resend of words already written (protocol version 4 answers
		// it with the next offset, past its end): written.
		u.est.add(bytes, false)
		u.advance(int(be.Detail))
	case errors.As(c.err, &be) && be.Code == frame.CodeLoadGap:
		// The board's next offset: off > next (a chunk before this one
		// was lost) or off < next < off+n (a resend overlapping words
		// written since).
		next := int(be.Detail)
		if next == off || next > len(u.words) {
			return fmt.Errorf("%s (seq %d): the board reports a gap with next offset %d: %w", c.label, c.seq, next, ErrProtocol)
		}
		u.d.e.st.loadGaps.Add(1)
		u.est.add(bytes, false)
		// The live chunks sent before this one and not answered were
		// lost on the way (the board answers in arrival order).
		if live {
			for _, x := range u.inflight {
				if x.loadOffset < c.loadOffset {
					u.est.add(len(x.req)+loadAckBytes, true)
				}
			}
		}
		u.advance(next)
		if live {
			u.goBack()
		}
	case errors.As(c.err, &be) && be.Code == frame.CodeNoLoad && int(be.Detail) >= u.acked && int(be.Detail) < len(u.words):
		// No load in progress, and the board's next offset lies between
		// the words it acknowledged and the end of the bank: the load
		// ended at that word without a commit. Only a refused word does
		// that (ERROR 3, which ends the load), so an earlier transmission
		// of the chunk holding it was refused and that answer was lost.
		// Report the refusal it stands for.
		return fmt.Errorf("%s (seq %d, offset %d, %d words): the board has no load in progress and its next offset is %d of %d words, so a transmission holding word %d was refused and that answer was lost: %w",
			c.label, c.seq, off, n, be.Detail, len(u.words), be.Detail, &frame.BoardError{Code: frame.CodeBadLength, Cmd: frame.TypeLoadData, Detail: be.Detail})
	case errors.As(c.err, &be) && be.Code == frame.CodeBadLength:
		// ERROR 3 to LOAD_DATA: the board wrote the words before the one
		// it refused and ended the load (docs/protocol.md section 3).
		return fmt.Errorf("%s (seq %d, offset %d, %d words): the board refused a word of this chunk and ended the load (the words before it are written): a word past the board's bank (INFO gives its size; this upload has %d words), or on a convolutional board a class weight outside the board's weight bits: %w",
			c.label, c.seq, off, n, len(u.words), c.err)
	default:
		return c.err
	}
	return nil
}

// chunkRef names a LOAD_DATA chunk: its first word and its word count.
type chunkRef struct{ off, n int }

// late takes a LOAD_DATA answer that came after its chunk was handed back
// as lost: the board answers a chunk only when it wrote it in order, so
// every word below its end is written; an ERROR 6 answer names the
// board's next offset, below which every word is written. It reports whether acked advanced.
func (u *upload) late(la lateAck) bool {
	r, ok := u.lost[la.seq]
	end := r.off + r.n
	if la.gap {
		// an ERROR 6: every word below the board's next offset is written
		if !ok || int64(la.next) > int64(len(u.words)) {
			return false
		}
		end = int(la.next)
	} else if !ok || int64(la.ack.Next) != int64(end) {
		return false
	}
	delete(u.lost, la.seq)
	u.d.e.st.lateAcks.Add(1)
	u.est.unlose()
	acked0 := u.acked
	u.advance(end)
	return u.acked > acked0
}

// lossEstimator estimates the probability that a byte on the link is lost
// (dropped or corrupted, either direction) from the LOAD_DATA exchanges
// answered and lost, with exponential forgetting (about 20 exchanges):
// an exchange of b bytes gets through with probability exp(-lambda*b).
type lossEstimator struct {
	n, lost, bytes float64
}

const estDecay = 0.95

func (l *lossEstimator) add(bytes int, lost bool) {
	l.n = l.n*estDecay + 1
	l.bytes = l.bytes*estDecay + float64(bytes)
	l.lost *= estDecay
	if lost {
		l.lost++
	}
}

// unlose takes back one loss: an exchange counted lost was answered late.
func (l *lossEstimator) unlose() {
	l.lost = max(0, l.lost-1)
}

// lambda is the estimated loss rate per byte (0 before any loss).
func (l *lossEstimator) lambda() float64 {
	if l.lost < 1e-6 || l.n == 0 {
		return 0
	}
	p := (l.n - l.lost + 0.5) / (l.n + 1) // success rate of an exchange
	return -math.Log(p) / (l.bytes / l.n)
}

// chunk returns the chunk size with the most words per line byte sent:
// n maximizes 2n exp(-lambda (2n + E)) / (2n + O) (O the command's
// overhead), so 2n^2 + O n = O / (2 lambda).
func (l *lossEstimator) chunk(maxWords int) int {
	lam := l.lambda()
	if lam <= 0 {
		return maxWords
	}
	const o = float64(loadCmdOverhead)
	n := (-o + math.Sqrt(o*o+4*o/lam)) / 4
	return max(1, min(maxWords, int(n)))
}

// window is the number of chunks to keep in flight: about the number
// expected to get through in a row (go-back-N wastes the chunks behind a
// lost one), at least 2 (so that a loss is revealed by the next chunk's
// gap answer rather than by a timeout), at most maxWin.
func (l *lossEstimator) window(maxWin, maxWords int) int {
	lam := l.lambda()
	if lam <= 0 {
		return maxWin
	}
	n := l.chunk(maxWords)
	p := math.Exp(-lam * float64(2*n+loadCmdOverhead+loadAckBytes))
	if p >= 1 {
		return maxWin
	}
	return max(min(2, maxWin), min(maxWin, int(math.Ceil(1/(1-p)))))
}
