package synth

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The bank pass works on the yosys JSON netlist written after the generic
// memory passes (synth_ice40 -run :map_ram), where every lane's threshold
// bank is one $mem_v2 cell with one read and one write port, and before
// the memories are mapped to SB_RAM40_4K. It does two things, both on the
// core's bank memories only (MEMID ...g_lane[<l>].lane.bank.mem, the bank
// of lane l in the core's generate loop; ...lane_<l>.bank.mem in older
// cores, which instantiated every lane by name):
//
//  1. Relax read/write collisions. The core never reads a bank while it is
//     written (docs/core-interface.md: bank writes only while idle; a
//     write during a request makes that request undefined), so the
//     bypass logic yosys adds to give a defined read on a same-address
//     collision (about 13 LUTs and 25 flip-flops per lane) is dead. The
//     pass sets RD_COLLISION_X_MASK, as synth_ice40 -no-rw-check would,
//     but for the banks only (the link FIFOs keep their checks).
//  2. Pack banks. All lanes read the same address on the same enable and
//     are written through one shared address and data bus, one lane at a
//     time, so banks whose words together fit 16 bits and whose depth
//     fits 256 are one 256 x 16 block RAM: the pass merges runs of
//     consecutive lanes (two at B = 8, three at B = 5, four at B = 4) into
//     one memory as wide as their sum, with a write enable per lane's
//     bits. The read data and behaviour at the ports are unchanged; 1/2
//     (B = 8) or 1/4 (B = 4) of the block RAMs, all of their read
//     bandwidth.

// BankPass reports what the bank pass did.
type BankPass struct {
	// Banks is the number of bank memories found, Relaxed those whose
	// collision check was dropped, Packed the number of banks merged into
	// another bank's block RAM (the pairs at B = 8; three per block RAM
	// of four lanes at B = 4).
	Banks   int `json:"banks"`
	Relaxed int `json:"relaxed"`
	Packed  int `json:"packed_pairs"`
}

var bankMemID = regexp.MustCompile(`(?:^|[.\\])(?:g_lane\[(\d+)\]\.lane|lane_(\d+))\.bank\.mem$`)

// autoSuffix is appended to the automatic ($...) cell and wire names of
// the netlist: yosys numbers the names it makes with a counter that
// read_json does not advance, so a name made in the second stage could
// otherwise repeat one from the first.
const autoSuffix = "$j"

// renameAuto appends autoSuffix to the automatic names of a map of cells
// or netnames.
func renameAuto(m map[string]any) {
	for k, v := range m {
		if strings.HasPrefix(k, "$") && !strings.HasSuffix(k, autoSuffix) {
			delete(m, k)
			m[k+autoSuffix] = v
		}
	}
}

// paramInt decodes a yosys JSON parameter (binary string or number).
func paramInt(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		n, err := x.Int64()
		return n, err == nil
	case string:
		s := strings.TrimSpace(x)
		if s == "" || strings.Trim(s, "01") != "" {
			return 0, false
		}
		if len(s) > 62 {
			s = strings.TrimLeft(s, "0")
			if len(s) > 62 {
				return 0, false
			}
			if s == "" {
				return 0, true
			}
		}
		n, err := strconv.ParseInt(s, 2, 64)
		return n, err == nil
	}
	return 0, false
}

// param32 is a 32-bit binary parameter string.
func param32(n int) string { return fmt.Sprintf("%032b", uint32(n)) }

// bitString returns a bit-vector parameter (MSB first) as a string.
func bitString(v any, width int) (string, bool) {
	switch x := v.(type) {
	case string:
		s := strings.TrimSpace(x)
		if len(s) == width {
			return s, true
		}
		if len(s) < width && strings.Trim(s, "01xz") == "" {
			return strings.Repeat("0", width-len(s)) + s, true
		}
	case json.Number:
		n, err := x.Int64()
		if err == nil && width <= 64 {
			s := strconv.FormatInt(n, 2)
			if len(s) <= width {
				return strings.Repeat("0", width-len(s)) + s, true
			}
		}
	}
	return "", false
}

type memCell struct {
	name string
	lane int
	cell map[string]any
}

func (m memCell) params() map[string]any {
	p, _ := m.cell["parameters"].(map[string]any)
	return p
}

func (m memCell) conns() map[string]any {
	c, _ := m.cell["connections"].(map[string]any)
	return c
}

func (m memCell) intParam(name string) int {
	n, _ := paramInt(m.params()[name])
	return int(n)
}

// key is the grouping key of mergeable banks: everything but the data,
// the write enables, the width and the contents must be equal.
func (m memCell) key() string {
	var b strings.Builder
	for _, p := range []string{"SIZE", "OFFSET", "ABITS", "RD_PORTS", "WR_PORTS", "RD_CLK_ENABLE", "RD_CLK_POLARITY",
		"RD_TRANSPARENCY_MASK", "RD_COLLISION_X_MASK", "RD_CE_OVER_SRST", "RD_WIDE_CONTINUATION",
		"WR_CLK_ENABLE", "WR_CLK_POLARITY", "WR_PRIORITY_MASK", "WR_WIDE_CONTINUATION"} {
		fmt.Fprintf(&b, "%s=%v;", p, m.params()[p])
	}
	for _, c := range []string{"RD_CLK", "RD_EN", "RD_ADDR", "RD_ARST", "RD_SRST", "WR_CLK", "WR_ADDR"} {
		j, _ := json.Marshal(m.conns()[c])
		fmt.Fprintf(&b, "%s=%s;", c, j)
	}
	return b.String()
}

// PassBanks runs the bank pass on a yosys JSON netlist (top module top)
// and returns the rewritten netlist. relax drops the banks' collision
// checks; pack merges pairs of banks into one block RAM.
func PassBanks(netlist []byte, top string, relax, pack bool) ([]byte, BankPass, error) {
	var st BankPass
	dec := json.NewDecoder(bytes.NewReader(netlist))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, st, fmt.Errorf("bank pass: %w", err)
	}
	mods, _ := doc["modules"].(map[string]any)
	mod, _ := mods[top].(map[string]any)
	if mod == nil {
		return nil, st, fmt.Errorf("bank pass: module %q not in the netlist", top)
	}
	cells, _ := mod["cells"].(map[string]any)
	var banks []memCell
	for name, c := range cells {
		cell, _ := c.(map[string]any)
		if cell == nil || cell["type"] != "$mem_v2" {
			continue
		}
		p, _ := cell["parameters"].(map[string]any)
		id, _ := p["MEMID"].(string)
		m := bankMemID.FindStringSubmatch(strings.TrimSpace(id))
		if m == nil {
			continue
		}
		lane, _ := strconv.Atoi(m[1] + m[2])
		mc := memCell{name: name, lane: lane, cell: cell}
		if mc.intParam("RD_PORTS") != 1 || mc.intParam("WR_PORTS") != 1 {
			continue
		}
		banks = append(banks, mc)
	}
	st.Banks = len(banks)
	sort.Slice(banks, func(i, j int) bool { return banks[i].lane < banks[j].lane })
	if relax {
		for _, b := range banks {
			if b.intParam("RD_TRANSPARENCY_MASK") != 0 {
				continue // a transparent read port has defined collisions
			}
			b.params()["RD_COLLISION_X_MASK"] = "1"
			st.Relaxed++
		}
	}
	if pack {
		groups := map[string][]memCell{}
		var order []string
		for _, b := range banks {
			k := b.key()
			if _, ok := groups[k]; !ok {
				order = append(order, k)
			}
			groups[k] = append(groups[k], b)
		}
		for _, k := range order {
			g := groups[k]
			for i := 0; i < len(g); {
				a, j := g[i], i+1
				if a.intParam("SIZE") <= 256 {
					for ; j < len(g) && a.intParam("WIDTH")+g[j].intParam("WIDTH") <= 16; j++ {
						if err := merge(a, g[j]); err != nil {
							return nil, st, err
						}
						delete(cells, g[j].name)
						st.Packed++
					}
				}
				i = j
			}
		}
	}
	// The cell library (read -lib by synth_ice40) goes: JSON does not keep
	// its parameter declarations; the second stage reads it again.
	for name, m := range mods {
		mm, _ := m.(map[string]any)
		attrs, _ := mm["attributes"].(map[string]any)
		if name != top && (attrs["blackbox"] != nil || attrs["whitebox"] != nil) {
			delete(mods, name)
		}
	}
	renameAuto(cells)
	if nets, ok := mod["netnames"].(map[string]any); ok {
		renameAuto(nets)
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, st, fmt.Errorf("bank pass: %w", err)
	}
	return out, st, nil
}

// merge makes a the concatenation {b, a} of two memories (a's bits low);
// a may already hold several banks.
func merge(a, b memCell) error {
	pa, pb := a.params(), b.params()
	wa, wb, size := a.intParam("WIDTH"), b.intParam("WIDTH"), a.intParam("SIZE")
	ia, oka := bitString(pa["INIT"], size*wa)
	ib, okb := bitString(pb["INIT"], size*wb)
	if !oka || !okb {
		return fmt.Errorf("bank pass: cannot read INIT of %s / %s", a.name, b.name)
	}
	var init strings.Builder
	for w := size - 1; w >= 0; w-- { // MSB first: highest address first
		init.WriteString(ib[len(ib)-(w+1)*wb : len(ib)-w*wb])
		init.WriteString(ia[len(ia)-(w+1)*wa : len(ia)-w*wa])
	}
	pa["INIT"] = init.String()
	for _, v := range []string{"RD_ARST_VALUE", "RD_INIT_VALUE", "RD_SRST_VALUE"} {
		va, oka := bitString(pa[v], wa)
		vb, okb := bitString(pb[v], wb)
		if !oka || !okb {
			return fmt.Errorf("bank pass: cannot read %s of %s / %s", v, a.name, b.name)
		}
		pa[v] = vb + va
	}
	pa["WIDTH"] = param32(wa + wb)
	if id, ok := pa["MEMID"].(string); ok {
		pa["MEMID"] = strings.TrimSpace(id) + "_pair"
	}
	ca, cb := a.conns(), b.conns()
	for _, port := range []string{"RD_DATA", "WR_DATA", "WR_EN"} {
		la, _ := ca[port].([]any)
		lb, _ := cb[port].([]any)
		if len(la) != wa || len(lb) != wb {
			return fmt.Errorf("bank pass: %s of %s / %s has %d / %d bits, want %d / %d", port, a.name, b.name, len(la), len(lb), wa, wb)
		}
		ca[port] = append(append([]any{}, la...), lb...)
	}
	return nil
}
