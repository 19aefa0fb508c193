// Package dataset provides the labelled datasets the PTM golden model is
// trained and evaluated on, and the few operations needed to use them
// reproducibly.
//
// A [Dataset] holds raw (not yet booleanized) float64 features, one row per
// sample, and integer labels that index its class names. Datasets come from
// three places:
//
//   - CSV files, through [LoadCSV] and [ReadCSV]. The first row is the
//     header, every column except the label column is a numeric feature,
//     and every malformed input is reported as a [*ParseError] that names
//     the file, the 1-based line and, where it applies, the column.
//     Input beyond the documented limits ([MaxCSVBytes], [MaxLineBytes],
//     [MaxColumns], [MaxCells]) or with binary bytes (NUL and other
//     control bytes: /dev/zero, /dev/urandom) is refused the same way
//     before it can exhaust memory; [CSVOptions.Progress] reports the
//     bytes read.
//   - The Iris data set, embedded in the binary: [Iris].
//   - Seeded generators: [NoisyXOR] (the paper's two-feature variant),
//     [NoisyXORClassic] (the classic 12-feature Tsetlin Machine benchmark)
//     and [Synthetic2D] (the paper's two-dimensional uncertainty set).
//
// [Dataset.Fingerprint] identifies a data set's content (model files
// record it). [StratifiedSplit] and [Dataset.Subset] build train/test splits, and
// [Dataset.CheckFeatures] verifies that a dataset matches the feature list
// stored in a model file.
//
// # Reproducibility
//
// All randomness comes from math/rand/v2 with a PCG source seeded as
// rand.NewPCG(seed, stream), where stream is a fixed constant per generator
// (documented on each function). The same seed therefore gives the same
// data bit for bit, and different generators given the same seed do not
// share a random stream. The tests pin the first values of every generator,
// so a change in the standard library's streams would be caught.
package dataset
