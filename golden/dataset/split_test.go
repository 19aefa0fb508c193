package dataset

import (
	"math"
	"reflect"
	"slices"
	"testing"
)

func TestStratifiedSplitIris(t *testing.T) {
	d := Iris()
	train, test := StratifiedSplit(d.Y, 3, 0.2, 42)
	if len(train) != 120 || len(test) != 30 {
		t.Fatalf("sizes %d/%d, want 120/30", len(train), len(test))
	}
	if got := d.Subset(test).ClassCounts(); !reflect.DeepEqual(got, []int{10, 10, 10}) {
		t.Errorf("test class counts %v, want [10 10 10]", got)
	}
	if got := d.Subset(train).ClassCounts(); !reflect.DeepEqual(got, []int{40, 40, 40}) {
		t.Errorf("train class counts %v, want [40 40 40]", got)
	}
	checkPartition(t, len(d.Y), train, test)
	train2, test2 := StratifiedSplit(d.Y, 3, 0.2, 42)
	if !reflect.DeepEqual(train, train2) || !reflect.DeepEqual(test, test2) {
		t.Errorf("same seed gave different splits")
	}
	if _, test3 := StratifiedSplit(d.Y, 3, 0.2, 43); reflect.DeepEqual(test, test3) {
		t.Errorf("seeds 42 and 43 gave the same split")
	}
	// Pinned, so a change of the shuffle stream is noticed.
	wantTest := []int{5, 13, 23, 25, 30, 33, 38, 39, 45, 46, 59, 62, 63, 78, 81, 83, 84, 90, 93, 96, 103, 104, 116, 119, 120, 123, 130, 139, 141, 146}
	if !reflect.DeepEqual(test, wantTest) {
		t.Errorf("StratifiedSplit(iris, 0.2, 42) test = %v, want %v", test, wantTest)
	}
}

// checkPartition verifies that train and test are sorted, disjoint and
// together cover 0..n-1.
func checkPartition(t *testing.T, n int, train, test []int) {
	t.Helper()
	if !slices.IsSorted(train) || !slices.IsSorted(test) {
		t.Errorf("indices not sorted")
	}
	all := append(slices.Clone(train), test...)
	slices.Sort(all)
	for i, v := range all {
		if v != i {
			t.Fatalf("train+test is not a partition of 0..%d (position %d holds %d)", n-1, i, v)
		}
	}
	if len(all) != n {
		t.Fatalf("train+test has %d indices, want %d", len(all), n)
	}
}

func TestStratifiedSplitProportions(t *testing.T) {
	tests := []struct {
		name     string
		sizes    []int // samples per class
		testFrac float64
		wantTest []int // test samples per class
	}{
		{"round half away from zero", []int{5, 3, 0, 7}, 0.5, []int{3, 2, 0, 4}},
		{"fifth", []int{50, 50, 50}, 0.2, []int{10, 10, 10}},
		{"third rounds", []int{10, 4, 1}, 1.0 / 3, []int{3, 1, 0}},
		{"nothing to test", []int{4, 6}, 0, []int{0, 0}},
		{"everything to test", []int{4, 6}, 1, []int{4, 6}},
	}
	for _, tc := range tests {
		// Interleave the classes so that stratification has work to do.
		var y []int
		left := slices.Clone(tc.sizes)
		for more := true; more; {
			more = false
			for c := range left {
				if left[c] > 0 {
					y = append(y, c)
					left[c]--
					more = true
				}
			}
		}
		train, test := StratifiedSplit(y, len(tc.sizes), tc.testFrac, 1)
		checkPartition(t, len(y), train, test)
		got := make([]int, len(tc.sizes))
		for _, i := range test {
			got[y[i]]++
		}
		if !reflect.DeepEqual(got, tc.wantTest) {
			t.Errorf("%s: test counts %v, want %v", tc.name, got, tc.wantTest)
		}
	}
}

func TestStratifiedSplitPanics(t *testing.T) {
	tests := []struct {
		name     string
		y        []int
		nClasses int
		frac     float64
	}{
		{"no classes", []int{0}, 0, 0.5},
		{"label too large", []int{0, 2}, 2, 0.5},
		{"negative label", []int{-1}, 2, 0.5},
		{"fraction above 1", []int{0}, 1, 1.1},
		{"NaN fraction", []int{0}, 1, math.NaN()},
	}
	for _, tc := range tests {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", tc.name)
				}
			}()
			StratifiedSplit(tc.y, tc.nClasses, tc.frac, 0)
		}()
	}
	train, test := StratifiedSplit(nil, 2, 0.5, 0)
	if len(train) != 0 || len(test) != 0 {
		t.Errorf("empty input gave %v %v", train, test)
	}
}
