package dataset

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"
)

// The UCI wine and breast-cancer (Wisconsin diagnostic) data sets, as
// scikit-learn ships them (load_wine, load_breast_cancer): numeric features,
// the label in the last column, classes named by their integer labels.

//go:embed wine.csv
var wineCSV string

//go:embed breast_cancer.csv
var breastCancerCSV string

func embedded(name, text string, classes []string) func() *Dataset {
	return sync.OnceValue(func() *Dataset {
		d, err := ReadCSV(strings.NewReader(text), name, CSVOptions{Label: "label", Classes: classes})
		if err != nil {
			panic(fmt.Sprintf("dataset: embedded %s.csv is invalid: %v", name, err))
		}
		return d
	})
}

var (
	wineOnce         = embedded("wine", wineCSV, []string{"0", "1", "2"})
	breastCancerOnce = embedded("breast-cancer", breastCancerCSV, []string{"0", "1"})
)

// Wine returns the UCI wine recognition data set: 178 samples, 13 chemical
// features and 3 cultivars (labels 0, 1, 2 with 59, 71 and 48 samples), in
// the row order of the embedded wine.csv. Each call returns a fresh copy.
func Wine() *Dataset { return wineOnce().Clone() }

// BreastCancer returns the Wisconsin diagnostic breast cancer data set: 569
// samples, 30 features of cell nuclei and 2 classes (0 = malignant, 212
// samples; 1 = benign, 357), in the row order of the embedded
// breast_cancer.csv. Each call returns a fresh copy.
func BreastCancer() *Dataset { return breastCancerOnce().Clone() }
