package datasets

import (
	"strings"
	"testing"
)

func TestLoadIris(t *testing.T) {
	d, err := LoadCSV("../../testdata/iris.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.X) != 150 || len(d.X[0]) != 4 {
		t.Fatalf("shape %dx%d, want 150x4", len(d.X), len(d.X[0]))
	}
	want := []string{"setosa", "versicolor", "virginica"}
	if strings.Join(d.Classes, ",") != strings.Join(want, ",") {
		t.Fatalf("classes %v, want %v", d.Classes, want)
	}
	if d.X[0][0] != 5.1 || d.X[0][3] != 0.2 || d.Y[0] != 0 || d.Y[149] != 2 {
		t.Fatalf("first row %v label %d, last label %d", d.X[0], d.Y[0], d.Y[149])
	}
}

func TestReadCSVErrors(t *testing.T) {
	for _, in := range []string{"", "a,b\n", "a,b\nx,setosa\n", "a\n1\n"} {
		if _, err := ReadCSV(strings.NewReader(in)); err == nil {
			t.Errorf("ReadCSV(%q) succeeded, want error", in)
		}
	}
}

func TestStratifiedSplit(t *testing.T) {
	y := make([]int, 150)
	for i := range y {
		y[i] = i / 50
	}
	train, test := StratifiedSplit(y, 0.2, 7)
	if len(train) != 120 || len(test) != 30 {
		t.Fatalf("sizes %d/%d, want 120/30", len(train), len(test))
	}
	per := map[int]int{}
	seen := map[int]bool{}
	for _, i := range test {
		per[y[i]]++
		seen[i] = true
	}
	for _, i := range train {
		if seen[i] {
			t.Fatalf("row %d in both train and test", i)
		}
		seen[i] = true
	}
	if len(seen) != 150 {
		t.Fatalf("split covers %d rows, want 150", len(seen))
	}
	for c := range 3 {
		if per[c] != 10 {
			t.Fatalf("class %d has %d test rows, want 10", c, per[c])
		}
	}
	train2, test2 := StratifiedSplit(y, 0.2, 7)
	for i := range test {
		if test[i] != test2[i] {
			t.Fatal("same seed gave a different split")
		}
	}
	_ = train2
	_, test3 := StratifiedSplit(y, 0.2, 8)
	same := true
	for i := range test {
		same = same && test[i] == test3[i]
	}
	if same {
		t.Fatal("different seeds gave the same split")
	}
}

func TestGenerators(t *testing.T) {
	X, y := XOR(10, 0.2, 1)
	if len(X) != 40 {
		t.Fatalf("XOR gave %d rows", len(X))
	}
	for i, x := range X {
		want := 0
		if x[0]*x[1] < 0 {
			want = 1
		}
		if y[i] != want || min(abs(x[0]), abs(x[1])) < 0.2 || max(abs(x[0]), abs(x[1])) > 1 {
			t.Fatalf("bad XOR row %v label %d", x, y[i])
		}
	}
	B, by := Blobs([][]float64{{-3, 0}, {3, 0}}, 25, 0.5, 1)
	if len(B) != 50 || by[0] != 0 || by[49] != 1 {
		t.Fatalf("Blobs gave %d rows", len(B))
	}
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}
