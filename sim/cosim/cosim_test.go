package cosim

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/hw/refmodel"
	"github.com/ptmhw/ptm/internal/testenv"
)

// needVerilator fails the test when Verilator is missing (skips only
// under -short).
func needVerilator(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("co-simulation skipped under -short")
	}
	if _, err := VerilatorVersion(); err != nil {
		t.Fatalf("%v (run scripts/install-deps.sh)", err)
	}
}

// randomShapes are the co-simulated shapes: 2..16 classes, binary,
// odd clause counts, feature counts that are not a multiple of the lane
// count, B from 8 to 16, L from 1 to all TAs, W of 16, 24, 32 and 64,
// initial bank contents, and back-pressure on the result stream.
var randomShapes = []struct {
	name  string
	sh    fixed.Shape
	cfg   hw.Config
	ready int
}{
	{"binary_L1_W16", fixed.Shape{Binary: true, Classes: 2, TMs: 1, Clauses: 5, Features: 3, T: 3},
		hw.Config{Bits: 8, LFSRWidth: 16, ClauseLanes: 1, LiteralLanes: 1, MaxK: 40}, 100},
	{"c3_W24_padding_backpressure", fixed.Shape{Classes: 3, TMs: 3, Clauses: 7, Features: 5, T: 4},
		hw.Config{Bits: 10, LFSRWidth: 24, ClauseLanes: 4, LiteralLanes: 4, MaxK: 100}, 70},
	{"c10_B16_slots", fixed.Shape{Classes: 10, TMs: 10, Clauses: 3, Features: 4, T: 2},
		hw.Config{Bits: 16, LFSRWidth: 32, ClauseLanes: 7, LiteralLanes: 3, MaxK: 50}, 100},
	{"c4_B12_chunked_popcount", fixed.Shape{Classes: 4, TMs: 4, Clauses: 9, Features: 6, T: 5},
		hw.Config{Bits: 12, LFSRWidth: 32, ClauseLanes: 18, LiteralLanes: 4, MaxK: 64}, 85},
	{"binary_all_TAs_B11_W16", fixed.Shape{Binary: true, Classes: 2, TMs: 1, Clauses: 3, Features: 2, T: 2},
		hw.Config{Bits: 11, LFSRWidth: 16, ClauseLanes: 3, LiteralLanes: 4, MaxK: 200}, 50},
	{"c2_m1_B9_W64_initbanks", fixed.Shape{Classes: 2, TMs: 2, Clauses: 1, Features: 7, T: 1},
		hw.Config{Bits: 9, LFSRWidth: 64, ClauseLanes: 2, LiteralLanes: 5, MaxK: 30, InitBanks: true}, 100},
	{"c16_U720720", fixed.Shape{Classes: 16, TMs: 16, Clauses: 2, Features: 2, T: 1},
		hw.Config{Bits: 8, LFSRWidth: 24, ClauseLanes: 5, LiteralLanes: 2, MaxK: 100}, 100},
	// Class sums wider than hw's clipping table (comparisons with +-T).
	{"c2_m70_wide_sums_clip", fixed.Shape{Classes: 2, TMs: 2, Clauses: 70, Features: 3, T: 5},
		hw.Config{Bits: 8, LFSRWidth: 16, ClauseLanes: 10, LiteralLanes: 3, MaxK: 60}, 90},
	// B = 4 (four lanes per block-RAM word after the bank pass).
	{"c3_B4_W16", fixed.Shape{Classes: 3, TMs: 3, Clauses: 6, Features: 4, T: 4},
		hw.Config{Bits: 4, LFSRWidth: 16, ClauseLanes: 3, LiteralLanes: 4, MaxK: 100}, 100},
	{"binary_B5_W20", fixed.Shape{Binary: true, Classes: 2, TMs: 1, Clauses: 8, Features: 5, T: 3},
		hw.Config{Bits: 5, LFSRWidth: 20, ClauseLanes: 2, LiteralLanes: 3, MaxK: 80}, 100},
	// |u| wider than hw's square table (a multiply).
	{"binary_m130_T90_wide_square", fixed.Shape{Binary: true, Classes: 2, TMs: 1, Clauses: 130, Features: 2, T: 90},
		hw.Config{Bits: 8, LFSRWidth: 16, ClauseLanes: 13, LiteralLanes: 2, MaxK: 50}, 100},
}

func checkClean(t *testing.T, res *Result, minSamples int) {
	t.Helper()
	if res.Mismatches != 0 {
		t.Fatalf("%d mismatches; first: %+v", res.Mismatches, *res.FirstMismatch)
	}
	if res.SamplesCompared < minSamples {
		t.Fatalf("compared %d samples, want >= %d", res.SamplesCompared, minSamples)
	}
}

func TestRandomShapes(t *testing.T) {
	needVerilator(t)
	testenv.Heartbeat(t, 0) // cold Verilator builds take minutes on a busy machine
	for i, c := range randomShapes {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res, err := Run(Options{Shape: c.sh, Config: c.cfg, Seed: uint64(100 + i), Samples: 10_000, Ready: c.ready})
			if err != nil {
				t.Fatal(err)
			}
			checkClean(t, res, 10_000)
			t.Logf("%d requests, %d samples, L=%d B=%d, %.1f cycles/sample, build %.1fs (cached %v), sim %.2fs",
				res.Requests, res.SamplesCompared, res.Lanes, res.Bits, res.CyclesPerSample, res.BuildTime, res.BuildCached, res.SimTime)
		})
	}
}

// TestSetQueries co-simulates set queries (docs/fixed-point.md section 8:
// runs chained by req_more, statistics accumulated over the sets, one
// res_last per query) on the random shapes with M = 1..8, K often below M,
// both modes, against fixed.Core.RunSets.
func TestSetQueries(t *testing.T) {
	needVerilator(t)
	testenv.Heartbeat(t, 0)
	for i, c := range randomShapes {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			kmax := 12 // K < M happens often
			if i%2 == 1 {
				kmax = 0 // min(MaxK, 32)
			}
			res, err := Run(Options{Shape: c.sh, Config: c.cfg, Seed: uint64(300 + i), Samples: 3_000, Ready: c.ready,
				Sets: 8, KMax: kmax})
			if err != nil {
				t.Fatal(err)
			}
			checkClean(t, res, 3_000)
			t.Logf("%d queries, %d samples", res.Requests, res.SamplesCompared)
		})
	}
}

// trainedRequests cycles through a model's test inputs with random K and
// seeds, both modes.
func trainedRequests(m refmodel.Model, samples, maxK int, seed uint64) []Request {
	rng := rand.New(rand.NewPCG(seed, 1))
	var reqs []Request
	for n, i := 0, 0; n < samples; i++ {
		k := 1 + rng.IntN(maxK)
		reqs = append(reqs, Request{Features: m.Test[i%len(m.Test)], K: k, Seed: rng.Uint32(), Stats: i%3 == 0})
		n += k
	}
	return reqs
}

func TestTrainedModels(t *testing.T) {
	needVerilator(t)
	testenv.Heartbeat(t, 0)
	models, err := refmodel.Models()
	if err != nil {
		t.Fatal(err)
	}
	cfgs := map[string]hw.Config{
		"iris": {Bits: 8, LFSRWidth: 32, ClauseLanes: 4, LiteralLanes: 8, MaxK: 255},
		"xor":  {Bits: 12, LFSRWidth: 24, ClauseLanes: 2, LiteralLanes: 2, MaxK: 255},
	}
	for _, m := range models {
		t.Run(m.Name, func(t *testing.T) {
			t.Parallel()
			cfg, ok := cfgs[m.Name]
			if !ok {
				t.Fatalf("no configuration for model %s", m.Name)
			}
			res, err := Run(Options{Shape: m.Bank.Shape, Config: cfg, Bank: m.Bank, ModelHash: m.Hash,
				Requests: trainedRequests(m, 10_000, 64, 9)})
			if err != nil {
				t.Fatal(err)
			}
			checkClean(t, res, 10_000)
			if res.Info[12] == 0 {
				t.Fatalf("info ROM hash word is 0 for hash %s", m.Hash)
			}
			t.Logf("%s: %d samples, %.1f cycles/sample", m.Name, res.SamplesCompared, res.CyclesPerSample)
		})
	}
}

// misuseOpts is a small design whose MaxK (100) leaves K values above it
// representable in req_k (7 bits).
func misuseOpts() Options {
	c := randomShapes[1]
	return Options{Shape: c.sh, Config: c.cfg, Seed: 5}
}

func feats(n int) []bool { return make([]bool, n) }

func TestCoreRefusesBadK(t *testing.T) {
	needVerilator(t)
	o := misuseOpts()
	f := feats(o.Shape.Features)
	reqs := []Request{{f, 0, 1, false, nil}, {f, 3, 2, false, nil}, {f, 101, 3, true, nil}, {f, 127, 4, false, nil}, {f, 100, 5, true, nil}}
	resp, err := RunRaw(o, reqs)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp) != len(reqs) {
		t.Fatalf("%d responses to %d requests", len(resp), len(reqs))
	}
	for i, r := range resp {
		bad := reqs[i].K == 0 || reqs[i].K > o.Config.MaxK
		switch {
		case bad && (!r.Error || len(r.Words) != 1 || r.Words[0] != 1):
			t.Errorf("request %d (K=%d): got %+v, want one error word 1", i, reqs[i].K, r)
		case !bad && r.Error:
			t.Errorf("request %d (K=%d): unexpected error %+v", i, reqs[i].K, r)
		case !bad && !reqs[i].Stats && len(r.Words) != reqs[i].K*o.Shape.TMs:
			t.Errorf("request %d (K=%d): %d words", i, reqs[i].K, len(r.Words))
		}
	}
	// The good requests after bad ones are still exact.
	good := []Request{reqs[1], reqs[4]}
	res, err := Run(Options{Shape: o.Shape, Config: o.Config, Seed: o.Seed, Requests: good})
	if err != nil {
		t.Fatal(err)
	}
	checkClean(t, res, 103)
	if !slices.Equal(resp[1].Words, mustWords(t, o, good[0])) {
		t.Errorf("request after K=0 differs from a fresh run")
	}
}

func mustWords(t *testing.T, o Options, r Request) []uint32 {
	t.Helper()
	resp, err := RunRaw(o, []Request{r})
	if err != nil {
		t.Fatal(err)
	}
	return resp[0].Words
}

func TestGoSideRefusesBadRequests(t *testing.T) {
	o := misuseOpts()
	for _, r := range []Request{{feats(o.Shape.Features), 0, 1, false, nil}, {feats(o.Shape.Features), 101, 1, true, nil}, {feats(3), 1, 1, false, nil}} {
		o.Requests = []Request{r}
		if _, err := Run(o); err == nil {
			t.Errorf("request K=%d with %d features accepted", r.K, len(r.Features))
		}
	}
}

func TestMisconfiguredDesignRefused(t *testing.T) {
	o := misuseOpts()
	o.Config.LiteralLanes = 2 * o.Shape.Features * 2
	if _, err := Run(o); !errors.Is(err, hw.ErrConfig) {
		t.Fatalf("got %v, want hw.ErrConfig", err)
	}
}

func TestBankImage(t *testing.T) {
	o := misuseOpts()
	cfg, _ := o.Config.Resolve(o.Shape)
	bank, err := fixed.RandomBank(o.Shape, cfg.Bits, rand.New(rand.NewPCG(1, 2)).Uint64)
	if err != nil {
		t.Fatal(err)
	}
	words := bank.LaneWords(cfg.HW())
	dir := t.TempDir()
	good := filepath.Join(dir, "bank.hex")
	if err := WriteBankImage(good, words, cfg.Bits); err != nil {
		t.Fatal(err)
	}
	back, err := ReadBankImage(good, cfg, o.Shape)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := BankFromLaneWords(o.Shape, cfg, back)
	if err != nil {
		t.Fatal(err)
	}
	for i := range bank.Thresh {
		if rb.Thresh[i] != bank.Thresh[i] {
			t.Fatalf("threshold %d: %d after round trip, want %d", i, rb.Thresh[i], bank.Thresh[i])
		}
	}

	// Unreadable or wrong images are refused before anything is built.
	text, _ := os.ReadFile(good)
	lines := strings.SplitAfter(string(text), "\n")
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	padLine := -1 // a padding slot: lane 1 (clause lane 0, literal lane 1), last address
	lay := cfg.HW().LayoutOf(o.Shape)
	for l := 0; l < cfg.ClauseLanes*cfg.LiteralLanes && padLine < 0; l++ {
		for a := 0; a < lay.Depth; a++ {
			g, b := a/lay.Beats, a%lay.Beats
			if g*cfg.ClauseLanes+l/cfg.LiteralLanes >= o.Shape.TotalClauses() || b*cfg.LiteralLanes+l%cfg.LiteralLanes >= o.Shape.Literals() {
				padLine = 1 + l*lay.Depth + a
				break
			}
		}
	}
	if padLine < 0 {
		t.Fatal("test shape has no padding slot")
	}
	padded := append([]string{}, lines...)
	padded[padLine] = "001\n"
	wide := append([]string{}, lines...)
	wide[1] = "fff\n"
	cases := map[string]string{
		"missing":   filepath.Join(dir, "nope.hex"),
		"empty":     write("empty.hex", ""),
		"header":    write("header.hex", "bank 1 2 3\n"),
		"shape":     write("shape.hex", "ptm-bank 3 4 10\n"),
		"truncated": write("trunc.hex", strings.Join(lines[:len(lines)-3], "")),
		"not hex":   write("nothex.hex", lines[0]+"zz\n"+strings.Join(lines[2:], "")),
		"too wide":  write("wide.hex", strings.Join(wide, "")),
		"padding":   write("pad.hex", strings.Join(padded, "")),
	}
	for name, path := range cases {
		o.BankFile = path
		_, err := Run(o)
		if err == nil {
			t.Errorf("%s bank image accepted", name)
			continue
		}
		if name == "missing" && !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("missing bank image: %v does not wrap fs.ErrNotExist", err)
		}
	}

	// A good image co-simulates exactly.
	needVerilator(t)
	o.BankFile = good
	o.Samples = 2000
	res, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	checkClean(t, res, 2000)
}

// TestDetectsWrongBank is the negative control: one bank word differs
// between the simulator and the golden model, and the comparison must see
// it.
func TestDetectsWrongBank(t *testing.T) {
	needVerilator(t)
	o := misuseOpts()
	o.Samples = 3000
	res, err := run(o, func(s *session) {
		max := uint32(1)<<uint(s.design.Params.Bits) - 1
		s.words[0][0] ^= max // lane 0, address 0: a real TA of clause 0
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Mismatches == 0 || res.FirstMismatch == nil {
		t.Fatalf("a changed bank word went unnoticed over %d samples", res.SamplesCompared)
	}
	t.Logf("%d mismatches, first %+v", res.Mismatches, *res.FirstMismatch)
}

// TestThroughput checks one beat per clock: without back-pressure, a
// samples-mode request of K samples takes exactly max(D, NT) cycles per
// sample more than one of K-1... measured as a slope over K.
func TestThroughput(t *testing.T) {
	needVerilator(t)
	for _, i := range []int{0, 1, 4} {
		c := randomShapes[i]
		t.Run(c.name, func(t *testing.T) {
			f := feats(c.sh.Features)
			k1, k2 := 5, 25
			reqs := []Request{{f, k1, 1, false, nil}, {f, k2, 1, false, nil}, {f, k1, 1, true, nil}, {f, k2, 1, true, nil}}
			resp, err := RunRaw(Options{Shape: c.sh, Config: c.cfg, Seed: uint64(100 + i)}, reqs)
			if err != nil {
				t.Fatal(err)
			}
			d, err := hw.Generate(c.cfg, c.sh, nil, "")
			if err != nil {
				t.Fatal(err)
			}
			p := d.Params
			for m, name := range []string{"samples", "stats"} {
				r1, r2 := resp[2*m], resp[2*m+1]
				slope := float64((r2.End-r2.Accept)-(r1.End-r1.Accept)) / float64(k2-k1)
				want := float64(p.D)
				if m == 0 {
					want = float64(max(p.D, p.NT))
				}
				if slope != want {
					t.Errorf("%s mode: %.2f cycles per extra sample, want %v (D=%d, NT=%d)", name, slope, want, p.D, p.NT)
				}
				t.Logf("%s: K=%d %d cycles, K=%d %d cycles (D=%d, L=%d)", name, k1, r1.End-r1.Accept+1, k2, r2.End-r2.Accept+1, p.D, p.L)
			}
		})
	}
}

func TestTrace(t *testing.T) {
	needVerilator(t)
	c := randomShapes[0]
	fst := filepath.Join(t.TempDir(), "wave.fst")
	res, err := Run(Options{Shape: c.sh, Config: c.cfg, Seed: 1, Samples: 50, Trace: fst})
	if err != nil {
		t.Fatal(err)
	}
	checkClean(t, res, 50)
	st, err := os.Stat(fst)
	if err != nil || st.Size() == 0 {
		t.Fatalf("no waveform written: %v", err)
	}
}

// TestLong compares a million samples; it runs under make test-long
// (PTM_LONG_TESTS=1) or with PTM_COSIM_LONG=1 (docs/cycles.md records its
// figures).
func TestLong(t *testing.T) {
	if os.Getenv("PTM_COSIM_LONG") == "" {
		testenv.SkipUnlessLong(t, "1,000,000 co-simulated samples")
	}
	needVerilator(t)
	testenv.Heartbeat(t, 0)
	models, err := refmodel.Models()
	if err != nil {
		t.Fatal(err)
	}
	m := models[0]
	start := time.Now()
	res, err := Run(Options{Shape: m.Bank.Shape, Config: hw.Config{Bits: 8, LFSRWidth: 32, ClauseLanes: 4, LiteralLanes: 8, MaxK: 255},
		Bank: m.Bank, ModelHash: m.Hash, Seed: 2024, Samples: 1_000_000, KMax: 64})
	if err != nil {
		t.Fatal(err)
	}
	checkClean(t, res, 1_000_000)
	t.Logf("long run: %d samples in %d requests, %d mismatches, %.2f cycles/sample, wall %.1fs (build %.1fs, sim+compare %.1fs)",
		res.SamplesCompared, res.Requests, res.Mismatches, res.CyclesPerSample, time.Since(start).Seconds(), res.BuildTime, res.SimTime)
}

// TestCyclesTable measures cycles per sample on the Iris-like and
// XOR-like shapes for several lane counts and prints the markdown table
// of docs/cycles.md. It runs only with PTM_COSIM_CYCLES=1.
func TestCyclesTable(t *testing.T) {
	if os.Getenv("PTM_COSIM_CYCLES") == "" {
		t.Skip("set PTM_COSIM_CYCLES=1 to measure the cycles table")
	}
	needVerilator(t)
	shapes := []struct {
		name  string
		sh    fixed.Shape
		lanes []int
		bits  int
	}{
		{"Iris-like", fixed.Shape{Classes: 3, TMs: 3, Clauses: 20, Features: 16, T: 10}, []int{1, 8, 32, 60, 240}, 8},
		{"XOR-like", fixed.Shape{Binary: true, Classes: 2, TMs: 1, Clauses: 10, Features: 2, T: 5}, []int{1, 4, 10, 40}, 12},
	}
	var rows []string
	for _, s := range shapes {
		for _, l := range s.lanes {
			cfg := hw.Config{Bits: s.bits, LFSRWidth: 32, Lanes: l, MaxK: 255}
			f := make([]bool, s.sh.Features)
			for i := range f {
				f[i] = i%3 == 0
			}
			reqs := []Request{{f, 1, 7, false, nil}, {f, 64, 7, false, nil}, {f, 1, 7, true, nil}, {f, 64, 7, true, nil}}
			resp, err := RunRaw(Options{Shape: s.sh, Config: cfg, Seed: 1}, reqs)
			if err != nil {
				t.Fatal(err)
			}
			d, err := hw.Generate(cfg, s.sh, nil, "")
			if err != nil {
				t.Fatal(err)
			}
			p := d.Params
			cyc := func(r Response) uint64 { return r.End - r.Accept + 1 }
			ideal := float64(s.sh.TAs()) / float64(l)
			slope := float64(cyc(resp[1])-cyc(resp[0])) / 63
			rows = append(rows, fmt.Sprintf("| %s | %d | %dx%d | %d | %.1f | %.1f | %d | %d | %.2f | %d | %.2f | %.0f%% |",
				s.name, l, p.LC, p.LL, p.D, ideal, slope, cyc(resp[0]), cyc(resp[2]), float64(cyc(resp[1]))/64, cyc(resp[3]), float64(cyc(resp[3]))/64, 100*ideal/(float64(cyc(resp[1]))/64)))
		}
	}
	t.Log("\n| shape | L | LCxLL | D | ideal TAs/L | cycles/sample (slope) | K=1 samples | K=1 stats | K=64 samples, per sample | K=64 stats | per sample | efficiency at K=64 |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n" + strings.Join(rows, "\n"))
}
