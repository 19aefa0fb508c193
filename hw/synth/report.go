package synth

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// CellStats are the iCE40 cells of the synthesized netlist (yosys stat).
type CellStats struct {
	LUT4  int `json:"lut4"`
	FFs   int `json:"ffs"`
	Carry int `json:"carry"`
	BRAMs int `json:"brams"`
	PLLs  int `json:"plls"`
	Cells int `json:"cells"` // all cells
}

// Use is the use of one resource after placement.
type Use struct {
	Used      int `json:"used"`
	Available int `json:"available"`
}

// ClockFmax is nextpnr's timing result for one clock.
type ClockFmax struct {
	AchievedMHz   float64 `json:"achieved_mhz"`
	ConstraintMHz float64 `json:"constraint_mhz"`
}

// pnrReport is the part of nextpnr's --report JSON the flow reads.
type pnrReport struct {
	Utilization map[string]Use `json:"utilization"`
	Fmax        map[string]struct {
		Achieved   float64 `json:"achieved"`
		Constraint float64 `json:"constraint"`
	} `json:"fmax"`
}

// readReport reads nextpnr's JSON report.
func readReport(path string) (map[string]Use, map[string]ClockFmax, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: nextpnr wrote no report: %w", ErrTool, err)
	}
	var r pnrReport
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, nil, fmt.Errorf("%w: nextpnr report %s: %w", ErrTool, path, err)
	}
	clocks := map[string]ClockFmax{}
	for k, v := range r.Fmax {
		clocks[k] = ClockFmax{AchievedMHz: v.Achieved, ConstraintMHz: v.Constraint}
	}
	return r.Utilization, clocks, nil
}

// utilLine matches nextpnr's "Device utilisation" lines:
// "Info: 	         ICESTORM_LC:  6618/ 5280   125%".
var utilLine = regexp.MustCompile(`^Info:\s+(\w+):\s+(\d+)/\s*(\d+)\s+(\d+)%`)

// overUse returns the first resource of a nextpnr log whose use exceeds
// the device.
func overUse(log string) (name string, u Use, ok bool) {
	for _, line := range strings.Split(log, "\n") {
		m := utilLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		used, _ := strconv.Atoi(m[2])
		avail, _ := strconv.Atoi(m[3])
		if used > avail {
			return m[1], Use{Used: used, Available: avail}, true
		}
	}
	return "", Use{}, false
}

// resourceName is the plain name of a nextpnr/yosys resource.
func resourceName(bel string) string {
	switch bel {
	case "ICESTORM_LC":
		return "logic cells (ICESTORM_LC: LUT4 + flip-flop)"
	case "ICESTORM_RAM", "SB_RAM40_4K":
		return "block RAM (SB_RAM40_4K)"
	case "SB_IO":
		return "I/O pins (SB_IO)"
	case "ICESTORM_PLL":
		return "PLLs"
	case "SB_GB":
		return "global buffers (SB_GB)"
	}
	return bel
}

// noFit formats an ErrNoFit error.
func noFit(dev Device, bel string, u Use, log string) error {
	return fmt.Errorf("%w on %s: %s: %d needed, %d available (%d over, %.0f%%) (log: %s)",
		ErrNoFit, dev.Name, resourceName(bel), u.Used, u.Available, u.Used-u.Available,
		100*float64(u.Used)/float64(u.Available), log)
}
