package booleanize_test

import (
	"encoding/json"
	"fmt"

	"github.com/ptmhw/ptm/golden/booleanize"
	"github.com/ptmhw/ptm/golden/dataset"
)

func ExampleFit() {
	X := [][]float64{{1, 0}, {2, 0}, {3, 1}, {4, 1}, {5, 0}, {6, 1}}
	th, err := booleanize.Fit(X, 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(th.Thresholds, th.NumBits())
	b, _ := json.Marshal(th)
	fmt.Println(string(b))
	// Output:
	// [[2.5 4.5] [0.5]] 3
	// {"thresholds":[[2.5,4.5],[0.5]]}
}

// The classes change at 3.5 and 6.5: supervised placement cuts there,
// where the quantiles (Fit) would cut at 3.5 and 5.5.
func ExampleFitSupervised() {
	X := [][]float64{{1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}}
	y := []int{0, 0, 0, 1, 1, 1, 0, 0}
	th, err := booleanize.FitSupervised(X, y, 2, 2, false)
	if err != nil {
		fmt.Println(err)
		return
	}
	q, _ := booleanize.Fit(X, 2)
	b, _ := json.Marshal(th)
	fmt.Println(q.Thresholds, th.Thresholds)
	fmt.Println(string(b))
	// Output:
	// [[3.5 5.5]] [[3.5 6.5]]
	// {"thresholds":[[3.5,6.5]],"cuts":"supervised"}
}

func ExampleThermometer_Encode() {
	th := &booleanize.Thermometer{Thresholds: [][]float64{{2.5, 4.5}, {0.5}}}
	var buf []bool
	for _, x := range [][]float64{{1, 1}, {2.5, 0}, {9, 1}} {
		var err error
		buf, err = th.Encode(x, buf)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(x, buf)
	}
	// Output:
	// [1 1] [false false true]
	// [2.5 0] [true false false]
	// [9 1] [true true true]
}

func ExampleThermometer_BitNames() {
	iris := dataset.Iris()
	th, err := booleanize.Fit(iris.X, 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, name := range th.BitNames(iris.Features) {
		fmt.Println(name)
	}
	// Output:
	// sepal_length>=5.45
	// sepal_length>=6.25
	// sepal_width>=2.85
	// sepal_width>=3.15
	// petal_length>=2.45
	// petal_length>=4.85
	// petal_width>=0.8
	// petal_width>=1.55
}
