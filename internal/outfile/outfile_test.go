//go:build linux

package outfile

import (
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// mknodNull makes a character device with /dev/null's numbers (1, 3) or
// /dev/full's (1, 7) in dir, or skips the test when not allowed (not
// root): the real /dev files are never written by a test.
func mknod(t *testing.T, dir, name string, minor uint32) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(1, minor))); err != nil {
		t.Skipf("mknod %s: %v (needs root)", p, err)
	}
	return p
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestRegular(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out")
	if err := WriteFile(p, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("two")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "two" {
		t.Errorf("got %q", b)
	}
	// A symlink to a regular file is kept; the file it names is replaced.
	link := filepath.Join(dir, "link")
	if err := os.Symlink("out", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, []byte("three")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced by a %v", fi.Mode())
	}
	if b, _ := os.ReadFile(p); string(b) != "three" {
		t.Errorf("through the link: got %q", b)
	}
	// Abort leaves the target and no temporary file.
	f, err := Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("lost"))
	f.Abort()
	if b, _ := os.ReadFile(p); string(b) != "three" {
		t.Errorf("after Abort: got %q", b)
	}
	if got := entries(t, dir); len(got) != 2 {
		t.Errorf("left behind: %v", got)
	}
}

func TestDevicesWrittenInPlace(t *testing.T) {
	dir := t.TempDir()
	null := mknod(t, dir, "null", 3)
	full := mknod(t, dir, "full", 7)
	if err := WriteFile(null, []byte("model")); err != nil {
		t.Errorf("null device: %v", err)
	}
	if fi, err := os.Stat(null); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Errorf("the null device was replaced: %v %v", fi.Mode(), err)
	}
	// /dev/full refuses at Create, before any work.
	_, err := Create(full)
	if err == nil || !errors.Is(err, unix.ENOSPC) || !strings.Contains(err.Error(), full) {
		t.Errorf("full device: %v, want no space left naming it", err)
	}
	if fi, err := os.Stat(full); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Errorf("the full device was replaced: %v %v", fi.Mode(), err)
	}
	if got := entries(t, dir); len(got) != 2 {
		t.Errorf("left behind: %v", got)
	}
}

func TestFIFOWrittenInPlace(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	got := make(chan string, 1)
	go func() {
		r, err := os.Open(fifo)
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(r)
		r.Close()
		got <- string(b)
	}()
	if err := WriteFile(fifo, []byte("through the pipe")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "through the pipe" {
		t.Errorf("reader got %q", s)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", fi.Mode(), err)
	}
}

func TestRefused(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := os.Symlink("missing", filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		dir:                              "is a directory",
		sock:                             "is a socket",
		filepath.Join(dir, "dangling"):   "symlink to a missing file",
		filepath.Join(dir, "no", "such"): "no such file or directory",
		"":                               "empty file name",
	}
	for _, blk := range []string{"/dev/loop0", "/dev/sda", "/dev/vda"} {
		if fi, err := os.Stat(blk); err == nil && fi.Mode()&fs.ModeDevice != 0 && fi.Mode()&fs.ModeCharDevice == 0 {
			cases[blk] = "is a block device"
			break
		}
	}
	for p, want := range cases {
		err := Check(p)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check(%q): %v, want %q", p, err, want)
		}
		if _, err := Create(p); err == nil {
			t.Errorf("Create(%q) succeeded", p)
		}
	}
	if got := entries(t, dir); len(got) != 2 {
		t.Errorf("left behind: %v", got)
	}
}
