package synth

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/internal/testenv"
)

// smallConvDesign is the conv core of an untrained 3-class, 8-clause head
// on 8 x 8 images with a 3 x 3 window (the netlist does not depend on the
// thresholds and weights: they are uploaded through the ports).
func smallConvDesign(t *testing.T, lc, ll, pn int) *hw.ConvDesign {
	t.Helper()
	return smallConvDesignScan(t, lc, ll, pn, "")
}

// smallConvDesignScan is smallConvDesign with the scan scan ("": range).
func smallConvDesignScan(t *testing.T, lc, ll, pn int, scan string) *hw.ConvDesign {
	t.Helper()
	h := conv.Head{Shape: conv.Shape{H: 8, W: 8, Planes: 1, WY: 3, WX: 3}, Structure: conv.Coalesced, Classes: 3, Clauses: 8, T: 50}
	h.Weights = make([]int32, h.Classes*h.Clauses)
	b := &conv.Bank{Head: h, Bits: 4, Thresh: make([]uint32, h.TAs())}
	d, err := hw.GenerateConv(hw.Config{Bits: 4, LFSRWidth: 16, ClauseLanes: lc, LiteralLanes: ll, PatchLanes: pn, MaxK: 255, Scan: scan}, b, "0123456789ab")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// mnistConvParams are the derived constants of a conv core of MNIST's
// geometry (28 x 28, 10 x 10 window, 10 classes) with c clauses.
func mnistConvParams(t *testing.T, c, lc, ll, pn int) *hw.ConvParams {
	t.Helper()
	return &mnistConvDesign(t, c, lc, ll, pn).Params
}

// mnistConvDesign is the conv core of mnistConvParams.
func mnistConvDesign(t *testing.T, c, lc, ll, pn int) *hw.ConvDesign {
	t.Helper()
	h := conv.Head{Shape: conv.Shape{H: 28, W: 28, Planes: 1, WY: 10, WX: 10}, Structure: conv.Coalesced, Classes: 10, Clauses: c, T: 2000}
	h.Weights = make([]int32, h.Classes*h.Clauses)
	b := &conv.Bank{Head: h, Bits: 4, Thresh: make([]uint32, h.TAs())}
	d, err := hw.GenerateConv(hw.Config{Bits: 4, LFSRWidth: 16, ClauseLanes: lc, LiteralLanes: ll, PatchLanes: pn, MaxK: 255}, b, "")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestConvFit: the memory check before any tool runs. MNIST's geometry
// has 272 literals per clause: 128 clauses at 4 bits are 136 kbit (above
// SPRAMThreshold: SPRAM on the UP5K, refused on the HX8K, which has no
// SPRAM), 512 clauses 544 kbit (UP5K SPRAM: fits in 1,024 kbit).
func TestConvFit(t *testing.T) {
	up, _ := LookupDevice("up5k")
	hx, _ := LookupDevice("hx8k")
	for _, c := range []struct {
		clauses  int
		kbit     float64
		up5k, hx bool
	}{{128, 136, true, false}, {512, 544, true, false}, {8, 8.5, true, true}} {
		p := mnistConvParams(t, c.clauses, 1, 16, 1)
		if got := float64(ConvMemoryBits(p)) / 1024; got != c.kbit {
			t.Errorf("%d clauses: %.1f kbit of thresholds, want %.1f", c.clauses, got, c.kbit)
		}
		for _, d := range []struct {
			dev  Device
			want bool
		}{{up, c.up5k}, {hx, c.hx}} {
			err := CheckConvFit(p, d.dev)
			if (err == nil) != d.want || (err != nil && !errors.Is(err, ErrNoFit)) {
				t.Errorf("%d clauses on %s: %v, want fit %v", c.clauses, d.dev.Name, err, d.want)
			}
			if err != nil && !strings.Contains(err.Error(), "kbit") {
				t.Errorf("%d clauses on %s: the refusal gives no numbers: %v", c.clauses, d.dev.Name, err)
			}
		}
	}
}

// TestConvCandidateOrder: without the model's estimate the search's
// candidates are ordered by the schedule's longest sample, hw.ConvParams.SampleCyclesMax: the sampler,
// the scan and the weigh unit work on consecutive groups, so a group
// costs the longest of the three, and the last group's weighing and the
// NC result words follow. On MNIST's geometry with 128 clauses, 1 x 16
// lanes and 7 patches per cycle: G = 128 groups; the sampler BT + 1 =
// 17 + 1 beats; the scan 2 + 6 (one clause lane, generator 0.2.5's
// Lane1: the take, then the window's load from an odd row, two image
// rows per cycle; a fired clause seen a cycle late) + 19 x ceil(19/7) =
// 57 blocks, the longest; the weigh unit LC + 2 = 3; then LC + 2 + NC =
// 13.
func TestConvCandidateOrder(t *testing.T) {
	p := mnistConvParams(t, 128, 1, 16, 7)
	if got, want := ConvScheduleCycles(p), 128*(2+6+19*3)+1+2+10; got != want {
		t.Fatalf("schedule %d cycles per sample, want %d", got, want)
	}
	// The compact scan: the sampler waits for the scan, so a group costs
	// BT + 2 + the scan's overhead (3 + NR + 2 = 10, NR = 5 row pairs) +
	// its blocks (57) and the window's reload at each of the 18 moves to
	// the next patch row (NR + 1 = 6 more each).
	pc := *p
	pc.Compact, pc.NR = true, 5
	if got, want := ConvScheduleCycles(&pc), 128*(17+2+10+57+18*6)+1+2+10; got != want {
		t.Fatalf("compact schedule %d cycles per sample, want %d", got, want)
	}
	var cands []ConvCandidate
	for _, g := range ConvCandidateGrid {
		q := mnistConvParams(t, 128, g.LC, g.LL, g.PN)
		cands = append(cands, ConvCandidate{ClauseLanes: g.LC, LiteralLanes: g.LL, PatchLanes: g.PN, Scan: q.Scan, ScheduleCycles: ConvScheduleCycles(q)})
	}
	OrderConvCandidates(cands)
	for i := 1; i < len(cands); i++ {
		if cands[i].ScheduleCycles < cands[i-1].ScheduleCycles {
			t.Errorf("candidate %d (%d cycles) after %d (%d cycles)", i, cands[i].ScheduleCycles, i-1, cands[i-1].ScheduleCycles)
		}
	}
	if c := cands[len(cands)-1]; c.PatchLanes != 1 {
		t.Errorf("the slowest candidate is %+v, want one patch per cycle", c)
	}
	// fewer lanes for when 16 do not fit
	lanes := map[int]bool{}
	for _, c := range cands {
		lanes[c.ClauseLanes*c.LiteralLanes] = true
	}
	for _, l := range []int{16, 8, 4} {
		if !lanes[l] {
			t.Errorf("no candidate with %d lanes", l)
		}
	}
	t.Logf("order: %+v", cands)
	// Ties: at one patch per cycle every lane count has the same
	// longest scan; more literal lanes sample a clause in fewer beats
	// (the range scan measures 7,546.6 cycles per sample at 1 x 16 and
	// 8,035.7 at 1 x 8), so they come first.
	var ties []ConvCandidate
	for _, ll := range []int{4, 8, 16} {
		h := conv.Head{Shape: conv.Shape{H: 28, W: 28, Planes: 1, WY: 10, WX: 10}, Structure: conv.Coalesced, Classes: 10, Clauses: 128, T: 2000}
		h.Weights = make([]int32, h.Classes*h.Clauses)
		b := &conv.Bank{Head: h, Bits: 4, Thresh: make([]uint32, h.TAs())}
		d, err := hw.GenerateConv(hw.Config{Bits: 4, LFSRWidth: 16, ClauseLanes: 1, LiteralLanes: ll, PatchLanes: 1, MaxK: 255}, b, "")
		if err != nil {
			t.Fatal(err)
		}
		ties = append(ties, ConvCandidate{ClauseLanes: 1, LiteralLanes: ll, PatchLanes: 1, Scan: d.Params.Scan, Design: d, ScheduleCycles: ConvScheduleCycles(&d.Params)})
	}
	if ties[0].ScheduleCycles != ties[2].ScheduleCycles {
		t.Fatalf("1 x 4 and 1 x 16 lanes at one patch: %d and %d schedule cycles, want a tie", ties[0].ScheduleCycles, ties[2].ScheduleCycles)
	}
	OrderConvCandidates(ties)
	for i, ll := range []int{16, 8, 4} {
		if ties[i].LiteralLanes != ll {
			t.Errorf("tie %d: %d literal lanes, want %d (fewer sampling beats first)", i, ties[i].LiteralLanes, ll)
		}
	}
}

// TestConvCandidateOrderExpected: with every candidate's expected cycles
// on the model (hw.ConvParams.ExpectedSampleCycles) the search ranks by
// them, not by the schedule's bound; one candidate without an estimate
// puts the whole list back on the bound.
func TestConvCandidateOrderExpected(t *testing.T) {
	mk := func(lc, ll, pn int, exp float64) ConvCandidate {
		q := mnistConvParams(t, 128, lc, ll, pn)
		return ConvCandidate{ClauseLanes: lc, LiteralLanes: ll, PatchLanes: pn, Scan: q.Scan, ScheduleCycles: ConvScheduleCycles(q), ExpectedCycles: exp}
	}
	// the 128-clause MNIST model's estimates (docs/synthesis-flow.md):
	// 1 x 16 at 7 patches 2,800, 2 x 8 at 4 4,347, 4 x 4 at 2 5,680;
	// their bounds 8,333, 6,670 and 6,384 rank them the other way round
	c := []ConvCandidate{mk(4, 4, 2, 5680.4), mk(2, 8, 4, 4347.2), mk(1, 16, 7, 2800.3)}
	OrderConvCandidates(c)
	for i, want := range []int{7, 4, 2} {
		if c[i].PatchLanes != want {
			t.Errorf("by the estimate: candidate %d has %d patches per cycle, want %d (%+v)", i, c[i].PatchLanes, want, c)
		}
	}
	c[0].ExpectedCycles = 0
	OrderConvCandidates(c)
	for i, want := range []int{2, 4, 7} {
		if c[i].PatchLanes != want {
			t.Errorf("by the bound: candidate %d has %d patches per cycle, want %d", i, c[i].PatchLanes, want)
		}
	}
}

// TestConvUARTLink: docs/protocol.md's MNIST figures at 3 Mbaud: 119-byte
// requests, 31-byte votes and 131-byte stats answers; 2,521 queries/s in
// votes mode (the request bound), 2,290 in stats mode.
func TestConvUARTLink(t *testing.T) {
	l := ConvUARTLink(mnistConvParams(t, 128, 1, 16, 1), 3e6)
	if l.RequestBytes != 119 || l.VotesResponseBytes != 31 || l.StatsResponseBytes != 131 {
		t.Errorf("bytes %d / %d / %d, want 119 / 31 / 131", l.RequestBytes, l.VotesResponseBytes, l.StatsResponseBytes)
	}
	if int(l.VotesQueriesPerS) != 2521 || int(l.StatsQueriesPerS) != 2290 {
		t.Errorf("queries/s %.1f / %.1f, want 2,521 / 2,290", l.VotesQueriesPerS, l.StatsQueriesPerS)
	}
}

// TestConvBoardYosys synthesizes a small convolutional board (yosys and
// nextpnr's packing only, UP5K) and checks that board_top took KIND = 1:
// the netlist holds the conv query path and the generated conv core, not
// a tabular core; and that the packed logic cells (what AutoConv's
// estimate compares with the device) hold every LUT4 and flip-flop.
func TestConvBoardYosys(t *testing.T) {
	needTools(t, "yosys", "nextpnr-ice40")
	d := smallConvDesign(t, 2, 4, 1)
	dir := t.TempDir()
	r, err := RunConv(context.Background(), ConvOptions{Design: d, Device: "up5k", Dir: dir, SynthOnly: true, Pack: true, Progress: newProgress(t)})
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(filepath.Join(dir, "yosys.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"conv_query", d.Top()} {
		if !strings.Contains(string(log), m) {
			t.Errorf("yosys log does not name %s", m)
		}
	}
	if r.LUT4 < 500 || r.LUT4 > 5280 || r.FFs < 200 {
		t.Errorf("%d LUT4, %d FF: not a board", r.LUT4, r.FFs)
	}
	if r.LUTs < max(r.LUT4, r.FFs) || r.LUTs > r.LUT4+r.FFs+r.Carry {
		t.Errorf("packed into %d logic cells from %d LUT4, %d FF and %d carries: want between %d and %d", r.LUTs, r.LUT4, r.FFs, r.Carry,
			max(r.LUT4, r.FFs), r.LUT4+r.FFs+r.Carry)
	}
	if r.BRAMs < 1 || r.DSPs != 1 {
		t.Errorf("packed: %d block RAMs, %d DSPs; want the weights' and statistics' block RAMs and the square's DSP", r.BRAMs, r.DSPs)
	}
	t.Logf("small conv board (UP5K, yosys and packing): %d LUT4, %d FF, %d carry; packed %d logic cells, %d block RAM, %d DSP; %.0f s",
		r.LUT4, r.FFs, r.Carry, r.LUTs, r.BRAMs, r.DSPs, r.Seconds)
}

// TestConvBoardUP5K runs the whole flow (yosys, nextpnr, icepack) on
// the small convolutional board of TestConvBoardYosys on the UP5K at 24
// MHz: the board must fit, the rates must be the schedule's at the clock,
// and a bitstream must be written exactly when timing is met; at the
// default 24 MHz timing must be met (31.1 MHz since conv_query's result
// words leave through a register slice; 23.8 MHz before, the core's
// result word passed through conv_query into proto_tx,
// docs/synthesis-flow.md "Convolutional models").
// PTM_CONV_BOARD_MHZ=F targets F MHz instead (a PLL clock), where a miss
// is only logged.
//
//	PTM_LONG_TESTS=1 go test ./hw/synth -run TestConvBoardUP5K -v
//
// PTM_CONV_BOARD_DIR=DIR keeps the build folder. The 128-clause board of
// MNIST's geometry is TestConvBoardMNIST128UP5K's.
func TestConvBoardUP5K(t *testing.T) {
	testenv.SkipUnlessLong(t, "yosys, nextpnr and icepack on a convolutional board")
	needTools(t, Tools...)
	d := smallConvDesign(t, 2, 4, 1)
	dir := t.TempDir()
	if v := os.Getenv("PTM_CONV_BOARD_DIR"); v != "" {
		dir = v // kept, for reading nextpnr's critical path
	}
	mhz, mustMeet := 24.0, true
	if v := os.Getenv("PTM_CONV_BOARD_MHZ"); v != "" {
		mustMeet = false
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 {
			t.Fatalf("PTM_CONV_BOARD_MHZ=%q: not a clock in MHz", v)
		}
		mhz = f
	}
	r, err := RunConv(testenv.Context(t), ConvOptions{Design: d, Device: "up5k", FreqMHz: mhz, Dir: dir, Progress: newProgress(t)})
	if err != nil && (r == nil || !errors.Is(err, ErrTiming)) {
		t.Fatal(err)
	}
	if err != nil {
		if mustMeet {
			t.Errorf("timing not met at %.0f MHz: %v", mhz, err)
		} else {
			t.Logf("timing not met: %v", err)
		}
	}
	p := &d.Params
	t.Logf("UP5K conv board %dx%d lanes, %d patches: %d/%d LCs, %d/%d BRAMs, %d SPRAMs, %d DSPs, Fmax %.2f MHz at %.2f; schedule %d cycles/sample: %.0f samples/s at Fmax, %.1f queries/s at K = 16; UART %.0f / %.0f queries/s (votes / stats); binding %s; %.0f s",
		p.LC, p.LL, p.PN, r.LUTs, r.LUTsAvailable, r.BRAMs, r.BRAMsAvailable, r.SPRAMs, r.DSPs, r.FmaxMHz, r.ClockMHz, r.ScheduleCycles,
		r.SamplesPerS, r.QueriesPerSK16, r.UART.VotesQueriesPerS, r.UART.StatsQueriesPerS, r.Binding, r.Seconds)
	if r.LUTs == 0 || r.LUTs > r.LUTsAvailable || r.ScheduleCycles != ConvScheduleCycles(p) ||
		r.SamplesPerS != r.FmaxMHz*1e6/float64(r.ScheduleCycles) || r.TimingMet != (r.Bitstream != "") || r.TimingMet != (err == nil) {
		t.Errorf("%+v", r)
	}
	if r.TimingMet {
		if _, err := os.Stat(r.Bitstream); err != nil {
			t.Error(err)
		}
	} else if _, err := os.Stat(filepath.Join(dir, "top.bin")); err == nil {
		t.Error("timing not met, yet top.bin was written")
	}
}

// mnist128Board is the configuration of the 128-clause MNIST board on
// the UP5K (docs/synthesis-flow.md "Convolutional models", "Generator
// 0.2.5"): the range scan at 1 x 16 lanes and 4 patches per cycle (one
// clause lane: generator 0.2.5's one-lane scan, 2,982.5 cycles per
// sample on mnist-up5k.ptm), SETS_MAX 1 (no set loop: the MNIST recipes
// have one threshold set, and `ptm synth` defaults a conv board to the
// model's sets), 27 MHz, a multiple of 3 MHz, so the UART still runs at 3
// Mbaud (measured on today's mnist-up5k.ptm, 8-bit weights: 4,911 of
// 5,280 logic cells; at 30 MHz, which the 10,000 samples/s floor needs,
// nextpnr seeds 1-5 reached 28.3-29.6 MHz).
var mnist128Board = struct {
	LC, LL, PN, SetsMax int
	Scan                string
	MHz                 float64
}{LC: 1, LL: 16, PN: 4, SetsMax: 1, Scan: hw.ScanRange, MHz: 27}

// TestConvBoardMNIST128UP5K runs the whole flow on the UART-only board
// around the conv core of a 128-clause model of MNIST's geometry (28 x 28
// images, one bit-plane, a 10 x 10 window, 10 classes: 128 x 272
// automata; untrained, since the netlist does not depend on the values,
// which are uploaded; only the weights' width, 8 bits here, shapes the
// weight memory) at mnist128Board's lanes, patches, scan, SETS_MAX and
// clock: it must fit the UP5K (the thresholds in SPRAM, the
// statistics' square in one DSP), meet timing and write a bitstream.
// PTM_CONV_BOARD_DIR=DIR keeps the build folder.
//
//	PTM_LONG_TESTS=1 go test ./hw/synth -run TestConvBoardMNIST128UP5K -v -timeout 60m
func TestConvBoardMNIST128UP5K(t *testing.T) {
	testenv.SkipUnlessLong(t, "yosys, nextpnr and icepack on the 128-clause MNIST board")
	needTools(t, Tools...)
	c := mnist128Board
	h := conv.Head{Shape: conv.Shape{H: 28, W: 28, Planes: 1, WY: 10, WX: 10}, Structure: conv.Coalesced, Classes: 10, Clauses: 128, T: 1000}
	h.Weights = make([]int32, h.Classes*h.Clauses)
	h.Weights[0] = 127 // 8-bit weights, as mnist-up5k.ptm's (clipped at +-127): the weight memory's width follows the model's weights
	b := &conv.Bank{Head: h, Bits: 4, Thresh: make([]uint32, h.TAs())}
	d, err := hw.GenerateConv(hw.Config{Bits: 4, LFSRWidth: 16, ClauseLanes: c.LC, LiteralLanes: c.LL, PatchLanes: c.PN, MaxK: 255, Scan: c.Scan}, b, "")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if v := os.Getenv("PTM_CONV_BOARD_DIR"); v != "" {
		dir = v
	}
	r, err := RunConv(testenv.Context(t), ConvOptions{Design: d, Device: "up5k", FreqMHz: c.MHz, SetsMax: c.SetsMax, Dir: dir, Progress: newProgress(t)})
	if r == nil {
		t.Fatal(err)
	}
	t.Logf("UP5K MNIST board %dx%d lanes, %d patches, %s scan, SETS_MAX %d: %d/%d LCs (yosys %d LUT4, %d FF, %d carry), %d/%d BRAMs, %d SPRAMs, %d DSPs, Fmax %.2f MHz at %.2f; %.0f s",
		c.LC, c.LL, c.PN, c.Scan, c.SetsMax, r.LUTs, r.LUTsAvailable, r.LUT4, r.FFs, r.Carry, r.BRAMs, r.BRAMsAvailable, r.SPRAMs, r.DSPs, r.FmaxMHz, r.ClockMHz, r.Seconds)
	if err != nil {
		t.Fatalf("not met: %v", err)
	}
	if r.LUTs == 0 || r.LUTs > r.LUTsAvailable || r.BRAMs > r.BRAMsAvailable || r.SPRAMs == 0 || r.DSPs != 1 || !r.ThreshSPRAM {
		t.Errorf("does not fit as built: %+v", r)
	}
	if !r.TimingMet || r.FmaxMHz < c.MHz || r.Bitstream == "" {
		t.Errorf("timing met %v, Fmax %.2f MHz for %.0f, bitstream %q", r.TimingMet, r.FmaxMHz, c.MHz, r.Bitstream)
	} else if _, err := os.Stat(r.Bitstream); err != nil {
		t.Error(err)
	}
}

// TestAutoConvCompactFallback: when no range-scan candidate places
// although the smallest packs within the device, the search goes on with
// the compact candidates. The range candidate is the 128-clause MNIST
// board at 1 x 8 lanes and one patch per cycle (4,689 cells packed: the
// estimate passes, the placer finds no legal placement), the compact one
// the small board; the compact one must be returned, after the range
// one's step "does not fit".
//
//	PTM_LONG_TESTS=1 go test ./hw/synth -run TestAutoConvCompactFallback -v -timeout 60m
func TestAutoConvCompactFallback(t *testing.T) {
	testenv.SkipUnlessLong(t, "yosys and nextpnr on the 128-clause MNIST board and a small board")
	needTools(t, Tools...)
	h := conv.Head{Shape: conv.Shape{H: 28, W: 28, Planes: 1, WY: 10, WX: 10}, Structure: conv.Coalesced, Classes: 10, Clauses: 128, T: 1000}
	h.Weights = make([]int32, h.Classes*h.Clauses)
	h.Weights[0] = 511 // 10-bit weights, as mnist128.ptm's
	b := &conv.Bank{Head: h, Bits: 4, Thresh: make([]uint32, h.TAs())}
	big, err := hw.GenerateConv(hw.Config{Bits: 4, LFSRWidth: 16, ClauseLanes: 1, LiteralLanes: 8, PatchLanes: 1, MaxK: 255}, b, "")
	if err != nil {
		t.Fatal(err)
	}
	small := smallConvDesignScan(t, 2, 4, 1, hw.ScanCompact)
	cands := []ConvCandidate{
		{ClauseLanes: 1, LiteralLanes: 8, PatchLanes: 1, Scan: big.Params.Scan, Design: big, ScheduleCycles: ConvScheduleCycles(&big.Params)},
		{ClauseLanes: 2, LiteralLanes: 4, PatchLanes: 1, Scan: small.Params.Scan, Design: small, ScheduleCycles: ConvScheduleCycles(&small.Params)},
	}
	if !small.Params.Compact || big.Params.Compact {
		t.Fatalf("scans %s and %s, want range and compact", big.Params.Scan, small.Params.Scan)
	}
	r, err := AutoConv(testenv.Context(t), ConvOptions{Device: "up5k", FreqMHz: 24, SetsMax: 2, Dir: t.TempDir(), Progress: newProgress(t)}, cands)
	if err != nil {
		t.Fatal(err)
	}
	if r.Scan != hw.ScanCompact || r.ClauseLanes != 2 || !r.TimingMet || len(r.Search) != 2 || r.Search[0].Outcome != "does not fit" {
		t.Errorf("want the range candidate refused, then the compact one placed; got %dx%d lanes, %s scan, steps %+v", r.ClauseLanes, r.LiteralLanes, r.Scan, r.Search)
	}
	t.Logf("steps %+v", r.Search)
}

// TestAutoConvUP5K runs the search on two candidates of the small board
// at 24 MHz: the estimate (the smaller one through yosys and nextpnr's
// packing) must find that it fits, and the faster one by the schedule
// must be placed first and returned with its step.
//
//	PTM_LONG_TESTS=1 go test ./hw/synth -run TestAutoConvUP5K -v
func TestAutoConvUP5K(t *testing.T) {
	testenv.SkipUnlessLong(t, "yosys (twice) and nextpnr on a convolutional board")
	needTools(t, Tools...)
	var cands []ConvCandidate
	for _, g := range []struct{ lc, ll, pn int }{{2, 4, 1}, {1, 4, 1}} {
		d := smallConvDesign(t, g.lc, g.ll, g.pn)
		cands = append(cands, ConvCandidate{ClauseLanes: g.lc, LiteralLanes: g.ll, PatchLanes: g.pn, Scan: d.Params.Scan, Design: d,
			ScheduleCycles: ConvScheduleCycles(&d.Params)})
	}
	OrderConvCandidates(cands)
	dir := t.TempDir()
	r, err := AutoConv(testenv.Context(t), ConvOptions{Device: "up5k", FreqMHz: 24, Dir: dir, Progress: newProgress(t)}, cands)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "estimate-1x4-pn1-range", "nextpnr-pack.log")); err != nil {
		t.Errorf("the estimate was not packed: %v", err)
	}
	if r.ClauseLanes != cands[0].ClauseLanes || r.LiteralLanes != cands[0].LiteralLanes || len(r.Search) != 1 ||
		r.Search[0].Outcome != "fits, timing met" || !r.TimingMet || r.Bitstream == "" {
		t.Errorf("want the faster candidate %+v placed first and returned; got %dx%d lanes, steps %+v, timing met %v",
			cands[0], r.ClauseLanes, r.LiteralLanes, r.Search, r.TimingMet)
	}
	t.Logf("search: %dx%d lanes, %d/%d LCs, Fmax %.2f MHz, steps %+v", r.ClauseLanes, r.LiteralLanes, r.LUTs, r.LUTsAvailable, r.FmaxMHz, r.Search)
}

// TestCloseConvClock checks the clock steps of one search candidate on
// recorded placer outcomes: the retry below a missed target, the probe
// one multiple of 3 MHz higher when the retry's Fmax clears it, the met
// run kept when the probe misses, and errors passed on.
func TestCloseConvClock(t *testing.T) {
	type run struct {
		freq  float64
		probe bool
	}
	toolErr := errors.New("nextpnr-ice40 crashed")
	for _, c := range []struct {
		name     string
		freq     float64
		fmax     map[float64]float64 // Fmax reached at each target
		fail     error               // returned instead at the last run
		want     []run
		wantFreq float64 // the result's clock; 0: an error
		wantErr  error
	}{
		{"met at once", 30, map[float64]float64{30: 31}, nil, []run{{30, false}}, 30, nil},
		{"retry met, no higher multiple", 30, map[float64]float64{30: 29.3, 27: 28.1}, nil,
			[]run{{30, false}, {27, false}}, 27, nil},
		{"retry met, probe met", 48, map[float64]float64{48: 26.8, 24: 28.2, 27: 27.5}, nil,
			[]run{{48, false}, {24, false}, {27, true}}, 27, nil},
		{"retry met, probe missed", 48, map[float64]float64{48: 26.8, 24: 28.2, 27: 26.9}, nil,
			[]run{{48, false}, {24, false}, {27, true}}, 24, nil},
		{"probe not above the target", 30, map[float64]float64{30: 26.5, 24: 31}, nil,
			[]run{{30, false}, {24, false}}, 24, nil},
		{"retry missed", 30, map[float64]float64{30: 28.5, 27: 26.2}, nil,
			[]run{{30, false}, {27, false}}, 0, ErrTiming},
		{"Fmax too low to retry", 30, map[float64]float64{30: 17.9}, nil, []run{{30, false}}, 0, ErrTiming},
		{"does not fit", 30, nil, ErrNoFit, []run{{30, false}}, 0, ErrNoFit},
		{"tool error in the probe", 48, map[float64]float64{48: 26.8, 24: 28.2}, toolErr,
			[]run{{48, false}, {24, false}, {27, true}}, 0, toolErr},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []run
			r, err := closeConvClock(c.freq, func(f float64, probe bool) (*ConvResult, error) {
				got = append(got, run{f, probe})
				fm, ok := c.fmax[f]
				if !ok {
					return nil, c.fail
				}
				res := &ConvResult{FmaxMHz: fm, TargetMHz: f}
				if fm < f {
					return res, fmt.Errorf("%w: clock %.2f MHz below the %.2f MHz target", ErrTiming, fm, f)
				}
				return res, nil
			})
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("runs %v, want %v", got, c.want)
			}
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("error %v, want %v", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.TargetMHz != c.wantFreq {
				t.Errorf("result at %g MHz, want %g", r.TargetMHz, c.wantFreq)
			}
		})
	}
}
