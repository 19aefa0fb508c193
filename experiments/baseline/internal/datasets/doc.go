// Package datasets loads the small labelled data sets used by the baseline
// tests and benchmarks, generates synthetic problems with known answers, and
// makes reproducible stratified train/test splits.
package datasets
