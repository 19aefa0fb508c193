package rtl

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSources: every Verilog file of the board folders is in a source
// list (a new module cannot be left out of the simulator or the
// synthesis), each list starts with its top, and Write copies the files.
func TestSources(t *testing.T) {
	listed := map[string]bool{}
	for _, n := range append(append(ShellSources(), DualClockSources()...), ConvSources()...) {
		listed[n] = true
	}
	for _, b := range Boards {
		top, err := TopSources(b)
		if err != nil {
			t.Fatal(err)
		}
		core, err := CoreTopSources(b)
		if err != nil {
			t.Fatal(err)
		}
		if top[0] != "boards/"+b+"/top.v" || core[0] != "boards/"+b+"/core_top.v" {
			t.Errorf("%s: tops %s, %s", b, top[0], core[0])
		}
		for _, n := range append(top, core...) {
			listed[n] = true
		}
		if pcf, err := PCF(b); err != nil || !strings.Contains(string(pcf), "set_io") {
			t.Errorf("%s: pcf %v", b, err)
		}
	}
	tt, err := TrainerTopSources("icebreaker")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range append(tt, TrainerSources()...) {
		listed[n] = true
	}
	if _, err := TrainerTopSources("hx8k"); !errors.Is(err, ErrSource) {
		t.Errorf("trainer top for hx8k: %v", err)
	}
	for _, dir := range []string{"uart", "eth", "lib", "board", "boards/common", "boards/icebreaker", "boards/hx8k", "train"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.v"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: %v %v", dir, files, err)
		}
		for _, f := range files {
			if !listed[filepath.ToSlash(f)] {
				t.Errorf("%s is in no source list", f)
			}
		}
	}
	if _, err := TopSources("ecp5"); !errors.Is(err, ErrSource) {
		t.Errorf("unknown board: %v", err)
	}
	dir := t.TempDir()
	out, err := Write(dir, ShellSources())
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(ShellSources()[0])
	if got, err := os.ReadFile(out[0]); err != nil || string(got) != string(want) {
		t.Errorf("Write: %s differs from %s (%v)", out[0], ShellSources()[0], err)
	}
	// the includes ride along: every lib/*.vh of the checkout
	vh, err := filepath.Glob(filepath.Join("lib", "*.vh"))
	if err != nil || len(vh) == 0 || len(vh) != len(Includes()) {
		t.Fatalf("includes: checkout %v, Includes %v (%v)", vh, Includes(), err)
	}
	for _, n := range Includes() {
		want, _ := os.ReadFile(n)
		if got, err := os.ReadFile(filepath.Join(dir, n)); err != nil || string(got) != string(want) {
			t.Errorf("Write did not copy the include %s (%v)", n, err)
		}
	}
	if _, err := Write(dir, []string{"nope.v"}); !errors.Is(err, ErrSource) {
		t.Errorf("Write of a missing source: %v", err)
	}
}
