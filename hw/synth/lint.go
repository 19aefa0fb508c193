package synth

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/rtl"
)

// vendorWaivers are the Verilator warnings the yosys iCE40 simulation
// models raise in themselves (black-box PLLs with undriven outputs and
// unused inputs and parameters, many modules in one file). They are
// waived for that file only; the project's files get -Wall in full.
var vendorWaivers = []string{"DECLFILENAME", "UNUSEDSIGNAL", "UNUSEDPARAM", "UNDRIVEN"}

// LintTop runs verilator --lint-only -Wall on a device top (the full board,
// UART-only with noEth, or with coreOnly core_top) with the generated core
// d and yosys's iCE40 cell models, with the top's parameters for d. Files
// are written to dir; the log is dir/lint.log. Any warning outside the
// vendor models fails.
func LintTop(ctx context.Context, device string, coreOnly, noEth bool, d *hw.Design, bank *fixed.Bank, dir string) error {
	return lintTop(ctx, device, coreOnly, noEth, false, d, bank, dir)
}

// lintTop is LintTop with the dual-clock board (dual: CORE_CLK = 1, the
// PLL at 54 MHz for the core and the shell at 27 MHz; the iCEBreaker only).
func lintTop(ctx context.Context, device string, coreOnly, noEth, dual bool, d *hw.Design, bank *fixed.Bank, dir string) error {
	dev, err := LookupDevice(device)
	if err != nil {
		return err
	}
	if err := CheckTools("verilator"); err != nil {
		return err
	}
	cells, err := CellsSim()
	if err != nil {
		return err
	}
	coreDir := filepath.Join(dir, "core")
	if err := d.Write(coreDir); err != nil {
		return err
	}
	topMod, files, err := sources(dir, dev, coreOnly, dual)
	if err != nil {
		return err
	}
	qcells, err := hw.ScriptPath(cells)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrOptions, err)
	}
	vlt := "`verilator_config\n"
	for _, w := range vendorWaivers {
		vlt += fmt.Sprintf("lint_off -rule %s -file %s\n", w, qcells)
	}
	waivers := filepath.Join(dir, "vendor_waivers.vlt")
	if err := os.WriteFile(waivers, []byte(vlt), 0o644); err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	args := []string{"--lint-only", "-Wall", "--timescale", "1ns/1ps", "--top-module", topMod,
		"-DNO_ICE40_DEFAULT_ASSIGNMENTS", "-DPTM_CORE=" + d.Top(), waivers,
		"-I" + filepath.Join(dir, "rtl", rtl.IncludeDir)}
	pll, clk := PLL{DIVF: 63, DIVQ: 4, FilterRange: 1, InMHz: 12, OutMHz: 48}, 48.0
	if dual {
		pll, clk = PLL{DIVF: 71, DIVQ: 4, FilterRange: 1, InMHz: 12, OutMHz: 54}, 27
	}
	params, err := topParams(d, bank, pll, ClksPerBit(clk), coreOnly, noEth, 0, dual)
	if err != nil {
		return err
	}
	for _, p := range params {
		args = append(args, "-G"+p.Name+"="+p.Value)
	}
	for _, f := range d.VerilogFiles() {
		args = append(args, filepath.Join(coreDir, f))
	}
	args = append(args, files...)
	args = append(args, cells)
	return runTool(ctx, coreDir, filepath.Join(dir, "lint.log"), "verilator", args...)
}
