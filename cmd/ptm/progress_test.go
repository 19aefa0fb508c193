package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestProgressWhileLoadingAndTraining: long loads and epochs report
// progress on stderr even when it is not a terminal (here with the delays
// shortened; by default after 1 s, then every 5 s).
func TestProgressWhileLoadingAndTraining(t *testing.T) {
	defer func(d, e time.Duration) { progressDelay, progressLineEvery = d, e }(progressDelay, progressLineEvery)
	progressDelay, progressLineEvery = 0, 0
	path := filepath.Join(t.TempDir(), "big.csv")
	var b strings.Builder
	b.WriteString("a,b,y\n")
	for i := 0; b.Len() < 3<<20; i++ {
		b.WriteString("1.25,2.5,x\n3.75,4.5,y\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI("train", "--data", path, "--epochs", "1", "--clauses", "2", "--states", "4", "--no-tune", "--calibrate=false", "-o", filepath.Join(t.TempDir(), "m.ptm"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"loading " + path + " 1.1 MB of 3.1 MB (33%)", "training epoch 1/1: row 256/", "training [######"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%.600s", want, errs)
		}
	}
}
