package dataset

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// idxBytes builds an IDX file by hand: magic 0x00 0x00 typ len(dims),
// big-endian dims, then data.
func idxBytes(typ byte, dims []uint32, data []byte) []byte {
	b := []byte{0, 0, typ, byte(len(dims))}
	for _, d := range dims {
		b = binary.BigEndian.AppendUint32(b, d)
	}
	return append(b, data...)
}

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// threeImages are 3 images of 2 x 3 pixels whose pixel (r, c) of image i
// is 100*i + 10*r + c.
func threeImages() []byte {
	var px []byte
	for i := 0; i < 3; i++ {
		for r := 0; r < 2; r++ {
			for c := 0; c < 3; c++ {
				px = append(px, byte(100*i+10*r+c))
			}
		}
	}
	return idxBytes(IDXUint8, []uint32{3, 2, 3}, px)
}

// offsetRE matches the offset of an IDXError's message.
var offsetRE = regexp.MustCompile(`byte offset [0-9]+`)

func TestReadImagesValid(t *testing.T) {
	for _, z := range []bool{false, true} {
		in := threeImages()
		if z {
			in = gz(t, in)
		}
		im, err := ReadImages(bytes.NewReader(in), "x")
		if err != nil {
			t.Fatalf("gzip %v: %v", z, err)
		}
		if im.N != 3 || im.Rows != 2 || im.Cols != 3 || len(im.Pixels) != 18 {
			t.Fatalf("gzip %v: %d x %d x %d, %d pixels", z, im.N, im.Rows, im.Cols, len(im.Pixels))
		}
		// Image 2, row 1, column 2: 200 + 10 + 2.
		if got := im.Pixels[2*6+1*3+2]; got != 212 {
			t.Errorf("gzip %v: pixel (2, 1, 2) = %d, want 212", z, got)
		}
	}
	l, err := ReadLabels(bytes.NewReader(idxBytes(IDXUint8, []uint32{4}, []byte{3, 0, 9, 3})), "l", 10)
	if err != nil || !slices.Equal(l, []byte{3, 0, 9, 3}) {
		t.Errorf("labels %v, %v", l, err)
	}
}

// TestIDXCorrupt feeds every kind of damaged IDX input, plain and gzipped
// and through files (whose size is then known), and checks the error
// names the file, the offset and the problem.
func TestIDXCorrupt(t *testing.T) {
	good := threeImages()
	labels := idxBytes(IDXUint8, []uint32{3}, []byte{1, 2, 3})
	cases := []struct {
		name   string
		in     []byte
		labels bool
		msg    string // substring of the error, offset included
	}{
		{"empty", nil, false, "byte offset 0: truncated: the file ends in the magic number (0 of 4 bytes read)"},
		{"short-magic", []byte{0, 0, 8}, false, "byte offset 3: truncated: the file ends in the magic number"},
		{"wrong-magic", append([]byte{0x50, 0x4b}, good[2:]...), false, "byte offset 0: magic number 50 4b 08 03, want 00 00 08 03: not an IDX file"},
		{"text", []byte("a,b,label\n1,2,3\n"), false, "byte offset 0: magic number 61 2c 62 2c"},
		{"float-type", idxBytes(IDXFloat32, []uint32{1, 1, 1}, []byte{0, 0, 0, 0}), false, "byte offset 2: IDX type 0x0d (float32) is not supported, want 0x08"},
		{"unknown-type", idxBytes(0x42, []uint32{1, 1, 1}, []byte{0}), false, "byte offset 2: unknown IDX type 0x42"},
		{"labels-as-images", labels, false, "byte offset 3: 1 dimensions, want 3 for images (count x rows x columns) (this looks like a labels file)"},
		{"images-as-labels", good, true, "byte offset 3: 3 dimensions, want 1 for labels (count) (this looks like an images file)"},
		{"short-dims", good[:10], false, "byte offset 10: truncated: the file ends in the size of dimension 1 (2 of 4 bytes read)"},
		{"zero-dim", idxBytes(IDXUint8, []uint32{3, 0, 3}, nil), false, "byte offset 8: dimension 1 has size 0"},
		{"truncated-data", good[:len(good)-5], false, "declares 3 images x 2 x 3 = 18 bytes of data"},
		{"extra-data", append(slices.Clone(good), 7), false, "dimensions do not match the file size"},
		{"huge-count", idxBytes(IDXUint8, []uint32{1 << 31, 28, 28}, nil), false, "byte offset 4: 2147483648 images of 28 x 28 = 1683627180032 pixels in all, the limit is 134217728 values"},
		{"huge-image", idxBytes(IDXUint8, []uint32{1, 1 << 16, 2}, nil), false, "byte offset 8: images of 65536 x 2 = 131072 pixels, the limit is 65536 features"},
		{"huge-labels", idxBytes(IDXUint8, []uint32{1<<27 + 1}, nil), true, "byte offset 4: 134217729 labels, the limit is 134217728"},
		{"label-range", idxBytes(IDXUint8, []uint32{4}, []byte{0, 9, 10, 3}), true, "byte offset 10: label 10 (of item 2) is out of range: want 0..9"},
		{"truncated-labels", labels[:9], true, "truncated: the header declares 3 labels = 3 bytes of data after its 8-byte header, the file ends after 1 of them"},
	}
	dir := t.TempDir()
	read := func(in []byte, labels bool, name string) error {
		if labels {
			_, err := ReadLabels(bytes.NewReader(in), name, 10)
			return err
		}
		_, err := ReadImages(bytes.NewReader(in), name)
		return err
	}
	load := func(path string, labels bool) error {
		if labels {
			_, err := LoadLabels(path, 10)
			return err
		}
		_, err := LoadImages(path)
		return err
	}
	check := func(what string, err error, file, msg string) {
		t.Helper()
		var ie *IDXError
		if !errors.As(err, &ie) {
			t.Errorf("%s: %v (%T), want an *IDXError", what, err, err)
			return
		}
		if ie.File != file || !strings.HasPrefix(err.Error(), file+": ") {
			t.Errorf("%s: %q does not name the file %s", what, err, file)
		}
		if !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %q\nwant it to contain %q", what, err, msg)
		}
	}
	for _, c := range cases {
		check(c.name, read(c.in, c.labels, "in.idx"), "in.idx", c.msg)
		// Gzipped, the same errors, saying that offsets are uncompressed.
		check(c.name+" (gzip)", read(gz(t, c.in), c.labels, "in.idx.gz"), "in.idx.gz", offsetRE.ReplaceAllString(c.msg, "$0 (uncompressed)"))
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, c.in, 0o644); err != nil {
			t.Fatal(err)
		}
		err := load(path, c.labels)
		// A file's known size is checked against the header before the
		// data is read: the truncation message differs, the offset and
		// dimensions do not.
		msg := c.msg
		switch c.name {
		case "truncated-data":
			msg = "byte offset 16: the header declares 3 images x 2 x 3 = 18 bytes of data after its 16 bytes, but the file has 29 bytes (13 of data): dimensions do not match the file size"
		case "extra-data":
			msg = "byte offset 16: the header declares 3 images x 2 x 3 = 18 bytes of data after its 16 bytes, but the file has 35 bytes (19 of data)"
		case "truncated-labels":
			msg = "byte offset 8: the header declares 3 labels = 3 bytes of data after its 8 bytes, but the file has 9 bytes (1 of data)"
		}
		check(c.name+" (file)", err, path, msg)
	}
	// A gzip stream cut short, and one with a damaged body.
	z := gz(t, good)
	check("cut gzip", read(z[:len(z)-12], false, "cut.gz"), "cut.gz", "")
	bad := slices.Clone(z)
	bad[len(bad)-6] ^= 0xff // the uncompressed size in the trailer
	if err := read(bad, false, "bad.gz"); err == nil {
		t.Errorf("a gzip file with a damaged trailer was accepted")
	}
	check("gzip header", read([]byte{0x1f, 0x8b, 0}, false, "h.gz"), "h.gz", "bad gzip header")
}

// writeIDXDir writes an IDX data set folder: train and (if test) test
// images of 2 x 3 pixels with the given labels; gzipped when z.
func writeIDXDir(t *testing.T, trainLabels, testLabels []byte, z bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "digits")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) {
		if z {
			name += ".gz"
			b = gz(t, b)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	images := func(n int, base byte) []byte {
		px := make([]byte, n*6)
		for i := range px {
			px[i] = base + byte(i)
		}
		return idxBytes(IDXUint8, []uint32{uint32(n), 2, 3}, px)
	}
	write(IDXFiles[0], images(len(trainLabels), 0))
	write(IDXFiles[1], idxBytes(IDXUint8, []uint32{uint32(len(trainLabels))}, trainLabels))
	if testLabels != nil {
		write(IDXFiles[2], images(len(testLabels), 200))
		write(IDXFiles[3], idxBytes(IDXUint8, []uint32{uint32(len(testLabels))}, testLabels))
	}
	return dir
}

func TestLoadIDXDir(t *testing.T) {
	for _, z := range []bool{false, true} {
		dir := writeIDXDir(t, []byte{7, 2, 7, 9}, []byte{2, 4}, z)
		var last, total int64
		d, err := LoadIDXDir(dir, IDXOptions{Progress: func(r, tot int64) { last, total = r, tot }})
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Validate(); err != nil {
			t.Fatal(err)
		}
		if d.Name != "digits" || d.Len() != 6 || len(d.Features) != 6 || d.Image != (ImageShape{2, 3}) {
			t.Fatalf("gzip %v: %q, %d rows, %d features, image %v", z, d.Name, d.Len(), len(d.Features), d.Image)
		}
		if d.Features[0] != "px_0_0" || d.Features[5] != "px_1_2" {
			t.Errorf("features %v", d.Features)
		}
		// Classes: the label values that occur, ascending.
		if !slices.Equal(d.Classes, []string{"2", "4", "7", "9"}) {
			t.Errorf("classes %v", d.Classes)
		}
		var names []string
		for _, y := range d.Y {
			names = append(names, d.Classes[y])
		}
		if !slices.Equal(names, []string{"7", "2", "7", "9", "2", "4"}) {
			t.Errorf("labels %v", names)
		}
		// Row 1 is training image 1: pixels 6..11; row 5 is test image 1: 206..211.
		if d.X[1][0] != 6 || d.X[1][5] != 11 || d.X[5][0] != 206 || d.X[5][5] != 211 {
			t.Errorf("rows %v %v", d.X[1], d.X[5])
		}
		if p := d.Predefined; p == nil || !slices.Equal(p.Train, []int{0, 1, 2, 3}) || !slices.Equal(p.Test, []int{4, 5}) {
			t.Errorf("predefined split %+v", d.Predefined)
		}
		if last != total || total <= 0 {
			t.Errorf("progress ended at %d of %d", last, total)
		}
		// Rows do not share memory: appending to one leaves the next alone.
		_ = append(d.X[0], -1)
		if d.X[1][0] != 6 {
			t.Errorf("append to row 0 changed row 1")
		}
		c := d.Clone()
		if c.Predefined == nil || c.Image != d.Image || d.Subset([]int{0}).Predefined != nil {
			t.Errorf("Clone/Subset: predefined %v image %v", c.Predefined, c.Image)
		}
	}
	// "." is named after the folder it is.
	t.Chdir(writeIDXDir(t, []byte{1}, nil, true))
	if d, err := LoadIDXDir(".", IDXOptions{}); err != nil || d.Name != "digits" {
		t.Errorf("LoadIDXDir(\".\"): %v", err)
	}
	// Without test files: no predefined split; with named classes.
	dir := writeIDXDir(t, []byte{0, 1, 1}, nil, false)
	d, err := LoadIDXDir(dir, IDXOptions{Classes: []string{"cat", "dog"}})
	if err != nil {
		t.Fatal(err)
	}
	if d.Predefined != nil || d.Len() != 3 || !slices.Equal(d.Classes, []string{"cat", "dog"}) || d.Y[2] != 1 {
		t.Errorf("train only: %+v", d)
	}
	if _, err := LoadIDXDir(dir, IDXOptions{Classes: []string{"cat"}}); err == nil || !strings.Contains(err.Error(), "label 1 (of item 1) is out of range: want 0..0") {
		t.Errorf("label beyond the classes: %v", err)
	}
}

func TestLoadIDXDirErrors(t *testing.T) {
	dir := writeIDXDir(t, []byte{1, 2, 3}, []byte{1, 2}, false)
	rewrite := func(i int, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, IDXFiles[i]), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Count mismatch: 3 training images, 2 labels.
	rewrite(1, idxBytes(IDXUint8, []uint32{2}, []byte{1, 2}))
	_, err := LoadIDXDir(dir, IDXOptions{})
	if err == nil || !strings.Contains(err.Error(), "train-images-idx3-ubyte has 3 images but") || !strings.Contains(err.Error(), "train-labels-idx1-ubyte has 2 labels") {
		t.Errorf("count mismatch: %v", err)
	}
	rewrite(1, idxBytes(IDXUint8, []uint32{3}, []byte{1, 2, 3}))
	// Test images of another size.
	rewrite(2, idxBytes(IDXUint8, []uint32{2, 3, 2}, make([]byte, 12)))
	if _, err := LoadIDXDir(dir, IDXOptions{}); err == nil || !strings.Contains(err.Error(), "has 3 x 2 images but") {
		t.Errorf("size mismatch: %v", err)
	}
	// A damaged file names itself.
	rewrite(2, []byte{0, 0, 8})
	var ie *IDXError
	if _, err := LoadIDXDir(dir, IDXOptions{}); !errors.As(err, &ie) || filepath.Base(ie.File) != IDXFiles[2] {
		t.Errorf("damaged test images: %v", err)
	}
	// Both plain and gzipped.
	rewrite(2, idxBytes(IDXUint8, []uint32{2, 2, 3}, make([]byte, 12)))
	if err := os.WriteFile(filepath.Join(dir, IDXFiles[2]+".gz"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadIDXDir(dir, IDXOptions{}); err == nil || !strings.Contains(err.Error(), "both t10k-images-idx3-ubyte and t10k-images-idx3-ubyte.gz exist") {
		t.Errorf("both: %v", err)
	}
	os.Remove(filepath.Join(dir, IDXFiles[2]+".gz"))
	// Test labels without test images.
	os.Remove(filepath.Join(dir, IDXFiles[2]))
	if _, err := LoadIDXDir(dir, IDXOptions{}); err == nil || !strings.Contains(err.Error(), "one of them is missing") {
		t.Errorf("half a test set: %v", err)
	}
	// No training files; not a folder.
	if _, err := LoadIDXDir(t.TempDir(), IDXOptions{}); err == nil || !strings.Contains(err.Error(), "no train-images-idx3-ubyte[.gz] and train-labels-idx1-ubyte[.gz]") {
		t.Errorf("empty folder: %v", err)
	}
	if _, err := LoadIDXDir(filepath.Join(dir, IDXFiles[0]), IDXOptions{}); err == nil || !strings.Contains(err.Error(), "is not a folder") {
		t.Errorf("a file: %v", err)
	}
}

// TestIDXAllocationBounded: a header that declares the most data the
// limits allow (2^27 pixels) on a stream of 100 bytes, size unknown
// (gzipped, or a plain reader), is refused after allocating about what
// the stream holds (at most the 1 MiB first buffer), not 128 MiB.
func TestIDXAllocationBounded(t *testing.T) {
	n := uint32(MaxCells / 784)
	in := idxBytes(IDXUint8, []uint32{n, 28, 28}, make([]byte, 100))
	for _, z := range []bool{false, true} {
		b := in
		if z {
			b = gz(t, in)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := ReadImages(struct{ io.Reader }{bytes.NewReader(b)}, "big")
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), "truncated") {
			t.Fatalf("gzip %v: %v", z, err)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 4<<20 {
			t.Errorf("gzip %v: %d bytes allocated for a 100-byte body", z, got)
		}
	}
}
