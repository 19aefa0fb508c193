package phaseprof

import (
	"runtime"
	"testing"
	"time"
)

// spin burns about d of the calling thread's CPU time.
func spin(d time.Duration) {
	t0 := ThreadCPU()
	for ThreadCPU()-t0 < d {
	}
}

// TestTotals: two phases whose shares are known in CPU time (each worker
// spins, so the shares do not depend on the machine's load): the critical
// path is the sum of the longest shares, the work the sum of all.
func TestTotals(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	p := New(2)
	const ms = time.Millisecond
	for _, share := range [][2]time.Duration{{4 * ms, 1 * ms}, {2 * ms, 6 * ms}} {
		p.Begin()
		done := make(chan struct{})
		go func() { p.Time(1, func() { spin(share[1]) }); close(done) }()
		p.Time(0, func() { spin(share[0]) })
		<-done
		p.End()
	}
	crit, work := p.Totals()
	if p.Phases() != 2 {
		t.Fatalf("%d phases, want 2", p.Phases())
	}
	// spin overshoots by at most one clock read; the serial part between
	// the phases is a few microseconds
	if crit < 10*ms || crit > 11*ms {
		t.Errorf("critical path %v, want 10 ms (4 + 6) plus a little", crit)
	}
	if work < 13*ms || work > 14*ms {
		t.Errorf("work %v, want 13 ms (4 + 1 + 2 + 6) plus a little", work)
	}
	p.Reset()
	if c, w := p.Totals(); p.Phases() != 0 || c != 0 || w != 0 || len(p.Busy) != 2 {
		t.Errorf("after Reset: %d phases, %v, %v, %d workers", p.Phases(), c, w, len(p.Busy))
	}
}
