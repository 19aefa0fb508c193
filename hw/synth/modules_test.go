package synth

import (
	"fmt"
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
// proto_engine's budget depends on SETS_MAX (shellConfigs).
var shellBudget = map[string]int{
	"proto_rx":      345, // 244-245 + 88: frame queue in block RAM, no descriptor FIFO, no rescan (467-483 + 101 before)
	"stat_counters": 177, // 159-160 + 12: 9 counters swept a byte per clock (PEND_W 5 as the engine sets it; 117 + 12 with PEND_W 3)
	"proto_tx":      169, // 147 + 17: bit-serial CRC without Ethernet (CRC_SERIAL = 1), one byte sequencer
	"board_top":     50,  // 44 + 4: LED time base two LFSRs stepped on bit times (51 + 24 with a 22-bit counter, 66 + 25 with a prescaler)
	"crc32":         45,  // 43 + 0, per instance (proto_rx; proto_tx's and the engine's CRCs are bit-serial)
	"crc32_serial":  16,  // 15 + 0 (proto_tx's CRC register without Ethernet)
	"uart_rx":       43,  // 37 + 4
	"uart_tx":       32,  // 27 + 4
}

// shellConfigs are the UART-only shells TestShellBudget measures: the
// default SETS_MAX = 8 and the UP5K image's SETS_MAX = 1 (no set loop),
// with proto_engine's budget and the whole shell's (LUT4 + SB_CARRY,
// every instance counted) for each. Without Ethernet there is no link_arb
// (board_top passes the UART's frames to the engine directly).
var shellConfigs = []struct {
	setsMax       int
	engine, total int
}{
	{8, 965, 1850}, // measured: engine 790 + 156, shell 1,793 with the LED LFSRs (1,821 with shell-tx's counters, transmitter and CRC, 2,105 before)
	{1, 815, 1680}, // measured: engine 665-683 + 122, shell 1,628 with the LED LFSRs (1,673; 1,956 before)
}

// TestShellBudget synthesizes the UART-only board shell per module and
// checks every module against shellBudget (a module not listed fails too:
// a new one needs a budget).
func TestShellBudget(t *testing.T) {
	needTools(t, "yosys")
	d, b := design(t, xorBoard, hw.Config{Bits: 8, Lanes: 4})
	for _, c := range shellConfigs {
		t.Run(fmt.Sprintf("sets%d", c.setsMax), func(t *testing.T) {
			t.Parallel()
			mods, inst, err := ModuleCells(testenv.Context(t), t.TempDir(), d, hw.Board{ClksPerBit: 16, Preload: b, SetsMax: c.setsMax})
			if err != nil {
				t.Fatal(err)
			}
			budgets := map[string]int{"proto_engine": c.engine}
			for n, v := range shellBudget {
				budgets[n] = v
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
				budget, ok := budgets[n]
				switch {
				case !ok:
					t.Errorf("module %s (%d LUT4 + carry) has no budget in shellBudget", n, logic)
				case logic > budget:
					t.Errorf("module %s: %d LUT4 + carry, budget %d", n, logic, budget)
				}
			}
			t.Logf("shell (SETS_MAX = %d): %d LUT4 + carry, every instance counted", c.setsMax, shell)
			if shell > c.total {
				t.Errorf("shell: %d LUT4 + carry, budget %d", shell, c.total)
			}
		})
	}
}

// isCoreModule reports whether a module belongs to the generated core
// (its modules are named <prefix>_...).
func isCoreModule(name string, d *hw.Design) bool {
	p := d.Config.Prefix + "_"
	return len(name) > len(p) && name[:len(p)] == p
}

// TestParseModuleStats reads per-module blocks and the design hierarchy of
// a yosys log, $paramod names folded into their module.
func TestParseModuleStats(t *testing.T) {
	log := `Printing statistics.

=== $paramod\crc32\W=8 ===

   Number of cells:                 43
     SB_LUT4                        43

=== board_top ===

   Number of cells:                 99
     SB_CARRY                       25
     SB_DFF                         30
     SB_DFFE                         6
     SB_LUT4                        66
     SB_RAM40_4K                     1

=== design hierarchy ===

   board_top                         1
     $paramod\crc32\W=8              3

   Number of cells:                500
`
	mods, inst := parseModuleStats(log)
	if c := mods["crc32"]; c.LUT4 != 43 || c.Cells != 43 {
		t.Errorf("crc32: %+v", c)
	}
	if b := mods["board_top"]; b.LUT4 != 66 || b.Carry != 25 || b.FFs != 36 || b.BRAMs != 1 {
		t.Errorf("board_top: %+v", b)
	}
	if inst["crc32"] != 3 || inst["board_top"] != 1 || len(mods) != 2 {
		t.Errorf("instances %v, modules %v", inst, mods)
	}
}
