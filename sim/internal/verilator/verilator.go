// Package verilator finds the Verilator on PATH for the simulation
// packages (sim/cosim, sim/board): its version keys their build caches.
package verilator

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
)

// ErrNotFound is returned when verilator is not on PATH.
var ErrNotFound = errors.New("verilator not found on PATH: run scripts/install-deps.sh")

var (
	once    sync.Once
	version string
	verr    error
)

// Version returns `verilator --version` (looked up once), or ErrNotFound.
func Version() (string, error) {
	once.Do(func() {
		path, err := exec.LookPath("verilator")
		if err != nil {
			verr = ErrNotFound
			return
		}
		out, err := exec.Command(path, "--version").Output()
		if err != nil {
			verr = fmt.Errorf("verilator --version: %w", err)
			return
		}
		version = strings.TrimSpace(string(out))
	})
	return version, verr
}
