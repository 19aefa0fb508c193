// Package testmodel builds small deterministic banks, shapes and feature
// vectors for the host packages' tests and examples.
package testmodel
