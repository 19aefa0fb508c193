package board

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/sim/internal/simcache"
	"github.com/ptmhw/ptm/sim/internal/verilator"
)

//go:embed csrc/board_main.cpp
var mainCpp []byte

// ErrNoVerilator is returned when the verilator executable is not found.
var ErrNoVerilator = errors.New("board: verilator not found on PATH: run scripts/install-deps.sh")

// rtlFiles are the board's Verilog sources, relative to rtl/ (plus every
// .v file of rtl/board).
var rtlFiles = []string{"lib/crc32.v", "uart/uart_rx.v", "uart/uart_tx.v", "eth/eth_mac_rx.v", "eth/eth_mac_tx.v"}

// FindRTL locates the repository's rtl/ folder: $PTM_RTL_DIR, else the
// first rtl/board/board_top.v found walking up from the working directory,
// else the one next to this package's source (a build from a checkout).
func FindRTL() (string, error) {
	ok := func(d string) bool {
		_, err := os.Stat(filepath.Join(d, "board", "board_top.v"))
		return err == nil
	}
	if d := os.Getenv("PTM_RTL_DIR"); d != "" {
		if ok(d) {
			return d, nil
		}
		return "", fmt.Errorf("%w: PTM_RTL_DIR=%s has no board/board_top.v", ErrOptions, d)
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			if ok(filepath.Join(d, "rtl")) {
				return filepath.Join(d, "rtl"), nil
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	if _, file, _, okc := runtime.Caller(0); okc {
		d := filepath.Join(filepath.Dir(file), "..", "..", "rtl")
		if ok(d) {
			return filepath.Clean(d), nil
		}
	}
	return "", fmt.Errorf("%w: rtl/board/board_top.v not found: run from the repository or set PTM_RTL_DIR", ErrOptions)
}

// Build is a compiled board simulator.
type Build struct {
	Dir    string     // design files, bank images and the simulator
	Binary string     // the simulator executable
	Cached bool       // reused from an earlier build
	Design *hw.Design // the generated core
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
var buildFlags = []string{"--cc", "--exe", "--build", "-O3", "--x-assign", "fast", "--x-initial", "fast",
	"--top-module", "board_top", "-o", "board_sim"}

// GenVersion returns hw.Version as major<<16 | minor<<8 | patch (INFO word 2).
func GenVersion() uint32 {
	var a, b, c uint32
	fmt.Sscanf(hw.Version, "%d.%d.%d", &a, &b, &c)
	return a<<16 | b<<8 | c
}

// BankCRC returns the CRC-32 that LOAD_COMMIT expects for a bank on
// hardware h: over the L*D words as u16 little-endian bytes, word
// w = addr*L + lane in offset order (docs/protocol.md section 2).
func BankCRC(b *fixed.Bank, h fixed.HW) uint32 {
	return crc32.ChecksumIEEE(BankBytes(b, h))
}

// BankBytes returns the bank words in upload order as u16 little-endian
// bytes (the LOAD_DATA payload after the offsets).
func BankBytes(b *fixed.Bank, h fixed.HW) []byte {
	lanes := b.LaneWords(h)
	var out []byte
	if len(lanes) == 0 {
		return out
	}
	for a := range lanes[0] {
		for l := range lanes {
			out = binary.LittleEndian.AppendUint16(out, uint16(lanes[l][a]))
		}
	}
	return out
}

// params returns the board_top parameters of a design.
func params(o Options, d *hw.Design, m model) map[string]string {
	p := d.Params
	mac := uint64(0)
	for _, b := range o.MAC {
		mac = mac<<8 | uint64(b)
	}
	ps := map[string]string{
		"CLKS_PER_BIT": fmt.Sprint(o.ClksPerBit),
		"UART_BAUD":    fmt.Sprint(o.ReportedBaud),
		"BOARD_MAC":    fmt.Sprintf("48'h%012x", mac),
		"FEATURES":     fmt.Sprint(p.O), "BITS": fmt.Sprint(p.Bits), "LANES": fmt.Sprint(p.L),
		"DEPTH": fmt.Sprint(p.D), "LANE_W": fmt.Sprint(p.LaneW), "ADDR_W": fmt.Sprint(p.AddrW),
		"K_W": fmt.Sprint(p.KW), "NT": fmt.Sprint(p.NT), "NC": fmt.Sprint(p.NC), "KMAX": fmt.Sprint(p.MaxK),
		"GEN_VERSION": fmt.Sprint(GenVersion()),
	}
	if o.Preload {
		ps["INIT_LOADED"] = "1"
		ps["INIT_CRC"] = fmt.Sprintf("32'h%08x", BankCRC(m.bank, d.Config.HW()))
	}
	return ps
}

// BuildSim generates the core for the options' model and compiles the
// board simulator into CacheDir/<hash> (reusing an identical earlier build).
func BuildSim(opts Options) (*Build, error) {
	o, m, err := opts.resolved()
	if err != nil {
		return nil, err
	}
	return build(o, m)
}

func build(o Options, m model) (*Build, error) {
	ver, err := VerilatorVersion()
	if err != nil {
		return nil, err
	}
	var init *fixed.Bank
	if o.Preload {
		init = m.bank
	}
	d, err := hw.Generate(o.Config, m.shape, init, m.hash)
	if err != nil {
		return nil, fmt.Errorf("board: %w", err)
	}
	ps := params(o, d, m)
	var names []string
	for k := range ps {
		names = append(names, k)
	}
	sort.Strings(names)
	flags := append([]string{}, buildFlags...)
	flags = append(flags, "-j", fmt.Sprint(o.Jobs), "+define+PTM_CORE="+d.Top(),
		"-CFLAGS", "-O2 -Wall -DCLKS_PER_BIT="+fmt.Sprint(o.ClksPerBit))
	for _, k := range names {
		flags = append(flags, "-G"+k+"="+ps[k])
	}

	// sources: rtl/board/*.v, the shared blocks, the core, the C++ main
	boardV, err := filepath.Glob(filepath.Join(o.RTLDir, "board", "*.v"))
	if err != nil || len(boardV) == 0 {
		return nil, fmt.Errorf("%w: no Verilog in %s/board", ErrOptions, o.RTLDir)
	}
	sort.Strings(boardV)
	srcs := boardV
	for _, f := range rtlFiles {
		srcs = append(srcs, filepath.Join(o.RTLDir, f))
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%q\n", ver, flags)
	for _, s := range srcs {
		data, err := os.ReadFile(s)
		if err != nil {
			return nil, fmt.Errorf("board: %w", err)
		}
		fmt.Fprintf(h, "%s %d\n", filepath.Base(s), len(data))
		h.Write(data)
	}
	for _, f := range d.Files {
		fmt.Fprintf(h, "%s %d\n", f.Name, len(f.Data))
		h.Write(f.Data)
	}
	h.Write(mainCpp)
	key := hex.EncodeToString(h.Sum(nil))[:24]
	dir := filepath.Join(o.CacheDir, "board-"+key)
	bin := filepath.Join(dir, "obj_dir", "board_sim")
	b := &Build{Dir: dir, Binary: bin, Design: d, Params: ps}
	if err := simcache.Prepare(o.CacheDir); err != nil {
		return nil, fmt.Errorf("board: %w", err)
	}
	// A cached build is run only if its files are the ones it was built
	// with, from exactly these sources; anything else is rebuilt.
	const binRel = "obj_dir/board_sim"
	sources := map[string][]byte{"board_main.cpp": mainCpp}
	for _, f := range d.Files {
		sources[f.Name] = f.Data
	}
	if _, err := os.Lstat(dir); err == nil {
		if simcache.Verify(dir, binRel, sources) == nil {
			b.Cached = true
			return b, nil
		}
		if err := os.RemoveAll(dir); err != nil {
			return nil, fmt.Errorf("board: removing a stale build: %w", err)
		}
	}
	tmp, err := os.MkdirTemp(o.CacheDir, "build-")
	if err != nil {
		return nil, fmt.Errorf("board: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := d.Write(tmp); err != nil {
		return nil, fmt.Errorf("board: %w", err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "board_main.cpp"), mainCpp, 0o644); err != nil {
		return nil, fmt.Errorf("board: %w", err)
	}
	args := append([]string{}, flags...)
	args = append(args, srcs...)
	args = append(args, d.VerilogFiles()...)
	args = append(args, "board_main.cpp")
	cmd := exec.Command("verilator", args...)
	cmd.Dir = tmp
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		if o.Log != nil {
			o.Log.Write(out.Bytes())
		}
		return nil, fmt.Errorf("board: verilator build failed: %w\n%s", err, tail(out.String(), 4000))
	}
	if err := os.WriteFile(filepath.Join(tmp, "build.log"), out.Bytes(), 0o644); err != nil {
		return nil, fmt.Errorf("board: %w", err)
	}
	sealed := []string{binRel}
	for name := range sources {
		sealed = append(sealed, name)
	}
	if err := simcache.Seal(tmp, sealed); err != nil {
		return nil, fmt.Errorf("board: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if simcache.Verify(dir, binRel, sources) == nil { // a concurrent build won
			b.Cached = true
			return b, nil
		}
		return nil, fmt.Errorf("board: %w", err)
	}
	return b, nil
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
