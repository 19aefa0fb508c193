package dataset

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// CSVOptions controls how [ReadCSV] and [LoadCSV] interpret a file.
type CSVOptions struct {
	// Label is the name of the label column. Empty means the last column.
	Label string
	// Classes, when non-empty, fixes the class names and their order: Y
	// indexes this list, and a label not in it is an error. When empty, the
	// classes are the distinct labels in order of first appearance.
	Classes []string
	// Progress, if set, is called about every MiB read and at the end
	// with the bytes read so far and the input size (-1 when unknown).
	Progress func(read, total int64)
}

// ParseError describes malformed CSV input. Every error returned by
// [ReadCSV] and [LoadCSV] for bad file content is a *ParseError; use
// errors.As to inspect it.
type ParseError struct {
	File   string // the path given to LoadCSV, or the name given to ReadCSV
	Line   int    // 1-based line number of the offending row
	Column string // column name, or "" when the error is not about one column
	Msg    string // what is wrong
	Err    error  // underlying error, if any (e.g. from encoding/csv)
	Hint   string // what to do about it, when there is a likely fix
}

// Error formats the error as "file:line: column "name": msg[: err][ (hint)]".
func (e *ParseError) Error() string {
	var b strings.Builder
	file := e.File
	if file == "" {
		file = "<input>"
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, "%s:%d: ", file, e.Line)
	} else {
		fmt.Fprintf(&b, "%s: ", file)
	}
	if e.Column != "" {
		fmt.Fprintf(&b, "column %q: ", e.Column)
	}
	b.WriteString(e.Msg)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	if e.Hint != "" {
		b.WriteString(" (" + e.Hint + ")")
	}
	return b.String()
}

// Unwrap returns the underlying error, if any.
func (e *ParseError) Unwrap() error { return e.Err }

// LoadCSV reads the CSV file at path; see [ReadCSV] for the format. The
// dataset is named after the file's base name without its extension, and
// parse errors name the file by path.
func LoadCSV(path string, opt CSVOptions) (*Dataset, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	defer f.Close()
	total := int64(-1)
	if fi, err := f.Stat(); err == nil {
		if fi.IsDir() {
			return nil, &ParseError{File: path, Msg: "is a directory, not a CSV file"}
		}
		if fi.Mode().IsRegular() {
			total = fi.Size()
			if total > MaxCSVBytes {
				return nil, &ParseError{File: path, Msg: fmt.Sprintf("the file has %d bytes, the limit of a CSV file is %d", total, MaxCSVBytes)}
			}
		}
	}
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	return readCSV(newGuard(f, path, total, opt.Progress), path, name, opt)
}

// ReadCSV reads a dataset in CSV form from r. name is used both as the
// dataset's Name and as the file name in errors.
//
// The first row is the header and names the columns; names are trimmed of
// surrounding white space (and a leading UTF-8 byte-order mark) and must be
// non-empty and unique. The label column is opt.Label, or the last column
// when opt.Label is empty; every other column is a feature, in file order.
// Feature cells must parse as finite float64 values (surrounding white space
// is ignored; NaN, Inf and out-of-range values are rejected). Label cells
// are trimmed and must be non-empty. Blank lines are skipped. At least one
// feature column and one data row are required.
//
// Any malformed input gives a [*ParseError] naming the line (and column
// where relevant); reading stops at the first error.
func ReadCSV(r io.Reader, name string, opt CSVOptions) (*Dataset, error) {
	return readCSV(newGuard(r, name, -1, opt.Progress), name, name, opt)
}

func readCSV(r io.Reader, file, name string, opt CSVOptions) (*Dataset, error) {
	classIndex := make(map[string]int, len(opt.Classes))
	for i, c := range opt.Classes {
		if c == "" {
			return nil, fmt.Errorf("dataset: %s: CSVOptions.Classes[%d] is empty", file, i)
		}
		if _, dup := classIndex[c]; dup {
			return nil, fmt.Errorf("dataset: %s: CSVOptions.Classes has duplicate class %q", file, c)
		}
		classIndex[c] = i
	}
	fixed := len(opt.Classes) > 0

	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // ragged rows are reported by us, with the column count
	cr.ReuseRecord = true

	perr := func(line int, col, format string, args ...any) *ParseError {
		return &ParseError{File: file, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
	}
	read := func() ([]string, int, error) {
		rec, err := cr.Read()
		if err != nil {
			var pe *ParseError // from the guard
			if errors.As(err, &pe) {
				return nil, 0, pe
			}
			var ce *csv.ParseError
			if errors.As(err, &ce) {
				return nil, 0, &ParseError{File: file, Line: ce.Line, Msg: "malformed CSV", Err: ce.Err}
			}
			if err == io.EOF {
				return nil, 0, io.EOF
			}
			return nil, 0, fmt.Errorf("dataset: read %s: %w", file, err)
		}
		line, _ := cr.FieldPos(0)
		return rec, line, nil
	}

	header, headerLine, err := read()
	if err == io.EOF {
		return nil, perr(1, "", "empty file: expected a header row")
	}
	if err != nil {
		return nil, err
	}
	// A file with CR-only line endings (classic Mac) reads as one line:
	// the header then holds CRs inside its fields. Say so, instead of
	// the duplicate or missing names that follow from it.
	for _, h := range header {
		if strings.Contains(h, "\r") {
			return nil, perr(headerLine, "", "the header holds a carriage return (CR) inside a field: the file has CR-only line endings (classic Mac)? Convert them to LF or CRLF")
		}
	}
	if len(header) > MaxColumns {
		return nil, perr(headerLine, "", "header has %d columns, the limit is %d", len(header), MaxColumns)
	}
	names := make([]string, len(header))
	seen := make(map[string]int, len(header))
	for i, h := range header {
		if i == 0 {
			h = strings.TrimPrefix(h, "\uFEFF")
		}
		h = strings.TrimSpace(h)
		if h == "" {
			return nil, perr(headerLine, "", "header: column %d has an empty name", i+1)
		}
		if err := checkName(h); err != nil {
			return nil, perr(headerLine, "", "header: column %d: name %q: %v", i+1, h, err)
		}
		if j, dup := seen[h]; dup {
			return nil, perr(headerLine, h, "header: duplicate column name (columns %d and %d)", j+1, i+1)
		}
		seen[h] = i
		names[i] = h
	}
	labelCol := len(names) - 1
	if opt.Label != "" {
		c, ok := seen[opt.Label]
		if !ok {
			return nil, perr(headerLine, opt.Label, "label column not found in header %q", names)
		}
		labelCol = c
	}
	if len(names) < 2 {
		return nil, perr(headerLine, "", "header has no feature columns besides the label column %q", names[labelCol])
	}

	d := &Dataset{Name: name, Features: make([]string, 0, len(names)-1)}
	for i, n := range names {
		if i != labelCol {
			d.Features = append(d.Features, n)
		}
	}
	if fixed {
		d.Classes = append([]string(nil), opt.Classes...)
	}

	for {
		rec, line, err := read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(rec) != len(names) {
			return nil, perr(line, "", "row has %d fields, header has %d", len(rec), len(names))
		}
		if (len(d.Y)+1)*len(d.Features) > MaxCells {
			return nil, perr(line, "", "more than %d values (rows x feature columns): the data set is too large", MaxCells)
		}
		row := make([]float64, 0, len(d.Features))
		for i, cell := range rec {
			if i == labelCol {
				continue
			}
			s := strings.TrimSpace(cell)
			v, err := strconv.ParseFloat(s, 64)
			switch {
			case errors.Is(err, strconv.ErrRange):
				return nil, perr(line, names[i], "value %q is out of float64 range", s)
			case err != nil && opt.Label == "" && len(d.Y) == 0 && s != "": // first row: perhaps the label is elsewhere
				pe := perr(line, names[i], "invalid number %q", s)
				pe.Hint = fmt.Sprintf("the label is the last column (%q) unless named: if %q is the label, give --label %s", names[labelCol], names[i], names[i])
				return nil, pe
			case err != nil:
				return nil, perr(line, names[i], "invalid number %q", s)
			case math.IsNaN(v) || math.IsInf(v, 0):
				return nil, perr(line, names[i], "non-finite value %q", s)
			}
			row = append(row, v)
		}
		label := strings.TrimSpace(rec[labelCol])
		if label == "" {
			return nil, perr(line, names[labelCol], "empty label")
		}
		y, ok := classIndex[label]
		if !ok {
			if fixed {
				return nil, perr(line, names[labelCol], "unknown class %q (classes: %q)", label, opt.Classes)
			}
			if err := checkName(label); err != nil {
				return nil, perr(line, names[labelCol], "label %q (class %d): %v", label, len(d.Classes), err)
			}
			y = len(d.Classes)
			classIndex[label] = y
			d.Classes = append(d.Classes, label)
		}
		d.X = append(d.X, row)
		d.Y = append(d.Y, y)
	}
	if len(d.Y) == 0 {
		return nil, perr(headerLine, "", "no data rows after the header")
	}
	return d, nil
}
