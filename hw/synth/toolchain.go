package synth

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/ptmhw/ptm/internal/buildcache"
)

// Toolchain names the build of yosys, nextpnr-ice40, icepack and icepll
// the flow runs (docs/synthesis.md, "Toolchains").
type Toolchain string

const (
	// Debian is the programs on PATH: Debian 12's yosys 0.23,
	// nextpnr-ice40 0.4 and fpga-icestorm (scripts/install-deps.sh).
	Debian Toolchain = "debian"
	// YoWASP is the WebAssembly builds of current releases from npm
	// (@yowasp/yosys, @yowasp/nextpnr-ice40, which also has icepack and
	// icepll), run with node through an embedded runner (yowasp.mjs); the
	// packages live under YoWASPDir (scripts/install-yowasp.sh).
	YoWASP Toolchain = "yowasp"
)

// Toolchains are the accepted toolchain names.
var Toolchains = []Toolchain{Debian, YoWASP}

// ParseToolchain checks a toolchain name ("" is Debian).
func ParseToolchain(name string) (Toolchain, error) {
	switch Toolchain(name) {
	case "", Debian:
		return Debian, nil
	case YoWASP:
		return YoWASP, nil
	}
	return "", fmt.Errorf("%w: toolchain %q: want debian or yowasp", ErrOptions, name)
}

var (
	toolchainMu sync.Mutex
	toolchain   Toolchain // "" until UseToolchain or the first ActiveToolchain
)

// ActiveToolchain is the toolchain every run of this process uses: the
// one UseToolchain chose, else $PTM_TOOLCHAIN, else Debian.
func ActiveToolchain() Toolchain {
	toolchainMu.Lock()
	defer toolchainMu.Unlock()
	if toolchain == "" {
		t, err := ParseToolchain(os.Getenv("PTM_TOOLCHAIN"))
		if err != nil {
			t = Debian // UseToolchain/CheckTools report the bad name
		}
		toolchain = t
	}
	return toolchain
}

// UseToolchain selects the toolchain of the runs that follow (a setting
// of the whole process: `ptm synth --toolchain`). An empty name keeps
// $PTM_TOOLCHAIN or Debian.
func UseToolchain(name string) error {
	if name == "" {
		name = os.Getenv("PTM_TOOLCHAIN")
	}
	t, err := ParseToolchain(name)
	if err != nil {
		return err
	}
	toolchainMu.Lock()
	toolchain = t
	toolchainMu.Unlock()
	return nil
}

// YoWASPDir is the npm prefix holding node_modules/@yowasp: $PTM_YOWASP,
// else <user cache dir>/ptm-yowasp (where scripts/install-yowasp.sh
// installs).
func YoWASPDir() string { return buildcache.DefaultRoot("PTM_YOWASP", "ptm-yowasp") }

// yowaspPackage is the npm package that has a tool.
func yowaspPackage(tool string) string {
	if tool == "yosys" {
		return "@yowasp/yosys"
	}
	return "@yowasp/nextpnr-ice40"
}

//go:embed yowasp.mjs
var yowaspRunner []byte

var (
	runnerMu    sync.Mutex
	runnerPaths = map[string]string{} // YoWASPDir -> runner written there
)

// yowaspRunnerPath writes the embedded runner into YoWASPDir (once per
// process and folder, named by its hash) and returns its path.
func yowaspRunnerPath() (string, error) {
	dir := YoWASPDir()
	runnerMu.Lock()
	defer runnerMu.Unlock()
	if p, ok := runnerPaths[dir]; ok {
		return p, nil
	}
	sum := sha256.Sum256(yowaspRunner)
	p := filepath.Join(dir, "ptm-yowasp-"+hex.EncodeToString(sum[:6])+".mjs")
	if b, err := os.ReadFile(p); err != nil || string(b) != string(yowaspRunner) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", fmt.Errorf("synth: yowasp runner: %w", err)
		}
		tmp := p + fmt.Sprintf(".%d.tmp", os.Getpid())
		if err := os.WriteFile(tmp, yowaspRunner, 0o644); err != nil {
			return "", fmt.Errorf("synth: yowasp runner: %w", err)
		}
		if err := os.Rename(tmp, p); err != nil {
			return "", fmt.Errorf("synth: yowasp runner: %w", err)
		}
	}
	runnerPaths[dir] = p
	return p, nil
}

// check returns an ErrToolMissing error naming the first of the tools
// this toolchain cannot run.
func (t Toolchain) check(names ...string) error {
	for _, n := range names {
		if t == YoWASP && n != "verilator" {
			if _, err := exec.LookPath("node"); err != nil {
				return fmt.Errorf("%w: node is not on PATH (toolchain yowasp runs %s with node; apt-get install nodejs npm)", ErrToolMissing, n)
			}
			pkg := yowaspPackage(n)
			if _, err := os.Stat(filepath.Join(YoWASPDir(), "node_modules", pkg, "gen", "bundle.js")); err != nil {
				return fmt.Errorf("%w: %s (toolchain yowasp) is not installed under %s ($PTM_YOWASP); run scripts/install-yowasp.sh", ErrToolMissing, pkg, YoWASPDir())
			}
			continue
		}
		if _, err := exec.LookPath(n); err != nil {
			return fmt.Errorf("%w: %s is not on PATH; run scripts/install-deps.sh", ErrToolMissing, n)
		}
	}
	return nil
}

// command is the program and arguments that run tool with args under
// this toolchain, and the environment to add (mount: the folder the
// YoWASP runner copies into its virtual file system).
func (t Toolchain) command(tool, mount string, args ...string) (argv, env []string, err error) {
	if t != YoWASP || tool == "verilator" {
		return append([]string{tool}, args...), nil, nil
	}
	r, err := yowaspRunnerPath()
	if err != nil {
		return nil, nil, err
	}
	env = []string{"PTM_YOWASP=" + YoWASPDir()}
	if mount != "" {
		env = append(env, "PTM_YOWASP_MOUNT="+mount)
	}
	return append([]string{"node", r, tool}, args...), env, nil
}

// exec returns the command that runs tool under this toolchain in dir
// (its output is the caller's).
func (t Toolchain) exec(ctx context.Context, dir, mount, tool string, args ...string) (*exec.Cmd, error) {
	argv, env, err := t.command(tool, mount, args...)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	return cmd, nil
}

var (
	versionsMu sync.Mutex
	versionsBy = map[Toolchain]toolVersionSet{}
)

// toolVersionSet is what the tools of one toolchain say of their version.
type toolVersionSet struct {
	key   string            // the text that enters the cache key
	named map[string]string // tool -> first line of its version output
}

// toolVersions asks the active toolchain's yosys and nextpnr-ice40 for
// their versions (once per process and toolchain).
func toolVersions() toolVersionSet {
	t := ActiveToolchain()
	versionsMu.Lock()
	defer versionsMu.Unlock()
	if v, ok := versionsBy[t]; ok {
		return v
	}
	v := toolVersionSet{named: map[string]string{}}
	if t == YoWASP {
		v.key = "toolchain: yowasp\n"
	}
	for _, c := range [][]string{{"yosys", "-V"}, {"nextpnr-ice40", "--version"}, {"icepll", "-h"}} {
		var out []byte
		if c[0] != "icepll" { // no version option; its presence is checked elsewhere
			if cmd, err := t.exec(context.Background(), "", "", c[0], c[1:]...); err == nil {
				out, _ = cmd.CombinedOutput()
			}
		}
		// The Debian key text is the one the cache used before
		// toolchains existed, so its entries stay valid.
		v.key += c[0] + ": " + string(out) + "\n"
		if c[0] != "icepll" {
			v.named[c[0]] = versionLine(string(out))
		}
	}
	if t == YoWASP {
		for _, pkg := range []string{"yosys", "nextpnr-ice40"} {
			if cmd, err := t.exec(context.Background(), "", "", pkg, "--yowasp-package-version"); err == nil {
				out, _ := cmd.CombinedOutput()
				v.key += "package: " + string(out)
				v.named[yowaspPackage(pkg)] = strings.TrimSpace(string(out))
			}
		}
	}
	versionsBy[t] = v
	return v
}

// versionLine is the first line of a version output that names a
// version, cleaned of the program's quoting.
func versionLine(out string) string {
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if strings.Contains(strings.ToLower(l), "version") || strings.HasPrefix(l, "Yosys ") {
			return strings.ReplaceAll(l, `"`, "")
		}
	}
	return strings.TrimSpace(out)
}
