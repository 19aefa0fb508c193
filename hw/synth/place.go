package synth

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// placed is what placeAndPack learned from nextpnr's report.
type placed struct {
	util     map[string]Use
	clocks   map[string]ClockFmax
	core     ClockFmax // the core clock's timing
	coreName string
	// coreOwn and shell are the dual-clock board's clk_core and clk
	// (zero for one clock).
	coreOwn, shell ClockFmax
	timingErr      error // non-nil when the core clock misses the PLL clock
}

// placeAndPack places and routes dir/top.json with dir/build.pcf at
// placeMHz (nextpnr-ice40 with o.Seed, logged in logs["nextpnr"]), turns
// a design that does not fit into ErrNoFit, reads the timing report, and
// packs dir/top.bin (logs["icepack"]) only when the core clock meets
// pllMHz: a bitstream whose clock runs above its Fmax is no image to
// flash, and a bitstream of an earlier run must not pass for this one's.
func (o *Options) placeAndPack(ctx context.Context, dir string, dev Device, placeMHz, pllMHz float64, dual bool, logs map[string]string) (*placed, error) {
	path := func(name string) string { return filepath.Join(dir, name) }
	o.step("nextpnr-ice40 %s --package %s --freq %.2f --seed %d", dev.nextpnrFlag(), dev.Package, placeMHz, o.Seed)
	logs["nextpnr"] = path("nextpnr.log")
	stop := o.heartbeat("nextpnr-ice40")
	err := runTool(ctx, dir, path("nextpnr.out"), "nextpnr-ice40", dev.nextpnrFlag(), "--package", dev.Package,
		"--json", path("top.json"), "--pcf", path("build.pcf"), "--freq", strconv.FormatFloat(placeMHz, 'f', -1, 64),
		"--seed", strconv.Itoa(o.Seed), "--timing-allow-fail", "--report", path("report.json"),
		"--asc", path("top.asc"), "--log", logs["nextpnr"], "-q")
	stop()
	if err != nil {
		plog, _ := os.ReadFile(logs["nextpnr"])
		// The output too: a YoWASP nextpnr that stops in a trap leaves
		// no log, only its output.
		out, _ := os.ReadFile(path("nextpnr.out"))
		plog = append(plog, out...)
		if name, u, over := overUse(string(plog)); over {
			return nil, noFit(dev, name, u, logs["nextpnr"])
		}
		// Every cell counted within the device, but the placer found no
		// legal placement: full all the same.
		if strings.Contains(string(plog), "Unable to find legal placement") {
			return nil, fmt.Errorf("%w on %s: the placer found no legal placement at the utilisation limit (log: %s)",
				ErrNoFit, dev.Name, logs["nextpnr"])
		}
		if errors.Is(err, ErrTool) {
			l := logs["nextpnr"]
			if _, err := os.Stat(l); err != nil {
				l = path("nextpnr.out")
			}
			return nil, fmt.Errorf("%w: nextpnr-ice40: %s (log: %s)", ErrTool, errorLine(l), l)
		}
		return nil, err
	}
	p := &placed{}
	if p.util, p.clocks, err = readReport(path("report.json")); err != nil {
		return nil, err
	}
	if err := os.Remove(path("top.bin")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("synth: %w", err)
	}
	if dual {
		p.core, p.coreName, p.coreOwn, p.shell, p.timingErr = dualClocks(p.clocks, pllMHz)
	} else {
		p.core, p.coreName, p.timingErr = coreClock(p.clocks, dev, pllMHz)
	}
	if p.timingErr == nil {
		o.step("icepack")
		logs["icepack"] = path("icepack.log")
		if err := runTool(ctx, dir, logs["icepack"], "icepack", path("top.asc"), path("top.bin")); err != nil {
			return nil, err
		}
	}
	return p, nil
}
