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

// TestImageSynthSection checks the image report's section on the UP5K
// image: the image's figures from its synth JSON and one table row per
// step of the search, outcome and all.
func TestImageSynthSection(t *testing.T) {
	sy := map[string]any{"device": "up5k", "board": "icebreaker", "toolchain": "debian", "clause_lanes": 1.0, "literal_lanes": 16.0,
		"patch_lanes": 4.0, "scan": "range", "bits": 4.0, "lfsr_width": 16.0, "luts": 4922.0, "luts_available": 5280.0,
		"brams": 18.0, "brams_available": 30.0, "sprams": 4.0, "dsps": 1.0, "clock_mhz": 27.0, "timing_met": true,
		"fmax_mhz": 28.067, "seed": 1.0, "uart_baud": 3e6, "clks_per_bit": 9.0, "cycles_per_sample": 2982.5,
		"cycles_source": "cosim", "samples_per_s_at_clock": 9052.8, "queries_per_s_k16_at_clock": 565.8,
		"binding": "core cycles per sample", "bitstream": "synth/top.bin"}
	search := map[string]any{"search": []any{
		map[string]any{"clause_lanes": 1.0, "literal_lanes": 16.0, "patch_lanes": 7.0, "scan": "range", "freq_mhz": 30.0,
			"expected_cycles_per_sample": 2800.3, "outcome": "does not fit"},
		map[string]any{"clause_lanes": 1.0, "literal_lanes": 16.0, "patch_lanes": 4.0, "scan": "range", "freq_mhz": 27.0,
			"expected_cycles_per_sample": 3329.5, "luts": 4922.0, "fmax_mhz": 28.067, "outcome": "fits, timing met"},
	}}
	var b strings.Builder
	writeImageSynth(&b, sy, search)
	got := b.String()
	for _, want := range []string{
		"| core | 1 x 16 lanes, 4 patches per cycle, range scan, B = 4, LFSR width 16 |",
		"| logic cells (packed) | 4922 / 5280 |",
		"| clock | 27.00 MHz, timing met: true (Fmax 28.07 MHz, nextpnr seed 1) |",
		"| cycles per sample | 2982.5 (cosim) |",
		"| rate at the clock | 9053 samples/s, 566 queries/s at K = 16 |",
		"| 1 x 16 | 7 | range | 30 | 2800.3 | n/a | n/a | does not fit |",
		"| 1 x 16 | 4 | range | 27 | 3329.5 | 4922 | 28.07 | fits, timing met |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("section lacks %q:\n%s", want, got)
		}
	}
	b.Reset()
	writeImageSynth(&b, sy, nil)
	if strings.Contains(b.String(), "step by step") {
		t.Errorf("no search given, but a search table:\n%s", b.String())
	}
}
