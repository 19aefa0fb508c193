package convtrain

import (
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// phaseProfile measures the worker pool's critical path in thread CPU
// time, which a loaded machine does not inflate the way it inflates wall
// time: per phase the longest worker's CPU time, plus the caller's CPU
// time between phases. BenchmarkConvEpoch (critical) uses it to bound the
// speedup an idle machine would give; training never sets it.
type phaseProfile struct {
	busy    []time.Duration // per worker: thread CPU time in the current phase
	crit    time.Duration   // sum over phases of the longest worker
	total   time.Duration   // sum over phases of every worker
	serial  time.Duration   // caller's thread CPU time between phases
	lastEnd time.Duration   // caller's thread CPU clock when the last phase ended
	phases  int
	started bool
}

// threadCPU is the calling thread's CPU time.
func threadCPU() time.Duration {
	var ts syscall.Timespec
	const clockThreadCPUTimeID = 3
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

// timed runs phase on worker w, recording its thread CPU time in busy[k].
func (tr *Trainer) timed(w *worker, k, phase int) {
	runtime.LockOSThread()
	t0 := threadCPU()
	tr.run(w, phase)
	tr.prof.busy[k] = threadCPU() - t0
	runtime.UnlockOSThread()
}
