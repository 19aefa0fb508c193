package synth

import (
	"sort"
	"testing"

	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/internal/testenv"
)

// ethShellBudget is the most LUT4 + SB_CARRY each module of the full
// board shell (UART and Ethernet, SETS_MAX = 8, the HX8K image's) may
// take (yosys synth_ice40 -noflatten, one instance; the 4-lane XOR-board
// core). As shellBudget: the measured size plus about 3%, so the
// Ethernet path cannot grow back silently.
var ethShellBudget = map[string]int{
	"eth_mac_rx":    100000,
	"eth_mac_tx":    100000,
	"proto_rx_eth":  100000,
	"link_arb":      100000,
	"proto_rx":      100000,
	"proto_engine":  100000,
	"stat_counters": 100000,
	"proto_tx":      100000,
	"board_top":     100000,
	"crc32":         100000,
	"crc32_serial":  100000,
	"uart_rx":       100000,
	"uart_tx":       100000,
	"sync_fifo":     100000,
}

// ethShellTotal is the budget of the whole Ethernet board shell (LUT4 +
// SB_CARRY, every instance counted).
const ethShellTotal = 100000

// TestEthShellBudget synthesizes the full board shell (ETH_ENABLE = 1)
// per module and checks every module against ethShellBudget (a module not
// listed fails too: a new one needs a budget) and the shell against
// ethShellTotal.
func TestEthShellBudget(t *testing.T) {
	needTools(t, "yosys")
	d, b := design(t, xorBoard, hw.Config{Bits: 8, Lanes: 4})
	mods, inst, err := ModuleCells(testenv.Context(t), t.TempDir(), d, hw.Board{ClksPerBit: 16, Preload: b, Ethernet: true})
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
		budget, ok := ethShellBudget[n]
		switch {
		case !ok:
			t.Errorf("module %s (%d LUT4 + carry) has no budget in ethShellBudget", n, logic)
		case logic > budget:
			t.Errorf("module %s: %d LUT4 + carry, budget %d", n, logic, budget)
		}
	}
	t.Logf("Ethernet board shell: %d LUT4 + carry, every instance counted", shell)
	if shell > ethShellTotal {
		t.Errorf("shell: %d LUT4 + carry, budget %d", shell, ethShellTotal)
	}
}
