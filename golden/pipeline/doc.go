// Package pipeline strings the golden stages together the way the CLI and
// the experiments use them: load a data set, split it (stratified, seeded),
// fit the booleanizer on the training rows only, train the float PTM,
// quantize it, and package everything as a model file; then evaluate a model
// file on any split with K samples per query.
package pipeline
