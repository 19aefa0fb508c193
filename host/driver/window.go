package driver

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/ptmhw/ptm/host/frame"
)

// errSplit ends a window call whose resend is due while the window is
// too long for the line as measured now: Stream sends its items again in
// shorter windows.
var errSplit = errors.New("driver: window split for a shorter answer")

// job is one Request answered in windows of its result items (protocol
// version 6, INFER_WINDOW; docs/protocol.md section 4, "Windows"). The
// answer is the same as INFER's: results are a pure function of the
// request, so every window of it is a slice of the one answer.
type job struct {
	r       Request
	payload []byte // the INFER payload (INFER_WINDOW puts the window after its header)
	n, ib   int    // result items and bytes per item
	mode    frame.Mode
	got     []byte // the answer's bytes, n*ib, filled by windows
	left    int    // items not received yet
	todo    []span // item ranges not sent yet, by first
	calls   int    // window calls submitted and not yet reported
	retries int    // resends of its calls, and windows split (their items sent again)
	windows int    // windows answered
	splits  int    // windows split after a failed transmission
	seq     uint16 // the last window's sequence number
	err     error
}

// span is a range of result items: count items from first.
type span struct{ first, count int }

// answerEst sizes answer windows from the line's loss: an exchange of b
// bytes (request and answer) gets through with probability
// exp(-lambda*b) (lossEstimator, fed by every window's transmissions:
// each resend is a loss, each answer a success). It is shared by Stream
// and the engine (the split decision), hence the lock.
type answerEst struct {
	mu  sync.Mutex
	est lossEstimator
}

// add records one exchange of bytes line bytes, lost or answered.
func (a *answerEst) add(bytes int, lost bool) {
	a.mu.Lock()
	a.est.add(bytes, lost)
	a.mu.Unlock()
}

// items is the window length, in items of ib bytes, that carries the most
// items per line byte at the estimated loss rate when every exchange
// costs req request bytes and the answer's frame overhead besides the
// items: n maximizes n exp(-lambda (C + n ib)) / (C + n ib), C = req +
// frame.Overhead, so lambda ib^2 n^2 + C lambda ib n - C = 0. Before any
// loss it is all of max items (the whole answer).
func (a *answerEst) items(max, ib, req int) int {
	a.mu.Lock()
	lam := a.est.lambda()
	a.mu.Unlock()
	if lam <= 0 || max <= 1 {
		return max
	}
	c, b := float64(req+frame.Overhead), float64(ib)
	n := (-c*lam*b + math.Sqrt(c*c*lam*lam*b*b+4*lam*b*b*c)) / (2 * lam * b * b)
	if n >= float64(max) {
		return max
	}
	return int(math.Max(1, n))
}

// windowCall cuts the next window from j's first unsent range and builds
// its call: a window covering the whole answer is sent as INFER (the same
// answer, 8 bytes shorter), any other as INFER_WINDOW.
func (d *Driver) windowCall(j *job, notify chan<- *call) *call {
	w := j.todo[0]
	req := frame.Overhead + frame.WindowHeaderLen + len(j.payload)
	n := min(w.count, d.aest.items(j.n, j.ib, req))
	if j.n > frame.MaxWindowItem {
		n = w.count // u16 windows cannot name its items: whole
	}
	if n < w.count {
		j.todo[0] = span{w.first + n, w.count - n}
	} else {
		j.todo = j.todo[1:]
	}
	win := span{w.first, n}
	nb := n * j.ib
	c := &call{label: fmt.Sprintf("request %d", j.r.Index), loadOffset: -1, notify: notify, index: j.r.Index,
		expectWords: n, itemBytes: j.ib, mode: j.mode, respBytes: nb + frame.Overhead*(1+nb/frame.MaxPayload),
		job: j, win: win, onResend: d.splitHook}
	if n == j.n {
		c.typ, c.payload = frame.TypeInfer, j.payload
	} else {
		c.typ = frame.TypeInferWindow
		fw := frame.Window{First: uint16(win.first), Count: uint16(win.count)}
		c.payload = frame.AppendInferWindow(make([]byte, 0, frame.WindowHeaderLen+len(j.payload)), j.payload, fw)
		c.label = fmt.Sprintf("request %d items %d..%d of %d", j.r.Index, win.first, win.first+n-1, j.n)
	}
	j.calls++
	return c
}

// splitHook runs in the engine before a window call is resent (not after
// a busy answer): the transmission was lost. It records the loss and
// tells the engine to end the call (errSplit) when its window is at
// least twice the length the line now calls for, so that its items are
// sent again in shorter windows; else the same frame is resent.
func (d *Driver) splitHook(c *call) bool {
	d.aest.add(len(c.req)+c.respBytes, true)
	j := c.job
	req := frame.Overhead + frame.WindowHeaderLen + len(j.payload)
	return j.n <= frame.MaxWindowItem && c.win.count > 1 && c.win.count >= 2*d.aest.items(j.n, j.ib, req)
}

// windowDone takes the end of window call c of its job. It reports
// whether the job is over (answered whole or failed) with no call left.
func (d *Driver) windowDone(c *call) bool {
	j := c.job
	j.calls--
	j.retries += c.retries()
	j.seq = c.seq
	switch {
	case c.err == nil:
		d.aest.add(len(c.req)+c.respBytes, false)
		copy(j.got[c.win.first*j.ib:], c.resp)
		j.left -= c.win.count
		j.windows++
		if c.typ == frame.TypeInferWindow {
			d.e.st.windows.Add(1)
		}
	case errors.Is(c.err, errSplit):
		j.splits++
		j.retries++
		d.e.st.splits.Add(1)
		if j.err == nil {
			// Back among the ranges to send, in item order.
			i := 0
			for i < len(j.todo) && j.todo[i].first < c.win.first {
				i++
			}
			j.todo = append(j.todo[:i], append([]span{c.win}, j.todo[i:]...)...)
		}
	default:
		if j.err == nil {
			j.err = c.err
		}
		j.todo = nil
	}
	return j.calls == 0 && (j.left == 0 || j.err != nil)
}

// jobResult is the Result of a job whose calls are all over.
func jobResult(j *job) Result {
	r := Result{Index: j.r.Index, Seq: j.seq, Retries: j.retries, Windows: j.windows, Splits: j.splits, Err: j.err}
	if r.Err == nil && j.left != 0 {
		r.Err = fmt.Errorf("driver: request %d: %d of %d items not received", j.r.Index, j.left, j.n)
	}
	if r.Err == nil {
		r.Words, r.Err = frame.Items(make([]uint32, 0, j.n), j.got, j.mode, j.ib)
	}
	return r
}
