package synth

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Tools are the programs the flow runs.
var Tools = []string{"yosys", "nextpnr-ice40", "icepack", "icepll"}

// CheckTools returns an ErrToolMissing error naming the first tool of
// names that the active toolchain (ActiveToolchain) cannot run: for
// Debian, one not on PATH; for YoWASP, node or the npm package missing.
func CheckTools(names ...string) error {
	return ActiveToolchain().check(names...)
}

// runTool runs name with args in dir, writing its combined output to
// logPath. A failure wraps ErrTool (or the context's error) and quotes the
// most telling line of the output.
func runTool(ctx context.Context, dir, logPath, name string, args ...string) error {
	return runToolIn(ctx, dir, dir, logPath, name, args...)
}

// runToolIn is runTool for a tool that reads or writes files outside
// dir but inside mount (dir's parent or dir itself): the YoWASP
// toolchain sees only mount's files.
func runToolIn(ctx context.Context, dir, mount, logPath, name string, args ...string) error {
	if err := CheckTools(name); err != nil {
		return err
	}
	f, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	cmd, err := ActiveToolchain().exec(ctx, dir, mount, name, args...)
	if err != nil {
		f.Close()
		return err
	}
	cmd.Stdout = f
	cmd.Stderr = f
	runErr := cmd.Run()
	if cerr := f.Close(); cerr != nil && runErr == nil {
		runErr = cerr
	}
	if runErr == nil {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("synth: %s stopped: %w (log: %s)", name, ctx.Err(), logPath)
	}
	var ee *exec.ExitError
	if errors.As(runErr, &ee) {
		return fmt.Errorf("%w: %s: %s (log: %s)", ErrTool, name, errorLine(logPath), logPath)
	}
	return fmt.Errorf("%w: %s: %w (log: %s)", ErrTool, name, runErr, logPath)
}

// errorLine returns the first line starting with "ERROR" (or the last
// non-empty line) of a log.
func errorLine(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return "no log"
	}
	defer f.Close()
	var first, last string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		last = line
		if first == "" && (strings.HasPrefix(line, "ERROR") || strings.Contains(line, " ERROR: ")) {
			first = line
		}
	}
	if first != "" {
		return first
	}
	if last == "" {
		return "no output"
	}
	return last
}

// yosysDatDir returns yosys's share directory (cells_sim.v lives in its
// ice40/ folder): yosys-config --datdir when available, else the share
// folder beside the yosys binary.
func yosysDatDir() (string, error) {
	if out, err := exec.Command("yosys-config", "--datdir").Output(); err == nil {
		if d := strings.TrimSpace(string(out)); d != "" {
			return d, nil
		}
	}
	bin, err := exec.LookPath("yosys")
	if err != nil {
		return "", fmt.Errorf("%w: yosys is not on PATH; run scripts/install-deps.sh", ErrToolMissing)
	}
	if r, err := filepath.EvalSymlinks(bin); err == nil {
		bin = r
	}
	d := filepath.Join(filepath.Dir(bin), "..", "share", "yosys")
	if _, err := os.Stat(filepath.Join(d, "ice40", "cells_sim.v")); err != nil {
		return "", fmt.Errorf("%w: cannot find yosys's ice40/cells_sim.v (tried %s)", ErrToolMissing, d)
	}
	return filepath.Clean(d), nil
}

// CellsSim returns the path of yosys's iCE40 cell simulation models.
func CellsSim() (string, error) {
	d, err := yosysDatDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "ice40", "cells_sim.v"), nil
}
