package board

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/host/conformance"
	"github.com/ptmhw/ptm/host/driver"
	pframe "github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/transport"
	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/internal/testenv"
)

// randomConvBank is a coalesced 3-class bank of 9 clauses on 7 x 6 images
// of 2 planes with a 3 x 4 window (12 patches, 2F = 2*(24+4+2) literals),
// random thresholds (a third of them 0, some always included) and
// weights in -40..40.
func randomConvBank(t testing.TB, seed uint64) *conv.Bank {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	h := conv.Head{Shape: conv.Shape{H: 7, W: 6, Planes: 2, WY: 3, WX: 4}, Structure: conv.Coalesced, Classes: 3, Clauses: 9, T: 200}
	for range h.Classes * h.Clauses {
		h.Weights = append(h.Weights, int32(rng.IntN(81)-40))
	}
	b := &conv.Bank{Head: h, Bits: 4, Thresh: make([]uint32, h.TAs())}
	for k := range b.Thresh {
		b.Thresh[k] = uint32([]int{0, 0, 0, 15, 14, 3, 8}[rng.IntN(7)])
	}
	if err := b.Check(); err != nil {
		t.Fatal(err)
	}
	return b
}

// convRandomConfig: 2 x 7 lanes (padding clauses and literal slots), B = 4,
// 16-bit LFSRs, two patches per cycle.
var convRandomConfig = hw.Config{Bits: 4, LFSRWidth: 16, ClauseLanes: 2, LiteralLanes: 7, PatchLanes: 2}

// TestConvConformance runs host/conformance's CheckConv (INFO's kind and
// image words, the upload of thresholds and weights, a wrong CRC refused,
// K and length refusals, every mode with 1..4 sets against the golden
// conv.Core, several images per INFER, INFER_WINDOW windows) against the
// Verilated convolutional board (protocol version 7) on a random model,
// over the UART on the pseudo-terminal.
func TestConvConformance(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end simulation skipped in -short mode")
	}
	testenv.Heartbeat(t, 0)
	conformConv(t, func(*Options) {})
}

// TestConvConformanceDualClock is TestConvConformance on the dual-clock
// convolutional board (CORE_CLK = 1: conv_query and the core on clk_core,
// twice the board clock, through core_xing), UART only.
func TestConvConformanceDualClock(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end simulation skipped in -short mode")
	}
	testenv.Heartbeat(t, 0)
	conformConv(t, func(o *Options) { o.CoreClock, o.NoEthernet = true, true })
}

// TestConvConformanceCompact is TestConvConformance on the compact scan
// (hw.ScanCompact: no row band, no include copy), UART only, without the
// set loop (SETS_MAX 1, MMAX 1 in INFO, as the UP5K MNIST boards are
// built: a query of two sets is refused with ERROR 3, INFER_WINDOW kept).
func TestConvConformanceCompact(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end simulation skipped in -short mode")
	}
	testenv.Heartbeat(t, 0)
	conformConv(t, func(o *Options) {
		o.Config.Scan = hw.ScanCompact
		o.NoEthernet = true
		o.SetsMax = 1
	})
}

// TestConvConformanceEthernet runs CheckConv against the random model's
// convolutional board over Ethernet (the TAP device, the host's AF_PACKET
// transport inside the board's network namespace). It needs root.
func TestConvConformanceEthernet(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end simulation skipped in -short mode")
	}
	testenv.Heartbeat(t, 0)
	ns := needNetNS(t, "ptmcconf")
	bank := randomConvBank(t, 5)
	o := DefaultOptions()
	o.ConvBank = bank
	o.Config = convRandomConfig
	o.UART = false
	o.TAP = "ptmcconf0"
	o.NetNS = ns
	p := start(t, o)
	rep, err := conformance.CheckConv(testenv.Context(t), openEthernetIn(t, ns, p.TAP), bank, conformance.Opts{Strict: true, Queries: 12})
	if err != nil {
		t.Fatalf("conformance: %v\n%v", err, rep)
	}
	for _, f := range rep.Failed() {
		t.Errorf("%s: %s", f.Name, f.Detail)
	}
	t.Logf("\n%s", rep)
}

// TestConvWeightRefused: the convolutional board keeps its clause
// weights at the model's width (hw.ConvParams.WB: 7 bits for
// randomConvBank's -40..40) and refuses an uploaded weight outside it
// instead of wrapping it: the upload of a bank with one weight of 64
// (and, the second time, -65) fails with ERROR 3 on that LOAD_DATA, the
// board has no model after it, and the right bank then loads and commits.
func TestConvWeightRefused(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end simulation skipped in -short mode")
	}
	testenv.Heartbeat(t, 0)
	bank := randomConvBank(t, 5)
	if wb := hw.ConvWeightWidth(&bank.Head); wb != 7 {
		t.Fatalf("weights -40..40 stored at %d bits, want 7", wb)
	}
	o := DefaultOptions()
	o.ConvBank = bank
	o.Config = convRandomConfig
	o.NoEthernet = true
	p := start(t, o)
	tr, err := transport.OpenUART(p.UART, transport.UARTOpts{Baud: DefaultReportedBaud})
	if err != nil {
		t.Fatalf("opening the pty with host/transport: %v", err)
	}
	defer tr.Close()
	ctx := testenv.Context(t)
	dr := driver.New(tr, driver.Opts{})
	defer dr.Close()
	in, err := dr.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	words := pframe.ConvBankWords(bank, in.HW())
	wt0 := len(words) - bank.Classes*bank.Clauses // the first weight word
	for i, bad := range []int16{64, -65} {
		w := append([]uint16(nil), words...)
		at := wt0 + 5 + 7*i
		w[at] = uint16(bad)
		err := dr.Load(ctx, w)
		var be *pframe.BoardError
		if !errors.As(err, &be) || be.Code != pframe.CodeBadLength || be.Cmd != pframe.TypeLoadData {
			t.Fatalf("upload with weight word %d = %d (7-bit weights): %v, want ERROR 3 on LOAD_DATA", at, bad, err)
		}
		t.Logf("weight word %d = %d refused: %v", at, bad, err)
		if in2, err := dr.Info(ctx); err != nil || in2.Loaded != 0 {
			t.Fatalf("INFO after the refused upload: %v, loaded %v; want no model", err, in2)
		}
	}
	// The board's ERROR 3 answer is lost on the way: the driver resends
	// the chunk, and the resend finds no load in progress with the
	// board's next offset at the refused word. The driver reports the
	// refusal that answer stood for.
	lossy := &dropFirstRefusal{Transport: tr}
	lossyDr := driver.New(lossy, driver.Opts{})
	w := append([]uint16(nil), words...)
	at := wt0 + 3
	w[at] = uint16(64)
	err = lossyDr.Load(ctx, w)
	lossyDr.Close()
	var be *pframe.BoardError
	if lossy.dropped != 1 || !errors.As(err, &be) || be.Code != pframe.CodeBadLength || be.Cmd != pframe.TypeLoadData || int(be.Detail) != at {
		t.Fatalf("upload with weight word %d = 64, its ERROR 3 answer dropped (%d dropped): %v, want ERROR 3 on LOAD_DATA at word %d", at, lossy.dropped, err, at)
	}
	t.Logf("with resends, weight word %d refused: %v", at, err)
	if err := dr.Load(ctx, words); err != nil {
		t.Fatalf("the bank whose weights fit: %v", err)
	}
	if in2, err := dr.Info(ctx); err != nil || in2.Loaded != 1 || in2.ModelCRC != pframe.WordsCRC(words) {
		t.Fatalf("INFO after the upload: %v, %+v; want loaded with CRC 0x%08x", err, in2, pframe.WordsCRC(words))
	}
}

// conformConv runs CheckConv on the UART of the random model's board,
// its options (single clock, with Ethernet, the range scan) changed by
// set.
func conformConv(t *testing.T, set func(*Options)) {
	t.Helper()
	bank := randomConvBank(t, 5)
	o := DefaultOptions()
	o.ConvBank = bank
	o.Config = convRandomConfig
	set(&o)
	p := start(t, o)
	tr, err := transport.OpenUART(p.UART, transport.UARTOpts{Baud: DefaultReportedBaud})
	if err != nil {
		t.Fatalf("opening the pty with host/transport: %v", err)
	}
	defer tr.Close()
	rep, err := conformance.CheckConv(testenv.Context(t), tr, bank, conformance.Opts{Strict: true, Queries: 12})
	if err != nil {
		t.Fatalf("conformance: %v\n%v", err, rep)
	}
	for _, f := range rep.Failed() {
		t.Errorf("%s: %s", f.Name, f.Detail)
	}
	t.Logf("\n%s", rep)
}

// TestConvOptions: a convolutional model's options resolve to `ptm eval
// --fixed`'s lanes (min(8, C) x min(8, 2F)), the bank's bits, 32-bit
// LFSRs and the largest MaxK up to 255 that keeps the statistics in 32
// bits; a preloaded convolutional board and a MaxK that overflows are
// refused with ErrOptions; one set per query (SETS_MAX 1) is a board.
func TestConvOptions(t *testing.T) {
	bank := randomConvBank(t, 5)
	o := DefaultOptions()
	o.ConvBank = bank
	o.Config = hw.Config{}
	r, m, err := o.resolved()
	if err != nil {
		t.Fatal(err)
	}
	c := r.Config
	if m.conv != bank || c.Bits != 4 || c.LFSRWidth != 32 || c.ClauseLanes != 8 || c.LiteralLanes != 8 || c.MaxK != 255 {
		t.Errorf("resolved config %+v", c)
	}
	one := o
	one.SetsMax = 1
	if r1, _, err := one.resolved(); err != nil || r1.SetsMax != 1 {
		t.Errorf("SetsMax 1: %v (SetsMax %d)", err, r1.SetsMax)
	}
	for name, f := range map[string]func(*Options){
		"preload":  func(o *Options) { o.Preload = true },
		"max K":    func(o *Options) { o.Config.MaxK = 70000 },
		"bad bank": func(o *Options) { b := *bank; b.Thresh = b.Thresh[:1]; o.ConvBank = &b },
	} {
		o2 := o
		f(&o2)
		if _, _, err := o2.resolved(); !errors.Is(err, ErrOptions) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// dropFirstRefusal loses the first ERROR 3 (bad length) answer it
// receives, as a noisy line would.
type dropFirstRefusal struct {
	transport.Transport
	dropped int
}

// Recv returns the next frame but the first ERROR 3.
func (d *dropFirstRefusal) Recv(ctx context.Context) ([]byte, error) {
	for {
		b, err := d.Transport.Recv(ctx)
		if err != nil {
			return b, err
		}
		var f pframe.Frame
		var be pframe.BoardError
		if d.dropped == 0 && f.DecodeFromBytes(b) == nil && f.Type == pframe.TypeError &&
			be.DecodeFromBytes(f.Payload) == nil && be.Code == pframe.CodeBadLength {
			d.dropped++
			continue
		}
		return b, nil
	}
}
