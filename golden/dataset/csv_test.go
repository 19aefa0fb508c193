package dataset

import (
	"encoding/csv"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestReadCSV(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		opt   CSVOptions
		want  *Dataset
		wantX [][]float64
	}{
		{
			name: "last column label, classes by first appearance",
			in:   "a,b,cls\n1,2,yes\n3,4.5,no\n-1e3,0,yes\n",
			want: &Dataset{
				Name: "t", Features: []string{"a", "b"}, Classes: []string{"yes", "no"},
				X: [][]float64{{1, 2}, {3, 4.5}, {-1000, 0}}, Y: []int{0, 1, 0},
			},
		},
		{
			name: "label by name in the middle, fixed classes",
			in:   "a,cls,b\n1,no,2\n3,yes,4\n",
			opt:  CSVOptions{Label: "cls", Classes: []string{"yes", "no", "maybe"}},
			want: &Dataset{
				Name: "t", Features: []string{"a", "b"}, Classes: []string{"yes", "no", "maybe"},
				X: [][]float64{{1, 2}, {3, 4}}, Y: []int{1, 0},
			},
		},
		{
			name: "BOM, CRLF, spaces, quotes and blank lines",
			in:   "\uFEFF a ,\"b\",y\r\n\r\n 1.5 ,\" 2\",  cat \r\n\n0x1p-2,3,dog\r\n",
			want: &Dataset{
				Name: "t", Features: []string{"a", "b"}, Classes: []string{"cat", "dog"},
				X: [][]float64{{1.5, 2}, {0.25, 3}}, Y: []int{0, 1},
			},
		},
		{
			name: "no trailing newline",
			in:   "f,y\n7,a",
			want: &Dataset{
				Name: "t", Features: []string{"f"}, Classes: []string{"a"},
				X: [][]float64{{7}}, Y: []int{0},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadCSV(strings.NewReader(tc.in), "t", tc.opt)
			if err != nil {
				t.Fatalf("ReadCSV: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ReadCSV =\n%+v\nwant\n%+v", got, tc.want)
			}
			if err := got.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

func TestReadCSVErrors(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		opt     CSVOptions
		line    int
		column  string
		msg     string // exact ParseError.Msg
		wantErr error  // optional errors.Is target
	}{
		{name: "empty file", in: "", line: 1, msg: "empty file: expected a header row"},
		{name: "only blank lines", in: "\n\n", line: 1, msg: "empty file: expected a header row"},
		{name: "header only", in: "a,b,y\n", line: 1, msg: "no data rows after the header"},
		{name: "header only after blank lines", in: "\n\na,y\n\n", line: 3, msg: "no data rows after the header"},
		{name: "ragged short row", in: "a,b,y\n1,2,x\n1,x\n", line: 3, msg: "row has 2 fields, header has 3"},
		{name: "ragged long row", in: "a,b,y\n1,2,x,4\n", line: 2, msg: "row has 4 fields, header has 3"},
		{name: "non-numeric", in: "a,b,y\n1,2,x\n3,abc,x\n", line: 3, column: "b", msg: `invalid number "abc"`},
		{name: "empty cell", in: "a,b,y\n1,,x\n", line: 2, column: "b", msg: `invalid number ""`},
		{name: "NaN", in: "a,b,y\nNaN,1,x\n", line: 2, column: "a", msg: `non-finite value "NaN"`},
		{name: "Inf", in: "a,b,y\n1,-Inf,x\n", line: 2, column: "b", msg: `non-finite value "-Inf"`},
		{name: "overflow", in: "a,b,y\n1,2,x\n1e400,2,x\n", line: 3, column: "a", msg: `value "1e400" is out of float64 range`},
		{name: "missing label column", in: "a,b,y\n1,2,x\n", opt: CSVOptions{Label: "species"}, line: 1, column: "species",
			msg: `label column not found in header ["a" "b" "y"]`},
		{name: "duplicate header", in: "a,b,a,y\n1,2,3,x\n", line: 1, column: "a", msg: "header: duplicate column name (columns 1 and 3)"},
		{name: "duplicate header after trim", in: "a, b ,b ,y\n1,2,3,x\n", line: 1, column: "b", msg: "header: duplicate column name (columns 2 and 3)"},
		{name: "empty header name", in: "a,,y\n1,2,x\n", line: 1, msg: "header: column 2 has an empty name"},
		{name: "label only", in: "y\nx\n", line: 1, msg: `header has no feature columns besides the label column "y"`},
		{name: "unknown class", in: "a,y\n1,cat\n2,dog\n3,cow\n", opt: CSVOptions{Classes: []string{"cat", "dog"}}, line: 4, column: "y",
			msg: `unknown class "cow" (classes: ["cat" "dog"])`},
		{name: "empty label", in: "a,y\n1,cat\n2, \n", line: 3, column: "y", msg: "empty label"},
		{name: "bare quote", in: "a,y\n1,cat\n2,d\"og\n", line: 3, msg: "malformed CSV", wantErr: csv.ErrBareQuote},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ReadCSV(strings.NewReader(tc.in), "data.csv", tc.opt)
			if err == nil {
				t.Fatalf("ReadCSV succeeded with %+v, want error", d)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T) is not a *ParseError", err, err)
			}
			if pe.File != "data.csv" || pe.Line != tc.line || pe.Column != tc.column || pe.Msg != tc.msg {
				t.Errorf("got ParseError{File:%q Line:%d Column:%q Msg:%q}, want {File:%q Line:%d Column:%q Msg:%q}",
					pe.File, pe.Line, pe.Column, pe.Msg, "data.csv", tc.line, tc.column, tc.msg)
			}
			if !strings.HasPrefix(err.Error(), "data.csv:") {
				t.Errorf("Error() = %q does not start with the file name", err)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("errors.Is(%v, %v) = false", err, tc.wantErr)
			}
		})
	}
}

func TestParseErrorString(t *testing.T) {
	tests := []struct {
		err  *ParseError
		want string
	}{
		{&ParseError{File: "x.csv", Line: 3, Column: "b", Msg: `invalid number "q"`}, `x.csv:3: column "b": invalid number "q"`},
		{&ParseError{File: "x.csv", Line: 1, Msg: "empty file"}, "x.csv:1: empty file"},
		{&ParseError{Line: 2, Msg: "malformed CSV", Err: csv.ErrQuote}, `<input>:2: malformed CSV: extraneous or missing " in quoted-field`},
	}
	for _, tc := range tests {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

func TestReadCSVBadOptions(t *testing.T) {
	for _, classes := range [][]string{{"a", "a"}, {"a", ""}} {
		_, err := ReadCSV(strings.NewReader("f,y\n1,a\n"), "t", CSVOptions{Classes: classes})
		if err == nil || !strings.Contains(err.Error(), "CSVOptions.Classes") {
			t.Errorf("Classes %q: err = %v, want a CSVOptions.Classes error", classes, err)
		}
	}
}

func TestLoadCSV(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "small.csv")
	if err := os.WriteFile(good, []byte("u,v,label\n1,2,p\n3,4,q\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := LoadCSV(good, CSVOptions{})
	if err != nil {
		t.Fatalf("LoadCSV: %v", err)
	}
	if d.Name != "small" || d.Len() != 2 || !reflect.DeepEqual(d.Classes, []string{"p", "q"}) {
		t.Errorf("LoadCSV = %+v", d)
	}

	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("u,v,label\n1,2,p\n3,oops,q\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = LoadCSV(bad, CSVOptions{})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.File != bad || pe.Line != 3 || pe.Column != "v" {
		t.Errorf("LoadCSV(bad) err = %v, want ParseError at %s:3 column v", err, bad)
	}

	_, err = LoadCSV(filepath.Join(dir, "missing.csv"), CSVOptions{})
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "missing.csv") {
		t.Errorf("LoadCSV(missing) err = %v, want wrapped fs.ErrNotExist naming the file", err)
	}
}
