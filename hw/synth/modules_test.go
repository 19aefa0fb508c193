package synth

import (
	"sort"
	"testing"

	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/internal/testenv"
)

// shellBudget is the most LUT4 + SB_CARRY each module of the UART-only
// board shell may take (yosys synth_ice40 -noflatten, one instance; the
// 4-lane XOR-board core below). The figures are the measured sizes (see
// TestShellBudget's log and docs/synthesis.md) plus about 3%: the shell
// must not grow back silently. Lower a budget when a module shrinks.
var shellBudget = map[string]int{
	"proto_engine":  1400, // measured 1,090 LUT4 + 270 carry
	"proto_rx":      592,  // 473 + 101
	"stat_counters": 447,  // 332 + 102
	"proto_tx":      256,  // 216 + 32
	"board_top":     94,   // 66 + 25
	"link_arb":      56,   // 54 + 0: arbitrates the absent Ethernet link
	"crc32":         45,   // 43 + 0, per instance
	"uart_rx":       43,   // 37 + 4
	"uart_tx":       32,   // 27 + 4
}

// shellTotalBudget is the most LUT4 + SB_CARRY of the whole shell, every
// instance counted (measured: 2,962).
const shellTotalBudget = 3050

// TestShellBudget synthesizes the UART-only board shell per module and
// checks every module against shellBudget (a module not listed fails too:
// a new one needs a budget).
func TestShellBudget(t *testing.T) {
	needTools(t, "yosys")
	d, b := design(t, xorBoard, hw.Config{Bits: 8, Lanes: 4})
	mods, inst, err := ModuleCells(testenv.Context(t), t.TempDir(), d, hw.Board{ClksPerBit: 16, Preload: b})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for n := range mods {
		names = append(names, n)
	}
	sort.Strings(names)
	shell := 0
	for _, n := range names {
		m := mods[n]
		logic := m.LUT4 + m.Carry
		t.Logf("%-16s %5d LUT4 %5d carry %5d FF %2d BRAM  x%d", n, m.LUT4, m.Carry, m.FFs, m.BRAMs, inst[n])
		if n == d.Top() || isCoreModule(n, d) {
			continue
		}
		if inst[n] < 1 {
			t.Errorf("module %s: not in the design hierarchy (%v)", n, inst)
		}
		shell += logic * inst[n]
		budget, ok := shellBudget[n]
		switch {
		case !ok:
			t.Errorf("module %s (%d LUT4 + carry) has no budget in shellBudget", n, logic)
		case logic > budget:
			t.Errorf("module %s: %d LUT4 + carry, budget %d", n, logic, budget)
		}
	}
	t.Logf("shell: %d LUT4 + carry, every instance counted", shell)
	if shell > shellTotalBudget {
		t.Errorf("shell: %d LUT4 + carry, budget %d", shell, shellTotalBudget)
	}
}

// isCoreModule reports whether a module belongs to the generated core
// (its modules are named <prefix>_...).
func isCoreModule(name string, d *hw.Design) bool {
	p := d.Config.Prefix + "_"
	return len(name) > len(p) && name[:len(p)] == p
}
