package driver_test

import (
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
