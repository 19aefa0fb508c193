package datasets

import (
	"fmt"
	"github.com/ptmhw/ptm/golden/dataset"
	"io"
	"math"
	"math/rand/v2"
	"slices"
)

// Data is a labelled data set: feature rows X, labels Y in [0, len(Classes)).
type Data struct {
	X       [][]float64
	Y       []int
	Classes []string // class names in label order
}

// LoadCSV reads a CSV file with a header row, numeric feature columns and the
// class name in the last column, through the project's one CSV loader
// (golden/dataset: labels in order of first appearance, errors naming file
// and line).
func LoadCSV(path string) (*Data, error) {
	d, err := dataset.LoadCSV(path, dataset.CSVOptions{})
	if err != nil {
		return nil, fmt.Errorf("datasets: %w", err)
	}
	return &Data{X: d.X, Y: d.Y, Classes: d.Classes}, nil
}

// ReadCSV parses CSV data in the format described at LoadCSV.
func ReadCSV(r io.Reader) (*Data, error) {
	d, err := dataset.ReadCSV(r, "csv", dataset.CSVOptions{})
	if err != nil {
		return nil, fmt.Errorf("datasets: %w", err)
	}
	return &Data{X: d.X, Y: d.Y, Classes: d.Classes}, nil
}

// StratifiedSplit returns train and test row indices with, for every class,
// round(testFrac * count) of its rows in the test set, chosen by a PCG
// generator seeded with seed. Both index lists are sorted.
func StratifiedSplit(y []int, testFrac float64, seed uint64) (train, test []int) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	byClass := map[int][]int{}
	var labels []int
	for i, c := range y {
		if _, ok := byClass[c]; !ok {
			labels = append(labels, c)
		}
		byClass[c] = append(byClass[c], i)
	}
	slices.Sort(labels)
	for _, c := range labels {
		idx := byClass[c]
		rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		nTest := int(math.Round(testFrac * float64(len(idx))))
		test = append(test, idx[:nTest]...)
		train = append(train, idx[nTest:]...)
	}
	slices.Sort(train)
	slices.Sort(test)
	return train, test
}

// Subset returns the rows of d selected by idx (sharing the row slices).
func (d *Data) Subset(idx []int) ([][]float64, []int) {
	X := make([][]float64, len(idx))
	y := make([]int, len(idx))
	for k, i := range idx {
		X[k] = d.X[i]
		y[k] = d.Y[i]
	}
	return X, y
}

// Blobs returns n points per class drawn from isotropic Gaussians with
// standard deviation sd around the given centres; class c has label c.
func Blobs(centres [][]float64, n int, sd float64, seed uint64) ([][]float64, []int) {
	rng := rand.New(rand.NewPCG(seed, 0xb10b))
	var X [][]float64
	var y []int
	for c, mu := range centres {
		for range n {
			x := make([]float64, len(mu))
			for j := range x {
				x[j] = mu[j] + sd*rng.NormFloat64()
			}
			X = append(X, x)
			y = append(y, c)
		}
	}
	return X, y
}

// XOR returns n points per quadrant of the square [-1, 1]^2 at least margin
// away from both axes, labelled 1 when exactly one coordinate is positive.
func XOR(n int, margin float64, seed uint64) ([][]float64, []int) {
	rng := rand.New(rand.NewPCG(seed, 0x0a0a))
	var X [][]float64
	var y []int
	for q := range 4 {
		sx, sy := 1.0, 1.0
		if q&1 != 0 {
			sx = -1
		}
		if q&2 != 0 {
			sy = -1
		}
		for range n {
			a := margin + (1-margin)*rng.Float64()
			b := margin + (1-margin)*rng.Float64()
			X = append(X, []float64{sx * a, sy * b})
			lab := 0
			if sx*sy < 0 {
				lab = 1
			}
			y = append(y, lab)
		}
	}
	return X, y
}
