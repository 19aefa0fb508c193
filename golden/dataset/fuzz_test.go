package dataset

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// FuzzReadCSV feeds arbitrary text to the CSV loader: it must never panic;
// it either returns a *ParseError naming a line, or a valid data set. The
// seeds run in plain `go test`; fuzz longer by hand or with
// PTM_LONG_TESTS=1 scripts/fuzz.sh:
//
//	go test ./golden/dataset -run '^$' -fuzz '^FuzzReadCSV$' -fuzztime 10m
func FuzzReadCSV(f *testing.F) {
	for _, s := range []string{
		"a,b,y\n1,2,x\n3,4,z\n",
		"\uFEFFa, b ,y\r\n1e3,-2,x\r\n",
		"species,a,b\nsetosa,1,2\n",
		"a,y\n\"1\",\"x,y\"\n",
		"a,a,y\n1,2,x\n",
		"a,y\n1,x\n2\n",
		"a,y\nNaN,x\n",
		"a,y\n1e999,x\n",
		"a,y\n1,\x00\n",
		"a,y\n1,\"x\n",
		irisCSV[:400],
	} {
		f.Add(s, "")
		f.Add(s, "a")
	}
	f.Fuzz(func(t *testing.T, in, label string) {
		d, err := ReadCSV(strings.NewReader(in), "fuzz.csv", CSVOptions{Label: label})
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T) is not a *ParseError", err, err)
			}
			if !strings.HasPrefix(err.Error(), "fuzz.csv") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("accepted an invalid data set: %v", err)
		}
		if d.Len() == 0 || len(d.Features) == 0 {
			t.Fatalf("accepted an empty data set: %+v", d)
		}
		_ = d.Fingerprint()
	})
}

// FuzzReadIDX feeds arbitrary bytes (plain, and gzipped when gzipIt) to the
// IDX reader as images and as labels: it must never panic; it returns an
// *IDXError naming the file, or arrays whose sizes agree with their
// dimensions. Fuzz longer with
//
//	go test ./golden/dataset -run '^$' -fuzz '^FuzzReadIDX$' -fuzztime 10m
func FuzzReadIDX(f *testing.F) {
	for _, b := range [][]byte{
		threeImages(),
		idxBytes(IDXUint8, []uint32{3}, []byte{1, 2, 9}),
		idxBytes(IDXUint8, []uint32{2}, []byte{1, 12}),
		idxBytes(IDXUint8, []uint32{1, 1, 1}, nil),
		idxBytes(IDXFloat64, []uint32{1}, make([]byte, 8)),
		idxBytes(IDXUint8, []uint32{1 << 30, 1 << 30, 1 << 30}, nil),
		threeImages()[:20],
		{0x1f, 0x8b, 8, 0},
		nil,
	} {
		f.Add(b, false)
		f.Add(b, true)
	}
	f.Fuzz(func(t *testing.T, in []byte, gzipIt bool) {
		if gzipIt {
			in = gz(t, in)
		}
		check := func(err error) {
			var ie *IDXError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v (%T) is not an *IDXError", err, err)
			}
			if !strings.HasPrefix(err.Error(), "fuzz.idx: ") {
				t.Fatalf("error %q does not name the file", err)
			}
		}
		im, err := ReadImages(bytes.NewReader(in), "fuzz.idx")
		if err != nil {
			check(err)
		} else if im.N < 1 || im.Rows < 1 || im.Cols < 1 || len(im.Pixels) != im.N*im.Rows*im.Cols {
			t.Fatalf("accepted %d images of %d x %d with %d pixels", im.N, im.Rows, im.Cols, len(im.Pixels))
		}
		l, err := ReadLabels(bytes.NewReader(in), "fuzz.idx", 10)
		if err != nil {
			check(err)
			return
		}
		if len(l) == 0 {
			t.Fatalf("accepted no labels")
		}
		for _, v := range l {
			if v >= 10 {
				t.Fatalf("accepted label %d with 10 classes", v)
			}
		}
	})
}
