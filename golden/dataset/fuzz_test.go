package dataset

import (
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
