package driver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ptmhw/ptm/host/frame"
)

// Request is one query: Sets packed feature vectors (frame.PackFeatures,
// FB bytes each, one per threshold set of a sampled input encoding;
// Sets 0 means 1) run with K samples in all and a seed in a mode
// (docs/protocol.md section 4).
type Request struct {
	Index    int // the caller's identifier, returned in the Result
	Features []byte
	Sets     int
	K        int
	Seed     uint32
	Mode     frame.Mode
	// Expect, if set, is the answer the request must get (the golden
	// model's result words, docs/fixed-point.md). It changes nothing
	// about what is accepted as an answer but this: a response fragment
	// that arrives garbled, with its header and CRC intact, is taken as
	// the expected fragment when its CRC is the CRC of the expected
	// payload (frame.CRCMatches): the board sent exactly that. On a
	// noisy line a long answer then needs its 11 framing bytes to arrive
	// intact, not all of its bytes. A board that answers anything else is
	// still seen as it is: its CRC does not match, and only an intact
	// response completes the request. Result.CRCMatched says it was used.
	// It is a last resort for a version-5 board: a request answered in
	// windows (protocol version 6) does not use it.
	Expect []uint32
}

// Result is the answer to a Request: the result words (docs/protocol.md
// section 4) or the error that ended it.
type Result struct {
	Index   int
	Seq     uint16   // the sequence number the request used
	Words   []uint32 // K*NT class sums (samples; clipped in sums mode), NC+2NT statistics (stats) or NC votes (votes)
	Retries int      // resends the request needed
	// CRCMatched counts the fragments of the answer that arrived
	// garbled and were verified by their CRC against Request.Expect.
	CRCMatched int
	// Windows is the number of windows (INFER_WINDOW answers, or one
	// whole INFER answer) the answer was assembled from, 0 when the
	// request was sent whole without windows (Opts.NoWindows or a
	// version-5 board); Splits counts the windows given up after a lost
	// transmission and sent again shorter.
	Windows, Splits int
	Err             error
}

// check validates a request against the board's INFO. A protocol
// version 4 board checks only what protects it (K range, mode, sets) and
// runs one query per whole feature vector it receives without checking
// the length or the result size, so the host checks everything here,
// before anything is sent.
func (d *Driver) check(r *Request) error {
	if r.K < 1 || r.K > 0xffff {
		return fmt.Errorf("K = %d, want 1..65535", r.K)
	}
	if r.Mode > frame.ModeSums {
		return fmt.Errorf("mode %d, want samples (0), stats (1), votes (2) or sums (3)", r.Mode)
	}
	if r.Sets < 0 || r.Sets > 255 {
		return fmt.Errorf("%d sets, want 1..255", r.Sets)
	}
	if frame.InferHeaderLen+len(r.Features) > frame.MaxPayload {
		return fmt.Errorf("%d feature bytes do not fit in one frame", len(r.Features))
	}
	in := d.BoardInfo()
	if in == nil {
		return fmt.Errorf("INFER needs the board's INFO (its feature bytes, KMAX and item widths): call Info first")
	}
	if r.K > int(in.KMax) {
		return fmt.Errorf("K = %d exceeds the board's KMAX %d", r.K, in.KMax)
	}
	m := max(1, r.Sets)
	if m > int(in.MMax) {
		return fmt.Errorf("%d sets per query, the board takes at most %d (INFO MMAX)", m, in.MMax)
	}
	if len(r.Features) != m*in.FeatureBytes() {
		return fmt.Errorf("%d feature bytes for %d sets, the board takes %d per set (o = %d)", len(r.Features), m, in.FeatureBytes(), in.O)
	}
	if len(r.Features) == 0 {
		return fmt.Errorf("no feature bytes")
	}
	if n := in.ResultBytes(r.Mode, r.K); n > frame.MaxResponseBytes {
		return fmt.Errorf("the response would be %d bytes, more than %d fragments can carry", n, frame.MaxFragments)
	}
	return nil
}

func (d *Driver) inferCall(r *Request, notify chan<- *call) (*call, error) {
	if err := d.check(r); err != nil {
		return nil, fmt.Errorf("driver: request %d: %w", r.Index, err)
	}
	q := frame.InferRequest{Mode: r.Mode, Sets: uint8(max(1, r.Sets)), K: uint16(r.K), Seed: r.Seed, Count: 1, Features: r.Features}
	if q.Sets == 1 {
		q.Sets = 0 // as a version-2 host sent it: the same request
	}
	c := &call{typ: frame.TypeInfer, payload: q.AppendTo(make([]byte, 0, frame.InferHeaderLen+len(r.Features))),
		label: fmt.Sprintf("request %d", r.Index), loadOffset: -1, notify: notify, index: r.Index, itemBytes: 4, mode: r.Mode}
	if in := d.BoardInfo(); in != nil {
		c.expectWords = in.ResultWords(r.Mode, r.K)
		c.itemBytes = in.ItemBytes(r.Mode, r.K)
		n := c.itemBytes * c.expectWords
		c.respBytes = n + frame.Overhead*(1+n/frame.MaxPayload)
		if r.Expect != nil && len(r.Expect) == c.expectWords {
			c.expect = frame.AppendItems(make([]byte, 0, n), r.Expect, c.itemBytes)
		}
	}
	return c, nil
}

// newJob checks r and prepares it to be answered in windows.
func (d *Driver) newJob(r *Request) (*job, error) {
	if err := d.check(r); err != nil {
		return nil, fmt.Errorf("driver: request %d: %w", r.Index, err)
	}
	in := d.BoardInfo()
	q := frame.InferRequest{Mode: r.Mode, Sets: uint8(max(1, r.Sets)), K: uint16(r.K), Seed: r.Seed, Count: 1, Features: r.Features}
	if q.Sets == 1 {
		q.Sets = 0
	}
	j := &job{r: *r, payload: q.AppendTo(make([]byte, 0, frame.InferHeaderLen+len(r.Features))), mode: r.Mode,
		n: in.ResultWords(r.Mode, r.K), ib: in.ItemBytes(r.Mode, r.K)}
	j.got = make([]byte, j.n*j.ib)
	j.left = j.n
	j.todo = []span{{0, j.n}}
	return j, nil
}

// windows reports whether Stream answers requests in windows.
func (d *Driver) windows() bool {
	in := d.BoardInfo()
	return !d.opts.NoWindows && in != nil && in.Windows()
}

func result(c *call) Result {
	r := Result{Index: c.index, Seq: c.seq, Retries: c.retries(), CRCMatched: c.crcMatched, Err: c.err}
	if c.err == nil {
		r.Words, r.Err = frame.Items(make([]uint32, 0, len(c.resp)/c.itemBytes), c.resp, c.mode, c.itemBytes)
	}
	return r
}

// Stream runs every request read from reqs, keeping up to Opts.Window in
// flight, and sends one Result per request to results, in completion
// order; it closes results when it returns. It returns when reqs is
// closed and every request has its result (nil), when ctx is done
// (ctx.Err(); requests in flight get results with that error), when the
// link fails (that error; every request taken gets a result naming it), or
// when a request got no complete response within Opts.Deadline: then it
// stops reading reqs, abandons the requests in flight (their results
// wrap ErrTimeout) and returns a *DeadlineError listing every request
// left unanswered. The caller must keep reading results until the
// channel is closed.
//
// Each request is sent as an INFER with count 1 and a fresh sequence
// number; retries reuse the sequence number and bytes. A late duplicate
// response is ignored, never delivered twice. On a version-6 board
// (unless Opts.NoWindows) a request's answer may come in windows
// (INFER_WINDOW, each with its own sequence number and deadline, package
// doc): the windows of the oldest request are sent first, a new request
// is taken when every window of the earlier ones is in flight, and the
// Result is the joined answer. The deadline then bounds each window: a
// request fails when one of its windows gets no answer within
// Opts.Deadline.
func (d *Driver) Stream(ctx context.Context, reqs <-chan Request, results chan<- Result) error {
	defer close(results)
	window := d.opts.Window
	// A job's calls are at most window at once, each reported once.
	done := make(chan *call, window)
	outstanding := map[*call]struct{}{}
	var jobs []*job // requests answered in windows, in arrival order
	in := reqs
	var retErr error
	var dl *DeadlineError // set when a request expired; lists the unanswered
	// emit sends the result of job j (every call of it reported) and
	// forgets it.
	emit := func(j *job) {
		if j.err == nil && j.left != 0 && retErr != nil {
			j.err = fmt.Errorf("driver: request %d: %w", j.r.Index, retErr)
		}
		for i, x := range jobs {
			if x == j {
				jobs = append(jobs[:i], jobs[i+1:]...)
				break
			}
		}
		results <- jobResult(j)
	}
	// idleJobs emits the jobs left with no call in flight after the
	// stream stopped.
	idleJobs := func() {
		for _, j := range append([]*job(nil), jobs...) {
			if j.calls == 0 {
				emit(j)
			}
		}
	}
	abort := func(err error) {
		if retErr != nil {
			return
		}
		retErr = err
		in = nil
		calls := make([]*call, 0, len(outstanding))
		for c := range outstanding {
			calls = append(calls, c)
		}
		d.cancelCalls(calls, err)
		idleJobs()
	}
	submit := func(c *call, index int) bool {
		if err := d.submitCall(ctx, c); err != nil {
			if c.job != nil {
				c.job.calls--
				if c.job.err == nil {
					c.job.err = fmt.Errorf("driver: request %d: %w", index, err)
				}
				c.job.todo = nil
			} else {
				results <- Result{Index: index, Err: fmt.Errorf("driver: request %d: %w", index, err)}
			}
			if ctx.Err() != nil {
				abort(ctx.Err())
			} else {
				abort(err)
			}
			return false
		}
		outstanding[c] = struct{}{}
		return true
	}
	for in != nil || len(outstanding) > 0 || (retErr == nil && len(jobs) > 0) {
		// Windows still to send go first, the oldest request's first.
		todo := false
		for _, j := range jobs {
			for retErr == nil && len(j.todo) > 0 && len(outstanding) < window {
				submit(d.windowCall(j, done), j.r.Index)
			}
			todo = todo || len(j.todo) > 0
		}
		recv := in
		if len(outstanding) >= window || todo {
			recv = nil
		}
		var ctxDone <-chan struct{}
		if retErr == nil {
			ctxDone = ctx.Done()
		}
		select {
		case r, ok := <-recv:
			if !ok {
				in = nil
				continue
			}
			if d.windows() {
				j, err := d.newJob(&r)
				if err != nil {
					results <- Result{Index: r.Index, Err: err}
					continue
				}
				jobs = append(jobs, j)
				continue
			}
			c, err := d.inferCall(&r, done)
			if err != nil {
				results <- Result{Index: r.Index, Err: err}
				continue
			}
			submit(c, r.Index)
		case c := <-done:
			delete(outstanding, c)
			var de *DeadlineError
			if dl == nil && errors.As(c.err, &de) {
				dl = &DeadlineError{Deadline: de.Deadline}
				if retErr == nil {
					retErr, in = dl, nil
					d.cancelAbandoned(outstanding, c)
					idleJobs()
				}
			}
			if dl != nil && c.err != nil && !errors.Is(c.err, errSplit) {
				dl.Unanswered = append(dl.Unanswered, c.unanswered(time.Now(), errors.As(c.err, &de)))
			}
			if c.job == nil {
				results <- result(c)
				continue
			}
			if d.windowDone(c) || (retErr != nil && c.job.calls == 0) {
				emit(c.job)
			}
		case <-ctxDone:
			abort(ctx.Err())
		case <-d.e.dead:
			if retErr == nil {
				retErr = d.e.deadErr
				in = nil
			}
			// The engine failed every outstanding call before dying.
			for len(outstanding) > 0 {
				c := <-done
				delete(outstanding, c)
				if c.job == nil {
					results <- result(c)
				} else if d.windowDone(c) || c.job.calls == 0 {
					emit(c.job)
				}
			}
			idleJobs()
		}
	}
	idleJobs()
	if dl != nil {
		dl.sort()
	}
	return retErr
}

// cancelAbandoned fails the calls in flight when expired's deadline has
// passed: the board is not answering.
func (d *Driver) cancelAbandoned(outstanding map[*call]struct{}, expired *call) {
	calls := make([]*call, 0, len(outstanding))
	for c := range outstanding {
		calls = append(calls, c)
	}
	d.cancelCalls(calls, fmt.Errorf("driver: abandoned: %s (seq %d) got no complete response within the deadline of %v: %w",
		expired.label, expired.seq, d.opts.Deadline, ErrTimeout))
}

// InferAll streams reqs and returns their results in the order of reqs.
func (d *Driver) InferAll(ctx context.Context, reqs []Request) ([]Result, error) {
	ch := make(chan Request)
	res := make(chan Result, d.opts.Window)
	go func() {
		defer close(ch)
		for _, r := range reqs {
			select {
			case ch <- r:
			case <-ctx.Done():
				return
			}
		}
	}()
	pos := make(map[int][]int, len(reqs))
	for i, r := range reqs {
		pos[r.Index] = append(pos[r.Index], i)
	}
	out := make([]Result, len(reqs))
	got := make([]bool, len(reqs))
	errc := make(chan error, 1)
	go func() { errc <- d.Stream(ctx, ch, res) }()
	for r := range res {
		for _, i := range pos[r.Index] {
			if !got[i] {
				out[i], got[i] = r, true
				break
			}
		}
	}
	err := <-errc
	for i, g := range got {
		if !g {
			out[i] = Result{Index: reqs[i].Index, Err: fmt.Errorf("driver: request %d: not run: %w", reqs[i].Index, context.Cause(ctx))}
		}
	}
	return out, err
}
