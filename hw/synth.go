package hw

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// SynthStats are the iCE40 cells of a synthesized design.
type SynthStats struct {
	LUTs  int `json:"luts"`  // SB_LUT4
	FFs   int `json:"ffs"`   // SB_DFF*
	Carry int `json:"carry"` // SB_CARRY
	RAMs  int `json:"rams"`  // SB_RAM40_4K
	PLLs  int `json:"plls"`  // SB_PLL40*
	Cells int `json:"cells"` // all cells
}

var statLine = regexp.MustCompile(`^\s+(SB_\w+|Number of cells:)\s+(\d+)$`)

// Synthesize runs `yosys synth_ice40` on a design written into dir and
// returns its cell counts and the yosys log.
func Synthesize(dir string, d *Design) (SynthStats, string, error) {
	files, err := ScriptPaths(d.VerilogFiles())
	if err != nil {
		return SynthStats{}, "", fmt.Errorf("hw: %w", err)
	}
	script := fmt.Sprintf("read_verilog %s; synth_ice40 -top %s; stat", files, d.Top())
	cmd := exec.Command("yosys", "-p", script, "-l", filepath.Join(dir, "yosys.log"))
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	log := string(out)
	if err != nil {
		return SynthStats{}, log, fmt.Errorf("hw: yosys synth_ice40 %s: %w", d.Top(), err)
	}
	st, ok := ParseYosysStats(log)
	if !ok {
		return SynthStats{}, log, fmt.Errorf("hw: yosys printed no statistics")
	}
	return st, log, nil
}

// ParseYosysStats reads the iCE40 cell counts from the last "Printing
// statistics." block of a yosys log (the design after synthesis); false
// when the log has none.
func ParseYosysStats(log string) (SynthStats, bool) {
	i := strings.LastIndex(log, "Printing statistics.")
	if i < 0 {
		return SynthStats{}, false
	}
	var st SynthStats
	for _, line := range strings.Split(log[i:], "\n") {
		m := statLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		switch {
		case m[1] == "Number of cells:":
			st.Cells = n
		case m[1] == "SB_LUT4":
			st.LUTs = n
		case m[1] == "SB_CARRY":
			st.Carry = n
		case m[1] == "SB_RAM40_4K":
			st.RAMs = n
		case strings.HasPrefix(m[1], "SB_PLL40"):
			st.PLLs += n
		case strings.HasPrefix(m[1], "SB_DFF"):
			st.FFs += n
		}
	}
	return st, true
}
