package dataset_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ptmhw/ptm/golden/dataset"
)

func ExampleReadCSV() {
	const data = `width,height,kind
1.0,2.5,small
9.5,8.0,large
1.5,2.0,small
`
	d, err := dataset.ReadCSV(strings.NewReader(data), "boxes.csv", dataset.CSVOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Features, d.Classes)
	fmt.Println(d.X[1], d.Y)
	// Output:
	// [width height] [small large]
	// [9.5 8] [0 1 0]
}

func ExampleParseError() {
	const data = "width,height,kind\n1.0,2.5,small\n9.5,tall,large\n"
	_, err := dataset.ReadCSV(strings.NewReader(data), "boxes.csv", dataset.CSVOptions{})
	fmt.Println(err)
	var pe *dataset.ParseError
	if errors.As(err, &pe) {
		fmt.Println(pe.Line, pe.Column)
	}
	// Output:
	// boxes.csv:3: column "height": invalid number "tall"
	// 3 height
}

func ExampleIris() {
	d := dataset.Iris()
	fmt.Println(d.Len(), d.Features)
	fmt.Println(d.Classes, d.ClassCounts())
	// Output:
	// 150 [sepal_length sepal_width petal_length petal_width]
	// [setosa versicolor virginica] [50 50 50]
}

func ExampleStratifiedSplit() {
	d := dataset.Iris()
	trainIdx, testIdx := dataset.StratifiedSplit(d.Y, len(d.Classes), 0.2, 1)
	train, test := d.Subset(trainIdx), d.Subset(testIdx)
	fmt.Println(train.Len(), train.ClassCounts())
	fmt.Println(test.Len(), test.ClassCounts())
	// Output:
	// 120 [40 40 40]
	// 30 [10 10 10]
}

func ExampleNoisyXORClassic() {
	// The classic benchmark: noisy training set, noise-free test set.
	train := dataset.NoisyXORClassic(5000, 0.4, 1)
	test := dataset.NoisyXORClassic(5000, 0, 2)
	fmt.Println(train.Len(), len(train.Features), test.Len())
	// Output:
	// 5000 12 5000
}

func ExampleSynthetic2D() {
	train, test := dataset.Synthetic2D(1)
	far := 0
	for _, p := range test {
		if max(p[0], -p[0], p[1], -p[1]) > 2*dataset.Synthetic2DTrainRegion {
			far++
		}
	}
	fmt.Println(train.Len(), train.ClassCounts(), len(test), far > 1000)
	// Output:
	// 1000 [500 500] 2000 true
}

func ExampleDataset_CheckFeatures() {
	d := dataset.Iris()
	err := d.CheckFeatures([]string{"sepal_length", "sepal_width", "petal_length"})
	fmt.Println(errors.Is(err, dataset.ErrFeatureMismatch))
	// Output:
	// true
}
