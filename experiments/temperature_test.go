package experiments

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/ptmhw/ptm/golden/metrics"
	"github.com/ptmhw/ptm/golden/pipeline"
)

// The temperature study tabulates one row per rule with defined validation
// and test figures, and its dump, loaded again, gives the same table.
func TestTemperatureStudyDumpLoad(t *testing.T) {
	grid := []pipeline.Candidate{irisCandidate(10, 5, 2, 10, 4)}
	var dump []byte
	table, err := TemperatureStudy(context.Background(), TemperatureOptions{Data: "iris", Splits: 1, OODSplits: 1, K: 10, Grid: grid,
		Dump: func(b []byte) { dump = b }})
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, line := range strings.Split(table, "\n") {
		for _, r := range TempRules() {
			if strings.HasPrefix(line, "| "+r.Name+" |") {
				rows++
				if strings.Contains(line, "NaN") || strings.Count(line, " - |") > 3 {
					t.Errorf("bad row: %s", line)
				}
			}
		}
	}
	if rows != len(TempRules()) {
		t.Errorf("%d rule rows, want %d:\n%s", rows, len(TempRules()), table)
	}
	if !strings.Contains(table, "| 0 | 10/5/2, 4 thresholds | 120 |") {
		t.Errorf("no per-split row for split 0 with 120 out-of-fold rows:\n%s", table)
	}
	again, err := TemperatureStudy(context.Background(), TemperatureOptions{Data: "iris", Splits: 1, OODSplits: 1, K: 10, Grid: grid,
		Load: [][]byte{dump}})
	if err != nil {
		t.Fatal(err)
	}
	if again != table {
		t.Errorf("loaded table differs:\n%s\nwant\n%s", again, table)
	}
	if _, err := TemperatureStudy(context.Background(), TemperatureOptions{Data: "mnist", Splits: 1}); err == nil {
		t.Error("unknown data set accepted")
	}
}

// withEncoding keeps a candidate's own encoding for the primary PTM, gives
// the plain PTM the plain encoding and drops the candidates that then
// coincide.
func TestWithEncodingGridDimension(t *testing.T) {
	h := pipeline.DefaultEncoding
	h.Bandwidth = 0.075
	grid := []pipeline.Candidate{irisCandidate(20, 10, 2, 50, 6), irisCandidate(20, 10, 2, 50, 6), irisCandidate(40, 15, 2, 50, 6)}
	grid[1].Encoding = &h
	kinds := ptmKinds()
	prim := kinds[0].withEncoding(grid)
	if len(prim) != 3 || *prim[0].Encoding != pipeline.DefaultEncoding || prim[1].Encoding.Bandwidth != 0.075 || *prim[2].Encoding != pipeline.DefaultEncoding {
		t.Fatalf("primary: %+v", prim)
	}
	if prim[1].Encoding == grid[1].Encoding {
		t.Error("primary: the candidate's encoding is shared, not copied")
	}
	plain := kinds[1].withEncoding(grid)
	if len(plain) != 2 || *plain[0].Encoding != pipeline.Plain || *plain[1].Encoding != pipeline.Plain || plain[1].Params.Clauses != 40 {
		t.Fatalf("plain: %+v", plain)
	}
}

// CalibratedECE: certain queries score 0; a calibrated 0.9 scores near 0
// on many rows and clearly above 0 on 30 (the noise floor it measures).
func TestCalibratedECE(t *testing.T) {
	q := func(conf float64) metrics.QueryStats {
		return metrics.QueryStats{Mean: []float64{conf, (1 - conf) / 2, (1 - conf) / 2}, Pred: 0, Conf: conf}
	}
	rows := func(n int, conf float64) []metrics.QueryStats {
		qs := make([]metrics.QueryStats, n)
		for i := range qs {
			qs[i] = q(conf)
		}
		return qs
	}
	if e := CalibratedECE(rows(30, 1), 10, 50, 1); e != 0 {
		t.Errorf("certain: %g, want 0", e)
	}
	big, small := CalibratedECE(rows(10000, 0.9), 10, 20, 1), CalibratedECE(rows(30, 0.9), 10, 400, 1)
	// On 30 rows the ECE is |k/30 - 0.9|, k ~ Binomial(30, 0.9): mean about 0.044.
	if !(big < 0.005 && small > 0.035 && small < 0.055) {
		t.Errorf("10000 rows %g (want < 0.005), 30 rows %g (want 0.035-0.055)", big, small)
	}
}

// gridLabels names mixed grids uniquely (and homogeneous ones as before);
// chosenCounts counts each candidate's splits once.
func TestGridLabelsAndCounts(t *testing.T) {
	h := pipeline.DefaultEncoding
	h.Bandwidth = 0.075
	grid := []pipeline.Candidate{irisCandidate(60, 20, 2, 50, 6), irisCandidate(60, 20, 2, 50, 6), irisCandidate(60, 20, 2, 100, 6)}
	grid[1].Encoding = &h
	names, keys := gridLabels(grid)
	want := []string{"60/20/2 50 epochs", "60/20/2 h0.075 M8 50 epochs", "60/20/2 100 epochs"}
	wantK := []string{"c60_T20_s2_e50", "c60_T20_s2_h0.075_M8_e50", "c60_T20_s2_e100"}
	for i := range want {
		if names[i] != want[i] || keys[i] != wantK[i] {
			t.Errorf("label %d: %q / %q, want %q / %q", i, names[i], keys[i], want[i], wantK[i])
		}
	}
	if n, k := gridLabels(grid[:1]); n[0] != "60/20/2" || k[0] != "c60_T20_s2" {
		t.Errorf("homogeneous grid: %q / %q", n[0], k[0])
	}
	kinds := ptmKinds()
	prim, plain := kinds[0].withEncoding(grid), kinds[1].withEncoding(grid)
	srs := []pipeline.SplitResult{{Chosen: prim[1]}, {Chosen: prim[1]}, {Chosen: prim[0]}, {Chosen: prim[2]}}
	if got := chosenCounts(kinds[0], grid, srs); got[0] != 1 || got[1] != 2 || got[2] != 1 {
		t.Errorf("primary counts %v, want [1 2 1]", got)
	}
	srs = []pipeline.SplitResult{{Chosen: plain[0]}, {Chosen: plain[1]}, {Chosen: plain[0]}}
	if got := chosenCounts(kinds[1], grid, srs); got[0] != 2 || got[1] != 0 || got[2] != 1 {
		t.Errorf("plain counts %v, want [2 0 1]", got)
	}
}

// TestWideGrids: Options.WideGrids appends section 10's candidates to the
// full run's grids and leaves the default and the quick run's grids alone.
func TestWideGrids(t *testing.T) {
	base, wide, quick := newConfig(false, false), newConfig(false, true), newConfig(true, true)
	for i, d := range base.datasets {
		add := wideCandidates(d.key)
		if len(add) == 0 {
			t.Fatalf("%s: no wide candidates", d.key)
		}
		if got, want := len(wide.datasets[i].grid), len(d.grid)+len(add); got != want {
			t.Errorf("%s: wide grid has %d candidates, want %d", d.key, got, want)
		}
		for j, c := range add {
			w := wide.datasets[i].grid[len(d.grid)+j]
			if w.Params.Epochs != c.Params.Epochs || (w.Encoding == nil) != (c.Encoding == nil) ||
				(w.Encoding != nil && w.Encoding.Bandwidth != c.Encoding.Bandwidth) {
				t.Errorf("%s: wide candidate %d differs from wideCandidates", d.key, j)
			}
		}
		for _, c := range d.grid {
			if c.Encoding != nil {
				t.Errorf("%s: the default grid carries an encoding candidate", d.key)
			}
		}
		if len(quick.datasets[i].grid) > len(d.grid) {
			t.Errorf("%s: the quick run's grid grew with WideGrids", d.key)
		}
	}
}

// TestAUROCStdErr: the Hanley-McNeil standard error at the figures of
// docs/uncertainty.md section 11 (a = 0.9, 10 wrong rows of 720: about
// 0.065; 116 of 2280: about 0.019) and NaN without positives.
func TestAUROCStdErr(t *testing.T) {
	for _, c := range []struct {
		a        float64
		pos, neg int
		lo, hi   float64
	}{{0.9, 10, 710, 0.060, 0.070}, {0.9, 116, 2164, 0.017, 0.022}} {
		if se := AUROCStdErr(c.a, c.pos, c.neg); !(se > c.lo && se < c.hi) {
			t.Errorf("AUROCStdErr(%v, %d, %d) = %v, want in (%v, %v)", c.a, c.pos, c.neg, se, c.lo, c.hi)
		}
	}
	if se := AUROCStdErr(0.9, 0, 100); !math.IsNaN(se) {
		t.Errorf("no positives: %v, want NaN", se)
	}
}
