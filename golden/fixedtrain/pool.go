package fixedtrain

import (
	"runtime"
	"sync/atomic"
	"time"
)

// pool is the trainer's persistent set of worker goroutines: started once
// (the first parallel example), woken for each parallel phase of an
// example, and stopped when the trainer becomes unreachable. No goroutine
// is started per example or per phase.
//
// A phase is posted by bumping seq; a worker that finished its previous
// phase polls seq for up to the pool's adaptive budget (spinner) and only
// then parks on its wake channel; the caller waits for the workers the
// same way on left. Parking is announced before seq is
// checked again (sequentially consistent atomics), so no wake-up is lost;
// a stale wake token only makes a worker check seq once more.
//
// The workers never hold the trainer between phases (ph.tr is cleared
// when a phase ends), so the trainer can be collected and its cleanup
// stops them.
type pool struct {
	seq    atomic.Uint32 // phases posted
	left   atomic.Int32  // workers still running the current phase
	closed atomic.Bool
	ph     phase
	ws     []poolWorker // workers 1..n-1 (worker 0 is the caller)
	spin   int          // 1: waits poll before parking; 0: park at once (more workers than Ps)
	budget atomic.Int64 // the polling budget in nanoseconds (spinMin..spinMax)
	// the caller parks here when the workers take long
	callerParked atomic.Bool
	callerWake   chan struct{}
}

// poolWorker is one worker's parking state, padded to its own cache line.
type poolWorker struct {
	parked atomic.Bool
	wake   chan struct{}
	_      [48]byte
}

// phase is one parallel step: worker k runs tr.work(kind, k).
type phase struct {
	tr   *Trainer
	kind int
}

// A waiting goroutine polls for up to the pool's spin budget before it
// parks. The budget adapts: a wait that ends while polling doubles it (up
// to spinMax), a wait that has to park halves it (down to spinMin). On
// idle cores the waits are a phase's imbalance, a few microseconds, and
// the budget stays high, so no phase pays a futex wake-up (tens of
// microseconds on a virtual machine); on a loaded machine a wait often
// outlasts any budget (the other thread is not running) and polling
// would only burn the time slice, so the budget falls. With more workers
// than GOMAXPROCS nobody polls (a polling worker would hold the P
// another one needs).
const (
	spinMin = 10 * time.Microsecond
	spinMax = 100 * time.Microsecond
)

// spinner bounds one wait's polling.
type spinner struct {
	p     *pool
	n     int
	until time.Time
}

// spinner starts a wait.
func (p *pool) spinner() spinner { return spinner{p: p} }

// more reports whether the wait should poll again rather than park (the
// clock is read every 64 polls); when it says no, the budget halves.
func (s *spinner) more() bool {
	if s.p.spin == 0 {
		return false
	}
	s.n++
	if s.n&63 != 0 {
		return true
	}
	now := time.Now()
	if s.until.IsZero() {
		s.until = now.Add(time.Duration(s.p.budget.Load()))
	}
	if now.Before(s.until) {
		return true
	}
	s.p.budget.Store(int64(max(spinMin, time.Duration(s.p.budget.Load())/2)))
	return false
}

// done records a wait that ended while polling: the budget doubles.
func (s *spinner) done() {
	if s.p.spin != 0 && s.n > 0 {
		if b := time.Duration(s.p.budget.Load()); b < spinMax {
			s.p.budget.Store(int64(min(spinMax, 2*b)))
		}
	}
}

// newPool starts n-1 worker goroutines (worker 0 is the caller of run).
func newPool(n int) *pool {
	p := &pool{ws: make([]poolWorker, n-1), callerWake: make(chan struct{}, 1), spin: 1}
	p.budget.Store(int64(spinMax))
	if n > runtime.GOMAXPROCS(0) {
		p.spin = 0
	}
	for k := range p.ws {
		p.ws[k].wake = make(chan struct{}, 1)
		go p.loop(k, 0)
	}
	return p
}

// loop is worker k+1's goroutine; seen is the phases posted before it
// started (0: it is started before the first).
func (p *pool) loop(k int, seen uint32) {
	w := &p.ws[k]
	for {
		sp := p.spinner()
		parked := false
		for p.seq.Load() == seen && !p.closed.Load() {
			if !parked && sp.more() {
				continue
			}
			parked = true
			w.parked.Store(true)
			if p.seq.Load() == seen && !p.closed.Load() {
				<-w.wake
			}
			w.parked.Store(false)
		}
		if !parked {
			sp.done()
		}
		if p.closed.Load() {
			return
		}
		seen = p.seq.Load()
		ph := p.ph
		if pr := ph.tr.prof; pr != nil {
			pr.Time(k+1, func() { ph.tr.work(ph.kind, k+1) })
		} else {
			ph.tr.work(ph.kind, k+1)
		}
		if p.left.Add(-1) == 0 && p.callerParked.Load() {
			select {
			case p.callerWake <- struct{}{}:
			default:
			}
		}
	}
}

// run executes phase kind on every worker (the caller is worker 0) and
// returns when all are done.
func (p *pool) run(tr *Trainer, kind int) {
	p.ph = phase{tr: tr, kind: kind}
	p.left.Store(int32(len(p.ws)))
	p.seq.Add(1)
	for k := range p.ws {
		p.signal(&p.ws[k])
	}
	pr := tr.prof
	if pr != nil {
		pr.Begin()
		pr.Time(0, func() { tr.work(kind, 0) })
	} else {
		tr.work(kind, 0)
	}
	sp := p.spinner()
	parked := false
	for p.left.Load() != 0 {
		if !parked && sp.more() {
			continue
		}
		parked = true
		p.callerParked.Store(true)
		if p.left.Load() != 0 {
			<-p.callerWake
		}
		p.callerParked.Store(false)
	}
	if !parked {
		sp.done()
	}
	p.ph.tr = nil
	if pr != nil {
		pr.End()
	}
}

// signal wakes worker w if it parked.
func (p *pool) signal(w *poolWorker) {
	if w.parked.Load() {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// stop ends the worker goroutines.
func (p *pool) stop() {
	p.closed.Store(true)
	for k := range p.ws {
		p.signal(&p.ws[k])
	}
}

// workerPool returns the trainer's pool, starting it on first use; a
// cleanup stops it when the trainer is collected.
func (tr *Trainer) workerPool() *pool {
	if tr.pool == nil {
		tr.pool = newPool(tr.workers)
		runtime.AddCleanup(tr, func(p *pool) { p.stop() }, tr.pool)
	}
	return tr.pool
}
