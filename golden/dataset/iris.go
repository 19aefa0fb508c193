package dataset

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"
)

//go:embed iris.csv
var irisCSV string

// irisClasses are the Iris class names in label order.
var irisClasses = []string{"setosa", "versicolor", "virginica"}

var irisOnce = sync.OnceValue(func() *Dataset {
	d, err := ReadCSV(strings.NewReader(irisCSV), "iris", CSVOptions{Label: "species", Classes: irisClasses})
	if err != nil {
		panic(fmt.Sprintf("dataset: embedded iris.csv is invalid: %v", err))
	}
	return d
})

// Iris returns Fisher's Iris data set: 150 samples, 4 features
// (sepal_length, sepal_width, petal_length, petal_width, in cm) and 3
// classes (setosa, versicolor, virginica, labels 0, 1, 2), 50 samples each,
// in the row order of the embedded iris.csv (50 setosa, then 50 versicolor,
// then 50 virginica). Each call returns a fresh copy that the caller may
// modify.
func Iris() *Dataset {
	return irisOnce().Clone()
}
