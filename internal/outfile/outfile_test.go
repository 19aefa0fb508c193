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

// TestCheckIsAPreflight: Check does what Create would do to the target,
// so a command that works for minutes before it writes fails at once on
// a target that cannot take its output (issue 31 item 7: `train -o
// /dev/full` trained, then failed). It leaves nothing behind.
func TestCheckIsAPreflight(t *testing.T) {
	dir := t.TempDir()
	null := mknod(t, dir, "null", 3)
	full := mknod(t, dir, "full", 7)
	if err := Check(null); err != nil {
		t.Errorf("Check(null device): %v", err)
	}
	err := Check(full)
	if err == nil || !errors.Is(err, unix.ENOSPC) || !strings.Contains(err.Error(), full) {
		t.Errorf("Check(full device): %v, want no space left naming it", err)
	}
	if err := Check(filepath.Join(dir, "new")); err != nil {
		t.Errorf("Check(new name): %v", err)
	}
	for _, p := range []string{null, full} {
		if fi, err := os.Lstat(p); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
			t.Errorf("%s is no longer a character device: %v %v", p, fi.Mode(), err)
		}
	}
	if got := entries(t, dir); len(got) != 2 {
		t.Errorf("left behind: %v", got)
	}
}

// TestRealDevices writes to the machine's own /dev/null and checks
// /dev/full, each only after checking it is a character device, and
// checks /dev/null is one afterwards (tests run as root: replacing
// /dev/null would break the machine).
func TestRealDevices(t *testing.T) {
	isChar := func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && fi.Mode()&fs.ModeCharDevice != 0
	}
	if !isChar("/dev/null") {
		t.Skip("/dev/null is not a character device here")
	}
	if err := Check("/dev/null"); err != nil {
		t.Errorf("Check(/dev/null): %v", err)
	}
	f, err := Create("/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	if !f.InPlace() {
		f.Abort()
		t.Fatal("/dev/null would be replaced, not written in place")
	}
	if _, err := f.Write([]byte("model")); err != nil {
		t.Error(err)
	}
	if err := f.Commit(); err != nil {
		t.Error(err)
	}
	if !isChar("/dev/null") {
		t.Fatal("/dev/null is no longer a character device")
	}
	if isChar("/dev/full") {
		err := Check("/dev/full")
		if err == nil || !errors.Is(err, unix.ENOSPC) || !strings.Contains(err.Error(), "/dev/full") {
			t.Errorf("Check(/dev/full): %v, want no space left naming it", err)
		}
	}
}

// TestCheckDir: an output directory is an existing directory or a new
// name below one; a regular file, a device, a FIFO or a dangling link is
// refused naming what it is.
func TestCheckDir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("missing", filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	for _, ok := range []string{dir, filepath.Join(dir, "new"), filepath.Join(dir, "new", "deeper")} {
		if err := CheckDir(ok); err != nil {
			t.Errorf("CheckDir(%s): %v", ok, err)
		}
	}
	for p, want := range map[string]string{
		file:                                "it is a regular file",
		fifo:                                "it is a FIFO",
		filepath.Join(file, "sub"):          file + " is a regular file",
		filepath.Join(dir, "dangling"):      "symlink to a missing file",
		filepath.Join(dir, "dangling", "x"): "symlink to a missing file",
		"":                                  "empty name",
	} {
		err := CheckDir(p)
		if err == nil || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckDir(%q): %v, want %q", p, err, want)
		}
	}
	if got := entries(t, dir); len(got) != 3 {
		t.Errorf("left behind: %v", got)
	}
}
