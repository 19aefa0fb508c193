package synth

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/ptmhw/ptm/hw"
)

var statLine = regexp.MustCompile(`^\s+(SB_\w+|Number of cells:)\s+(\d+)$`)

// SynthCore runs a plain `yosys synth_ice40` on a generated core alone
// (its files written into dir, no bank pass, no device top) and returns
// its cell counts and the yosys log: the quick check that a design maps to
// iCE40 cells, with one block RAM per lane.
func SynthCore(ctx context.Context, dir string, d *hw.Design) (CellStats, string, error) {
	if err := d.Write(dir); err != nil {
		return CellStats{}, "", err
	}
	files, err := hw.ScriptPaths(d.VerilogFiles())
	if err != nil {
		return CellStats{}, "", fmt.Errorf("%w: %w", ErrOptions, err)
	}
	script := fmt.Sprintf("read_verilog %s; synth_ice40 -top %s; stat", files, d.Top())
	logf := filepath.Join(dir, "yosys.log")
	err = runTool(ctx, dir, filepath.Join(dir, "yosys.out"), "yosys", "-p", script, "-l", logf)
	log, _ := os.ReadFile(logf)
	if err != nil {
		return CellStats{}, string(log), err
	}
	st, ok := parseStat(string(log))
	if !ok {
		return st, string(log), fmt.Errorf("%w: yosys printed no statistics (log: %s)", ErrTool, logf)
	}
	return st, string(log), nil
}

// parseStat reads the iCE40 cell counts from the last "Printing
// statistics." block of a yosys log (the design after synthesis); false
// when the log has none.
func parseStat(log string) (CellStats, bool) {
	i := strings.LastIndex(log, "Printing statistics.")
	if i < 0 {
		return CellStats{}, false
	}
	var st CellStats
	for _, line := range strings.Split(log[i:], "\n") {
		m := statLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		st.addStat(m[1], m[2])
	}
	return st, true
}

// addStat adds one line of yosys's stat (a cell type or "Number of
// cells:", and its count) to st.
func (st *CellStats) addStat(kind, count string) {
	n, _ := strconv.Atoi(count)
	switch {
	case kind == "Number of cells:":
		st.Cells = n
	case kind == "SB_LUT4":
		st.LUT4 = n
	case kind == "SB_CARRY":
		st.Carry = n
	case kind == "SB_RAM40_4K":
		st.BRAMs = n
	case strings.HasPrefix(kind, "SB_PLL40"):
		st.PLLs += n
	case strings.HasPrefix(kind, "SB_DFF"):
		st.FFs += n
	}
}
