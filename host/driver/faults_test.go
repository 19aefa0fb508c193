package driver_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/ptmhw/ptm/host/driver"
	"github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/internal/testmodel"
	"github.com/ptmhw/ptm/host/softboard"
)

// With 1e-3 bit flips and 1e-3 byte drops in each direction, upload and
// 10,000 queries must still be exact: nothing lost, duplicated or wrong,
// the resends counted. MaxRetries is generous so that a loaded CI machine
// (timeouts of 20 ms) cannot exhaust it; the retry bound itself is tested
// elsewhere.
func TestFaultyLink(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 2000
	}
	faults := &softboard.Faults{Seed: 11, FlipToBoard: 1e-3, DropToBoard: 1e-3, FlipToHost: 1e-3, DropToHost: 1e-3}
	r := newRig(t, testmodel.Multiclass, softboard.Config{}, driver.Opts{Timeout: 20 * time.Millisecond, ChunkWords: 64, MaxRetries: 60}, faults)
	ctx := ctxT(t, 120*time.Second)
	if _, err := r.d.Info(ctx); err != nil {
		t.Fatal(err)
	}
	words := softboard.BankWords(r.bank, testmodel.HW)
	if err := r.d.Load(ctx, words); err != nil {
		t.Fatal(err)
	}
	if got := r.board.Words(); !equal16(got, words) {
		t.Fatal("board's bank differs from the upload")
	}
	start := time.Now()
	r.streamAll(t, ctx, n, 3, func(int) frame.Mode { return frame.ModeStats })
	wall := time.Since(start)
	st := r.d.Stats()
	fs := r.link.Stats()
	bs := r.board.Status()
	t.Logf("%d queries in %v (%.0f/s); driver %+v", n, wall, float64(n)/wall.Seconds(), st)
	t.Logf("faults injected %+v; board counters %v", fs, bs.Map())
	if st.Retries == 0 || st.Link.CRCErrors == 0 || bs.Counters[frame.CounterCRCErrors] == 0 {
		t.Fatalf("faults were injected but no resends or CRC errors were counted: %+v", st)
	}
	if fs.DroppedToBoard == 0 || fs.DroppedToHost == 0 || fs.FlippedToBoard == 0 || fs.FlippedToHost == 0 {
		t.Fatalf("fault injection did not inject every kind: %+v", fs)
	}
}

func equal16(a, b []uint16) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A board that does not rescan (the version 4 receiver, emulated by
// softboard's NoRescan) on a UART-paced link with 1% bit flips and 1%
// byte drops each way: a corrupt frame swallows the requests behind it,
// so whole windows of requests get no answer at all. That silence is
// loss, not a slow board: the driver must not back off for it beyond
// lossBackoff (2 doublings) unless an answer arrives after its request
// was resent on a timeout (a spurious timeout). Before this rule the
// Verilated board's run (sim/board TestIrisStreamFaults) backed off to an
// RTO of 6.8 s and idled 172 s of 183, and this test saw 8 doublings at
// an SRTT of 20 ms, all in the upload (LOAD_DATA chunks lost in a row,
// each a new request at the back-off of the last); now at most 2. Upload
// and 400 queries (4,000 with PTM_LONG_TESTS=1), nothing lost or wrong.
func TestNoisyLinkNoRescan(t *testing.T) {
	n := 400
	if longTests() {
		n = 4000
	}
	var boardDrops atomic.Int64
	sopts := softboard.StreamOpts{Pace: true, NoRescan: true, OnDrop: func(frame.Drop) { boardDrops.Add(1) }}
	r := newRigServe(t, testmodel.Multiclass, softboard.Config{BitRate: 115200, QueueFrames: 31},
		driver.Opts{Window: 8}, sopts, noisy(11), nil)
	ctx := ctxT(t, 20*time.Minute)
	if _, err := r.d.Info(ctx); err != nil {
		t.Fatal(err)
	}
	words := softboard.BankWords(r.bank, testmodel.HW)
	if err := r.d.Load(ctx, words); err != nil {
		t.Fatal(err)
	}
	if !equal16(r.board.Words(), words) {
		t.Fatal("board's bank differs from the upload")
	}
	start := time.Now()
	r.streamAll(t, ctx, n, 10, func(int) frame.Mode { return frame.ModeStats })
	st := r.d.Stats()
	t.Logf("%d queries in %v: %d resends (%d timeouts), most doublings %d, %d spurious timeouts, SRTT %v; board dropped %d frames; faults %+v",
		n, time.Since(start).Round(time.Millisecond), st.Retries, st.Timeouts, st.MaxBackoff, st.SpuriousTimeouts, st.SRTT, boardDrops.Load(), r.link.Stats())
	if boardDrops.Load() == 0 || st.Timeouts == 0 {
		t.Fatalf("the faults did not reach the link: %d board drops, %d timeouts", boardDrops.Load(), st.Timeouts)
	}
	if st.SpuriousTimeouts == 0 && st.MaxBackoff > 2 {
		t.Errorf("the RTO was doubled %d times with no answer showing the board slow: silence on a lossy link is loss", st.MaxBackoff)
	}
}
