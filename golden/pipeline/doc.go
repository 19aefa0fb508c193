// Package pipeline strings the golden stages together the way the CLI and
// the experiments use them: load a data set, split it (stratified, seeded),
// fit the booleanizer on the training rows only, train the float PTM,
// quantize it, and package everything as a model file; then evaluate a model
// file on any split with K samples per query.
//
// # Limits
//
// Train estimates the memory of the model it is about to build
// ([TrainBytes]) and Evaluate that of its per-query buffers ([EvalBytes]);
// beyond [MemoryLimit] ($PTM_MAX_MEMORY, default [DefaultMemoryLimit]) or
// the model file's limits they refuse, naming the CLI flag that sets the
// size (--clauses, --states, --thresholds, --samples). Thresholds per
// feature are at most [MaxThresholds]. Models record their training data's
// fingerprint; [Rows] refuses --split train/test on other data.
package pipeline
