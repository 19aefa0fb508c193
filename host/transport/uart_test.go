//go:build linux

package transport_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/host/driver"
	"github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/internal/pty"
	"github.com/ptmhw/ptm/host/internal/race"
	"github.com/ptmhw/ptm/host/internal/testmodel"
	"github.com/ptmhw/ptm/host/softboard"
	"github.com/ptmhw/ptm/host/transport"
)

// runUART serves a softboard on a pty master, opens the slave with
// tarm/serial, uploads a bank and streams n stats-mode queries, checking
// each against the golden core. It returns queries/s and the transmit and
// receive utilization.
func runUART(t *testing.T, baud, n, k int, pace bool) (qps, utx, urx float64) {
	t.Helper()
	pair, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer pair.Close()
	sh := testmodel.Multiclass
	board, err := softboard.New(softboard.Config{Shape: sh, HW: testmodel.HW, BitRate: baud})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	bctx, bcancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- board.Serve(bctx, pair.Master, softboard.StreamOpts{Pace: pace}) }()
	defer func() {
		bcancel()
		if err := <-done; err != nil {
			t.Errorf("board: %v", err)
		}
	}()
	u, err := transport.OpenUART(pair.SlavePath, transport.UARTOpts{Baud: baud, Pace: pace})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	d := driver.New(u, driver.Opts{})
	defer d.Close()
	in, err := d.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if in.BitRate != uint32(baud) {
		t.Fatalf("INFO bit rate %d", in.BitRate)
	}
	bank := testmodel.Bank(sh, testmodel.HW.Bits, 4)
	if err := d.Load(ctx, softboard.BankWords(bank, testmodel.HW)); err != nil {
		t.Fatal(err)
	}
	core, _ := fixed.NewCore(bank, testmodel.HW)
	xs := testmodel.Features(n, sh.Features, 8)
	reqs := make([]driver.Request, n)
	for i, x := range xs {
		reqs[i] = driver.Request{Index: i, Features: frame.PackFeatures(nil, x), K: k, Seed: uint32(i), Mode: frame.ModeStats}
	}
	before := u.Stats()
	start := time.Now()
	res, err := d.InferAll(ctx, reqs)
	wall := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("request %d: %v", i, r.Err)
		}
		_, st, _ := core.Run(xs[i], k, uint32(i), nil)
		for c, v := range st.Votes {
			if r.Words[c] != uint32(v) {
				t.Fatalf("request %d: votes %v, golden %v", i, r.Words[:3], st.Votes)
			}
		}
	}
	link := u.Stats().Sub(before)
	qps = float64(n) / wall.Seconds()
	utx, urx = link.TxUtilization(wall), link.RxUtilization(wall)
	t.Logf("%s pace=%v: %d queries (K=%d, stats) in %v: %.0f queries/s, utilization host->board %.3f, board->host %.3f (%d/%d bytes); driver %+v",
		u.Name(), pace, n, k, wall.Round(time.Millisecond), qps, utx, urx, link.BytesSent, link.BytesRecv, d.Stats())
	return
}

func TestUARTOverPTY(t *testing.T) {
	runUART(t, 115200, 1000, 10, false)
}

// With the line emulated at the nominal rate on both sides, pipelining
// keeps the board-to-host direction (the bottleneck: a stats response is
// longer than its request) nearly saturated.
func TestUARTOverPTYPaced(t *testing.T) {
	if testing.Short() {
		t.Skip("paced line: slow")
	}
	_, _, urx := runUART(t, 115200, 300, 10, true)
	// A wall-clock figure: asserted only on request (a quiet machine), as
	// a loaded CI machine, not the protocol, can hold it down.
	if urx < 0.8 && !race.Enabled && os.Getenv("PTM_TIMING_TESTS") != "" {
		t.Errorf("board-to-host utilization %.3f with pipelining, want > 0.8", urx)
	}
}
