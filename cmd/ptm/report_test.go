package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportUnits: the report names the device's unit (logic cells, not
// LUTs) and gives samples/s at the clock the bitstream runs, Fmax beside
// it, from the demo's saved `ptm synth --json` (docs/demo/synth.json:
// 4,063 cells, 48.87 cycles per sample, 54 MHz clock, Fmax 54.80 MHz).
func TestReportUnits(t *testing.T) {
	synthJSON := filepath.Join("..", "..", "docs", "demo", "synth.json")
	var out bytes.Buffer
	if err := cmdReport([]string{"--synth", synthJSON}, &out, &out); err != nil {
		t.Fatal(err)
	}
	want := "FPGA (up5k): 4063/5280 logic cells, 23/30 block RAMs, clock 54.00 MHz (Fmax 54.80 MHz, timing met true), 48.87 cycles/sample -> 1104972 samples/s at the clock (1121415 at Fmax)"
	if got := strings.TrimSpace(out.String()); got != want {
		t.Errorf("report:\n got %s\nwant %s", got, want)
	}

	md := filepath.Join(t.TempDir(), "report.md")
	out.Reset()
	if err := cmdReport([]string{"--synth", synthJSON, "--md", md}, &out, &out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"| logic cells | 4063 / 5280 |",
		"| core rate at the PLL clock | 1104972 samples/s, 11050 queries/s at K = 100 (at Fmax 54.80 MHz: 1121415 samples/s) |",
	} {
		if !strings.Contains(string(b), w) {
			t.Errorf("report.md lacks %q:\n%s", w, b)
		}
	}
	if strings.Contains(string(b)+out.String(), "LUTs") {
		t.Errorf("the report says LUTs (the unit is logic cells)")
	}
}
