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
}

// devices are the supported parts.
var devices = map[string]Device{
	"up5k": {Name: "up5k", Board: "icebreaker", Package: "sg48", LCs: 5280, BRAMs: 30, RefMHz: 12, PCF: "icebreaker.pcf",
		MIIClocks: []string{"ETH_RX_CLK", "ETH_TX_CLK"}},
	"hx8k": {Name: "hx8k", Board: "hx8k", Package: "ct256", LCs: 7680, BRAMs: 32, RefMHz: 12, PCF: "hx8k.pcf",
		MIIClocks: []string{"ETH_RX_CLK", "ETH_TX_CLK"}},
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
