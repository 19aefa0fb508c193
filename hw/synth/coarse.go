package synth

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Yosys 0.23's synth_ice40 maps small comparisons with a constant to LUTs
// in its coarse step (techmap -map +/cmp2lut.v -D LUT_WIDTH=4), and
// cmp2lut builds a wrong truth table for a signed comparison against a
// negative constant (YosysHQ/yosys issue #6085: the variable operand is
// read as signed, the constant as unsigned). The generated core clips its
// class sums with exactly such comparisons (v_t < -T), so a model whose
// class sums fit 4 bits and whose clip is not trivial (-T representable
// in them: few clauses per TM and a small T, like the 3-clause, T = 2
// shape of TestBankPassSim) gets a bitstream that computes wrong clipped
// sums, votes and statistics, silently. The shipped models escape it
// (Iris: 5-bit class sums; noisy XOR: T = 15 folds the clip away); the
// test caught it on the small shape, where the netlist disagreed with
// the RTL.
//
// The flow therefore runs synth_ice40 only up to its coarse step, then
// the coarse step's own commands without cmp2lut (the comparisons stay
// $lt/$gt cells and are mapped later like any other), then synth_ice40
// again from map_ram on. The commands are read from `yosys -h
// synth_ice40` so they follow the installed yosys.

var (
	coarseMu sync.Mutex
	coarseBy = map[Toolchain][]string{}
	optArgs  = regexp.MustCompile(`\s*\[[^\]]*\]`)
)

// CoarseScript returns the commands of synth_ice40's coarse step (for the
// default options) without the cmp2lut techmap.
func CoarseScript(ctx context.Context) ([]string, error) {
	t := ActiveToolchain()
	coarseMu.Lock()
	defer coarseMu.Unlock()
	if c, ok := coarseBy[t]; ok {
		return c, nil
	}
	if err := CheckTools("yosys"); err != nil {
		return nil, err
	}
	cmd, err := t.exec(ctx, "", "", "yosys", "-h", "synth_ice40")
	if err != nil {
		return nil, err
	}
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%w: yosys -h synth_ice40 (toolchain %s): %w", ErrTool, t, err)
	}
	c, err := parseCoarse(string(out))
	if err != nil {
		return nil, err
	}
	coarseBy[t] = c
	return c, nil
}

// parseCoarse extracts the coarse label's commands from synth_ice40's
// help: conditional lines ("(if -dsp)") and optional arguments ("[...]")
// go, and so does cmp2lut.
func parseCoarse(help string) ([]string, error) {
	var cmds []string
	in, cmp2lut := false, false
	for _, line := range strings.Split(help, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "    ") && !strings.HasPrefix(line, "     ") && strings.HasSuffix(t, ":"):
			in = t == "coarse:"
			continue
		case !in || t == "":
			continue
		case strings.Contains(t, "(if "):
			continue
		case strings.Contains(t, "cmp2lut"):
			cmp2lut = true
			continue
		}
		cmds = append(cmds, optArgs.ReplaceAllString(t, ""))
	}
	if len(cmds) < 5 || !cmp2lut || cmds[len(cmds)-1] != "opt_clean" {
		return nil, fmt.Errorf("%w: cannot read synth_ice40's coarse step from `yosys -h synth_ice40` (expected a cmp2lut techmap in it)", ErrTool)
	}
	return cmds, nil
}
