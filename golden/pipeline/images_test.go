package pipeline

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ptmhw/ptm/golden/dataset"
	"github.com/ptmhw/ptm/golden/modelfile"
)

// writeIDX writes an IDX file of unsigned bytes.
func writeIDX(t *testing.T, path string, dims []uint32, data []byte) {
	t.Helper()
	b := []byte{0, 0, 8, byte(len(dims))}
	for _, d := range dims {
		b = binary.BigEndian.AppendUint32(b, d)
	}
	if err := os.WriteFile(path, append(b, data...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// stripes writes an IDX folder of 4 x 4 images, class 0 a vertical bar
// and class 1 a horizontal one at a position that varies with the image:
// train training images, then test test images.
func stripes(t *testing.T, train, test int) string {
	dir := filepath.Join(t.TempDir(), "stripes")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	part := func(n int, img, lbl string) {
		var px, labels []byte
		for i := 0; i < n; i++ {
			y, pos := i%2, (i/2)%4
			for r := 0; r < 4; r++ {
				for c := 0; c < 4; c++ {
					v := byte(0)
					if (y == 0 && c == pos) || (y == 1 && r == pos) {
						v = 255
					}
					px = append(px, v)
				}
			}
			labels = append(labels, byte(y))
		}
		writeIDX(t, filepath.Join(dir, img), []uint32{uint32(n), 4, 4}, px)
		writeIDX(t, filepath.Join(dir, lbl), []uint32{uint32(n)}, labels)
	}
	part(train, dataset.IDXFiles[0], dataset.IDXFiles[1])
	part(test, dataset.IDXFiles[2], dataset.IDXFiles[3])
	return dir
}

// TestIDXFolderPredefinedSplit: an IDX folder loads through LoadData with
// its own split, which Train uses whatever the test fraction, records in
// the model file, and Rows gives back for --split test.
func TestIDXFolderPredefinedSplit(t *testing.T) {
	dir := stripes(t, 40, 12)
	var read, total int64
	d, err := LoadDataProgress(dir, "", func(r, tot int64) { read, total = r, tot })
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 52 || d.Image != (dataset.ImageShape{Rows: 4, Cols: 4}) || len(d.FixedTrain) != 40 || len(d.FixedTest) != 12 || d.FixedTest[0] != 40 {
		t.Fatalf("%d rows, image %v, fixed split %d/%d", d.Len(), d.Image, len(d.FixedTrain), len(d.FixedTest))
	}
	// 4 files: headers of 16, 8, 16, 8 bytes, 52 images of 16 pixels, 52 labels.
	if want := int64(48 + 52*16 + 52); read != want || total != want {
		t.Errorf("progress %d of %d, want %d", read, total, want)
	}
	p := quickParams()
	p.Epochs = 20
	for _, cfg := range []TrainConfig{{Params: p, SplitSeed: 3}, {Params: p, TestFraction: 0.5}, {Params: p, NoTest: true}} {
		f, err := Train(d, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(f.Split.Train, d.FixedTrain) || !slices.Equal(f.Split.Test, d.FixedTest) || f.Split.Rows != 52 || f.Split.Dataset != "stripes" {
			t.Fatalf("test fraction %v, no test %v: recorded split %+v", cfg.TestFraction, cfg.NoTest, f.Split)
		}
		rows, err := Rows(f, d, "test")
		if err != nil || !slices.Equal(rows, d.FixedTest) {
			t.Fatalf("Rows(test) = %v, %v", rows, err)
		}
	}
	// A single IDX file is refused with a pointer to the folder form.
	_, err = LoadData(filepath.Join(dir, dataset.IDXFiles[0]), "")
	if err == nil || !strings.Contains(err.Error(), "is an IDX file") || !strings.Contains(err.Error(), "give the folder") {
		t.Errorf("one IDX file: %v", err)
	}
}

// TestMNISTThroughPipeline: --data mnist gives the standard split (the
// first 60,000 rows train, the last 10,000 test) to a model trained on a
// few of its rows, and --split test gives back the 10,000 test rows.
func TestMNISTThroughPipeline(t *testing.T) {
	start := time.Now()
	d, err := LoadData(MNIST, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("[progress] MNIST loaded in %v", time.Since(start).Round(time.Millisecond))
	if d.Len() != 70000 || len(d.FixedTrain) != 60000 || len(d.FixedTest) != 10000 || d.FixedTest[0] != 60000 || d.Image.Rows != 28 {
		t.Fatalf("%d rows, split %d/%d", d.Len(), len(d.FixedTrain), len(d.FixedTest))
	}
	p := quickParams()
	p.Epochs, p.Clauses = 1, 2
	// Train on 100 of the training rows (a validation sweep's Rows): the
	// recorded split is still the standard one.
	f, err := Train(d, TrainConfig{Params: p, Thresholds: 1, Rows: d.FixedTrain[:100]})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("[progress] trained on 100 rows at %v", time.Since(start).Round(time.Millisecond))
	if len(f.Split.Train) != 60000 || len(f.Split.Test) != 10000 || f.Split.Dataset != MNIST || f.Split.Rows != 70000 {
		t.Fatalf("recorded split %q %d rows: %d/%d", f.Split.Dataset, f.Split.Rows, len(f.Split.Train), len(f.Split.Test))
	}
	rows, err := Rows(f, d, "test")
	if err != nil || len(rows) != 10000 || rows[0] != 60000 || rows[9999] != 69999 {
		t.Fatalf("Rows(test): %d rows, %v", len(rows), err)
	}
	// What the split record costs in the model file today (the index
	// lists, in the JSON header): reported, for the compact format.
	js, _ := json.Marshal(f.Split)
	b, err := modelfile.Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("split record: %d bytes of JSON of a %d-byte model file", len(js), len(b))
}
