package board

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/internal/testenv"
)

func TestOptionsErrors(t *testing.T) {
	bank, err := fixed.RandomBank(irisShape, 8, rand.New(rand.NewPCG(1, 1)).Uint64)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		edit func(o *Options)
	}{
		{"no model", func(o *Options) {}},
		{"preload without a bank", func(o *Options) { o.Shape = irisShape; o.Preload = true }},
		{"no link", func(o *Options) { o.Shape = irisShape; o.UART = false }},
		{"slow UART", func(o *Options) { o.Bank = bank; o.ClksPerBit = 4 }},
		{"fault rate", func(o *Options) { o.Bank = bank; o.Faults.EthRx.Drop = 1.5 }},
		{"MAC", func(o *Options) { o.Bank = bank; o.MAC = net.HardwareAddr{1, 2, 3} }},
		{"TAP without Ethernet", func(o *Options) { o.Bank = bank; o.NoEthernet = true; o.TAP = "tap0" }},
		{"clock", func(o *Options) { o.Bank = bank; o.ClockHz = -1 }},
	} {
		o := DefaultOptions()
		c.edit(&o)
		if _, _, err := o.resolved(); !errors.Is(err, ErrOptions) {
			t.Errorf("%s: got %v, want ErrOptions", c.name, err)
		}
	}
}

func TestOptionsDefaults(t *testing.T) {
	bank, err := fixed.RandomBank(irisShape, 12, rand.New(rand.NewPCG(1, 1)).Uint64)
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.Bank = bank
	o.Config = hw.Config{}
	r, m, err := o.resolved()
	if err != nil {
		t.Fatal(err)
	}
	if r.Config.Bits != 12 || r.Config.LFSRWidth != 32 || r.Config.Lanes != hw.DefaultLanes(irisShape) || r.Config.MaxK != 255 ||
		r.Config.Prefix != "ptm" || r.ClksPerBit != DefaultClksPerBit || r.ReportedBaud != DefaultReportedBaud ||
		r.MAC.String() != "02:50:54:4d:00:01" || m.bank != bank {
		t.Errorf("resolved options: %+v", r)
	}
}

// TestBuildLog checks that the C++ main compiles without warnings under
// -Wall (the log of a fresh build is kept in the build directory).
func TestBuildLog(t *testing.T) {
	if testing.Short() {
		t.Skip("simulator build skipped in -short mode")
	}
	needVerilator(t)
	o := DefaultOptions()
	o.Shape = irisShape
	o.Config = irisConfig
	b, err := BuildSim(o)
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(filepath.Join(b.Dir, "build.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(log), "\n") {
		if strings.Contains(strings.ToLower(l), "warning") {
			t.Errorf("build warning: %s", l)
		}
	}
}

// TestRun checks that Run serves until its context is cancelled.
func TestRun(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("simulation skipped in -short mode")
	}
	needVerilator(t)
	o := DefaultOptions()
	o.Shape = irisShape
	o.Config = irisConfig
	o.Log = testWriter{t}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var uart string
	go func() {
		done <- Run(ctx, o, func(p *Process) {
			uart = p.UART
			cancel()
		})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-testenv.Context(t).Done():
		t.Fatal("Run did not return after its context was cancelled (up to the test deadline)")
	}
	if !strings.HasPrefix(uart, "/dev/pts/") {
		t.Errorf("UART path %q", uart)
	}
}
