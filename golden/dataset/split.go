package dataset

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// StratifiedSplit splits the sample indices 0..len(y)-1 into a training and
// a test set, class by class, so that both keep the class proportions of y.
//
// For each class c in 0..nClasses-1 (in that order), the indices i with
// y[i] == c are taken in ascending order, shuffled with r.Shuffle where
// r := rand.New(rand.NewPCG(seed, 0x70746d2f73706c74)) is shared across the
// classes, and the first round(testFrac * n_c) of them go to the test set
// (round half away from zero), the rest to training. Both returned slices
// are sorted ascending. The result depends only on y, nClasses, testFrac
// and seed. A class with no samples contributes nothing.
//
// StratifiedSplit panics if nClasses < 1, testFrac is not in [0, 1], or a
// label is outside [0, nClasses).
func StratifiedSplit(y []int, nClasses int, testFrac float64, seed uint64) (train, test []int) {
	if nClasses < 1 {
		panic(fmt.Sprintf("dataset.StratifiedSplit: nClasses %d < 1", nClasses))
	}
	if !(testFrac >= 0 && testFrac <= 1) {
		panic(fmt.Sprintf("dataset.StratifiedSplit: testFrac %v outside [0,1]", testFrac))
	}
	byClass := make([][]int, nClasses)
	for i, c := range y {
		if c < 0 || c >= nClasses {
			panic(fmt.Sprintf("dataset.StratifiedSplit: label y[%d] = %d outside [0,%d)", i, c, nClasses))
		}
		byClass[c] = append(byClass[c], i)
	}
	r := rand.New(rand.NewPCG(seed, streamSplit))
	train = make([]int, 0, len(y))
	test = make([]int, 0, int(math.Round(testFrac*float64(len(y))))+nClasses)
	for _, idx := range byClass {
		r.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
		nTest := int(math.Round(testFrac * float64(len(idx))))
		test = append(test, idx[:nTest]...)
		train = append(train, idx[nTest:]...)
	}
	slices.Sort(train)
	slices.Sort(test)
	return train, test
}
