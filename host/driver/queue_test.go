package driver_test

import (
	"testing"
	"time"

	"github.com/ptmhw/ptm/host/driver"
	"github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/internal/testmodel"
	"github.com/ptmhw/ptm/host/softboard"
)

// A board with a deep receive queue (31 frames, window 32, as the lean
// UP5K image) whose INFER takes 30 ms, longer than any RTT the driver
// measured before (INFO and the upload, well under a millisecond, so the
// RTO is its 20 ms floor). The first requests of the burst time out
// while the board still queues the whole window. Before the rule that
// only the head of the window times out, every request in flight was
// resent, the duplicates found the board's queue full (32 timeouts, 313
// busy answers, 18 late duplicates in 100 requests); now the head alone
// is resent, its refused copy shows the timeout spurious (the answer is
// then the original's: a valid RTT sample), and the estimate covers the
// queue from then on.
func TestDeepQueueSlowService(t *testing.T) {
	r := newRig(t, testmodel.Multiclass, softboard.Config{QueueFrames: 31}, driver.Opts{}, nil)
	ctx := ctxT(t, 5*time.Minute)
	loaded(t, r, ctx)
	before := r.d.Stats()
	r.board.SetExecTime(30 * time.Millisecond)
	const n = 100
	r.streamAll(t, ctx, n, 3, func(int) frame.Mode { return frame.ModeSums })
	st := r.d.Stats()
	timeouts := st.Timeouts - before.Timeouts
	t.Logf("%d requests: SRTT %v -> %v, RTO %v; %d timeouts, %d busy answers, %d late duplicates, %d spurious timeouts, window %d",
		n, before.SRTT, st.SRTT, st.RTO, timeouts, st.Busy, st.Stray, st.SpuriousTimeouts, st.Window)
	// Each timeout resends one request (the head), whose copy the full
	// queue refuses: at most one busy answer per timeout, and only until
	// the RTT estimate covers the 30 ms (a few heads; a loaded machine
	// may add some).
	// (One more busy answer is possible at the start: the burst may fill
	// the queue before the board's executor takes the first frame.)
	if st.Busy > timeouts+1 {
		t.Errorf("%d busy answers for %d timeouts: resends overflowed the board's queue", st.Busy, timeouts)
	}
	if timeouts > n/10 {
		t.Errorf("%d timeouts in %d requests: the RTO did not learn the board's service time", timeouts, n)
	}
}

// The Verilated board's line runs slower than its nominal rate (the
// simulator makes fewer clocks per second than the image's clock), so
// an answer can take longer on the line than the RTO the driver computes
// from the nominal rate. Here the board's line runs at 19,200 baud while
// the driver is told 3 Mbaud, the board is preloaded (no upload: the RTT
// estimate comes from INFO alone), and every answer (samples mode,
// K = 50: 600 bytes) takes 0.3 s on the line. Bytes arriving show the
// board working through its queue: they restart the timers like a
// complete answer does, so no request is resent while the board is
// still sending the answers queued ahead of it.
func TestSlowLineLongAnswers(t *testing.T) {
	bank := testmodel.Bank(testmodel.Multiclass, testmodel.HW.Bits, 7)
	r := newRigServe(t, testmodel.Multiclass, softboard.Config{QueueFrames: 7, BitRate: 19200, Bank: bank},
		driver.Opts{LineRate: 3_000_000}, softboard.StreamOpts{Pace: true, PaceBytes: 16}, nil, nil)
	ctx := ctxT(t, 5*time.Minute)
	if _, err := r.d.Info(ctx); err != nil {
		t.Fatal(err)
	}
	before := r.d.Stats()
	const n = 16
	r.streamAll(t, ctx, n, 50, func(int) frame.Mode { return frame.ModeSamples })
	st := r.d.Stats()
	t.Logf("%d requests: SRTT %v -> %v, RTO %v; %d timeouts, %d busy answers, %d late duplicates",
		n, before.SRTT, st.SRTT, st.RTO, st.Timeouts-before.Timeouts, st.Busy, st.Stray)
	// (Busy answers are possible without any resend: the software
	// board's executor takes the next frame from its queue only after
	// handing the previous answer to its line, and the host may refill
	// the window first.)
	if st.Timeouts != before.Timeouts || st.Stray != 0 {
		t.Errorf("%d timeouts, %d late duplicates while the board sent its answers",
			st.Timeouts-before.Timeouts, st.Stray)
	}
}
