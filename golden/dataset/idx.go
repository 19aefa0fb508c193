package dataset

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// IDX files (the format of MNIST and Fashion-MNIST) hold one array: a
// 4-byte magic number 0x00 0x00 TYPE NDIMS, then NDIMS dimension sizes as
// big-endian uint32, then the values in row-major order. This package
// reads arrays of unsigned bytes (TYPE 0x08): images (3 dimensions: count,
// rows, columns) and labels (1 dimension: count). A file may be gzip
// compressed (it is recognized by its first two bytes, 0x1f 0x8b); byte
// offsets in errors then count uncompressed bytes.

// IDX type codes (the third byte of the magic number).
const (
	IDXUint8   = 0x08 // unsigned byte: the only type this package reads
	IDXInt8    = 0x09 // signed byte
	IDXInt16   = 0x0B // short (2 bytes)
	IDXInt32   = 0x0C // int (4 bytes)
	IDXFloat32 = 0x0D // float (4 bytes)
	IDXFloat64 = 0x0E // double (8 bytes)
)

// idxTypeNames names the IDX types for messages.
var idxTypeNames = map[byte]string{
	IDXUint8: "unsigned byte", IDXInt8: "signed byte", IDXInt16: "int16",
	IDXInt32: "int32", IDXFloat32: "float32", IDXFloat64: "float64",
}

// IDXError describes a malformed IDX file. Every error that [ReadImages],
// [ReadLabels], [LoadImages], [LoadLabels] and [LoadIDXDir] return for bad
// file content is an *IDXError; use errors.As to inspect it.
type IDXError struct {
	File   string // the path given to a Load function, or the name given to a Read function
	Offset int64  // byte offset of the problem (uncompressed when the file is gzipped); -1 when none applies
	Gzip   bool   // the file is gzip-compressed (Offset counts uncompressed bytes)
	Msg    string // what is wrong
	Err    error  // underlying error (I/O, gzip), if any
}

// Error formats the error as "file: byte offset N: msg[: err]".
func (e *IDXError) Error() string {
	s := e.File
	if s == "" {
		s = "<input>"
	}
	if e.Offset >= 0 {
		s += fmt.Sprintf(": byte offset %d", e.Offset)
		if e.Gzip {
			s += " (uncompressed)"
		}
	}
	s += ": " + e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error, if any.
func (e *IDXError) Unwrap() error { return e.Err }

// Images is a set of equally sized grey-scale images read from an IDX
// file: image i's pixel (r, c) is Pixels[i*Rows*Cols + r*Cols + c].
type Images struct {
	N, Rows, Cols int
	Pixels        []byte
}

// idxReader reads one IDX array, counting the bytes it has read.
type idxReader struct {
	r    io.Reader
	file string
	gz   bool
	off  int64  // bytes read so far
	size int64  // uncompressed size when known (plain regular file, or bytes), else -1
	src  []byte // the whole input, when it is in memory: data is sliced from it, not copied
}

func (x *idxReader) errf(off int64, err error, format string, args ...any) *IDXError {
	return &IDXError{File: x.file, Offset: off, Gzip: x.gz, Msg: fmt.Sprintf(format, args...), Err: err}
}

// full reads len(p) bytes; what names the field for a truncation error.
func (x *idxReader) full(p []byte, what string) error {
	n, err := io.ReadFull(x.r, p)
	x.off += int64(n)
	if err == nil {
		return nil
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return x.errf(x.off, nil, "truncated: the file ends in the %s (%d of %d bytes read)", what, n, len(p))
	}
	return x.errf(x.off, err, "reading the %s", what)
}

// header reads the magic number and the dimensions, checks them against
// want dimensions of unsigned bytes (kind names the array for messages)
// and returns the dimensions.
func (x *idxReader) header(want int, kind string) ([]int, error) {
	var m [4]byte
	if err := x.full(m[:], "magic number"); err != nil {
		return nil, err
	}
	if m[0] != 0 || m[1] != 0 {
		return nil, x.errf(0, nil, "magic number %02x %02x %02x %02x, want 00 00 08 %02x: not an IDX file", m[0], m[1], m[2], m[3], want)
	}
	if m[2] != IDXUint8 {
		name, ok := idxTypeNames[m[2]]
		if !ok {
			return nil, x.errf(2, nil, "unknown IDX type 0x%02x, want 0x08 (unsigned byte)", m[2])
		}
		return nil, x.errf(2, nil, "IDX type 0x%02x (%s) is not supported, want 0x08 (unsigned byte)", m[2], name)
	}
	if int(m[3]) != want {
		hint := ""
		switch {
		case m[3] == 1 && want == 3:
			hint = " (this looks like a labels file)"
		case m[3] == 3 && want == 1:
			hint = " (this looks like an images file)"
		}
		return nil, x.errf(3, nil, "%d dimensions, want %d for %s%s", m[3], want, kind, hint)
	}
	dims := make([]int, want)
	var b [4]byte
	for i := range dims {
		if err := x.full(b[:], fmt.Sprintf("size of dimension %d", i)); err != nil {
			return nil, err
		}
		dims[i] = int(binary.BigEndian.Uint32(b[:]))
		if dims[i] == 0 {
			return nil, x.errf(x.off-4, nil, "dimension %d has size 0: no data", i)
		}
	}
	return dims, nil
}

// data reads n bytes of values that start at the current offset (the
// header declared them as desc) and checks that nothing follows them. It
// allocates no more than the input actually holds: at once when the size
// is known (and matches), else growing as the data arrives.
func (x *idxReader) data(n int64, desc string) ([]byte, error) {
	start := x.off
	if x.size >= 0 && x.size != start+n {
		return nil, x.errf(start, nil, "the header declares %s = %d bytes of data after its %d bytes, but the file has %d bytes (%d of data): dimensions do not match the file size",
			desc, n, start, x.size, x.size-start)
	}
	if x.src != nil {
		x.off += n
		return x.src[start : start+n : start+n], nil
	}
	c := n
	if x.size < 0 {
		c = min(n, 1<<20)
	}
	buf := make([]byte, 0, c)
	for int64(len(buf)) < n {
		if len(buf) == cap(buf) {
			nb := make([]byte, len(buf), min(2*int64(cap(buf)), n))
			copy(nb, buf)
			buf = nb
		}
		k, err := x.r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+k]
		x.off += int64(k)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, x.errf(x.off, err, "reading the data")
		}
	}
	if int64(len(buf)) < n {
		return nil, x.errf(x.off, nil, "truncated: the header declares %s = %d bytes of data after its %d-byte header, the file ends after %d of them: dimensions do not match the file size",
			desc, n, start, len(buf))
	}
	var one [1]byte
	k, err := io.ReadFull(x.r, one[:])
	if k > 0 {
		return nil, x.errf(x.off, nil, "data beyond the %s = %d bytes the header declares: dimensions do not match the file size", desc, n)
	}
	if err != nil && err != io.EOF {
		return nil, x.errf(x.off, err, "reading past the data")
	}
	return buf, nil
}

// ReadImages reads an IDX array of unsigned bytes with 3 dimensions (count
// x rows x columns: images) from r, gzip-compressed or not. name is the
// file name in errors. The dimensions are checked against [MaxColumns]
// (pixels per image) and [MaxCells] (pixels in all) before anything of
// their size is allocated, and the data must end exactly where they say.
func ReadImages(r io.Reader, name string) (*Images, error) {
	return readImages(r, name, -1)
}

func readImages(r io.Reader, name string, size int64) (*Images, error) {
	x, err := newIDXReader(r, name, size)
	if err != nil {
		return nil, err
	}
	return x.images()
}

// inMemory returns a reader of the uncompressed IDX content b (named name
// in errors) whose arrays are slices of b.
func inMemory(b []byte, name string) *idxReader {
	return &idxReader{r: bytes.NewReader(b), file: name, size: int64(len(b)), src: b}
}

// images reads an images array (see ReadImages).
func (x *idxReader) images() (*Images, error) {
	dims, err := x.header(3, "images (count x rows x columns)")
	if err != nil {
		return nil, err
	}
	n, rows, cols := dims[0], dims[1], dims[2]
	px := int64(rows) * int64(cols)
	if px > MaxColumns {
		return nil, x.errf(8, nil, "images of %d x %d = %d pixels, the limit is %d features", rows, cols, px, MaxColumns)
	}
	if int64(n)*px > MaxCells {
		return nil, x.errf(4, nil, "%d images of %d x %d = %d pixels in all, the limit is %d values", n, rows, cols, int64(n)*px, MaxCells)
	}
	data, err := x.data(int64(n)*px, fmt.Sprintf("%d images x %d x %d", n, rows, cols))
	if err != nil {
		return nil, err
	}
	return &Images{N: n, Rows: rows, Cols: cols, Pixels: data}, nil
}

// ReadLabels reads an IDX array of unsigned bytes with 1 dimension
// (labels) from r, gzip-compressed or not; name is the file name in
// errors. If classes > 0, every label must be below it (an error names the
// offset of the first that is not). The count is checked against
// [MaxCells] before anything of its size is allocated.
func ReadLabels(r io.Reader, name string, classes int) ([]byte, error) {
	return readLabels(r, name, -1, classes)
}

func readLabels(r io.Reader, name string, size int64, classes int) ([]byte, error) {
	x, err := newIDXReader(r, name, size)
	if err != nil {
		return nil, err
	}
	return x.labels(classes)
}

// labels reads a labels array (see ReadLabels).
func (x *idxReader) labels(classes int) ([]byte, error) {
	dims, err := x.header(1, "labels (count)")
	if err != nil {
		return nil, err
	}
	if dims[0] > MaxCells {
		return nil, x.errf(4, nil, "%d labels, the limit is %d", dims[0], MaxCells)
	}
	start := x.off
	data, err := x.data(int64(dims[0]), fmt.Sprintf("%d labels", dims[0]))
	if err != nil {
		return nil, err
	}
	if classes > 0 {
		for i, l := range data {
			if int(l) >= classes {
				return nil, x.errf(start+int64(i), nil, "label %d (of item %d) is out of range: want 0..%d", l, i, classes-1)
			}
		}
	}
	return data, nil
}

// newIDXReader wraps r, decompressing it when it starts with the gzip
// magic bytes (size, the plain size when known, is then dropped).
func newIDXReader(r io.Reader, name string, size int64) (*idxReader, error) {
	br := bufio.NewReader(r)
	head, err := br.Peek(2)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, &IDXError{File: name, Offset: 0, Msg: "reading the file", Err: err}
	}
	if len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, &IDXError{File: name, Offset: -1, Msg: "bad gzip header", Err: err}
		}
		return &idxReader{r: gzipErrors{zr}, file: name, gz: true, size: -1}, nil
	}
	return &idxReader{r: br, file: name, size: size}, nil
}

// gzipErrors turns the io.ErrUnexpectedEOF of a cut gzip stream into an
// error that says so (io.ReadFull would otherwise report a plain
// truncation of the uncompressed data, which is also true).
type gzipErrors struct{ r io.Reader }

func (g gzipErrors) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = fmt.Errorf("gzip stream cut short: %w", err)
	}
	return n, err
}

// openIDX opens path and returns it with its size (-1 when not a regular
// file) and a reader that reports progress.
func openIDX(path string, progress func(n int64)) (*os.File, io.Reader, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("dataset: %w", err)
	}
	size := int64(-1)
	if fi, err := f.Stat(); err == nil {
		if fi.IsDir() {
			f.Close()
			return nil, nil, 0, &IDXError{File: path, Offset: -1, Msg: "is a directory, not an IDX file"}
		}
		if fi.Mode().IsRegular() {
			size = fi.Size()
		}
	}
	var r io.Reader = f
	if progress != nil {
		r = &countingReader{r: f, progress: progress}
	}
	return f, r, size, nil
}

// countingReader reports the bytes read through it.
type countingReader struct {
	r        io.Reader
	progress func(n int64)
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.progress(int64(n))
	}
	return n, err
}

// LoadImages reads the IDX images file at path (see [ReadImages]); errors
// name the file by path. An uncompressed file's size is checked against
// its header before the data is allocated.
func LoadImages(path string) (*Images, error) {
	f, r, size, err := openIDX(path, nil)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readImages(r, path, size)
}

// LoadLabels reads the IDX labels file at path (see [ReadLabels]); errors
// name the file by path.
func LoadLabels(path string, classes int) ([]byte, error) {
	f, r, size, err := openIDX(path, nil)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLabels(r, path, size, classes)
}
