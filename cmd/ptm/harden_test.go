//go:build linux

package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// Issue 31's regressions at the command level.

// TestOutputToDevices: an output naming a character device or a FIFO is
// written in place, never replaced by a regular file (issue 31 item 1:
// `-o /dev/null` as root replaced /dev/null); /dev/full fails with its
// own error. The devices are made in a temporary folder with /dev/null's
// and /dev/full's numbers, so the real ones are never at stake.
func TestOutputToDevices(t *testing.T) {
	dir := t.TempDir()
	null, full := filepath.Join(dir, "null"), filepath.Join(dir, "full")
	if err := unix.Mknod(null, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		t.Skipf("mknod: %v (needs root)", err)
	}
	if err := unix.Mknod(full, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 7))); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	isChar := func(p string) {
		t.Helper()
		if fi, err := os.Lstat(p); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
			t.Fatalf("%s is no longer a character device: %v %v", p, fi.Mode(), err)
		}
	}
	train := []string{"train", "--data", "iris", "--clauses", "4", "--states", "8", "--epochs", "1", "-o"}
	code, _, errs := runCLI(append(train, null)...)
	if code != 0 {
		t.Errorf("-o null device: exit %d %s", code, errs)
	}
	isChar(null)
	code, _, errs = runCLI(append(train, full)...)
	if code == 0 || !strings.Contains(errs, "no space left on device") || !strings.Contains(errs, full) {
		t.Errorf("-o full device: exit %d %q, want no space left naming it", code, errs)
	}
	isChar(full)
	// A FIFO gets the model, in place.
	got := make(chan []byte, 1)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- b
	}()
	code, _, errs = runCLI(append(train, fifo)...)
	if code != 0 {
		t.Errorf("-o fifo: exit %d %s", code, errs)
	}
	if b := <-got; len(b) < 100 {
		t.Errorf("the FIFO's reader got %d bytes", len(b))
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", fi.Mode(), err)
	}
	// eval --per-query and report --md to the null device.
	model := filepath.Join(dir, "m.ptm")
	if code, _, errs := runCLI(append(train, model)...); code != 0 {
		t.Fatalf("train: %s", errs)
	}
	code, _, errs = runCLI("eval", "--model", model, "--data", "iris", "--samples", "5", "--per-query", null)
	if code != 0 {
		t.Errorf("eval --per-query null device: exit %d %s", code, errs)
	}
	isChar(null)
	code, _, errs = runCLI("eval", "--model", model, "--data", "iris", "--samples", "5", "--per-query", full)
	if code == 0 || !strings.Contains(errs, "no space left on device") {
		t.Errorf("eval --per-query full device: exit %d %q", code, errs)
	}
	isChar(full)
	code, evJSON, _ := runCLI("eval", "--model", model, "--data", "iris", "--samples", "5", "--json")
	ev := filepath.Join(t.TempDir(), "ev.json")
	if err := os.WriteFile(ev, []byte(evJSON), 0o644); code != 0 || err != nil {
		t.Fatalf("eval --json: %d %v", code, err)
	}
	code, _, errs = runCLI("report", "--eval", ev, "--md", null)
	if code != 0 {
		t.Errorf("report --md null device: exit %d %s", code, errs)
	}
	isChar(null)
	if ents, _ := os.ReadDir(dir); len(ents) != 4 {
		t.Errorf("left behind: %v", ents)
	}
}
