package fixedtrain

import (
	"runtime"
	"sync"
)

// pool is the trainer's persistent set of worker goroutines: started once
// (the first parallel example), woken for each parallel phase of an
// example, and stopped when the trainer becomes unreachable. No goroutine
// is started per example or per phase. The workers never hold the trainer
// between phases (the phase's trainer pointer is cleared when it ends), so
// the trainer can be collected and its cleanup stops them.
type pool struct {
	start []chan *phase // one per worker 1..n-1 (worker 0 is the caller)
	wg    sync.WaitGroup
	ph    phase
}

// phase is one parallel step: worker k runs tr.work(kind, k).
type phase struct {
	tr   *Trainer
	kind int
}

// newPool starts n-1 worker goroutines (worker 0 is the caller of run).
func newPool(n int) *pool {
	p := &pool{start: make([]chan *phase, n-1)}
	for k := range p.start {
		ch := make(chan *phase)
		p.start[k] = ch
		go func(k int) {
			for ph := range ch {
				ph.tr.work(ph.kind, k)
				p.wg.Done()
			}
		}(k + 1)
	}
	return p
}

// run executes phase kind on every worker (the caller is worker 0) and
// returns when all are done.
func (p *pool) run(tr *Trainer, kind int) {
	p.ph = phase{tr: tr, kind: kind}
	p.wg.Add(len(p.start))
	for _, ch := range p.start {
		ch <- &p.ph
	}
	tr.work(kind, 0)
	p.wg.Wait()
	p.ph.tr = nil
}

// stop ends the worker goroutines.
func (p *pool) stop() {
	for _, ch := range p.start {
		close(ch)
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
