package cosim

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/sim/internal/simcache"
	"github.com/ptmhw/ptm/sim/internal/verilator"
)

//go:embed harness.cpp.tmpl
var harnessText string

var harnessTmpl = template.Must(template.New("harness").Parse(harnessText))

// ErrNoVerilator is returned when the verilator executable is not found.
var ErrNoVerilator = errors.New("cosim: verilator not found on PATH: run scripts/install-deps.sh")

// harness renders the C++ harness for a design.
func harness(d *hw.Design) ([]byte, error) {
	p := d.Params
	words := (p.O + 31) / 32
	var set strings.Builder
	switch {
	case p.O <= 32:
		set.WriteString("    top->req_features = w[0];")
	case p.O <= 64:
		set.WriteString("    top->req_features = (uint64_t)w[1] << 32 | w[0];")
	default:
		fmt.Fprintf(&set, "    for (int i = 0; i < %d; i++) top->req_features[i] = w[i];", words)
	}
	var b bytes.Buffer
	err := harnessTmpl.Execute(&b, map[string]any{
		"Top": d.Top(), "FeatureWords": words, "SetFeatures": set.String(),
		"Lanes": p.L, "Depth": p.D, "Bits": p.Bits, "KW": p.KW, "Watchdog": 1_000_000,
	})
	if err != nil {
		return nil, fmt.Errorf("cosim: harness: %w", err)
	}
	return b.Bytes(), nil
}

// Build is a compiled simulator of a design.
type Build struct {
	Dir    string // holds the design files and the simulator
	Binary string // the simulator executable
	Cached bool   // reused from an earlier build
}

// VerilatorVersion returns `verilator --version`, or ErrNoVerilator.
func VerilatorVersion() (string, error) {
	v, err := verilator.Version()
	if errors.Is(err, verilator.ErrNotFound) {
		return "", ErrNoVerilator
	}
	if err != nil {
		return "", fmt.Errorf("cosim: %w", err)
	}
	return v, nil
}

// buildFlags are the verilator flags of every simulator build.
var buildFlags = []string{"--cc", "--exe", "--build", "-O3", "--x-assign", "unique", "--x-initial", "unique",
	"-Wno-fatal", "-CFLAGS", "-O1"}

// DefaultCacheDir is where builds are cached when Options.CacheDir is
// empty: $PTM_COSIM_CACHE, else <user cache dir>/ptm-cosim, else a
// per-user <temp dir>/ptm-cosim-<uid>. The directory must belong to the
// current user and be writable by nobody else (sim/internal/simcache).
func DefaultCacheDir() string {
	return simcache.Dir("PTM_COSIM_CACHE", "ptm-cosim")
}

// simBinary is the simulator's path inside a build directory.
const simBinary = "obj_dir/sim"

// BuildDesign compiles a design and its harness with Verilator into
// cacheDir/<hash>, the hash covering every source, the flags and the
// Verilator version, so that an identical design is built only once.
// jobs is verilator's -j (0: 2); trace adds --trace-fst.
func BuildDesign(d *hw.Design, cacheDir string, jobs int, trace bool) (*Build, error) {
	ver, err := VerilatorVersion()
	if err != nil {
		return nil, err
	}
	src, err := harness(d)
	if err != nil {
		return nil, err
	}
	if jobs < 1 {
		jobs = 2
	}
	flags := append([]string{}, buildFlags...)
	if trace {
		flags = append(flags, "--trace-fst")
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%q\n", ver, flags)
	for _, f := range d.Files {
		fmt.Fprintf(h, "%s %d\n", f.Name, len(f.Data))
		h.Write(f.Data)
	}
	h.Write(src)
	key := hex.EncodeToString(h.Sum(nil))[:24]
	if cacheDir == "" {
		cacheDir = DefaultCacheDir()
	}
	// A cached build is run only if its files are the ones it was built
	// with, from exactly these sources; anything else is rebuilt.
	sources := map[string][]byte{"harness.cpp": src}
	for _, f := range d.Files {
		sources[f.Name] = f.Data
	}
	var buildErr error // verilator's own failure, returned as it is
	dir, cached, err := simcache.Build(cacheDir, d.Top()+"-"+key, simBinary, sources, func(tmp string) error {
		args := append(flags, "-j", fmt.Sprint(jobs), "--top-module", d.Top(), "-o", "sim")
		args = append(args, d.VerilogFiles()...)
		args = append(args, "harness.cpp")
		cmd := exec.Command("verilator", args...)
		cmd.Dir = tmp
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			buildErr = fmt.Errorf("cosim: verilator build of %s failed: %w\n%s", d.Top(), err, tail(out.String(), 4000))
			return buildErr
		}
		return nil
	})
	switch {
	case err != nil && err == buildErr:
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("cosim: %w", err)
	}
	return &Build{Dir: dir, Binary: filepath.Join(dir, filepath.FromSlash(simBinary)), Cached: cached}, nil
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
