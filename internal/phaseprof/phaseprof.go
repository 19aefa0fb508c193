// Package phaseprof measures the critical path of a worker pool that runs
// in phases (every worker does its share, then all wait for the longest)
// in thread CPU time, which a loaded machine does not inflate the way it
// inflates wall time: per phase the longest worker's CPU time, plus the
// caller's CPU time between phases. The trainers' benchmarks use it to
// bound the speedup that idle cores would give (golden/fixedtrain and
// golden/conv/convtrain, the "critical" benchmark rows); training never
// sets it. Linux only (CLOCK_THREAD_CPUTIME_ID).
package phaseprof

import (
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// Profile accumulates the phases of one pool. The caller's goroutine must
// stay locked to its OS thread while profiling (runtime.LockOSThread), so
// that its thread CPU clock is its own between phases.
type Profile struct {
	// Busy is each worker's thread CPU time in the current phase; worker
	// k records its own (Time), the caller reads all of them in End.
	Busy    []time.Duration
	crit    time.Duration // sum over phases of the longest worker
	total   time.Duration // sum over phases of every worker
	serial  time.Duration // caller's thread CPU time between phases
	lastEnd time.Duration // caller's thread CPU clock when the last phase ended
	phases  int
	started bool
}

// New returns a profile of a pool of the given number of workers (the
// caller counted as one if it works a share).
func New(workers int) *Profile { return &Profile{Busy: make([]time.Duration, workers)} }

// ThreadCPU is the calling thread's CPU time.
func ThreadCPU() time.Duration {
	var ts syscall.Timespec
	const clockThreadCPUTimeID = 3
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

// Begin is called by the caller as a phase starts: the caller's CPU time
// since the last phase ended counts as serial. It returns the caller's
// thread CPU clock.
func (p *Profile) Begin() time.Duration {
	t0 := ThreadCPU()
	if p.started {
		p.serial += t0 - p.lastEnd
	}
	return t0
}

// Time runs f locked to the calling goroutine's thread and records its
// thread CPU time as worker k's share of the current phase.
func (p *Profile) Time(k int, f func()) {
	runtime.LockOSThread()
	t0 := ThreadCPU()
	f()
	p.Busy[k] = ThreadCPU() - t0
	runtime.UnlockOSThread()
}

// End is called by the caller when every worker of the phase is done: the
// longest share joins the critical path, all of them the total work.
func (p *Profile) End() {
	var m time.Duration
	for _, b := range p.Busy {
		m = max(m, b)
		p.total += b
	}
	p.crit += m
	p.phases++
	// the caller's wait for the others is in the critical path (the
	// longest worker), not in the serial part
	p.lastEnd, p.started = ThreadCPU(), true
}

// Reset forgets the phases so far (a warm-up), keeping the workers.
func (p *Profile) Reset() { *p = Profile{Busy: p.Busy} }

// Phases returns the number of phases recorded.
func (p *Profile) Phases() int { return p.phases }

// Totals returns the critical path (the longest worker of every phase
// plus the serial part) and the total work (every worker's share plus
// the serial part); work/crit bounds the speedup of idle cores.
func (p *Profile) Totals() (crit, work time.Duration) {
	return p.crit + p.serial, p.total + p.serial
}
