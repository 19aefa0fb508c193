package dataset

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestIris(t *testing.T) {
	d := Iris()
	if err := d.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if d.Name != "iris" || d.Len() != 150 || len(d.X) != 150 {
		t.Fatalf("Name %q Len %d, want iris 150", d.Name, d.Len())
	}
	wantF := []string{"sepal_length", "sepal_width", "petal_length", "petal_width"}
	if !reflect.DeepEqual(d.Features, wantF) {
		t.Errorf("Features = %q, want %q", d.Features, wantF)
	}
	wantC := []string{"setosa", "versicolor", "virginica"}
	if !reflect.DeepEqual(d.Classes, wantC) {
		t.Errorf("Classes = %q, want %q", d.Classes, wantC)
	}
	if got := d.ClassCounts(); !reflect.DeepEqual(got, []int{50, 50, 50}) {
		t.Errorf("ClassCounts = %v, want [50 50 50]", got)
	}
	// Spot values from the file (first row, last row) and known column
	// statistics of the standard Iris data.
	if !reflect.DeepEqual(d.X[0], []float64{5.1, 3.5, 1.4, 0.2}) || d.Y[0] != 0 {
		t.Errorf("row 0 = %v label %d", d.X[0], d.Y[0])
	}
	if !reflect.DeepEqual(d.X[149], []float64{5.9, 3.0, 5.1, 1.8}) || d.Y[149] != 2 {
		t.Errorf("row 149 = %v label %d", d.X[149], d.Y[149])
	}
	wantMean := []float64{5.843333, 3.057333, 3.758000, 1.199333}
	for f := range wantF {
		s := 0.0
		for _, row := range d.X {
			s += row[f]
		}
		if m := s / 150; math.Abs(m-wantMean[f]) > 1e-6 {
			t.Errorf("mean of %s = %.6f, want %.6f", wantF[f], m, wantMean[f])
		}
	}
	// Each call returns an independent copy.
	d.X[0][0] = 99
	d.Classes[0] = "changed"
	if e := Iris(); e.X[0][0] != 5.1 || e.Classes[0] != "setosa" {
		t.Errorf("Iris() shares memory with an earlier result")
	}
}

func TestSubsetAndClone(t *testing.T) {
	d := &Dataset{
		Name: "d", Features: []string{"a", "b"}, Classes: []string{"n", "p"},
		X: [][]float64{{0, 1}, {2, 3}, {4, 5}}, Y: []int{0, 1, 1},
	}
	s := d.Subset([]int{2, 0, 2})
	want := &Dataset{
		Name: "d", Features: []string{"a", "b"}, Classes: []string{"n", "p"},
		X: [][]float64{{4, 5}, {0, 1}, {4, 5}}, Y: []int{1, 0, 1},
	}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("Subset = %+v, want %+v", s, want)
	}
	s.X[0][0] = -1
	s.Features[0] = "z"
	if d.X[2][0] != 4 || d.Features[0] != "a" {
		t.Errorf("Subset shares memory with its source")
	}
	if e := d.Subset(nil); e.Len() != 0 || len(e.Features) != 2 {
		t.Errorf("Subset(nil) = %+v", e)
	}
	c := d.Clone()
	if !reflect.DeepEqual(c, d) {
		t.Errorf("Clone = %+v, want %+v", c, d)
	}
	c.X[1][1] = 42
	if d.X[1][1] != 3 {
		t.Errorf("Clone shares memory with its source")
	}
}

func TestView(t *testing.T) {
	d := &Dataset{
		Name: "d", Features: []string{"a", "b"}, Classes: []string{"n", "p"},
		X: [][]float64{{0, 1}, {2, 3}, {4, 5}}, Y: []int{0, 1, 1},
		Image: ImageShape{1, 2}, Predefined: &Split{Train: []int{0, 1}, Test: []int{2}},
	}
	v := d.View([]int{2, 0, 2})
	want := &Dataset{
		Name: "d", Features: []string{"a", "b"}, Classes: []string{"n", "p"},
		X: [][]float64{{4, 5}, {0, 1}, {4, 5}}, Y: []int{1, 0, 1}, Image: ImageShape{1, 2},
	}
	if !reflect.DeepEqual(v, want) {
		t.Fatalf("View = %+v, want %+v", v, want)
	}
	if err := v.Validate(); err != nil {
		t.Fatal(err)
	}
	// The rows are d's own.
	d.X[2][1] = 7
	if v.X[0][1] != 7 || v.X[2][1] != 7 {
		t.Errorf("View copied the rows: %v", v.X)
	}
	// Labels are its own.
	v.Y[1] = 1
	if d.Y[0] != 0 {
		t.Errorf("View shares labels")
	}
}

func TestCheckFeatures(t *testing.T) {
	d := Iris()
	tests := []struct {
		names []string
		msg   string // "" means no error
	}{
		{[]string{"sepal_length", "sepal_width", "petal_length", "petal_width"}, ""},
		{[]string{"sepal_length", "sepal_width", "petal_length"},
			`dataset "iris": feature mismatch: dataset has 4 features ["sepal_length" "sepal_width" "petal_length" "petal_width"], model expects 3 ["sepal_length" "sepal_width" "petal_length"]`},
		{[]string{"sepal_length", "sepal_width", "petal_width", "petal_length"},
			`dataset "iris": feature mismatch: feature 2 is "petal_length", model expects "petal_width"`},
		{nil, `dataset "iris": feature mismatch: dataset has 4 features ["sepal_length" "sepal_width" "petal_length" "petal_width"], model expects 0 []`},
	}
	for _, tc := range tests {
		err := d.CheckFeatures(tc.names)
		if tc.msg == "" {
			if err != nil {
				t.Errorf("CheckFeatures(%q) = %v, want nil", tc.names, err)
			}
			continue
		}
		if err == nil || err.Error() != tc.msg || !errors.Is(err, ErrFeatureMismatch) {
			t.Errorf("CheckFeatures(%q) = %v,\nwant %s (wrapping ErrFeatureMismatch)", tc.names, err, tc.msg)
		}
	}
}

func TestValidate(t *testing.T) {
	base := func() *Dataset {
		return &Dataset{
			Name: "v", Features: []string{"a", "b"}, Classes: []string{"n", "p"},
			X: [][]float64{{0, 1}, {2, 3}}, Y: []int{0, 1},
		}
	}
	tests := []struct {
		name   string
		mutate func(d *Dataset)
		want   string // substring of the error; "" means valid
	}{
		{"valid", func(*Dataset) {}, ""},
		{"label count", func(d *Dataset) { d.Y = d.Y[:1] }, "2 feature rows but 1 labels"},
		{"short row", func(d *Dataset) { d.X[1] = d.X[1][:1] }, "row 1 has 1 values, want 2"},
		{"NaN", func(d *Dataset) { d.X[0][1] = math.NaN() }, `row 0 feature "b": non-finite value NaN`},
		{"label range", func(d *Dataset) { d.Y[1] = 2 }, "row 1: label 2 out of range [0,2)"},
		{"negative label", func(d *Dataset) { d.Y[0] = -1 }, "row 0: label -1 out of range [0,2)"},
		{"duplicate feature", func(d *Dataset) { d.Features[1] = "a" }, `duplicate feature name "a" (indices 0 and 1)`},
		{"empty class", func(d *Dataset) { d.Classes[0] = "" }, "class 0 has an empty name"},
	}
	for _, tc := range tests {
		d := base()
		tc.mutate(d)
		err := d.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: Validate = %v, want nil", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: Validate = %v, want error containing %q", tc.name, err, tc.want)
		}
	}
}
