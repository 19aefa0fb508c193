package booleanize

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/ptmhw/ptm/golden/dataset"
)

// A hand-checked column: values 1..8, classes 0 0 0 1 1 1 0 0. The best
// information-gain cut is 3.5 (2.78 bits over 8 rows against 1.64 for
// 6.5), then 6.5 makes every interval pure; a third cut has no gain and is
// spread: every free gap is one rank from a cut or an end, so the lowest
// (1.5) wins. MDL accepts no cut on 8 rows, so its one cut is spread to the
// middle (4.5).
func TestFitSupervisedHandChecked(t *testing.T) {
	var X [][]float64
	for v := 1; v <= 8; v++ {
		X = append(X, []float64{float64(v)})
	}
	y := []int{0, 0, 0, 1, 1, 1, 0, 0}
	for _, tc := range []struct {
		per  int
		mdl  bool
		want []float64
	}{
		{1, false, []float64{3.5}},
		{2, false, []float64{3.5, 6.5}},
		{3, false, []float64{1.5, 3.5, 6.5}},
		{7, false, []float64{1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5}},
		{9, false, []float64{1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5}},
		{1, true, []float64{4.5}},
		{3, true, []float64{2.5, 4.5, 6.5}},
	} {
		th, err := FitSupervised(X, y, 2, tc.per, tc.mdl)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(th.Thresholds[0], tc.want) {
			t.Errorf("perFeature %d mdl %v: %v, want %v", tc.per, tc.mdl, th.Thresholds[0], tc.want)
		}
		if err := th.Validate(); err != nil {
			t.Error(err)
		}
	}
}

// On Iris the class boundaries come first: petal length 2.45 and petal
// width 0.8 separate setosa (the first cut of both placements), the
// information-gain cuts then crowd the versicolor/virginica overlap, and
// MDL stops after the two significant petal-length cuts and spreads the
// rest.
func TestFitSupervisedIris(t *testing.T) {
	d := dataset.Iris()
	sup, err := FitSupervised(d.X, d.Y, 3, 6, false)
	if err != nil {
		t.Fatal(err)
	}
	mdl, err := FitSupervised(d.X, d.Y, 3, 6, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		th   *Thermometer
		cuts Cuts
		f    int
		want []float64
	}{
		{sup, Supervised, 2, []float64{2.45, 4.45, 4.55, 4.75, 4.95, 5.15}},
		{sup, Supervised, 3, []float64{0.8, 1.35, 1.55, 1.65, 1.75, 1.85}},
		{mdl, MDL, 2, []float64{1.45, 1.55, 2.45, 4.25, 4.75, 5.45}},
	} {
		if !slices.Equal(tc.th.Thresholds[tc.f], tc.want) {
			t.Errorf("%s feature %d: %v, want %v", tc.cuts, tc.f, tc.th.Thresholds[tc.f], tc.want)
		}
		if tc.th.Cuts != tc.cuts || tc.th.NumBits() != 24 {
			t.Errorf("%s: Cuts %q, %d bits, want 24", tc.cuts, tc.th.Cuts, tc.th.NumBits())
		}
	}
	// FitCuts dispatches; quantile is Fit exactly.
	q, err := FitCuts(d.X, d.Y, 3, 6, "")
	if err != nil {
		t.Fatal(err)
	}
	f, _ := Fit(d.X, 6)
	if q.Cuts != "" || !slices.EqualFunc(q.Thresholds, f.Thresholds, slices.Equal) {
		t.Errorf("FitCuts quantile differs from Fit")
	}
	s2, err := FitCuts(d.X, d.Y, 3, 6, "supervised-boot")
	if err != nil || !slices.EqualFunc(s2.Thresholds, sup.Thresholds, slices.Equal) {
		t.Errorf("FitCuts supervised-boot: %v, differs from FitSupervised", err)
	}
}

// A feature with fewer gaps than perFeature gets one threshold per gap; a
// constant one none, and all constant is an error.
func TestFitSupervisedFewValues(t *testing.T) {
	X := [][]float64{{0, 5, 1}, {1, 5, 2}, {0, 5, 3}, {1, 5, 4}}
	th, err := FitSupervised(X, []int{0, 1, 0, 1}, 2, 3, false)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{0.5}, {}, {1.5, 2.5, 3.5}}
	if !slices.EqualFunc(th.Thresholds, want, slices.Equal) {
		t.Errorf("%v, want %v", th.Thresholds, want)
	}
	if _, err := FitSupervised([][]float64{{1}, {1}}, []int{0, 1}, 2, 3, false); err == nil || !strings.Contains(err.Error(), "constant") {
		t.Errorf("all constant: %v", err)
	}
}

func TestFitSupervisedErrors(t *testing.T) {
	X := [][]float64{{1}, {2}}
	for _, tc := range []struct {
		X    [][]float64
		y    []int
		nc   int
		per  int
		want string
	}{
		{X, []int{0}, 2, 2, "2 rows, 1 labels"},
		{X, []int{0, 2}, 2, 2, "row 1 label 2 outside 0..1"},
		{X, []int{0, -1}, 2, 2, "row 1 label -1"},
		{X, []int{0, 0}, 0, 2, "0 classes"},
		{X, []int{0, 1}, 2, 0, "perFeature 0 < 1"},
		{nil, nil, 2, 2, "no training rows"},
		{[][]float64{{1}, {2, 3}}, []int{0, 1}, 2, 2, "row 1 has 2 values"},
	} {
		_, err := FitSupervised(tc.X, tc.y, tc.nc, tc.per, false)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v nc %d per %d: error %v, want %q", tc.X, tc.y, tc.nc, tc.per, err, tc.want)
		}
	}
}

func TestParseCuts(t *testing.T) {
	for _, s := range []string{"", "quantile", "supervised", "mdl", "quantile-boot", "supervised-boot", "mdl-boot"} {
		c, err := ParseCuts(s)
		if err != nil || string(c) != s {
			t.Errorf("%q: %q %v", s, c, err)
		}
		if c.Boot() != strings.HasSuffix(s, "-boot") {
			t.Errorf("%q: Boot %v", s, c.Boot())
		}
	}
	for _, s := range []string{"-boot", "boot", "Supervised", "supervised-boot-boot", "tree", " mdl"} {
		if _, err := ParseCuts(s); err == nil || !strings.Contains(err.Error(), "want quantile, supervised or mdl") {
			t.Errorf("%q: error %v", s, err)
		}
	}
	if Cuts("").Base() != Quantile || Cuts("mdl-boot").Base() != MDL {
		t.Error("Base")
	}
}

// The placement is recorded in the thermometer and the sets, survives
// JSON, and a bad name fails validation.
func TestCutsRecorded(t *testing.T) {
	d := dataset.Iris()
	s, err := FitSets(d.X, d.Y, 3, SetsConfig{PerFeature: 6, M: 4, Bandwidth: 0.1, Cuts: "supervised-boot", Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if s.Cuts != "supervised-boot" {
		t.Errorf("Sets.Cuts %q", s.Cuts)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"cuts":"supervised-boot"`) {
		t.Errorf("JSON lacks the placement: %.200s", b)
	}
	var back Sets
	if err := json.Unmarshal(b, &back); err != nil || back.Cuts != s.Cuts || back.Validate() != nil {
		t.Errorf("round trip: %v, %q", err, back.Cuts)
	}
	back.Cuts = "trees"
	if err := back.Validate(); err == nil || !strings.Contains(err.Error(), `"trees"`) {
		t.Errorf("bad Sets.Cuts: %v", err)
	}
	th := Thermometer{Thresholds: [][]float64{{1}}, Cuts: "x"}
	if err := th.Validate(); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("bad Thermometer.Cuts: %v", err)
	}
	q, _ := FitSets(d.X, d.Y, 3, SetsConfig{PerFeature: 6, M: 4, Bandwidth: 0.1, Cuts: "quantile"})
	if q.Cuts != "" {
		t.Errorf("quantile recorded as %q, want empty (the old files' form)", q.Cuts)
	}
	if _, err := FitSets(d.X, d.Y, 3, SetsConfig{PerFeature: 6, M: 4, Cuts: "bogus"}); err == nil || !strings.Contains(err.Error(), "FitSets") {
		t.Errorf("FitSets bogus: %v", err)
	}
}

// Without -boot and without jitter every set is set 0; with -boot the
// sets 1..M-1 are refits on bootstrap resamples: the same layout, set 0
// the full-data placement, the others different somewhere, and the same
// sets for the same seed.
func TestFitSetsBoot(t *testing.T) {
	d := dataset.Iris()
	sup, _ := FitSupervised(d.X, d.Y, 3, 6, false)
	plain, err := FitSets(d.X, d.Y, 3, SetsConfig{PerFeature: 6, M: 4, Cuts: Supervised})
	if err != nil {
		t.Fatal(err)
	}
	for m := range plain.Set {
		if !slices.EqualFunc(plain.Set[m].Thresholds, sup.Thresholds, slices.Equal) {
			t.Errorf("supervised set %d differs from FitSupervised", m)
		}
	}
	cfg := SetsConfig{PerFeature: 6, M: 4, Cuts: "supervised-boot", Seed: 11}
	a, err := FitSets(d.X, d.Y, 3, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := FitSets(d.X, d.Y, 3, cfg)
	if !slices.EqualFunc(a.Set[0].Thresholds, sup.Thresholds, slices.Equal) {
		t.Errorf("set 0 %v, want the full-data placement", a.Set[0].Thresholds)
	}
	for m := 1; m < 4; m++ {
		if !slices.EqualFunc(a.Set[m].Thresholds, b.Set[m].Thresholds, slices.Equal) {
			t.Errorf("set %d not deterministic", m)
		}
		if slices.EqualFunc(a.Set[m].Thresholds, sup.Thresholds, slices.Equal) {
			t.Errorf("set %d equals set 0: no bootstrap refit", m)
		}
	}
	cfg.Seed = 12
	c, _ := FitSets(d.X, d.Y, 3, cfg)
	if slices.EqualFunc(a.Set[1].Thresholds, c.Set[1].Thresholds, slices.Equal) {
		t.Error("seed 12 gives seed 11's set 1")
	}
}
