package synth

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/rtl"
)

// ModuleCells synthesizes the board shell board_top around design d on
// board b with `yosys synth_ice40 -noflatten` (files and log in dir) and
// returns the iCE40 cells of every module, one instance each, by module
// name (a parameterized module's $paramod name becomes its own name;
// modules instantiated with several parameter sets are added up), and how
// many instances of each the design has (yosys's design hierarchy). The
// core's modules are named <prefix>_...; everything else is the shell.
func ModuleCells(ctx context.Context, dir string, d *hw.Design, b hw.Board) (map[string]CellStats, map[string]int, error) {
	log, logf, err := synthShell(ctx, dir, d, b, "synth_ice40 -noflatten -top board_top\nstat\n")
	if err != nil {
		return nil, nil, err
	}
	mods, inst := parseModuleStats(log)
	if len(mods) == 0 || len(inst) == 0 {
		return nil, nil, fmt.Errorf("%w: yosys printed no module statistics (log: %s)", ErrTool, logf)
	}
	return mods, inst, nil
}

// ShellFlatCells synthesizes the board shell board_top around design d on
// board b as the image flow does, flattened (`yosys synth_ice40`, files
// and log in dir), with the core (d.Top()) made a blackbox, and returns the
// iCE40 cells of the shell alone: constants from board_top's parameters
// and between its modules propagate, which the per-module measure
// (ModuleCells, -noflatten) does not let them; the core's outputs stay
// unknown, so nothing of the shell is optimized away on their account.
func ShellFlatCells(ctx context.Context, dir string, d *hw.Design, b hw.Board) (CellStats, error) {
	return flatShellStat(ctx, dir, d, b, "")
}

// flatShellStat synthesizes the shell flattened with the core a blackbox
// (ShellFlatCells), runs the yosys commands extra after its statistics,
// and returns those statistics.
func flatShellStat(ctx context.Context, dir string, d *hw.Design, b hw.Board, extra string) (CellStats, error) {
	log, logf, err := synthShell(ctx, dir, d, b, fmt.Sprintf("blackbox %s\nsynth_ice40 -top board_top\nstat\n%s", d.Top(), extra))
	if err != nil {
		return CellStats{}, err
	}
	st, ok := parseStat(log)
	if !ok || st.Cells == 0 {
		return CellStats{}, fmt.Errorf("%w: yosys printed no statistics (log: %s)", ErrTool, logf)
	}
	return st, nil
}

// ShellPackedCells is the shell's size in the unit the device counts:
// logic cells (ICESTORM_LC) after nextpnr-ice40's packer. It takes
// ShellFlatCells's netlist, turns the core's instance into ports (yosys
// expose -evert: the core's inputs become outputs of the shell and its
// outputs inputs, so nothing of the shell is optimized away), and packs
// it for dev (--pack-only, no placement: the many ports need not fit the
// package). An iCE40 logic cell holds one LUT4, one flip-flop and one
// carry, but a flip-flop shares a cell only with the LUT4 feeding its D
// input alone: flip-flops loaded from other flip-flops (shift
// registers), from block RAM or from ports, or behind a LUT4 with other
// loads, take a cell each. So this is the count the image pays, where
// LUT4 + SB_CARRY (ModuleCells, ShellFlatCells) leaves flip-flops out and
// counts a carry packed with its LUT4 twice. The result's LUT4, FFs,
// Carry and BRAMs are yosys's; Cells is nextpnr's ICESTORM_LC.
func ShellPackedCells(ctx context.Context, dir string, d *hw.Design, b hw.Board, dev Device) (CellStats, error) {
	if err := CheckTools("yosys", "nextpnr-ice40"); err != nil {
		return CellStats{}, err
	}
	st, err := flatShellStat(ctx, dir, d, b, fmt.Sprintf("expose -evert board_top/t:%s\nwrite_json shell.json\n", d.Top()))
	if err != nil {
		return CellStats{}, err
	}
	plog := filepath.Join(dir, "pack.log")
	if err := runTool(ctx, dir, plog, "nextpnr-ice40", dev.nextpnrFlag(), "--package", dev.Package,
		"--json", "shell.json", "--pack-only"); err != nil {
		return CellStats{}, err
	}
	text, err := os.ReadFile(plog)
	if err != nil {
		return CellStats{}, fmt.Errorf("synth: %w", err)
	}
	st.Cells = -1
	for _, line := range strings.Split(string(text), "\n") {
		if m := utilLine.FindStringSubmatch(strings.TrimRight(line, "\r")); m != nil && m[1] == "ICESTORM_LC" {
			st.Cells, _ = strconv.Atoi(m[2])
		}
	}
	if st.Cells < 0 {
		return CellStats{}, fmt.Errorf("%w: nextpnr-ice40 --pack-only printed no ICESTORM_LC count (log: %s)", ErrTool, plog)
	}
	return st, nil
}

// synthShell writes design d and the shell sources into dir and runs
// yosys on board_top with board b's parameters, then the commands cmds;
// it returns the log and its path.
func synthShell(ctx context.Context, dir string, d *hw.Design, b hw.Board, cmds string) (log, logf string, err error) {
	if err := CheckTools("yosys"); err != nil {
		return "", "", err
	}
	if err := d.Write(dir); err != nil {
		return "", "", err
	}
	srcs, err := rtl.Write(filepath.Join(dir, "rtl"), rtl.ShellSources())
	if err != nil {
		return "", "", fmt.Errorf("synth: %w", err)
	}
	files := append(append([]string{}, d.VerilogFiles()...), srcs...)
	qfiles, err := hw.ScriptPaths(files)
	if err != nil {
		return "", "", fmt.Errorf("%w: %w", ErrOptions, err)
	}
	params, err := d.BoardParams(b)
	if err != nil {
		return "", "", fmt.Errorf("%w: %w", ErrOptions, err)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "read_verilog -sv -DPTM_CORE=%s %s\nchparam", d.Top(), qfiles)
	for _, p := range params {
		fmt.Fprintf(&sb, " -set %s %s", p.Name, p.Value)
	}
	sb.WriteString(" board_top\n")
	sb.WriteString(cmds)
	script := filepath.Join(dir, "modules.ys")
	if err := os.WriteFile(script, []byte(sb.String()), 0o644); err != nil {
		return "", "", fmt.Errorf("synth: %w", err)
	}
	logf = filepath.Join(dir, "modules.log")
	if err := runTool(ctx, dir, filepath.Join(dir, "modules.out"), "yosys", "-q", "-l", logf, "-s", script); err != nil {
		return "", "", err
	}
	text, err := os.ReadFile(logf)
	if err != nil {
		return "", "", fmt.Errorf("synth: %w", err)
	}
	return string(text), logf, nil
}

var (
	moduleHeader = regexp.MustCompile(`^=== (\S+) ===$`)
	paramodName  = regexp.MustCompile(`^\$paramod(?:\$[0-9a-f]+)?\\([A-Za-z_][A-Za-z0-9_]*)`)
)

var hierLine = regexp.MustCompile(`^\s+(\S+)\s+(\d+)$`)

// modName is a module's own name ($paramod...\name\... -> name).
func modName(n string) string {
	if p := paramodName.FindStringSubmatch(n); p != nil {
		return p[1]
	}
	return n
}

// parseModuleStats reads the per-module blocks of the last "Printing
// statistics." of a yosys log and the instance counts of its design
// hierarchy.
func parseModuleStats(log string) (map[string]CellStats, map[string]int) {
	i := strings.LastIndex(log, "Printing statistics.")
	if i < 0 {
		return nil, nil
	}
	inst := map[string]int{}
	if h := strings.LastIndex(log, "=== design hierarchy ==="); h > i {
		for _, line := range strings.Split(log[h:], "\n")[1:] {
			if strings.Contains(line, "Number of") {
				break
			}
			if m := hierLine.FindStringSubmatch(strings.TrimRight(line, "\r")); m != nil {
				n, _ := strconv.Atoi(m[2])
				inst[modName(m[1])] += n
			}
		}
	}
	out := map[string]CellStats{}
	var cur string
	var st CellStats
	flush := func() {
		if cur != "" {
			o := out[cur]
			o.LUT4 += st.LUT4
			o.FFs += st.FFs
			o.Carry += st.Carry
			o.BRAMs += st.BRAMs
			o.PLLs += st.PLLs
			o.Cells += st.Cells
			out[cur] = o
		}
		cur, st = "", CellStats{}
	}
	for _, line := range strings.Split(log[i:], "\n") {
		line = strings.TrimRight(line, "\r")
		if m := moduleHeader.FindStringSubmatch(line); m != nil {
			flush()
			if m[1] == "design" || m[1] == "design hierarchy" {
				continue
			}
			cur = modName(m[1])
			continue
		}
		if strings.HasPrefix(line, "=== design hierarchy ===") {
			flush()
			break
		}
		m := statLine.FindStringSubmatch(line)
		if m == nil || cur == "" {
			continue
		}
		st.addStat(m[1], m[2])
	}
	flush()
	return out, inst
}
