package experiments

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"testing"

	"github.com/ptmhw/ptm/golden/booleanize"
	"github.com/ptmhw/ptm/golden/dataset"
	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/metrics"
	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/golden/ptm"
)

func TestRegions(t *testing.T) {
	for _, c := range []struct {
		p    []float64
		r    float64
		want Region
	}{
		{[]float64{0, 0}, 0, Inside},
		{[]float64{-2, 1.5}, 2, Inside}, // the boundary is inside
		{[]float64{1, -2.0000001}, 2.0000001, Near},
		{[]float64{4, -4}, 4, Near}, // radius exactly 4 is not far
		{[]float64{0.1, 4.5}, 4.5, Far},
		{[]float64{-6, 0}, 6, Far},
	} {
		if r := Radius(c.p); r != c.r {
			t.Errorf("Radius(%v) = %v, want %v", c.p, r, c.r)
		}
		if g := RegionOf(c.p, 2, 4); g != c.want {
			t.Errorf("RegionOf(%v) = %v, want %v", c.p, g, c.want)
		}
	}
	pts := [][]float64{{0, 0}, {1, 1}, {3, 0}, {5, 5}, {-5, 0}, {0, -4.5}}
	vals := []float64{0.1, 0.3, 0.5, 1, 0.8, 0.9}
	reg := Regions(pts, vals, 2, 4)
	if reg[Inside].N != 2 || math.Abs(reg[Inside].Mean-0.2) > 1e-15 {
		t.Errorf("inside %+v, want 2 points mean 0.2", reg[Inside])
	}
	if reg[Near].N != 1 || reg[Near].Mean != 0.5 {
		t.Errorf("near %+v, want 1 point mean 0.5", reg[Near])
	}
	if reg[Far].N != 3 || math.Abs(reg[Far].Mean-0.9) > 1e-15 {
		t.Errorf("far %+v, want 3 points mean 0.9", reg[Far])
	}
	empty := Regions([][]float64{{0, 0}}, []float64{1}, 2, 4)
	if empty[Far].N != 0 || !math.IsNaN(empty[Far].Mean) {
		t.Errorf("empty region %+v, want N 0 and NaN", empty[Far])
	}
	if Inside.String() != "inside" || Far.String() != "far" || Near.String() != "near" {
		t.Error("Region names")
	}
}

func TestDescribe(t *testing.T) {
	st := Describe([]float64{0.1, math.NaN(), 0.3, 0.2})
	if st.N != 3 || st.Missing != 1 || math.Abs(st.Mean-0.2) > 1e-15 || math.Abs(st.Std-0.1) > 1e-15 || st.Min != 0.1 || st.Max != 0.3 {
		t.Errorf("Describe = %+v", st)
	}
	if st := Describe([]float64{math.NaN()}); st.N != 0 || !math.IsNaN(st.Mean) || !math.IsNaN(st.Std) {
		t.Errorf("Describe(all NaN) = %+v", st)
	}
	if st := Describe([]float64{0.5}); st.Std != 0 || st.Mean != 0.5 {
		t.Errorf("Describe(one) = %+v", st)
	}
	// Without NaNs it agrees with pipeline.MeanStd.
	rs := []pipeline.SplitResult{{Report: metrics.Report{ECE: 0.01}}, {Report: metrics.Report{ECE: 0.07}}, {Report: metrics.Report{ECE: 0.04}}}
	m, s := pipeline.MeanStd(rs, func(r metrics.Report) float64 { return r.ECE })
	if st := Describe([]float64{0.01, 0.07, 0.04}); math.Abs(st.Mean-m) > 1e-15 || math.Abs(st.Std-s) > 1e-15 {
		t.Errorf("Describe %v ± %v, pipeline.MeanStd %v ± %v", st.Mean, st.Std, m, s)
	}
}

func TestSummaryJSON(t *testing.T) {
	s := newSummary(true)
	s.set("b.value", 0.25)
	s.set("a.nan", math.NaN())
	s.label("c.label", "softmax \"2\"")
	s.addFigure("x.png")
	s.addFigure("x.png")
	data, err := s.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var js map[string]any
	if err := json.Unmarshal(data, &js); err != nil {
		t.Fatalf("%v in %s", err, data)
	}
	if js["b.value"] != 0.25 || js["a.nan"] != nil || js["c.label"] != "softmax \"2\"" {
		t.Errorf("decoded %v", js)
	}
	if v, ok := js["a.nan"]; !ok || v != nil {
		t.Error("NaN not encoded as null")
	}
	if figs := js["figures"].([]any); len(figs) != 1 || figs[0] != "x.png" {
		t.Errorf("figures %v", figs)
	}
	if a, c := bytes.Index(data, []byte(`"a.nan"`)), bytes.Index(data, []byte(`"c.label"`)); !(a < c) {
		t.Error("keys not sorted")
	}
	s.label("b.value", "clash")
	if _, err := s.MarshalJSON(); err == nil {
		t.Error("a key both value and label was accepted")
	}
}

func TestWithRangeBits(t *testing.T) {
	X := [][]float64{{1, 10}, {2, 10}, {3, 12}, {4, 11}}
	th, err := booleanize.Fit(X, 2)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := WithRangeBits(th, X)
	if err != nil {
		t.Fatal(err)
	}
	for f := range th.Thresholds {
		if len(rb.Thresholds[f]) != len(th.Thresholds[f])+2 {
			t.Fatalf("feature %d: %v from %v", f, rb.Thresholds[f], th.Thresholds[f])
		}
	}
	// On the training data the first bit of each feature is 1 and the last 0.
	for _, x := range X {
		bits, err := rb.Encode(x, nil)
		if err != nil {
			t.Fatal(err)
		}
		o := 0
		for f := range rb.Thresholds {
			n := len(rb.Thresholds[f])
			if !bits[o] || bits[o+n-1] {
				t.Errorf("x=%v feature %d: range bits %v %v, want true false", x, f, bits[o], bits[o+n-1])
			}
			o += n
		}
	}
	// Outside the range they flip, while the plain thermometer saturates.
	lo, _ := rb.Encode([]float64{0, 10}, nil)
	hi, _ := rb.Encode([]float64{4.0000001, 10}, nil)
	n0 := len(rb.Thresholds[0])
	if lo[0] || !hi[n0-1] {
		t.Errorf("below the range bit 0 = %v, above it the last bit = %v", lo[0], hi[n0-1])
	}
	p1, _ := th.Encode([]float64{4, 10}, nil)
	p2, _ := th.Encode([]float64{400, 10}, nil)
	for i := range p1 {
		if p1[i] != p2[i] {
			t.Fatal("the plain thermometer distinguishes 4 from 400")
		}
	}
	if _, err := WithRangeBits(th, nil); err == nil {
		t.Error("no rows accepted")
	}
}

// TestFixedQueries checks the fixed-point path on a trained XOR model: the
// mean is the accumulated votes, identical for equal request seeds, and at
// 16 bits the predictions match the float model's on the four inputs.
func TestFixedQueries(t *testing.T) {
	d, err := pipeline.LoadData(pipeline.XOR, "")
	if err != nil {
		t.Fatal(err)
	}
	f, err := pipeline.Train(d, pipeline.TrainConfig{Params: ptm.Params{Clauses: 4, T: 2, S: 3.9, N: 8, Epochs: 50, Seed: 1, Feedback: ptm.ConsistentFeedback}, SplitSeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	xs := [][]bool{{false, false}, {false, true}, {true, false}, {true, true}}
	bank, err := fixed.Quantize(f.Model, 16)
	if err != nil {
		t.Fatal(err)
	}
	core, err := fixed.NewCore(bank, fixed.HW{Bits: 16, LFSRWidth: 32, ClauseLanes: 2, LiteralLanes: 2})
	if err != nil {
		t.Fatal(err)
	}
	vote := ptm.Mapping{Kind: ptm.Vote}
	qs, err := FixedQueries(core, f.Model, xs, 50, 7, vote)
	if err != nil {
		t.Fatal(err)
	}
	again, err := FixedQueries(core, f.Model, xs, 50, 7, vote)
	if err != nil {
		t.Fatal(err)
	}
	// Smoothing e moves every mean to (1-e) * votes + e/2, sample by sample.
	smooth, err := FixedQueries(core, f.Model, xs, 50, 7, ptm.Mapping{Kind: ptm.Vote, Smoothing: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range qs {
		for c := range 2 {
			if want := 0.9*qs[i].Mean[c] + 0.05; math.Abs(smooth[i].Mean[c]-want) > 1e-12 {
				t.Errorf("input %v class %d: smoothed mean %v, want %v", xs[i], c, smooth[i].Mean[c], want)
			}
		}
	}
	if _, err := FixedQueries(core, f.Model, xs, 50, 7, ptm.Mapping{Kind: ptm.Softmax, Temperature: 1}); err == nil {
		t.Error("a softmax mapping was accepted on the vote-only path")
	}
	for i, q := range qs {
		if want := []int{0, 1, 1, 0}[i]; q.Pred != want || q.Conf < 0.99 {
			t.Errorf("input %v: pred %d conf %v, want %d with confidence", xs[i], q.Pred, q.Conf, want)
		}
		if q.Mean[0]+q.Mean[1] != 1 || again[i].Mean[1] != q.Mean[1] {
			t.Errorf("input %v: mean %v (again %v)", xs[i], q.Mean, again[i].Mean)
		}
	}
	if a := agreement(qs, again); a != 1 {
		t.Errorf("agreement with itself %v", a)
	}
}

func TestHelpers(t *testing.T) {
	if m := median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median odd = %v", m)
	}
	if m := median([]float64{4, 1, 2, 3}); m != 2.5 {
		t.Errorf("median even = %v", m)
	}
	if !math.IsNaN(median(nil)) {
		t.Error("median of nothing")
	}
	for _, c := range []struct {
		a, b  float64
		lower bool
		want  string
	}{
		{0.02, 0.05, true, "PTM better by 0.030"},
		{0.05, 0.02, true, "PTM **worse** by 0.030"},
		{0.95, 0.97, false, "PTM **worse** by 0.020"},
		{0.97, 0.95, false, "PTM better by 0.020"},
		{0.5, 0.5001, true, "equal to 3 decimals"},
		{math.NaN(), 0.1, true, "undefined"},
	} {
		if got := compare(c.a, c.b, c.lower); got != c.want {
			t.Errorf("compare(%v, %v, %v) = %q, want %q", c.a, c.b, c.lower, got, c.want)
		}
	}
	lin := linspace(-6, 6, 4)
	if lin[0] != -4.5 || lin[3] != 4.5 {
		t.Errorf("linspace = %v, want cell centres", lin)
	}
}

// TestWithoutClass: holding out a class of a three-class data set leaves a
// binary data set relabelled 0/1 in class order with the names kept, the
// held-out rows returned apart, and a PTM trained on it is binary with
// labels that map back to the right rows.
func TestWithoutClass(t *testing.T) {
	d := &dataset.Dataset{Name: "toy", Features: []string{"a"}, Classes: []string{"x", "y", "z"},
		X: [][]float64{{0}, {1}, {2}, {10}, {11}, {20}, {21}, {22}}, Y: []int{0, 0, 0, 1, 1, 2, 2, 2}}
	for _, c := range []struct {
		held    int
		classes []string
		y       []int
		x0      []float64 // first feature of the kept rows
		heldX   []float64
	}{
		{0, []string{"y", "z"}, []int{0, 0, 1, 1, 1}, []float64{10, 11, 20, 21, 22}, []float64{0, 1, 2}},
		{1, []string{"x", "z"}, []int{0, 0, 0, 1, 1, 1}, []float64{0, 1, 2, 20, 21, 22}, []float64{10, 11}},
		{2, []string{"x", "y"}, []int{0, 0, 0, 1, 1}, []float64{0, 1, 2, 10, 11}, []float64{20, 21, 22}},
	} {
		sub, held, err := WithoutClass(d, c.held)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(sub.Classes, c.classes) || !slices.Equal(sub.Y, c.y) {
			t.Errorf("without %d: classes %v labels %v, want %v %v", c.held, sub.Classes, sub.Y, c.classes, c.y)
		}
		var x0, hx []float64
		for _, x := range sub.X {
			x0 = append(x0, x[0])
		}
		for _, x := range held {
			hx = append(hx, x[0])
		}
		if !slices.Equal(x0, c.x0) || !slices.Equal(hx, c.heldX) {
			t.Errorf("without %d: rows %v held %v, want %v %v", c.held, x0, hx, c.x0, c.heldX)
		}
	}
	if d.Y[3] != 1 || len(d.Classes) != 3 {
		t.Error("WithoutClass changed its input")
	}
	if _, _, err := WithoutClass(d, 3); err == nil {
		t.Error("class 3 of 3 accepted")
	}
	two := &dataset.Dataset{Name: "two", Features: []string{"a"}, Classes: []string{"x", "y"}, X: [][]float64{{0}, {1}}, Y: []int{0, 1}}
	if _, _, err := WithoutClass(two, 0); err == nil {
		t.Error("a binary data set accepted")
	}

	// Iris without versicolor: a binary PTM over setosa and virginica
	// whose evaluation labels are the relabelled ones.
	iris, err := pipeline.LoadData(pipeline.Iris, "")
	if err != nil {
		t.Fatal(err)
	}
	sub, held, err := WithoutClass(iris.Dataset, 1)
	if err != nil {
		t.Fatal(err)
	}
	if sub.Len() != 100 || len(held) != 50 || !slices.Equal(sub.ClassCounts(), []int{50, 50}) {
		t.Fatalf("%d rows (%v), %d held out", sub.Len(), sub.ClassCounts(), len(held))
	}
	sd := &pipeline.Data{Dataset: sub}
	f, err := pipeline.Train(sd, pipeline.TrainConfig{Params: ptm.Params{Clauses: 10, T: 5, S: 2, N: 100, Epochs: 10, Seed: 1, Feedback: ptm.ConsistentFeedback},
		SplitSeed: 1, Encoding: &pipeline.Plain})
	if err != nil {
		t.Fatal(err)
	}
	if f.Model.NumClasses != 2 || f.Model.NumTMs() != 1 || !slices.Equal(f.Classes, []string{"setosa", "virginica"}) {
		t.Errorf("model: %d classes, %d TMs, classes %v", f.Model.NumClasses, f.Model.NumTMs(), f.Classes)
	}
	ev, err := pipeline.Evaluate(f, sd, f.Split.Test, 20, 1, plainMapping, 10)
	if err != nil {
		t.Fatal(err)
	}
	for i, row := range f.Split.Test {
		if ev.Labels[i] != sub.Y[row] {
			t.Fatalf("test row %d: label %d, data %d", row, ev.Labels[i], sub.Y[row])
		}
	}
	if ev.Report.Accuracy < 0.9 {
		t.Errorf("setosa vs virginica accuracy %v", ev.Report.Accuracy)
	}
	qs, err := ptmQueries(f, held, 20, 1, plainMapping)
	if err != nil || len(qs) != 50 || len(qs[0].Mean) != 2 {
		t.Fatalf("held-out queries: %v, %d", err, len(qs))
	}
}

// TestOODAUROC checks the held-out-class AUROC on hand-made queries.
func TestOODAUROC(t *testing.T) {
	q := func(h, mi float64) metrics.QueryStats { return metrics.QueryStats{Entropy: h, MutualInfo: mi} }
	in := []metrics.QueryStats{q(0.1, 0), q(0.2, 0.1), q(0.5, 0)}
	out := []metrics.QueryStats{q(0.9, 0.3), q(0.4, 0)}
	// Entropy: 0.9 beats all 3; 0.4 beats 0.1 and 0.2: 5 of 6 pairs.
	if a := OODAUROC(in, out, entropyOf); math.Abs(a-5.0/6) > 1e-12 {
		t.Errorf("entropy AUROC %v, want 5/6", a)
	}
	// MI: 0.3 beats all 3; 0 ties two zeros (half each) and loses to 0.1: 3 + 1 = 4 of 6.
	if a := OODAUROC(in, out, miOf); math.Abs(a-4.0/6) > 1e-12 {
		t.Errorf("MI AUROC %v, want 4/6", a)
	}
	if a := OODAUROC(out, in, entropyOf); math.Abs(a-1.0/6) > 1e-12 {
		t.Errorf("swapped AUROC %v, want 1/6", a)
	}
	if a := OODAUROC(in, nil, entropyOf); !math.IsNaN(a) {
		t.Errorf("AUROC without held-out rows %v, want NaN", a)
	}
	if keyName("Class 1/a") != "Class_1_a" {
		t.Errorf("keyName = %q", keyName("Class 1/a"))
	}
}
