// Package booleanize turns raw float64 features into the Boolean inputs of
// the PTM by thermometer encoding, as docs/fixed-point.md section 7 defines
// it: feature f with ascending thresholds th[f][0..n_f-1] becomes n_f bits
// (x[f] >= th[f][k]), features in column order and thresholds in ascending
// order within a feature. Bit k of feature f therefore sits at index
// n_0 + ... + n_{f-1} + k of the encoded vector.
//
// A [Thermometer] holds the thresholds. [Fit] learns them from training
// data only (quantiles snapped to midpoints between distinct training
// values); [FitSupervised] places them where the training labels change
// class (information-gain cut points, docs/uncertainty.md section 13) and
// [FitCuts] chooses between the two by a [Cuts] name. The model file stores
// them as JSON, and [Thermometer.Validate]
// checks them when the file is loaded. Encoding runs on the host in float64
// and is not part of the hardware.
package booleanize
