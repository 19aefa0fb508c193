package cosim

import (
	"bytes"
	"os"
	"testing"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/hw"
)

// TestCacheRefusesTamperedBuild: a cached simulator is run only if it is
// the binary that was built from these sources; a replaced one is rebuilt.
func TestCacheRefusesTamperedBuild(t *testing.T) {
	needVerilator(t)
	sh := fixed.Shape{Binary: true, Classes: 2, TMs: 1, Clauses: 3, Features: 2, T: 2}
	cfg, err := hw.Config{Bits: 8, LFSRWidth: 16, ClauseLanes: 1, LiteralLanes: 1, MaxK: 8}.Resolve(sh)
	if err != nil {
		t.Fatal(err)
	}
	d, err := hw.Generate(cfg, sh, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	b, err := BuildDesign(d, cache, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	if b2, err := BuildDesign(d, cache, 2, false); err != nil || !b2.Cached {
		t.Fatalf("second build not cached: %v", err)
	}
	planted := []byte("#!/bin/sh\necho planted\n")
	if err := os.WriteFile(b.Binary, planted, 0o755); err != nil {
		t.Fatal(err)
	}
	b3, err := BuildDesign(d, cache, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	if b3.Cached {
		t.Error("the tampered build was reused")
	}
	if got, _ := os.ReadFile(b3.Binary); bytes.Equal(got, planted) {
		t.Error("the planted binary is still there")
	}
	if err := os.Chmod(cache, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := BuildDesign(d, cache, 2, false); err == nil {
		t.Error("a world-writable cache was used")
	}
}
