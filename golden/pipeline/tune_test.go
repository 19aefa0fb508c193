package pipeline

import (
	"reflect"
	"testing"
	"time"

	"github.com/ptmhw/ptm/golden/ptm"
)

// tinyGrid is a cheap grid for tuning tests (Iris, 5 epochs).
func tinyGrid() []Candidate {
	c := func(clauses, T int, s float64, th int) Candidate {
		return Candidate{Params: ptm.Params{Clauses: clauses, T: T, S: s, N: 100, Epochs: 5, Feedback: ptm.ConsistentFeedback}, Thresholds: th}
	}
	return []Candidate{c(10, 5, 2, 4), c(6, 10, 3, 6), c(12, 8, 4, 6)}
}

// irisBase is `ptm train --data iris --seed seed`'s configuration.
func irisBase(seed uint64) TrainConfig {
	p := ptm.DefaultParams()
	p.Seed = seed
	enc := DefaultEncoding
	return TrainConfig{Params: p, Thresholds: 6, TestFraction: 0.2, SplitSeed: seed, Bits: 16, Mapping: DefaultMapping, Encoding: &enc}
}

// TestTuneIsTheExperimentsCV: Tune (scoring candidates concurrently)
// scores every candidate exactly as
// ScoreGridCV (the experiments' inner cross-validation) does on split
// seed-1, chooses the candidate RepeatedSplits with CV chooses, and
// TrainTuned, fitting the mapping on the tuning's out-of-fold samples,
// writes the model TrainAndCalibrate writes for the chosen candidate.
func TestTuneIsTheExperimentsCV(t *testing.T) {
	d, err := LoadData(Iris, "")
	if err != nil {
		t.Fatal(err)
	}
	const seed = 3
	grid := tinyGrid()
	r, err := Tune(d, TuneConfig{Base: irisBase(seed), Grid: grid, Parallel: 3}) // three at once: the same scores as one at a time
	if err != nil {
		t.Fatal(err)
	}
	enc := DefaultEncoding
	pg := make([]Candidate, len(grid))
	for i, c := range grid {
		c.Encoding = &enc
		pg[i] = c
	}
	pc := ProtocolConfig{TestFraction: 0.2, K: calibrationK, Bins: 10, Grid: pg, Calibrate: true, Mapping: DefaultMapping, CV: true}
	val, _, err := ScoreGridCV(d, pc, seed-1)
	if err != nil {
		t.Fatal(err)
	}
	if r.Scored != len(grid) || len(r.Candidates) != len(grid) {
		t.Fatalf("scored %d of %d candidates, want all %d", r.Scored, len(r.Candidates), len(grid))
	}
	for i, c := range r.Candidates {
		if !reflect.DeepEqual(*c.Score, val[i]) {
			t.Errorf("candidate %d (%s): Tune's score %+v, ScoreGridCV's %+v", i, c.Label, c.Score.Report, val[i].Report)
		}
	}
	want := DefaultSelection.Choose(val)
	if got := r.Chosen; got.Params.Clauses != grid[want].Params.Clauses || got.Params.T != grid[want].Params.T || got.Thresholds != grid[want].Thresholds {
		t.Errorf("Tune chose %s, ScoreGridCV's scores choose candidate %d", TuneLabel(got), want)
	}
	t.Logf("chosen %s: accuracy %.4f NLL %.4f", TuneLabel(r.Chosen), r.Score.Report.Accuracy, r.Score.Report.NLL)
	f, err := TrainTuned(d, r, TrainConfig{}, true)
	if err != nil {
		t.Fatal(err)
	}
	g, err := TrainAndCalibrate(d, r.Chosen, true)
	if err != nil {
		t.Fatal(err)
	}
	if f.Mapping != g.Mapping || !reflect.DeepEqual(f.Model.SPV, g.Model.SPV) {
		t.Errorf("TrainTuned: mapping %+v, TrainAndCalibrate: %+v (or the SPVs differ)", f.Mapping, g.Mapping)
	}
	rec := r.Record(DefaultTuneBudget, TuneFixed{})
	f.Tuning = rec
	if err := f.Validate(); err != nil {
		t.Fatalf("the tuning record does not validate: %v", err)
	}
	if rec.Candidates != 3 || rec.Scored != 3 || rec.Score.Rows != 120 || rec.Chosen.Clauses != f.Model.Clauses {
		t.Errorf("record %+v", rec)
	}
}

// TestTuneKeepsFixedFlags: hyper-parameters the user fixed are those of
// every candidate (duplicates dropped), the rest come from the grid.
func TestTuneKeepsFixedFlags(t *testing.T) {
	d, err := LoadData(Iris, "")
	if err != nil {
		t.Fatal(err)
	}
	base := irisBase(1)
	base.Params.Clauses, base.Params.S = 8, 3.5
	r, err := Tune(d, TuneConfig{Base: base, Fixed: TuneFixed{Clauses: true, S: true}, Grid: tinyGrid()})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Candidates) != 3 {
		t.Fatalf("%d candidates, want 3 (T and thresholds differ)", len(r.Candidates))
	}
	for _, c := range r.Candidates {
		if p := c.Config.Params; p.Clauses != 8 || p.S != 3.5 || p.Epochs != 5 {
			t.Errorf("candidate %s: want clauses 8, s 3.5 kept and epochs 5 from the grid", c.Label)
		}
	}
	if got := r.Record(time.Minute, TuneFixed{Clauses: true, S: true}).Fixed; !reflect.DeepEqual(got, []string{"clauses", "s"}) {
		t.Errorf("record's fixed %v", got)
	}
	// T fixed too: candidates 2 and 3 collapse (both 6 thresholds).
	r, err = Tune(d, TuneConfig{Base: base, Fixed: TuneFixed{Clauses: true, S: true, T: true}, Grid: tinyGrid()})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Candidates) != 2 {
		t.Errorf("%d candidates with clauses, T and s fixed, want 2", len(r.Candidates))
	}
}

// TestTuneBudgetIsWork: the budget admits candidates by their estimated
// work (TuneCost at NominalRate), never by the clock: a budget of the
// first two candidates' work scores exactly those two, one below that
// scores none and trains the first.
func TestTuneBudgetIsWork(t *testing.T) {
	d, err := LoadData(Iris, "")
	if err != nil {
		t.Fatal(err)
	}
	grid := tinyGrid()
	// 4 and 6 thresholds per feature give 16 and 24 Boolean inputs on
	// Iris (four features with many distinct values).
	cost := func(c Candidate) float64 { return TuneCost(120, 3, 4*c.Thresholds, c.Params, calibrationK) }
	two := cost(grid[0]) + cost(grid[1])
	budget := time.Duration(two/NominalRate*1e9) + time.Millisecond
	r, err := Tune(d, TuneConfig{Base: irisBase(2), Grid: grid, Budget: budget})
	if err != nil {
		t.Fatal(err)
	}
	if r.Scored != 2 || r.Candidates[2].Score != nil || r.Work != cost(grid[0])+cost(grid[1]) {
		t.Errorf("budget %v (%.4g TA visits): scored %d, work %.4g; want the first two, %.4g", budget, r.BudgetWork, r.Scored, r.Work, two)
	}
	r, err = Tune(d, TuneConfig{Base: irisBase(2), Grid: grid, Budget: time.Duration(cost(grid[0])/NominalRate*1e9) + time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if r.Scored != 0 || r.Score != nil || r.Chosen.Params.Clauses != 10 || r.Chosen.Thresholds != 4 {
		t.Errorf("a one-candidate budget: scored %d, chose %s; want none scored and the first candidate", r.Scored, TuneLabel(r.Chosen))
	}
	if rec := r.Record(time.Second, TuneFixed{}); rec.Score != nil || rec.Scored != 0 {
		t.Errorf("record of an unscored choice: %+v", rec)
	}
}

// TestGeneralGrid: the general grid's scaling with the data's size.
func TestGeneralGrid(t *testing.T) {
	for _, c := range []struct {
		rows, F            int
		m0, epochs         int
		s0                 float64
		firstT, lastClause int
	}{
		{5000, 12, 10, 20, 2, 5, 20},          // xor-classic
		{120, 24, 20, 100, 2, 10, 40},         // Iris-sized
		{455, 180, 40, 59, 3, 20, 80},         // breast-cancer-sized
		{60000, 9408, 280, 20, 5.3, 140, 560}, // MNIST-sized
	} {
		g := GeneralGrid(c.rows, c.F)
		if len(g) != 8 {
			t.Fatalf("%d candidates, want 8", len(g))
		}
		p := g[0].Params
		if p.Clauses != c.m0 || p.Epochs != c.epochs || p.S != c.s0 || p.T != c.firstT || g[7].Params.Clauses != c.lastClause || g[7].Params.S != 2*c.s0 {
			t.Errorf("rows %d, F %d: first %+v, last %+v", c.rows, c.F, p, g[7].Params)
		}
	}
}

// TestTuneGridKnownOnlyForBuiltinData: the experiments' grid is used for
// the built-in data (also read from an identical CSV file), the general
// grid for a user's file of the same name with other content.
func TestTuneGridKnownOnlyForBuiltinData(t *testing.T) {
	d, err := LoadData(Wine, "")
	if err != nil {
		t.Fatal(err)
	}
	if g, refine := TuneGrid(d, 142, 78); refine || !reflect.DeepEqual(g, KnownGrid(Wine)) {
		t.Errorf("built-in wine: grid %+v, refine %v", g, refine)
	}
	d.X[0] = append([]float64(nil), d.X[0]...)
	d.X[0][0]++ // a user's "wine" data: other values
	if g, refine := TuneGrid(d, 142, 78); !refine || !reflect.DeepEqual(g, GeneralGrid(142, 78)) {
		t.Errorf("a user's wine: grid %+v, refine %v", g, refine)
	}
}
