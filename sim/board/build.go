package board

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/rtl"
	"github.com/ptmhw/ptm/sim/internal/simcache"
	"github.com/ptmhw/ptm/sim/internal/verilator"
)

//go:embed csrc/board_main.cpp
var mainCpp []byte

// ErrNoVerilator is returned when the verilator executable is not found.
var ErrNoVerilator = errors.New("board: verilator not found on PATH: run scripts/install-deps.sh")

// Build is a compiled board simulator.
type Build struct {
	Dir    string     // design files, bank images and the simulator
	Binary string     // the simulator executable
	Cached bool       // reused from an earlier build
	Design *hw.Design // the generated core (nil for a training board and a convolutional one)
	// ConvDesign is the generated convolutional core of a convolutional
	// board (Options.ConvBank, or a convolutional model file).
	ConvDesign *hw.ConvDesign
	// Trainer is the generated trainer of a training board (BuildTrainer).
	Trainer *hw.TrainerDesign
	// Params are the board_top parameters of this build.
	Params map[string]string
}

// VerilatorVersion returns `verilator --version`, or ErrNoVerilator.
func VerilatorVersion() (string, error) {
	v, err := verilator.Version()
	if errors.Is(err, verilator.ErrNotFound) {
		return "", ErrNoVerilator
	}
	if err != nil {
		return "", fmt.Errorf("board: %w", err)
	}
	return v, nil
}

// buildFlags are the verilator flags of every simulator build.
// --unroll-count: a convolutional core's conv_mem writes a row lane by
// lane in a for loop (sim/convcosim's buildFlags say why Verilator needs
// it unrolled).
var buildFlags = []string{"--cc", "--exe", "--build", "-O3", "--x-assign", "fast", "--x-initial", "fast",
	"--unroll-count", "4096", "--top-module", "board_top", "-o", "board_sim"}

// params returns the board_top parameters of a design (hw.Design.BoardParams).
func params(o Options, d *hw.Design, m model) (map[string]string, error) {
	b := hw.Board{ClockHz: o.ClockHz, ClksPerBit: o.ClksPerBit, ReportedBaud: o.ReportedBaud, MAC: o.MAC, Ethernet: !o.NoEthernet, SetsMax: o.SetsMax,
		CoreClock: o.CoreClock}
	if o.Preload {
		b.Preload = m.bank
	}
	list, err := d.BoardParams(b)
	if err != nil {
		return nil, fmt.Errorf("board: %w", err)
	}
	ps := make(map[string]string, len(list))
	for _, p := range list {
		ps[p.Name] = p.Value
	}
	return ps, nil
}

// BuildSim generates the core for the options' model and compiles the
// board simulator into CacheDir/<hash> (reusing an identical earlier build).
func BuildSim(opts Options) (*Build, error) {
	o, m, err := opts.resolved()
	if err != nil {
		return nil, err
	}
	return build(context.Background(), o, m)
}

// build generates the core and compiles (or reuses) its simulator; it
// returns ctx's error as soon as ctx is done, in either step.
func build(ctx context.Context, o Options, m model) (*Build, error) {
	ver, err := VerilatorVersion()
	if err != nil {
		return nil, err
	}
	if m.conv != nil {
		return buildConv(ctx, o, m, ver)
	}
	var init *fixed.Bank
	if o.Preload {
		init = m.bank
	}
	d, err := whileAlive(ctx, "generating the core", func() (*hw.Design, error) {
		return hw.Generate(o.Config, m.shape, init, m.hash)
	})
	if err != nil {
		return nil, fmt.Errorf("board: %w", err)
	}
	ps, err := params(o, d, m)
	if err != nil {
		return nil, err
	}
	names := sortedKeys(ps)
	flags := append([]string{}, buildFlags...)
	flags = append(flags, "-j", fmt.Sprint(o.Jobs), "+define+PTM_CORE="+d.Top(),
		"-CFLAGS", "-O2 -Wall -DCLKS_PER_BIT="+fmt.Sprint(o.ClksPerBit))
	if o.CoreClock {
		// board_main.cpp toggles clk_core twice per clk
		flags = append(flags, "-CFLAGS", "-DCORE_CLK=1")
	}
	for _, k := range names {
		flags = append(flags, "-G"+k+"="+ps[k])
	}

	// sources: the board shell (rtl.ShellSources, embedded), the core,
	// the C++ main
	srcs := rtl.ShellSources()
	if o.CoreClock {
		srcs = append(srcs, rtl.DualClockSources()...)
	}
	dir, bin, cached, err := compileSim(ctx, o, ver, flags, srcs, d.Files, "board-")
	if err != nil {
		return nil, err
	}
	return &Build{Dir: dir, Binary: bin, Cached: cached, Design: d, Params: ps}, nil
}

// compileSim builds (or reuses) the simulator of the embedded sources srcs,
// the generated files and the C++ main with the verilator flags, in
// o.CacheDir/<prefix><hash>.
func compileSim(ctx context.Context, o Options, ver string, flags, srcs []string, files []hw.File, prefix string) (dir, bin string, cached bool, err error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%q\n", ver, flags)
	for _, s := range append(append([]string{}, srcs...), rtl.Includes()...) {
		data, err := rtl.FS.ReadFile(s)
		if err != nil {
			return "", "", false, fmt.Errorf("board: %w", err)
		}
		fmt.Fprintf(h, "%s %d\n", s, len(data))
		h.Write(data)
	}
	for _, f := range files {
		fmt.Fprintf(h, "%s %d\n", f.Name, len(f.Data))
		h.Write(f.Data)
	}
	h.Write(mainCpp)
	key := hex.EncodeToString(h.Sum(nil))[:24]
	dir = filepath.Join(o.CacheDir, prefix+key)
	bin = filepath.Join(dir, "obj_dir", "board_sim")
	if err := simcache.Prepare(o.CacheDir); err != nil {
		return "", "", false, fmt.Errorf("board: %w", err)
	}
	// A cached build is run only if its files are the ones it was built
	// with, from exactly these sources; anything else is rebuilt.
	const binRel = "obj_dir/board_sim"
	sources := map[string][]byte{"board_main.cpp": mainCpp}
	for _, f := range files {
		sources[f.Name] = f.Data
	}
	if _, err := os.Lstat(dir); err == nil {
		if simcache.Verify(dir, binRel, sources) == nil {
			return dir, bin, true, nil
		}
		if err := os.RemoveAll(dir); err != nil {
			return "", "", false, fmt.Errorf("board: removing a stale build: %w", err)
		}
	}
	tmp, err := os.MkdirTemp(o.CacheDir, "build-")
	if err != nil {
		return "", "", false, fmt.Errorf("board: %w", err)
	}
	defer os.RemoveAll(tmp)
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(tmp, f.Name), f.Data, 0o644); err != nil {
			return "", "", false, fmt.Errorf("board: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, "board_main.cpp"), mainCpp, 0o644); err != nil {
		return "", "", false, fmt.Errorf("board: %w", err)
	}
	if _, err := rtl.Write(filepath.Join(tmp, "rtl"), srcs); err != nil {
		return "", "", false, fmt.Errorf("board: %w", err)
	}
	args := append(append([]string{}, flags...), "-I"+filepath.Join("rtl", rtl.IncludeDir))
	for _, s := range srcs {
		args = append(args, filepath.Join("rtl", filepath.FromSlash(s)))
	}
	for _, f := range files {
		if strings.HasSuffix(f.Name, ".v") {
			args = append(args, f.Name)
		}
	}
	args = append(args, "board_main.cpp")
	if err := ctx.Err(); err != nil {
		return "", "", false, fmt.Errorf("board: before the verilator build: %w", err)
	}
	cmd := exec.CommandContext(ctx, "verilator", args...)
	killGroupOnCancel(cmd)
	cmd.Dir = tmp
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", "", false, fmt.Errorf("board: verilator build stopped: %w", ctx.Err())
		}
		if o.Log != nil {
			o.Log.Write(out.Bytes())
		}
		return "", "", false, fmt.Errorf("board: verilator build failed: %w\n%s", err, tail(out.String(), 4000))
	}
	if err := os.WriteFile(filepath.Join(tmp, "build.log"), out.Bytes(), 0o644); err != nil {
		return "", "", false, fmt.Errorf("board: %w", err)
	}
	sealed := []string{binRel}
	for name := range sources {
		sealed = append(sealed, name)
	}
	if err := simcache.Seal(tmp, sealed); err != nil {
		return "", "", false, fmt.Errorf("board: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if simcache.Verify(dir, binRel, sources) == nil { // a concurrent build won
			return dir, bin, true, nil
		}
		return "", "", false, fmt.Errorf("board: %w", err)
	}
	return dir, bin, false, nil
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

func sortedKeys(m map[string]string) []string {
	var names []string
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// whileAlive runs step (a long computation that does not take a context)
// and returns its result, or ctx's error as soon as ctx is done: a signal
// stops the command at once; the abandoned step ends with the process.
func whileAlive[T any](ctx context.Context, what string, step func() (T, error)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, fmt.Errorf("%s: %w", what, err)
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := step()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		return zero, fmt.Errorf("%s: %w", what, ctx.Err())
	}
}

// buildConv generates the convolutional core and compiles (or reuses) the
// convolutional board's simulator: board_top with KIND = 1 and
// rtl.ConvSources (hw.ConvDesign.BoardParams).
func buildConv(ctx context.Context, o Options, m model, ver string) (*Build, error) {
	d, err := whileAlive(ctx, "generating the convolutional core", func() (*hw.ConvDesign, error) {
		return hw.GenerateConv(o.Config, m.conv, m.hash)
	})
	if err != nil {
		return nil, fmt.Errorf("board: %w", err)
	}
	list, err := d.BoardParams(hw.Board{ClockHz: o.ClockHz, ClksPerBit: o.ClksPerBit, ReportedBaud: o.ReportedBaud, MAC: o.MAC,
		Ethernet: !o.NoEthernet, SetsMax: o.SetsMax, CoreClock: o.CoreClock})
	if err != nil {
		return nil, fmt.Errorf("board: %w", err)
	}
	ps := make(map[string]string, len(list))
	for _, p := range list {
		ps[p.Name] = p.Value
	}
	flags := append([]string{}, buildFlags...)
	flags = append(flags, "-j", fmt.Sprint(o.Jobs), "+define+PTM_CONV_CORE="+d.Top(),
		"-CFLAGS", "-O2 -Wall -DCLKS_PER_BIT="+fmt.Sprint(o.ClksPerBit))
	if o.CoreClock {
		flags = append(flags, "-CFLAGS", "-DCORE_CLK=1")
	}
	for _, k := range sortedKeys(ps) {
		flags = append(flags, "-G"+k+"="+ps[k])
	}
	srcs := append(rtl.ShellSources(), rtl.ConvSources()...)
	if o.CoreClock {
		srcs = append(srcs, rtl.DualClockSources()...)
	}
	dir, bin, cached, err := compileSim(ctx, o, ver, flags, srcs, d.Files, "board-conv-")
	if err != nil {
		return nil, err
	}
	return &Build{Dir: dir, Binary: bin, Cached: cached, ConvDesign: d, Params: ps}, nil
}
