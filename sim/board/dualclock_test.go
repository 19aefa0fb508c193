package board

import (
	"strings"
	"testing"

	"github.com/ptmhw/ptm/golden/fixed"
	pframe "github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/stream"
)

// TestConformanceDualClock runs the host's conformance suite (TestConformance)
// against the dual-clock board (Options.CoreClock: the core on clk_core at
// twice the shell's clock, through rtl/board/core_xing.v): the bank upload
// crosses to the core word by word and every INFER answer equals the golden
// model's.
func TestConformanceDualClock(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end simulation skipped in -short mode")
	}
	conformUART(t, true)
}

// TestDualClockImage streams the Iris rows (sums mode, K = 100) to the
// Verilated board of the dual-clock UP5K image that meets timing (`ptm
// synth --device up5k --no-eth --sets-max 1 --lanes 40 --freq 48
// --core-clock-ratio 2`, docs/synthesis.md "The dual-clock board": UART
// only, SETS_MAX 1, B = 4, W = 16, 40 lanes on clk_core at 48 MHz, the
// shell at 24 MHz with its UART at 8 clocks per bit): the report equals
// the fixed-point evaluation of the same rows and seeds (0 mismatches).
func TestDualClockImage(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end simulation skipped in -short mode")
	}
	iris := loadIris(t)
	o := irisOptions(iris.m, 40, true)
	// the image's B = 4 (ptm synth's default): the model re-quantized
	b4, err := fixed.Quantize(iris.m.File.Model, 4)
	if err != nil {
		t.Fatal(err)
	}
	o.Bank, o.Config.Bits = b4, 4
	o.Config.LFSRWidth = 16
	o.NoEthernet, o.SetsMax = true, 1
	o.CoreClock = true
	o.ClksPerBit = 8
	o.ClockHz = 24_000_000
	p := start(t, o)
	cfg := stream.Config{K: 100, Seed: 3, Labels: iris.labels, RowIDs: iris.ids, Mode: pframe.ModeSums}
	s := runStream(t, openUART(t, p), iris.m.File, iris.m.Hash, iris.X, cfg)
	if s.Metrics == nil || s.Metrics.N != len(iris.X) || s.Board.Info.MMax != 1 || len(s.Board.Warnings) != 1 ||
		!strings.Contains(s.Board.Warnings[0], "one request per set") {
		t.Fatalf("metrics %+v, board MMAX %d, warnings %v (want one: one request per set)", s.Metrics, s.Board.Info.MMax, s.Board.Warnings)
	}
	got := reportEqualsFixed(t, iris, s, cfg)
	t.Logf("dual-clock image (40 lanes on clk_core, UART only, SETS_MAX 1, W 16): %d rows, 0 mismatches; report = eval --fixed: accuracy %.4f, ECE %.4f",
		len(iris.X), got[0], got[1])
}

// TestFlashedImageLine streams Iris queries (votes mode, K = 100, one query
// of the model's 8 threshold sets per row) to the Verilated board of the
// image that meets issue 12's first target (`ptm synth --device up5k
// --no-eth --core-clock-ratio 2 --lanes 60 --freq 54 --seed 2`, the `make
// demo` image: UART only, SETS_MAX 8, B = 4, W = 16, 60 lanes on clk_core
// at 54 MHz, 1.10 M samples/s; the shell at 27 MHz with its UART at 9
// clocks per bit, 3 Mbaud) and checks that the receive line, not the
// core, bounds the rate: the board's counters show the line busy at least
// 95% of its bit times, the queries are within 5% of what the line could
// carry, nothing is resent and every answer equals the golden model's
// (runStream). A query's request is about 45 bytes (90 shell clocks a
// byte, about 4,000 a query) while the core takes 100 x 48.87 core clocks
// (about 2,450 shell clocks) for it.
func TestFlashedImageLine(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end simulation skipped in -short mode")
	}
	iris := loadIris(t)
	o := irisOptions(iris.m, 60, true)
	b4, err := fixed.Quantize(iris.m.File.Model, 4)
	if err != nil {
		t.Fatal(err)
	}
	o.Bank, o.Config.Bits = b4, 4
	o.Config.LFSRWidth = 16
	o.NoEthernet = true
	o.CoreClock = true
	o.ClksPerBit = 9
	o.ClockHz = 27_000_000
	s := lineBound(t, iris, o, 11, "flashed image (60 lanes at 54 MHz, shell 27 MHz, 9 clocks per bit)")
	if s.Board.Info.MMax != 8 {
		t.Errorf("board MMAX %d, want 8 (the image's SETS_MAX)", s.Board.Info.MMax)
	}
}
