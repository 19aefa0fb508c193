package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// IDXFiles are the standard names of the four files of an IDX data set
// folder (MNIST's, Fashion-MNIST's), in the order training images,
// training labels, test images, test labels. Each may also carry a ".gz"
// suffix (gzip-compressed).
var IDXFiles = [4]string{
	"train-images-idx3-ubyte",
	"train-labels-idx1-ubyte",
	"t10k-images-idx3-ubyte",
	"t10k-labels-idx1-ubyte",
}

// IDXOptions configures [LoadIDXDir].
type IDXOptions struct {
	// Classes, if set, names the classes: label value k is class
	// Classes[k], and a label >= len(Classes) is an error. When nil, the
	// classes are the label values that occur, as decimal strings, in
	// ascending order.
	Classes []string
	// Progress, if set, is called as the files are read, with the bytes
	// read so far and the size of all files (as stored, so compressed
	// bytes for gzipped files).
	Progress func(read, total int64)
}

// PixelName returns the feature name of the pixel at row r, column c
// (both 0-based) of an image data set: "px_r_c", e.g. "px_0_27".
func PixelName(r, c int) string {
	return "px_" + strconv.Itoa(r) + "_" + strconv.Itoa(c)
}

// findIDX returns the path of the file base (or base.gz) in dir, "" when
// neither exists; both existing is an error, since they may differ.
func findIDX(dir, base string) (string, error) {
	var found []string
	for _, name := range []string{base, base + ".gz"} {
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("dataset: %w", err)
		}
		if fi.IsDir() {
			return "", &IDXError{File: p, Offset: -1, Msg: "is a directory, not an IDX file"}
		}
		found = append(found, p)
	}
	switch len(found) {
	case 0:
		return "", nil
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("dataset: %s: both %s and %s exist: remove one of them", dir, filepath.Base(found[0]), filepath.Base(found[1]))
}

// LoadIDXDir reads an IDX data set from the folder dir: the training
// images and labels (train-images-idx3-ubyte and train-labels-idx1-ubyte,
// see [IDXFiles]) and, if present, the test images and labels
// (t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte); each file plain or
// gzipped (".gz"). The data set is named after the folder; its rows are
// the training images, then the test images. When the test files are
// present they make its [Dataset.Predefined] split (training rows first,
// test rows after), else it has none. Features are the pixels, named by
// [PixelName], values 0..255; [Dataset.Image] holds the image size.
//
// Every malformed file gives an [*IDXError] naming the file and byte
// offset; the image and label counts of each part must agree, and the
// test images must have the training images' size.
func LoadIDXDir(dir string, opt IDXOptions) (*Dataset, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("dataset: %s is not a folder: an IDX data set is a folder holding %s and %s (and optionally %s and %s), each plain or .gz",
			dir, IDXFiles[0], IDXFiles[1], IDXFiles[2], IDXFiles[3])
	}
	var paths [4]string
	var total int64
	for i, base := range IDXFiles {
		if paths[i], err = findIDX(dir, base); err != nil {
			return nil, err
		}
		if paths[i] != "" {
			if fi, err := os.Stat(paths[i]); err == nil {
				total += fi.Size()
			}
		}
	}
	if paths[0] == "" || paths[1] == "" {
		return nil, fmt.Errorf("dataset: %s: no %s[.gz] and %s[.gz]: an IDX data set folder holds the training images and labels under these names (and optionally %s and %s)",
			dir, IDXFiles[0], IDXFiles[1], IDXFiles[2], IDXFiles[3])
	}
	if (paths[2] == "") != (paths[3] == "") {
		return nil, fmt.Errorf("dataset: %s: the test images (%s) and labels (%s) come together: one of them is missing",
			dir, IDXFiles[2], IDXFiles[3])
	}
	var read int64
	progress := func(n int64) {
		read += n
		if opt.Progress != nil {
			opt.Progress(read, total)
		}
	}
	var parts []imagePart
	for p := 0; p < 4 && paths[p] != ""; p += 2 {
		part := imagePart{imgFile: paths[p], lblFile: paths[p+1]}
		f, r, size, err := openIDX(paths[p], progress)
		if err != nil {
			return nil, err
		}
		part.images, err = readImages(r, paths[p], size)
		f.Close()
		if err != nil {
			return nil, err
		}
		if f, r, size, err = openIDX(paths[p+1], progress); err != nil {
			return nil, err
		}
		part.labels, err = readLabels(r, paths[p+1], size, len(opt.Classes))
		f.Close()
		if err != nil {
			return nil, err
		}
		parts = append(parts, part)
	}
	name := dir
	if abs, err := filepath.Abs(dir); err == nil {
		name = abs
	}
	return buildImageDataset(filepath.Base(name), opt.Classes, parts)
}

// imagePart is one part (training or test) of an image data set.
type imagePart struct {
	images           *Images
	labels           []byte
	imgFile, lblFile string
}

// buildImageDataset makes a Dataset of the parts' images, in order; with
// two parts, the first is the training set and the second the test set
// of its Predefined split. classes nil means the label values that occur.
func buildImageDataset(name string, classes []string, parts []imagePart) (*Dataset, error) {
	first := parts[0].images
	n := 0
	for _, p := range parts {
		if p.images.N != len(p.labels) {
			return nil, fmt.Errorf("dataset: %s has %d images but %s has %d labels: the counts must match",
				p.imgFile, p.images.N, p.lblFile, len(p.labels))
		}
		if p.images.Rows != first.Rows || p.images.Cols != first.Cols {
			return nil, fmt.Errorf("dataset: %s has %d x %d images but %s has %d x %d: the sizes must match",
				p.imgFile, p.images.Rows, p.images.Cols, parts[0].imgFile, first.Rows, first.Cols)
		}
		n += p.images.N
	}
	// Label value -> class index.
	var lut [256]int
	if classes == nil {
		var seen [256]bool
		for _, p := range parts {
			for _, l := range p.labels {
				seen[l] = true
			}
		}
		for v, ok := range seen {
			if ok {
				lut[v] = len(classes)
				classes = append(classes, strconv.Itoa(v))
			}
		}
	} else {
		for v := range lut {
			lut[v] = v
		}
	}
	f := first.Rows * first.Cols
	if int64(n)*int64(f) > MaxCells {
		return nil, fmt.Errorf("dataset: %s: %d images of %d pixels make %d values, the limit is %d",
			name, n, f, int64(n)*int64(f), MaxCells)
	}
	d := &Dataset{
		Name:     name,
		Features: make([]string, 0, f),
		Classes:  slices.Clone(classes),
		X:        make([][]float64, n),
		Y:        make([]int, n),
		Image:    ImageShape{Rows: first.Rows, Cols: first.Cols},
	}
	for r := 0; r < first.Rows; r++ {
		for c := 0; c < first.Cols; c++ {
			d.Features = append(d.Features, PixelName(r, c))
		}
	}
	// One backing array for all rows: one allocation instead of n, and
	// each row capped so that an append to it cannot spill into the next.
	slab := make([]float64, n*f)
	i := 0
	for _, p := range parts {
		for k := 0; k < p.images.N; k++ {
			row := slab[i*f : (i+1)*f : (i+1)*f]
			for j, v := range p.images.Pixels[k*f : (k+1)*f] {
				row[j] = float64(v)
			}
			d.X[i] = row
			d.Y[i] = lut[p.labels[k]]
			i++
		}
	}
	if len(parts) == 2 {
		tr, te := parts[0].images.N, parts[1].images.N
		s := &Split{Train: make([]int, tr), Test: make([]int, te)}
		for k := range s.Train {
			s.Train[k] = k
		}
		for k := range s.Test {
			s.Test[k] = tr + k
		}
		d.Predefined = s
	}
	return d, nil
}
