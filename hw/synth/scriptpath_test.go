package synth

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ptmhw/ptm/hw"
)

// TestHostileBuildFolder: a newline in --out once ran the rest of the
// line as a shell command (yosys runs "!" lines); now it is refused
// before anything is created or run.
func TestHostileBuildFolder(t *testing.T) {
	base := t.TempDir()
	canary := filepath.Join(base, "pwned")
	d, _ := design(t, tiny, hw.Config{Bits: 8, ClauseLanes: 1, LiteralLanes: 3, MaxK: 8})
	for _, dir := range []string{filepath.Join(base, "out\n!touch "+canary), filepath.Join(base, `q"uote`)} {
		_, err := Run(context.Background(), Options{Design: d, Device: "up5k", Dir: dir})
		if !errors.Is(err, ErrOptions) || !errors.Is(err, hw.ErrScriptPath) {
			t.Errorf("Run with Dir %q: %v", dir, err)
		}
		job := YosysJob{Dir: dir, CoreDir: base, Files: []string{filepath.Join(base, "x.v")}, Top: "top", CoreTop: "x"}
		if _, _, err := job.Run(context.Background()); !errors.Is(err, ErrOptions) {
			t.Errorf("YosysJob with Dir %q: %v", dir, err)
		}
	}
	if ents, _ := os.ReadDir(base); len(ents) != 0 {
		t.Errorf("created %v", ents)
	}
}

// TestYosysQuotedPaths runs both yosys stages in a folder whose name has
// a space, ';' and '#': every path is quoted.
func TestYosysQuotedPaths(t *testing.T) {
	needTools(t, "yosys")
	d, _ := design(t, tiny, hw.Config{Bits: 8, ClauseLanes: 1, LiteralLanes: 3, MaxK: 8})
	dir := filepath.Join(t.TempDir(), "a b;c#d")
	coreDir := filepath.Join(dir, "core dir")
	if err := d.Write(coreDir); err != nil {
		t.Fatal(err)
	}
	var rtl []string
	for _, f := range d.VerilogFiles() {
		rtl = append(rtl, filepath.Join(coreDir, f))
	}
	job := YosysJob{Dir: dir, CoreDir: coreDir, Files: rtl, Top: d.Top(), CoreTop: d.Top(), Relax: true, Pack: true}
	st, _, err := job.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "top.json")); err != nil || st.LUT4 == 0 {
		t.Fatalf("no netlist in the quoted folder: %v, %+v", err, st)
	}
}
