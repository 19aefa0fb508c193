package simcache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os/exec"
	"strconv"

	"github.com/ptmhw/ptm/hw"
)

// BinaryPath is the simulator's path inside a build directory made by
// Verilate.
const BinaryPath = "obj_dir/sim"

// VerilatorBuild describes one Verilator simulator: a generated design
// and its C++ harness.
type VerilatorBuild struct {
	// CacheDir is the cache directory (see Build).
	CacheDir string
	// Top is the top-level module; the build directory is Top-<hash>.
	Top string
	// Version is the Verilator version; it is part of the hash.
	Version string
	// Flags are verilator's flags (before -j, --top-module and -o).
	Flags []string
	// Files are the design's files, all written into the build directory
	// and hashed; Verilog names the ones given to verilator, in order.
	Files   []hw.File
	Verilog []string
	// Harness is the C++ test bench, written as harness.cpp.
	Harness []byte
	// Jobs is verilator's -j (0: 2).
	Jobs int
	// During, if set, is called when a compilation starts; the function it
	// returns is called when it ends (a progress heartbeat).
	During func() (stop func())
}

// Key is the hash that names the build: the Verilator version, the flags,
// every file (name, length, content) and the harness.
func (v VerilatorBuild) Key() string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%q\n", v.Version, v.Flags)
	for _, f := range v.Files {
		fmt.Fprintf(h, "%s %d\n", f.Name, len(f.Data))
		h.Write(f.Data)
	}
	h.Write(v.Harness)
	return hex.EncodeToString(h.Sum(nil))[:24]
}

// BuildError is Verilate's error when verilator itself fails; Output is
// the end of what it printed.
type BuildError struct {
	Top    string
	Err    error
	Output string
}

func (e *BuildError) Error() string {
	return fmt.Sprintf("verilator build of %s failed: %v\n%s", e.Top, e.Err, e.Output)
}

func (e *BuildError) Unwrap() error { return e.Err }

// Verilate returns the build directory of v through Build: a cached,
// verified build of exactly these sources, or a new one compiled with
// verilator (the simulator is at BinaryPath inside it).
func Verilate(v VerilatorBuild) (dir string, cached bool, err error) {
	jobs := v.Jobs
	if jobs < 1 {
		jobs = 2
	}
	sources := map[string][]byte{"harness.cpp": v.Harness}
	for _, f := range v.Files {
		sources[f.Name] = f.Data
	}
	return Build(v.CacheDir, v.Top+"-"+v.Key(), BinaryPath, sources, func(tmp string) error {
		args := append(append([]string{}, v.Flags...), "-j", strconv.Itoa(jobs), "--top-module", v.Top, "-o", "sim")
		args = append(args, v.Verilog...)
		args = append(args, "harness.cpp")
		cmd := exec.Command("verilator", args...)
		cmd.Dir = tmp
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if v.During != nil {
			stop := v.During()
			defer stop()
		}
		if err := cmd.Run(); err != nil {
			o := out.String()
			if len(o) > 4000 {
				o = "..." + o[len(o)-4000:]
			}
			return &BuildError{Top: v.Top, Err: err, Output: o}
		}
		return nil
	})
}
