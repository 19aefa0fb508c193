package pipeline

import (
	"slices"
	"strings"
	"testing"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/modelfile"
)

// TestRowsOfSplit checks Rows and ConvRows, which share rowsOfSplit, on
// the same cases: "all", the recorded rows of "train" and "test", other
// data with another row count or the same count and another fingerprint,
// a model without test rows (each kind's own advice), a model file
// without a fingerprint (rows only), an unknown split, and data of the
// wrong kind.
func TestRowsOfSplit(t *testing.T) {
	iris, err := LoadData(Iris, "")
	if err != nil {
		t.Fatal(err)
	}
	img, err := LoadData(stripes(t, 40, 10), "")
	if err != nil {
		t.Fatal(err)
	}
	split := func(d *Data) modelfile.Split {
		train, test, err := d.Split(0.2, 1)
		if err != nil {
			t.Fatal(err)
		}
		return modelfile.Split{Dataset: d.Name, Rows: d.Len(), Train: train, Test: test}
	}
	tab := &modelfile.File{Features: iris.Features, Split: split(iris), DataFingerprint: iris.Fingerprint()}
	cf := &modelfile.ConvFile{Head: conv.Head{Shape: conv.Shape{H: img.Image.Rows, W: img.Image.Cols}}, Split: split(img), DataFingerprint: img.Fingerprint()}
	type kind struct {
		name   string
		d      *Data
		sp     *modelfile.Split
		fp     *string
		rows   func(d *Data, split string) ([]int, error)
		noTest string
	}
	kinds := []kind{
		{"Rows", iris, &tab.Split, &tab.DataFingerprint, func(d *Data, s string) ([]int, error) { return Rows(tab, d, s) },
			"pipeline: the model holds out no test rows (trained with --test-fraction 0): use --test-data FILE or --split all"},
		{"ConvRows", img, &cf.Split, &cf.DataFingerprint, func(d *Data, s string) ([]int, error) { return ConvRows(cf, d, s) },
			"pipeline: the model holds out no test rows: use --split all on a separate data set"},
	}
	for _, k := range kinds {
		all, err := k.rows(k.d, "all")
		if err != nil || len(all) != k.d.Len() || all[0] != 0 || all[len(all)-1] != k.d.Len()-1 {
			t.Errorf("%s all: %d rows, %v", k.name, len(all), err)
		}
		for _, s := range []struct {
			name string
			want []int
		}{{"train", k.sp.Train}, {"test", k.sp.Test}} {
			if got, err := k.rows(k.d, s.name); err != nil || !slices.Equal(got, s.want) || len(got) == 0 {
				t.Errorf("%s %s: %d rows, %v; want the recorded %d", k.name, s.name, len(got), err, len(s.want))
			}
		}
		// Fewer rows: refused by count.
		fewer := &Data{Dataset: k.d.Subset(all[:len(all)-1])}
		if _, err := k.rows(fewer, "test"); err == nil || !strings.Contains(err.Error(), "rows, this data set has") {
			t.Errorf("%s on fewer rows: %v", k.name, err)
		}
		// The same count, another order: refused by fingerprint, for train
		// and test; "all" takes it.
		other := &Data{Dataset: k.d.Clone()}
		last := other.Len() - 1
		other.X[0], other.X[last] = other.X[last], other.X[0]
		other.Y[0], other.Y[last] = other.Y[last], other.Y[0]
		for _, s := range []string{"train", "test"} {
			if _, err := k.rows(other, s); err == nil || !strings.Contains(err.Error(), "differs: --split "+s) || !strings.Contains(err.Error(), "--test-data FILE") {
				t.Errorf("%s %s on reordered data: %v", k.name, s, err)
			}
		}
		if _, err := k.rows(other, "all"); err != nil {
			t.Errorf("%s all on reordered data: %v", k.name, err)
		}
		// No fingerprint (an old model file): rows only.
		fp := *k.fp
		*k.fp = ""
		if got, err := k.rows(other, "test"); err != nil || !slices.Equal(got, k.sp.Test) {
			t.Errorf("%s without a fingerprint: %v", k.name, err)
		}
		*k.fp = fp
		// No test rows: each kind's advice; train still works.
		test := k.sp.Test
		k.sp.Test = nil
		if _, err := k.rows(k.d, "test"); err == nil || err.Error() != k.noTest {
			t.Errorf("%s without test rows: %v, want %q", k.name, err, k.noTest)
		}
		if _, err := k.rows(k.d, "train"); err != nil {
			t.Errorf("%s train without test rows: %v", k.name, err)
		}
		k.sp.Test = test
		if _, err := k.rows(k.d, "validation"); err == nil || err.Error() != `pipeline: unknown split "validation" (want train, test or all)` {
			t.Errorf("%s validation: %v", k.name, err)
		}
	}
	// Each refuses the other kind's data before looking at the split.
	if _, err := Rows(tab, img, "all"); err == nil {
		t.Error("Rows took images for an Iris model")
	}
	if _, err := ConvRows(cf, iris, "all"); err == nil || !strings.Contains(err.Error(), "not an image data set") {
		t.Errorf("ConvRows on Iris: %v", err)
	}
}
