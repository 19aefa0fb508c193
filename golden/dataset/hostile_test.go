package dataset

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCSVHostileInputs(t *testing.T) {
	wide := "c0" + strings.Repeat(",c", 0)
	{
		var b strings.Builder
		for i := 0; i <= MaxColumns; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("c")
			b.WriteString(strings.Repeat("x", i%3))
			b.WriteString(string(rune('a' + i%26)))
			b.WriteString(itoa(i))
		}
		wide = b.String() + "\n"
	}
	cases := []struct {
		name string
		r    io.Reader
		opt  CSVOptions
		msg  string
	}{
		{"nul", strings.NewReader("a,b\n1,x\n2,\x00y\n"), CSVOptions{}, "data.csv:3: binary data (a NUL byte at byte offset 10)"},
		{"zero", io.LimitReader(zeros{}, 1<<40), CSVOptions{}, "data.csv:1: binary data (a NUL byte at byte offset 0)"},
		{"long-line", io.LimitReader(letters{}, 1<<40), CSVOptions{}, "data.csv:1: line longer than 16777216 bytes"},
		{"wide", strings.NewReader(wide), CSVOptions{}, "data.csv:1: header has 65537 columns, the limit is 65536"},
		{"label-first", strings.NewReader("species,a,b\nsetosa,1,2\n"), CSVOptions{}, `data.csv:2: column "species": invalid number "setosa" (the label is the last column ("b") unless named: if "species" is the label, give --label species)`},
	}
	for _, c := range cases {
		_, err := ReadCSV(c.r, "data.csv", c.opt)
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want a ParseError with %q", c.name, err, c.msg)
		}
	}
	if d, err := ReadCSV(strings.NewReader("species,a,b\nsetosa,1,2\n"), "data.csv", CSVOptions{Label: "species"}); err != nil || d.Classes[0] != "setosa" {
		t.Errorf("with the label named: %v", err)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

type letters struct{}

func (letters) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

func TestLoadCSVDevices(t *testing.T) {
	for _, dev := range []string{"/dev/zero", "/dev/urandom"} {
		if _, err := os.Stat(dev); err != nil {
			t.Skip(err)
		}
		_, err := LoadCSV(dev, CSVOptions{})
		if err == nil || !strings.Contains(err.Error(), dev+":") || !strings.Contains(err.Error(), "binary data") {
			t.Errorf("%s: %v", dev, err)
		}
	}
	if _, err := LoadCSV(t.TempDir(), CSVOptions{}); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("directory: %v", err)
	}
	big := filepath.Join(t.TempDir(), "big.csv")
	if err := os.WriteFile(big, []byte("a,b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, MaxCSVBytes+1); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCSV(big, CSVOptions{}); err == nil || !strings.Contains(err.Error(), "limit of a CSV file") {
		t.Errorf("oversized file: %v", err)
	}
}

func TestLoadCSVProgress(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.csv")
	var b strings.Builder
	b.WriteString("a,b,y\n")
	for b.Len() < 3*progressEvery {
		b.WriteString("1.25,2.5,x\n3.75,4.5,y\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var calls []int64
	var total int64
	d, err := LoadCSV(path, CSVOptions{Progress: func(read, tot int64) { calls = append(calls, read); total = tot }})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) < 3 || calls[len(calls)-1] != int64(b.Len()) || total != int64(b.Len()) || d.Len() < 1000 {
		t.Errorf("progress calls %v of %d bytes (total %d)", calls, b.Len(), total)
	}
}

func TestFingerprint(t *testing.T) {
	a := Iris()
	fa := a.Fingerprint()
	if !strings.HasPrefix(fa, "sha256:") || len(fa) != 7+64 {
		t.Fatalf("fingerprint %q", fa)
	}
	b := a.Clone()
	b.Name = "renamed"
	if b.Fingerprint() != fa {
		t.Error("the name changed the fingerprint")
	}
	b.X[149][0] += 0.1
	if b.Fingerprint() == fa {
		t.Error("an edited value kept the fingerprint")
	}
	c := a.Subset([]int{1, 0})
	if c.Fingerprint() == a.Subset([]int{0, 1}).Fingerprint() {
		t.Error("reordered rows kept the fingerprint")
	}
}
