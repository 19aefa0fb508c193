package rtl

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/ptmhw/ptm/internal/testenv"
	"github.com/ptmhw/ptm/rtl/internal/rtltest"
)

// srcDirs are the hand-written RTL folders checked by this package.
var srcDirs = []string{"uart", "eth", "lib"}

type param struct{ name, value string }

// bench is one Verilator C++ test bench build.
type bench struct {
	name   string   // subtest name (also the bench's PASS name)
	top    string   // top module
	srcs   []string // Verilog sources, relative to rtl/
	tb     string   // C++ bench, relative to rtl/
	params []param  // passed as -G<name>=<value> and -D<name>=<value>
}

// benches[0] is built first and seeds the runtime objects of the others
// (keep it small); the rest run longest first.
var benches = []bench{
	{"crc32", "crc32", []string{"lib/crc32.v"}, "lib/tb/crc32_tb.cpp", nil},
	{"crc32_serial", "crc32_serial", []string{"lib/crc32_serial.v"}, "lib/tb/crc32_serial_tb.cpp", nil},
	{"eth_mac_rx", "eth_mac_rx", []string{"eth/eth_mac_rx.v", "lib/crc32.v"}, "eth/tb/eth_mac_rx_tb.cpp", nil},
	{"eth_mac_tx", "eth_mac_tx", []string{"eth/eth_mac_tx.v", "lib/crc32.v"}, "eth/tb/eth_mac_tx_tb.cpp", nil},
	{"uart_rx_104", "uart_rx", []string{"uart/uart_rx.v"}, "uart/tb/uart_rx_tb.cpp", []param{{"CLKS_PER_BIT", "104"}}},
	{"uart_rx_16", "uart_rx", []string{"uart/uart_rx.v"}, "uart/tb/uart_rx_tb.cpp", []param{{"CLKS_PER_BIT", "16"}}},
	// board_top's: no output buffer (proto_rx is always ready)
	{"uart_rx_16_nobuf", "uart_rx", []string{"uart/uart_rx.v"}, "uart/tb/uart_rx_tb.cpp", []param{{"CLKS_PER_BIT", "16"}, {"BUFFER", "0"}}},
	{"uart_tx_104", "uart_tx", []string{"uart/uart_tx.v"}, "uart/tb/uart_tx_tb.cpp", []param{{"CLKS_PER_BIT", "104"}}},
	{"uart_tx_16", "uart_tx", []string{"uart/uart_tx.v"}, "uart/tb/uart_tx_tb.cpp", []param{{"CLKS_PER_BIT", "16"}}},
	{"uart_tx_9_ext", "uart_tx", []string{"uart/uart_tx.v"}, "uart/tb/uart_tx_tb.cpp", []param{{"CLKS_PER_BIT", "9"}, {"EXT_TICK", "1"}}},
	{"sync_fifo", "sync_fifo", []string{"lib/sync_fifo.v"}, "lib/tb/sync_fifo_tb.cpp", []param{{"DATA_WIDTH", "12"}, {"DEPTH", "8"}}},
	{"skid_buffer", "skid_buffer", []string{"lib/skid_buffer.v"}, "lib/tb/skid_buffer_tb.cpp", []param{{"DATA_WIDTH", "16"}}},
}

// synthTops are the yosys synth_ice40 checks (parameters via chparam).
var synthTops = []struct {
	top    string
	params []param
}{
	{"uart_rx", []param{{"CLKS_PER_BIT", "104"}}},
	{"uart_tx", []param{{"CLKS_PER_BIT", "104"}}},
	{"crc32", nil},
	{"crc32_serial", nil},
	{"sync_fifo", []param{{"DATA_WIDTH", "8"}, {"DEPTH", "512"}}},
	{"skid_buffer", []param{{"DATA_WIDTH", "8"}}},
	{"eth_mac_rx", nil},
	{"eth_mac_tx", nil},
}

// lintParams lists extra parameter sets to lint besides the defaults.
var lintParams = map[string][][]param{
	"uart_rx":     {{{"CLKS_PER_BIT", "16"}}, {{"CLKS_PER_BIT", "8"}}, {{"BUFFER", "0"}}},
	"uart_tx":     {{{"CLKS_PER_BIT", "16"}}, {{"CLKS_PER_BIT", "2"}}, {{"EXT_TICK", "1"}}},
	"sync_fifo":   {{{"DEPTH", "2"}, {"DATA_WIDTH", "1"}}, {{"DEPTH", "2048"}, {"DATA_WIDTH", "9"}}},
	"skid_buffer": {{{"DATA_WIDTH", "1"}}},
	"eth_mac_rx":  {{{"MAX_FRAME", "1522"}, {"BUFFER_DEPTH", "4096"}}},
}

// trackSources reads every file under the RTL folders (Verilog, benches,
// headers). The tools read them in child processes, which the go test cache
// cannot see; reading them here makes any edit invalidate a cached result.
func trackSources(t *testing.T) {
	t.Helper()
	for _, d := range srcDirs {
		err := filepath.WalkDir(d, func(path string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			_, err = os.ReadFile(path)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// vFiles returns every .v file in the RTL folders, relative to rtl/.
func vFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, d := range srcDirs {
		m, err := filepath.Glob(filepath.Join(d, "*.v"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatal("no .v files found under uart/, eth/, lib/")
	}
	return files
}

var moduleRE = regexp.MustCompile(`(?m)^module\s+(\w+)`)

// TestConventions checks the file layout rules that need no tools.
func TestConventions(t *testing.T) {
	trackSources(t)
	inBench, inSynth := map[string]bool{}, map[string]bool{}
	for _, b := range benches {
		inBench[b.top] = true
	}
	for _, s := range synthTops {
		inSynth[s.top] = true
	}
	for _, f := range vFiles(t) {
		if top := strings.TrimSuffix(filepath.Base(f), ".v"); !inBench[top] || !inSynth[top] {
			t.Errorf("%s: module must be listed in benches and synthTops (bench %v, synth %v)",
				f, inBench[top], inSynth[top])
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		lines := strings.Split(strings.TrimSpace(src), "\n")
		if strings.TrimSpace(lines[0]) != "`default_nettype none" {
			t.Errorf("%s: first line must be `default_nettype none", f)
		}
		if strings.TrimSpace(lines[len(lines)-1]) != "`default_nettype wire" {
			t.Errorf("%s: last line must be `default_nettype wire", f)
		}
		mods := moduleRE.FindAllStringSubmatch(src, -1)
		base := strings.TrimSuffix(filepath.Base(f), ".v")
		if len(mods) != 1 || mods[0][1] != base {
			t.Errorf("%s: want exactly one module named %s, found %v", f, base, mods)
		}
		if !strings.Contains(src, " * "+base+" - ") {
			t.Errorf("%s: header comment \" * %s - <what it does>\" missing", f, base)
		}
		tb := filepath.Join(filepath.Dir(f), "tb", base+"_tb.cpp")
		if _, err := os.Stat(tb); err != nil {
			t.Errorf("%s: bench %s missing", f, tb)
		}
	}
}

// TestLint runs verilator -Wall lint on every module as a top.
func TestLint(t *testing.T) {
	t.Parallel()
	trackSources(t)
	rtltest.NeedTools(t, "verilator")
	for _, f := range vFiles(t) {
		top := strings.TrimSuffix(filepath.Base(f), ".v")
		sets := append([][]param{nil}, lintParams[top]...)
		for _, ps := range sets {
			args := []string{"--lint-only", "-Wall", "--top-module", top}
			for _, d := range srcDirs {
				args = append(args, "-y", d)
			}
			label := top
			for _, p := range ps {
				args = append(args, "-G"+p.name+"="+p.value)
				label += fmt.Sprintf(" %s=%s", p.name, p.value)
			}
			args = append(args, f)
			out, err := rtltest.Run(t, ".", "verilator", args...)
			if err != nil || strings.TrimSpace(out) != "" {
				t.Errorf("lint %s: %v\n%s", label, err, out)
			}
		}
	}
}

// runtimeObjs are the Verilator runtime objects that every bench build
// compiles identically (same flags); the first build's copies are reused by
// the others, which roughly halves the C++ compile time of the package.
var runtimeObjs = []string{"verilated.o", "verilated_threads.o"}

// benchArgs are b's verilator arguments.
func benchArgs(t *testing.T, b bench, dir string) []string {
	args := []string{"--cc", "--exe", "-Wall",
		"--top-module", b.top, "--Mdir", dir, "-o", "bench",
		"-CFLAGS", "-I" + rtltest.Abs(t, "lib/tb"), "-I" + rtltest.Abs(t, IncludeDir)}
	for _, p := range b.params {
		args = append(args, "-G"+p.name+"="+p.value, "-CFLAGS", "-D"+p.name+"="+p.value)
	}
	for _, s := range b.srcs {
		args = append(args, rtltest.Abs(t, s))
	}
	return append(args, rtltest.Abs(t, b.tb))
}

// buildBench verilates and compiles b into dir and returns the bench
// binary's path. It is `verilator --cc --exe --build -j 2 -Wall ...` split in
// its two steps, so that between them the runtime objects of the directory
// returned by seed (when seed != nil) can be dropped in: make then treats
// them as up to date (they must be newer than the generated makefile).
func buildBench(t *testing.T, b bench, dir string, seed func() string) string {
	t.Helper()
	if out, err := rtltest.Run(t, dir, "verilator", benchArgs(t, b, dir)...); err != nil {
		t.Fatalf("verilator: %v\n%s", err, out)
	}
	if seed != nil {
		seedDir := seed()
		for _, o := range runtimeObjs {
			data, err := os.ReadFile(filepath.Join(seedDir, o))
			if err != nil {
				continue // another Verilator version: make builds it
			}
			if err := os.WriteFile(filepath.Join(dir, o), data, 0o644); err != nil {
				t.Fatalf("seeding runtime object %s: %v", o, err)
			}
		}
	}
	// the benches are short: neither the model nor the runtime library needs
	// optimisation (compiling is the slow part)
	out, err := rtltest.Run(t, dir, "make", "-j", "2", "-f", "V"+b.top+".mk",
		"OPT_FAST=-O0", "OPT_GLOBAL=-O0", "OPT_SLOW=-O0")
	if err != nil {
		t.Fatalf("make: %v\n%s", err, out)
	}
	return filepath.Join(dir, "bench")
}

// cachedBench returns b's bench executable from the build cache
// (rtltest.CachedBench: keyed by the tools, the arguments and the contents
// of the sources, the bench and its headers), calling build on a miss.
func cachedBench(t *testing.T, b bench, build func(t *testing.T, dir string)) (string, bool) {
	t.Helper()
	inputs := []string{rtltest.Abs(t, "lib/tb"), rtltest.Abs(t, b.tb)}
	for _, n := range Includes() {
		inputs = append(inputs, rtltest.Abs(t, n))
	}
	for _, s := range b.srcs {
		inputs = append(inputs, rtltest.Abs(t, s))
	}
	return rtltest.CachedBench(t, rtltest.Abs(t, "."), rtltest.Build{
		Name:   "rtl-" + b.name,
		Args:   append(benchArgs(t, b, "<dir>"), "make OPT_FAST=-O0 OPT_GLOBAL=-O0 OPT_SLOW=-O0"),
		Inputs: inputs,
		Binary: "bench",
		Make:   build,
	})
}

// TestBench builds (or takes from the build cache) and runs every
// Verilator bench.
func TestBench(t *testing.T) {
	t.Parallel()
	trackSources(t)
	if testing.Short() {
		t.Skip("bench builds skipped in -short mode")
	}
	rtltest.NeedTools(t, "verilator", "g++", "make")
	testenv.Heartbeat(t, 0)
	// On a cache miss the first bench is built once, in its own folder;
	// that folder then seeds the runtime objects of all other builds.
	seedDir := t.TempDir()
	var seedOnce sync.Once
	seedOK := false
	seed := func(t *testing.T) string {
		seedOnce.Do(func() {
			buildBench(t, benches[0], seedDir, nil)
			seedOK = true
		})
		if !seedOK {
			t.Fatalf("seed build of %s failed (see its subtest)", benches[0].name)
		}
		return seedDir
	}
	for i, b := range benches {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			var build func(t *testing.T, dir string)
			if i == 0 { // the seed build itself
				build = func(t *testing.T, dir string) {
					copyFile(t, filepath.Join(seed(t), "bench"), filepath.Join(dir, "bench"))
				}
			} else {
				build = func(t *testing.T, dir string) { buildBench(t, b, dir, func() string { return seed(t) }) }
			}
			bin, cached := cachedBench(t, b, build)
			out, err := rtltest.Run(t, t.TempDir(), bin)
			if err != nil {
				t.Fatalf("bench failed: %v\n%s", err, out)
			}
			pass := "PASS " + b.name + " "
			if !strings.Contains(out, pass) {
				t.Fatalf("bench output lacks %q:\n%s", pass, out)
			}
			t.Logf("(cached build: %v) %s", cached, strings.TrimSpace(out))
		})
	}
}

// copyFile copies an executable.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err == nil {
		err = os.WriteFile(to, data, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
}

var statRE = regexp.MustCompile(`(?m)^\s+(SB_\w+)\s+(\d+)`)

// TestSynth runs yosys synth_ice40 on every top module.
func TestSynth(t *testing.T) {
	t.Parallel()
	trackSources(t)
	if testing.Short() {
		t.Skip("yosys synthesis skipped in -short mode")
	}
	rtltest.NeedTools(t, "yosys")
	for _, s := range synthTops {
		s := s
		t.Run(s.top, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			file := ""
			for _, d := range srcDirs {
				if _, err := os.Stat(filepath.Join(d, s.top+".v")); err == nil {
					file = rtltest.Abs(t, filepath.Join(d, s.top+".v"))
				}
			}
			if file == "" {
				t.Fatalf("no source for %s", s.top)
			}
			script := "verilog_defaults -add -sv; read_verilog " + file + "; "
			libs := ""
			for _, d := range srcDirs {
				libs += " -libdir " + rtltest.Abs(t, d)
			}
			script += "hierarchy" + libs + " -top " + s.top + "; "
			for _, p := range s.params {
				script += fmt.Sprintf("chparam -set %s %s %s; ", p.name, p.value, s.top)
			}
			stat := filepath.Join(dir, "stat.txt")
			script += "synth_ice40 -top " + s.top + "; tee -q -o " + stat + " stat"
			out, err := rtltest.Run(t, dir, "yosys", "-q", "-p", script)
			if err != nil || strings.Contains(out, "Warning") || strings.Contains(out, "ERROR") {
				t.Fatalf("yosys: %v\n%s", err, out)
			}
			b, err := os.ReadFile(stat)
			if err != nil {
				t.Fatal(err)
			}
			var cells []string
			for _, m := range statRE.FindAllStringSubmatch(string(b), -1) {
				cells = append(cells, m[1]+"="+m[2])
			}
			if len(cells) == 0 {
				t.Fatalf("no iCE40 cells in stat:\n%s", b)
			}
			t.Logf("%s %v: %s", s.top, s.params, strings.Join(cells, " "))
		})
	}
}
