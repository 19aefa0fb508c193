package synth

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
)

// PLL is an iCE40 PLL setting (SB_PLL40_*, FEEDBACK_PATH "SIMPLE"):
// f_out = f_in * (DIVF+1) / ((DIVR+1) * 2^DIVQ).
type PLL struct {
	DIVR        int     `json:"divr"`
	DIVF        int     `json:"divf"`
	DIVQ        int     `json:"divq"`
	FilterRange int     `json:"filter_range"`
	InMHz       float64 `json:"in_mhz"`
	OutMHz      float64 `json:"out_mhz"` // achieved
}

var (
	pllField    = regexp.MustCompile(`(?m)^(DIVR|DIVF|DIVQ|FILTER_RANGE):\s*(\d+)`)
	pllAchieved = regexp.MustCompile(`(?m)^F_PLLOUT:\s*([0-9.]+) MHz \(achieved\)`)
)

// ParsePLL reads icepll's report.
func ParsePLL(text string, inMHz float64) (PLL, error) {
	p := PLL{InMHz: inMHz}
	got := map[string]bool{}
	for _, m := range pllField.FindAllStringSubmatch(text, -1) {
		n, _ := strconv.Atoi(m[2])
		got[m[1]] = true
		switch m[1] {
		case "DIVR":
			p.DIVR = n
		case "DIVF":
			p.DIVF = n
		case "DIVQ":
			p.DIVQ = n
		case "FILTER_RANGE":
			p.FilterRange = n
		}
	}
	m := pllAchieved.FindStringSubmatch(text)
	if len(got) != 4 || m == nil {
		return p, fmt.Errorf("%w: icepll: cannot parse its report", ErrTool)
	}
	p.OutMHz, _ = strconv.ParseFloat(m[1], 64)
	return p, nil
}

// FindPLL asks icepll for the setting closest to outMHz from inMHz and
// keeps its report in logPath.
func FindPLL(ctx context.Context, inMHz, outMHz float64, logPath string) (PLL, error) {
	if outMHz < 16 || outMHz > 275 {
		return PLL{}, fmt.Errorf("%w: clock %.2f MHz: the iCE40 PLL makes 16..275 MHz", ErrOptions, outMHz)
	}
	args := []string{"-i", strconv.FormatFloat(inMHz, 'f', -1, 64), "-o", strconv.FormatFloat(outMHz, 'f', -1, 64)}
	if err := runTool(ctx, filepath.Dir(logPath), logPath, "icepll", args...); err != nil {
		return PLL{}, err
	}
	text, err := os.ReadFile(logPath)
	if err != nil {
		return PLL{}, fmt.Errorf("synth: %w", err)
	}
	p, err := ParsePLL(string(text), inMHz)
	if err != nil {
		return p, fmt.Errorf("%w (log: %s)", err, logPath)
	}
	return p, nil
}
