package booleanize

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// columns builds a row-major matrix from columns of equal length.
func columns(cols ...[]float64) [][]float64 {
	X := make([][]float64, len(cols[0]))
	for i := range X {
		X[i] = make([]float64, len(cols))
		for f, c := range cols {
			X[i][f] = c[i]
		}
	}
	return X
}

func TestFit(t *testing.T) {
	tests := []struct {
		name       string
		col        []float64
		perFeature int
		want       []float64
	}{
		// n=10, h = 2.25, 4.5, 6.75 -> gaps at 2.5, 4.5, 6.5 -> midpoints.
		{"distinct 1..10, 3 thresholds", []float64{4, 9, 1, 10, 2, 7, 3, 8, 5, 6}, 3, []float64{3.5, 5.5, 7.5}},
		// h = 4.5 falls on the gap between the 5th and 6th value.
		{"median of 1..10", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 1, []float64{5.5}},
		// h = 2 is equidistant from the gaps at 1.5 and 2.5: the lower wins.
		{"tie goes to the lower gap", []float64{5, 4, 3, 2, 1}, 1, []float64{2.5}},
		// Only one gap (between 0 and 1): all quantiles snap to it.
		{"binary feature", []float64{0, 0, 1, 0, 0, 1, 0, 0, 1, 0}, 3, []float64{0.5}},
		// Gaps at 1.5 (1|2), 5.5 (2|3), 8.5 (3|10); h = 2.25, 4.5, 6.75 pick
		// 1.5, 5.5, 5.5; the duplicate is dropped.
		{"duplicates", []float64{1, 1, 2, 2, 2, 2, 3, 3, 3, 10}, 3, []float64{1.5, 2.5}},
		// More thresholds requested than gaps: every gap is used once.
		{"more thresholds than gaps", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 20, []float64{1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5}},
		// Sorted: -5 -1 2 3; h = 1.5 -> gap between -1 and 2.
		{"negative and unsorted", []float64{3, -1, 2, -5}, 1, []float64{0.5}},
		// (a+b)/2 overflows; the midpoint is computed as a/2 + b/2.
		{"huge values", []float64{1.5e308, 1.7e308}, 1, []float64{1.6e308}},
		// The rounded midpoint of adjacent floats equals a; b is used.
		{"adjacent floats", []float64{1, math.Nextafter(1, 2)}, 1, []float64{math.Nextafter(1, 2)}},
		{"two values", []float64{-1, 1}, 4, []float64{0}},
		// Exact midpoints 2.8499999999999996 and 0.15000000000000002 are
		// shortened to the fewest digits strictly inside the gap.
		{"short decimal", []float64{2.8, 2.9}, 1, []float64{2.85}},
		{"short decimal 2", []float64{0.1, 0.2}, 1, []float64{0.15}},
		// 0.1000000000000001 and 0.1000000000000002 differ in the 16th digit.
		{"needs 17 digits", []float64{0.1000000000000001, 0.1000000000000002}, 1, []float64{0.10000000000000014}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// A constant second column must get no thresholds.
			constant := make([]float64, len(tc.col))
			for i := range constant {
				constant[i] = 7
			}
			th, err := Fit(columns(tc.col, constant), tc.perFeature)
			if err != nil {
				t.Fatalf("Fit: %v", err)
			}
			want := [][]float64{tc.want, {}}
			if !reflect.DeepEqual(th.Thresholds, want) {
				t.Errorf("Thresholds = %v, want %v", th.Thresholds, want)
			}
			if err := th.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

func TestFitErrors(t *testing.T) {
	tests := []struct {
		name       string
		X          [][]float64
		perFeature int
		want       string
	}{
		{"no rows", nil, 2, "booleanize: Fit: no training rows"},
		{"no columns", [][]float64{{}, {}}, 2, "booleanize: Fit: training rows have no features"},
		{"ragged", [][]float64{{1, 2}, {3, 4}, {5}}, 2, "booleanize: Fit: row 2 has 1 values, row 0 has 2"},
		{"NaN", [][]float64{{1, 2}, {math.NaN(), 4}}, 2, "booleanize: Fit: row 1 feature 0: non-finite value NaN"},
		{"Inf", [][]float64{{1, math.Inf(-1)}}, 2, "booleanize: Fit: row 0 feature 1: non-finite value -Inf"},
		{"perFeature 0", [][]float64{{1}, {2}}, 0, "booleanize: Fit: perFeature 0 < 1"},
		{"all constant", [][]float64{{1, 2}, {1, 2}, {1, 2}}, 3, "booleanize: Fit: all 2 features are constant in the 3 training rows: no thresholds"},
		{"single row", [][]float64{{1, 2}}, 3, "booleanize: Fit: all 2 features are constant in the 1 training rows: no thresholds"},
	}
	for _, tc := range tests {
		th, err := Fit(tc.X, tc.perFeature)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: Fit = %v, %v; want error %q", tc.name, th, err, tc.want)
		}
	}
}

// TestFitRandom checks the invariants of Fit on random data with many ties:
// at most perFeature thresholds, strictly ascending, and never equal to a
// training value (each lies strictly between two distinct training values).
func TestFitRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n := 1 + r.IntN(60)
		nf := 1 + r.IntN(4)
		X := make([][]float64, n)
		for i := range X {
			X[i] = make([]float64, nf)
			for f := range X[i] {
				X[i][f] = float64(r.IntN(3+5*f)) * 0.1 // few distinct values
			}
		}
		X[0][0] = -1 // at least one non-constant feature
		if n == 1 {
			X = append(X, []float64{1, 1, 1, 1}[:nf])
		}
		per := 1 + r.IntN(8)
		th, err := Fit(X, per)
		if err != nil {
			t.Fatalf("trial %d: Fit: %v", trial, err)
		}
		if err := th.Validate(); err != nil {
			t.Fatalf("trial %d: Validate: %v", trial, err)
		}
		for f, ths := range th.Thresholds {
			if len(ths) > per {
				t.Errorf("trial %d feature %d: %d thresholds > %d", trial, f, len(ths), per)
			}
			for _, c := range ths {
				below, above := false, false
				for _, row := range X {
					if row[f] == c {
						t.Errorf("trial %d feature %d: threshold %v equals a training value", trial, f, c)
					}
					below = below || row[f] < c
					above = above || row[f] > c
				}
				if !below || !above {
					t.Errorf("trial %d feature %d: threshold %v does not split the data", trial, f, c)
				}
			}
		}
	}
}

func TestEncode(t *testing.T) {
	th := &Thermometer{Thresholds: [][]float64{{1, 2}, {}, {0.5}}}
	if th.NumBits() != 3 || th.NumFeatures() != 3 {
		t.Fatalf("NumBits %d NumFeatures %d, want 3 3", th.NumBits(), th.NumFeatures())
	}
	tests := []struct {
		x    []float64
		want []bool
	}{
		{[]float64{1.5, 7, 0.5}, []bool{true, false, true}},
		{[]float64{0.999, -7, 0.49}, []bool{false, false, false}},
		{[]float64{1, 0, 0.5}, []bool{true, false, true}}, // equal to a threshold: bit set
		{[]float64{2, 0, 1e9}, []bool{true, true, true}},
		{[]float64{-1e300, 0, -0.5}, []bool{false, false, false}},
	}
	for _, tc := range tests {
		got, err := th.Encode(tc.x, nil)
		if err != nil {
			t.Fatalf("Encode(%v): %v", tc.x, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Encode(%v) = %v, want %v", tc.x, got, tc.want)
		}
	}

	// A buffer with enough capacity is reused.
	buf := make([]bool, 0, 8)
	out, err := th.Encode([]float64{3, 0, 0}, buf)
	if err != nil || len(out) != 3 || &out[0] != &buf[:1][0] {
		t.Errorf("Encode did not reuse dst: %v %v", out, err)
	}

	errTests := []struct {
		x    []float64
		want string
	}{
		{[]float64{1, 2}, "booleanize: Encode: got 2 features, want 3"},
		{[]float64{1, 2, 3, 4}, "booleanize: Encode: got 4 features, want 3"},
		{[]float64{1, math.NaN(), 3}, "booleanize: Encode: feature 1: non-finite value NaN"},
		{[]float64{1, 0, math.Inf(1)}, "booleanize: Encode: feature 2: non-finite value +Inf"},
	}
	for _, tc := range errTests {
		got, err := th.Encode(tc.x, nil)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Encode(%v) = %v, %v; want error %q", tc.x, got, err, tc.want)
		}
	}
}

func TestEncodeAll(t *testing.T) {
	th := &Thermometer{Thresholds: [][]float64{{0.5}, {-1, 1}}}
	got, err := th.EncodeAll([][]float64{{0, 0}, {1, 2}, {0.5, -1}})
	if err != nil {
		t.Fatalf("EncodeAll: %v", err)
	}
	want := [][]bool{{false, true, false}, {true, true, true}, {true, true, false}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("EncodeAll = %v, want %v", got, want)
	}
	// Rows must not overlap even though they share a backing array.
	got[0] = append(got[0], true)
	if !reflect.DeepEqual(got[1], want[1]) {
		t.Errorf("appending to row 0 changed row 1: %v", got[1])
	}
	_, err = th.EncodeAll([][]float64{{0, 0}, {1, 2}, {0.5}})
	if want := "booleanize: EncodeAll: row 2: got 1 features, want 2"; err == nil || err.Error() != want {
		t.Errorf("EncodeAll error = %v, want %q", err, want)
	}
	if got, err := th.EncodeAll(nil); err != nil || len(got) != 0 {
		t.Errorf("EncodeAll(nil) = %v, %v", got, err)
	}
}

func TestBitNames(t *testing.T) {
	th := &Thermometer{Thresholds: [][]float64{{2.45, 4.75}, {}, {-0.5}, {1e-7}}}
	tests := []struct {
		features []string
		want     []string
	}{
		{[]string{"petal_length", "unused", "w", "tiny"}, []string{"petal_length>=2.45", "petal_length>=4.75", "w>=-0.5", "tiny>=1e-07"}},
		{nil, []string{"x0>=2.45", "x0>=4.75", "x2>=-0.5", "x3>=1e-07"}},
		{[]string{"a", "b", ""}, []string{"a>=2.45", "a>=4.75", "x2>=-0.5", "x3>=1e-07"}},
	}
	for _, tc := range tests {
		if got := th.BitNames(tc.features); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("BitNames(%q) = %q, want %q", tc.features, got, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		th   [][]float64
		want string // "" means valid
	}{
		{"valid", [][]float64{{1, 2, 3}, nil, {-4}}, ""},
		{"no features", nil, "booleanize: thermometer has no features"},
		{"no thresholds", [][]float64{{}, nil}, "booleanize: thermometer has no thresholds (every feature is constant)"},
		{"descending", [][]float64{{1}, {3, 2}}, "booleanize: feature 1 thresholds not strictly ascending: [1]=2 after [0]=3"},
		{"repeated", [][]float64{{1, 1}}, "booleanize: feature 0 thresholds not strictly ascending: [1]=1 after [0]=1"},
		{"NaN", [][]float64{{1, math.NaN()}}, "booleanize: feature 0 threshold 1: non-finite value NaN"},
		{"Inf", [][]float64{{math.Inf(1)}}, "booleanize: feature 0 threshold 0: non-finite value +Inf"},
	}
	for _, tc := range tests {
		err := (&Thermometer{Thresholds: tc.th}).Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: Validate = %v, want nil", tc.name, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want):
			t.Errorf("%s: Validate = %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	th := &Thermometer{Thresholds: [][]float64{{0.1, 2.45}, {}, {1.0000000000000002}}}
	b, err := json.Marshal(th)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"thresholds":[[0.1,2.45],[],[1.0000000000000002]]}`; string(b) != want {
		t.Errorf("JSON = %s, want %s", b, want)
	}
	var back Thermometer
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, th) {
		t.Errorf("round trip = %v, want %v", back, th)
	}
	// A model file with bad thresholds decodes but fails validation.
	var bad Thermometer
	if err := json.NewDecoder(strings.NewReader(`{"thresholds":[[3,1]]}`)).Decode(&bad); err != nil {
		t.Fatal(err)
	}
	if bad.Validate() == nil {
		t.Errorf("Validate accepted descending thresholds from JSON")
	}
}
