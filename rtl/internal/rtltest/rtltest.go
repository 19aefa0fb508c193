// Package rtltest holds the helpers the Verilog test suites of rtl/ and
// rtl/board share: tool checks and commands with deadlines.
package rtltest

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// NeedTools fails (or, with -short, skips) when a tool is missing.
func NeedTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if testing.Short() {
				t.Skipf("%s not found (skipped in -short mode); run scripts/install-deps.sh", tool)
			}
			t.Fatalf("%s not found in PATH: run scripts/install-deps.sh to install verilator, yosys and g++", tool)
		}
	}
}

// Run executes a command in dir with a deadline and returns its combined
// output.
func Run(t *testing.T, dir string, timeout time.Duration, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out after %v: %w", timeout, err)
	}
	return string(out), err
}

// Abs is filepath.Abs that fails the test on an error.
func Abs(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs(rel)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
