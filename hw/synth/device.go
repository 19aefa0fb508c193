package synth

import (
	"fmt"
	"sort"
	"strings"
)

// Device is an iCE40 part on a board this flow builds for.
type Device struct {
	// Name is the part as the CLI spells it: "up5k" or "hx8k".
	Name string `json:"name"`
	// Board is the folder under rtl/boards with the device tops and pins.
	Board string `json:"board"`
	// Package is nextpnr's --package.
	Package string `json:"package"`
	// LCs and BRAMs are the logic cells (LUT4 + flip-flop) and 4-kbit
	// block RAMs (SB_RAM40_4K) of the part.
	LCs   int `json:"lcs"`
	BRAMs int `json:"brams"`
	// RefMHz is the board oscillator feeding the PLL.
	RefMHz float64 `json:"ref_mhz"`
	// PCF is the pin file, relative to the board folder.
	PCF string `json:"pcf"`
	// MIIClocks are the top-level ports carrying the PHY's 25 MHz MII
	// clocks (constrained with set_frequency in the full board top).
	MIIClocks []string `json:"-"`
	// DualClock is true when the device top has the dual-clock board
	// (CORE_CLK = 1: the core on the PLL's clock, the shell on half).
	DualClock bool `json:"dual_clock"`
	// AutoMaxMHz is the highest core clock Auto tries without
	// Options.MaxMHz: about twice the board shell's Fmax measured on the
	// part (UP5K 29-33 MHz, HX8K 45-57 MHz), no more than the core alone
	// reaches there (UP5K 60 lanes 49-53 MHz, HX8K 64 lanes 130 MHz).
	AutoMaxMHz float64 `json:"auto_max_mhz"`
}

// devices are the supported parts.
var devices = map[string]Device{
	"up5k": {Name: "up5k", Board: "icebreaker", Package: "sg48", LCs: 5280, BRAMs: 30, RefMHz: 12, PCF: "icebreaker.pcf",
		MIIClocks: []string{"ETH_RX_CLK", "ETH_TX_CLK"}, DualClock: true, AutoMaxMHz: 60},
	"hx8k": {Name: "hx8k", Board: "hx8k", Package: "ct256", LCs: 7680, BRAMs: 32, RefMHz: 12, PCF: "hx8k.pcf",
		MIIClocks: []string{"ETH_RX_CLK", "ETH_TX_CLK"}, DualClock: true, AutoMaxMHz: 108},
}

// DeviceNames returns the supported device names, sorted.
func DeviceNames() []string {
	n := make([]string, 0, len(devices))
	for k := range devices {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// LookupDevice returns the device called name (case-insensitive); the
// error wraps ErrDevice.
func LookupDevice(name string) (Device, error) {
	d, ok := devices[strings.ToLower(strings.TrimSpace(name))]
	if !ok {
		return Device{}, fmt.Errorf("%w: %q (supported: %s)", ErrDevice, name, strings.Join(DeviceNames(), ", "))
	}
	return d, nil
}

// nextpnrFlag is the device option of nextpnr-ice40 (--up5k, --hx8k).
func (d Device) nextpnrFlag() string { return "--" + d.Name }
