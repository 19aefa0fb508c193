package dataset

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/ptmhw/ptm/internal/names"
)

// Dataset is a labelled classification dataset with raw float64 features.
//
// X[i] is the feature vector of sample i, with one value per entry of
// Features, in the same order. Y[i] is its label, an index into Classes.
type Dataset struct {
	Name     string      // short name used in messages, e.g. "iris"
	Features []string    // feature (column) names, in column order
	Classes  []string    // class names; Y values index this slice
	X        [][]float64 // samples x features
	Y        []int       // labels, 0 <= Y[i] < len(Classes)

	// Image, when its sizes are not zero, says that the features are the
	// pixels of Image.Rows x Image.Cols images in row-major order:
	// feature r*Cols + c is the pixel at row r, column c.
	Image ImageShape
	// Predefined, if set, is the data set's own train/test split (MNIST's
	// 60,000 training and 10,000 test images, say): rows are split as it
	// says, never by StratifiedSplit. Subset drops it (its indices name
	// rows of this Dataset); Clone keeps it.
	Predefined *Split
}

// ImageShape is the size of the images of a data set whose features are
// pixels. The zero value means the features are not an image.
type ImageShape struct {
	Rows, Cols int
}

// Split is a predefined train/test split: ascending row indices.
type Split struct {
	Train, Test []int
}

// ErrFeatureMismatch is wrapped by the error [Dataset.CheckFeatures]
// returns when a dataset's features differ from the expected list.
var ErrFeatureMismatch = errors.New("feature mismatch")

// Len returns the number of samples.
func (d *Dataset) Len() int { return len(d.Y) }

// Validate checks the internal consistency of d: X and Y have the same
// length, every row has len(Features) finite values, every label indexes
// Classes, and feature and class names are non-empty and unique. Datasets
// returned by this package are always valid; Validate is for datasets
// built by hand.
func (d *Dataset) Validate() error {
	if err := checkNames("feature", d.Features); err != nil {
		return fmt.Errorf("dataset %q: %w", d.Name, err)
	}
	if err := checkNames("class", d.Classes); err != nil {
		return fmt.Errorf("dataset %q: %w", d.Name, err)
	}
	if len(d.X) != len(d.Y) {
		return fmt.Errorf("dataset %q: %d feature rows but %d labels", d.Name, len(d.X), len(d.Y))
	}
	for i, row := range d.X {
		if len(row) != len(d.Features) {
			return fmt.Errorf("dataset %q: row %d has %d values, want %d", d.Name, i, len(row), len(d.Features))
		}
		for f, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("dataset %q: row %d feature %q: non-finite value %v", d.Name, i, d.Features[f], v)
			}
		}
		if y := d.Y[i]; y < 0 || y >= len(d.Classes) {
			return fmt.Errorf("dataset %q: row %d: label %d out of range [0,%d)", d.Name, i, y, len(d.Classes))
		}
	}
	if im := d.Image; im != (ImageShape{}) && (im.Rows < 1 || im.Cols < 1 || im.Rows*im.Cols != len(d.Features)) {
		return fmt.Errorf("dataset %q: image shape %d x %d does not match its %d features", d.Name, im.Rows, im.Cols, len(d.Features))
	}
	if p := d.Predefined; p != nil {
		if err := p.check(d.Len()); err != nil {
			return fmt.Errorf("dataset %q: predefined split: %w", d.Name, err)
		}
	}
	return nil
}

// check verifies that s's lists are ascending row indices below rows,
// that no row is in both, and that there is a training row.
func (s *Split) check(rows int) error {
	if len(s.Train) == 0 {
		return errors.New("no training rows")
	}
	in := make([]bool, rows)
	for _, l := range []struct {
		name string
		idx  []int
	}{{"train", s.Train}, {"test", s.Test}} {
		for i, r := range l.idx {
			if r < 0 || r >= rows {
				return fmt.Errorf("%s[%d] = %d is outside the %d rows", l.name, i, r, rows)
			}
			if i > 0 && r <= l.idx[i-1] {
				return fmt.Errorf("%s[%d] = %d after %d: indices must be ascending", l.name, i, r, l.idx[i-1])
			}
			if in[r] {
				return fmt.Errorf("row %d is both a training and a test row", r)
			}
			in[r] = true
		}
	}
	return nil
}

// checkName is internal/names' rule for a feature or class name (the one
// the model reader applies): no control or bidirectional-control
// character, valid UTF-8.
func checkName(n string) error { return names.Check(n) }

// checkNames reports an empty or duplicated name in list, or one that
// internal/names refuses (a control or bidirectional-control character:
// the rule a model file's names follow, so that a model trained on the
// data can be read back).
func checkNames(kind string, list []string) error {
	seen := make(map[string]int, len(list))
	for i, n := range list {
		if n == "" {
			return fmt.Errorf("%s %d has an empty name", kind, i)
		}
		if err := names.Check(n); err != nil {
			return fmt.Errorf("%s %d: name %q: %w", kind, i, n, err)
		}
		if j, dup := seen[n]; dup {
			return fmt.Errorf("duplicate %s name %q (indices %d and %d)", kind, n, j, i)
		}
		seen[n] = i
	}
	return nil
}

// ClassCounts returns the number of samples of each class, indexed like
// Classes. It panics if a label is out of range.
func (d *Dataset) ClassCounts() []int {
	counts := make([]int, len(d.Classes))
	for _, y := range d.Y {
		counts[y]++
	}
	return counts
}

// Clone returns a deep copy of d.
func (d *Dataset) Clone() *Dataset {
	idx := make([]int, len(d.Y))
	for i := range idx {
		idx[i] = i
	}
	c := d.Subset(idx)
	if p := d.Predefined; p != nil {
		c.Predefined = &Split{Train: slices.Clone(p.Train), Test: slices.Clone(p.Test)}
	}
	return c
}

// Subset returns a new dataset holding the samples idx[0], idx[1], ... of d,
// in that order (indices may repeat). The result shares no memory with d.
// Name, Features, Classes and Image are copied unchanged; Predefined is
// not (its row indices do not apply to the subset). Subset panics if an index
// is out of range, as slice indexing does.
func (d *Dataset) Subset(idx []int) *Dataset {
	s := &Dataset{
		Name:     d.Name,
		Features: slices.Clone(d.Features),
		Classes:  slices.Clone(d.Classes),
		X:        make([][]float64, len(idx)),
		Y:        make([]int, len(idx)),
		Image:    d.Image,
	}
	for k, i := range idx {
		s.X[k] = slices.Clone(d.X[i])
		s.Y[k] = d.Y[i]
	}
	return s
}

// View returns a data set of the samples idx[0], idx[1], ... of d, like
// [Dataset.Subset], but sharing d's rows instead of copying them: it costs
// one slice header per row, not a copy of the features (376 MB for MNIST's
// 60,000 training images). Neither d's nor the view's rows may be changed
// while both are in use. Name, Features, Classes and Image are shared too;
// Predefined is dropped. View panics if an index is out of range.
func (d *Dataset) View(idx []int) *Dataset {
	s := &Dataset{
		Name:     d.Name,
		Features: d.Features,
		Classes:  d.Classes,
		X:        make([][]float64, len(idx)),
		Y:        make([]int, len(idx)),
		Image:    d.Image,
	}
	for k, i := range idx {
		s.X[k] = d.X[i]
		s.Y[k] = d.Y[i]
	}
	return s
}

// CheckFeatures verifies that d has exactly the features names, in the same
// order, as a model trained on names expects. The returned error wraps
// [ErrFeatureMismatch] and says what differs: the counts, or the first
// position whose name differs.
func (d *Dataset) CheckFeatures(names []string) error {
	if len(d.Features) != len(names) {
		return fmt.Errorf("dataset %q: %w: dataset has %d features %q, model expects %d %q",
			d.Name, ErrFeatureMismatch, len(d.Features), d.Features, len(names), names)
	}
	for i, n := range names {
		if d.Features[i] != n {
			return fmt.Errorf("dataset %q: %w: feature %d is %q, model expects %q",
				d.Name, ErrFeatureMismatch, i, d.Features[i], n)
		}
	}
	return nil
}
