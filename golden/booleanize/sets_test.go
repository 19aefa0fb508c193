package booleanize

import (
	"encoding/json"
	"math"
	"slices"
	"testing"
)

func setsData() ([][]float64, []int) {
	var X [][]float64
	var y []int
	for i := range 60 {
		X = append(X, []float64{float64(i%20) / 2, float64((i*7)%13) - 6})
		y = append(y, i%3)
	}
	return X, y
}

// One set without margin is exactly the plain thermometer.
func TestFitSetsOneIsPlain(t *testing.T) {
	X, y := setsData()
	s, err := FitSets(X, y, 3, SetsConfig{PerFeature: 5, M: 1, Bandwidth: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	th, err := Fit(X, 5)
	if err != nil {
		t.Fatal(err)
	}
	for f := range th.Thresholds {
		if !slices.Equal(s.Set[0].Thresholds[f], th.Thresholds[f]) {
			t.Errorf("feature %d: %v, Fit gives %v", f, s.Set[0].Thresholds[f], th.Thresholds[f])
		}
	}
	for _, x := range X {
		a, _ := s.Encode(0, x, nil)
		b, _ := th.Encode(x, nil)
		if !slices.Equal(a, b) {
			t.Fatalf("row %v: sets %v, thermometer %v", x, a, b)
		}
	}
}

// The sets shift the base thresholds by z_m * bandwidth * std: symmetric
// normal quantiles, ascending in m, the same layout in every set.
func TestFitSetsShifts(t *testing.T) {
	X, y := setsData()
	const M, h = 4, 0.2
	s, err := FitSets(X, y, 3, SetsConfig{PerFeature: 5, M: M, Bandwidth: h})
	if err != nil {
		t.Fatal(err)
	}
	base, _ := Fit(X, 5)
	for f := range base.Thresholds {
		var mu, ss float64
		for _, r := range X {
			mu += r[f]
		}
		mu /= float64(len(X))
		for _, r := range X {
			ss += (r[f] - mu) * (r[f] - mu)
		}
		sd := math.Sqrt(ss / float64(len(X)))
		var sum float64
		for m := range M {
			z := NormalQuantile((float64(m) + 0.5) / M)
			sum += z
			for k, c := range base.Thresholds[f] {
				if got, want := s.Set[m].Thresholds[f][k], c+z*h*sd; math.Abs(got-want) > 1e-12 {
					t.Errorf("set %d feature %d threshold %d: %v, want %v", m, f, k, got, want)
				}
			}
		}
		if math.Abs(sum) > 1e-12 {
			t.Errorf("shifts sum to %v, want 0", sum)
		}
	}
	if z := NormalQuantile(0.975); math.Abs(z-1.959964) > 1e-6 {
		t.Errorf("NormalQuantile(0.975) = %v", z)
	}
}

// Reversion: inside the extended range nothing changes; far outside a
// feature is replaced (per feature, or the whole row with WholeRow).
func TestFitSetsReversion(t *testing.T) {
	X, y := setsData()
	for _, whole := range []bool{false, true} {
		s, err := FitSets(X, y, 3, SetsConfig{PerFeature: 5, M: 3, Margin: 1, WholeRow: whole, Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		plain, _ := Fit(X, 5)
		for m := range 3 {
			set := s.Set[m]
			for _, x := range X {
				a, _ := s.Encode(m, x, nil)
				b, _ := plain.Encode(x, nil)
				if !slices.Equal(a, b) {
					t.Fatalf("whole=%v set %d: training row %v encoded differently", whole, m, x)
				}
			}
			far := []float64{1e6, X[0][1]}
			got, _ := s.Encode(m, far, nil)
			want := []float64{set.Replace[0], X[0][1]}
			if whole {
				want = set.Replace
			}
			exp, _ := plain.Encode(want, nil)
			if !slices.Equal(got, exp) {
				t.Errorf("whole=%v set %d: far row encodes %v, want %v", whole, m, got, exp)
			}
			if set.Hi[0] <= 9.5 || set.Lo[0] >= 0 {
				t.Errorf("set %d range [%v, %v] does not extend the training range [0, 9.5]", m, set.Lo[0], set.Hi[0])
			}
		}
		// Replacement rows cycle through the classes: the three sets take
		// rows of classes 0, 1, 2.
		for m := range 3 {
			i := slices.IndexFunc(X, func(r []float64) bool { return slices.Equal(r, s.Set[m].Replace) })
			if i < 0 || y[i] != m {
				t.Errorf("set %d replacement %v is not a training row of class %d", m, s.Set[m].Replace, m)
			}
		}
	}
}

func TestSetsJSONAndValidate(t *testing.T) {
	X, y := setsData()
	s, err := FitSets(X, y, 3, SetsConfig{PerFeature: 5, M: 4, Bandwidth: 0.1, Margin: 1, WholeRow: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var r Sets
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	for m := range 4 {
		for _, x := range append(X, []float64{-100, 100}) {
			a, _ := s.Encode(m, x, nil)
			c, _ := r.Encode(m, x, nil)
			if !slices.Equal(a, c) {
				t.Fatalf("set %d row %v: round trip encodes differently", m, x)
			}
		}
	}
	bad := r
	bad.Set = slices.Clone(r.Set)
	bad.Set[2].Thresholds = [][]float64{{1}, {2}}
	if bad.Validate() == nil {
		t.Error("sets with different layouts accepted")
	}
	bad.Set = slices.Clone(r.Set)
	bad.Set[1].Lo = bad.Set[1].Lo[:1]
	if bad.Validate() == nil {
		t.Error("short range accepted")
	}
	if _, err := FitSets(X, y, 3, SetsConfig{PerFeature: 5, M: 0}); err == nil {
		t.Error("M = 0 accepted")
	}
	if _, err := FitSets(X, y, 3, SetsConfig{PerFeature: 5, M: 2, Bandwidth: math.NaN()}); err == nil {
		t.Error("NaN bandwidth accepted")
	}
	if _, err := s.Encode(4, X[0], nil); err == nil {
		t.Error("set 4 of 4 accepted")
	}
}

func TestSplitK(t *testing.T) {
	for _, c := range []struct{ K, M int }{{100, 8}, {7, 3}, {3, 8}, {1, 1}} {
		n := 0
		for m := range c.M {
			k := SplitK(c.K, c.M, m)
			if k < c.K/c.M || k > c.K/c.M+1 {
				t.Errorf("K=%d M=%d set %d: %d samples", c.K, c.M, m, k)
			}
			n += k
		}
		if n != c.K {
			t.Errorf("K=%d M=%d: %d samples in all", c.K, c.M, n)
		}
	}
}
