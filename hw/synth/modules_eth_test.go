package synth

import (
	"testing"

	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/internal/testenv"
)

// ethShellBudget is the most LUT4 + SB_CARRY each module of the full
// board shell (UART and Ethernet, SETS_MAX = 8: the HX8K image's) may
// take (yosys synth_ice40 -noflatten, one instance; the 4-lane XOR-board
// core). As shellBudget: the measured size (2026-11-26, TestEthShellBudget's
// log) plus about 3%, so the Ethernet path cannot grow back silently.
// Unflattened counts overstate modules fed by constants across their
// ports (eth_mac_tx's local MAC and EtherType, eth_mac_rx's local MAC).
// The UART-side modules are repeated from shellBudget with the Ethernet
// board's sizes (the engine keeps its Ethernet counters and the byte-wide
// CRCs stay).
var ethShellBudget = map[string]int{
	"eth_mac_rx":    318, // 254-264 + 44, 251 FF, 5 BRAM (2048 x 9 store and forward); unchanged RTL measured 298-308 as the rest of the design changed (ABC), so the budget has room for that
	"eth_mac_tx":    196, // 181 + 9, 56 FF
	"proto_rx_eth":  215, // 170 + 38, 123 FF (154 + 38, 185 FF before: the source MAC copy and the header shift register went)
	"link_arb":      56,  // 54 + 0, 3 FF
	"proto_engine":  795, // 772 (669 + 103, 248 FF) with protocol version 6's INFER_WINDOW; 657-676 (582-601 + 75) with branch eng8's LFSR response pc, bank address from next and K checked byte by byte (ABC's mapping varies); 657 + 86 with protocol version 5 (692 + 86 with version 4; 782-787 + 156 before the shell of branch shell5)
	"proto_rx":      212, // 165 + 41: payload bytes fetched on demand, no byte counter (PREFETCH = 0), the parser one 4-bit sequencer (branch rxtx9); 190-193 + 49-51: room in 128-byte blocks (branch rxtx8; 197 + 53 before, 215 + 61 before branch rxtx7; 242 + 88 before)
	"stat_counters": 141, // 125 + 12 (the Ethernet counters included; 181-188 + 12 before)
	"proto_tx":      181, // 152 + 24 (byte-wide CRC with Ethernet; no write-address or length copies, branch rxtx9; 166 + 16 before)
	"board_top":     42,  // 38-40 + 0 (49 + 4 before branch rxtx7)
	"crc32":         45,  // 43 + 0, per instance (5: proto_rx, proto_rx_eth, eth_mac_rx, eth_mac_tx, proto_tx)
	"uart_rx":       34,  // 31 + 2: no output register (BUFFER = 0), the bit timer wrapping by itself (branch rxtx9; 38 + 2 before, 37 + 4 before branch rxtx7)
	"uart_tx":       19,  // 18 + 0 (27 + 4 before branch rxtx7)
}

// ethShellTotal and ethShellFFs are the budgets of the whole Ethernet
// board shell (every instance counted), the measured size plus about 3%:
// LUT4 + SB_CARRY (2,722 measured before branch ethauto's proto_rx_eth
// change, 2,747 after: ABC's noise is +-5 a module; 2,470 with branch
// shell5's smaller engine, proto_rx and stat_counters, 2,427 with protocol
// version 5's engine, 2,276 with branches eng8 and rxtx8, 2,228 with
// eng9 and rxtx9, 2,356 with version 6's INFER_WINDOW) and flip-flops,
// which cost a logic cell each unless packed with their LUT (1,325,
// 1,263, 1,217, 1,200, 1,113, 1,147).
const (
	ethShellTotal = 2427
	ethShellFFs   = 1181
)

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
	shell, ffs := checkModules(t, d, mods, inst, ethShellBudget, "ethShellBudget")
	t.Logf("Ethernet board shell: %d LUT4 + carry, %d FF, every instance counted", shell, ffs)
	if shell > ethShellTotal {
		t.Errorf("shell: %d LUT4 + carry, budget %d", shell, ethShellTotal)
	}
	if ffs > ethShellFFs {
		t.Errorf("shell: %d flip-flops, budget %d", ffs, ethShellFFs)
	}
}
