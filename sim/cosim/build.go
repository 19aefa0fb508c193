package cosim

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
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
	flags := append([]string{}, buildFlags...)
	if trace {
		flags = append(flags, "--trace-fst")
	}
	if cacheDir == "" {
		cacheDir = DefaultCacheDir()
	}
	// A cached build is run only if its files are the ones it was built
	// with, from exactly these sources; anything else is rebuilt.
	dir, cached, err := simcache.Verilate(simcache.VerilatorBuild{
		CacheDir: cacheDir, Top: d.Top(), Version: ver, Flags: flags,
		Files: d.Files, Verilog: d.VerilogFiles(), Harness: src, Jobs: jobs,
	})
	if err != nil {
		return nil, fmt.Errorf("cosim: %w", err)
	}
	return &Build{Dir: dir, Binary: filepath.Join(dir, filepath.FromSlash(simcache.BinaryPath)), Cached: cached}, nil
}
