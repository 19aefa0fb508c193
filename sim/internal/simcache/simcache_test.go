package simcache

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestDirIsPerUser(t *testing.T) {
	t.Setenv("PTM_X_CACHE", "")
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "")
	d := Dir("PTM_X_CACHE", "ptm-x")
	if want := filepath.Join(os.TempDir(), "ptm-x-"+strconv.Itoa(os.Getuid())); d != want {
		t.Errorf("fallback %q, want %q", d, want)
	}
	t.Setenv("PTM_X_CACHE", "/some/where")
	if d := Dir("PTM_X_CACHE", "ptm-x"); d != "/some/where" {
		t.Errorf("env: %q", d)
	}
}

func TestPrepare(t *testing.T) {
	base := t.TempDir()
	fresh := filepath.Join(base, "fresh")
	if err := Prepare(fresh); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(fresh); fi.Mode().Perm() != 0o700 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	shared := filepath.Join(base, "shared")
	if err := os.Mkdir(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o1777); err != nil {
		t.Fatal(err)
	}
	if err := Prepare(shared); !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "writable by group or others") {
		t.Errorf("world-writable: %v", err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(fresh, link); err != nil {
		t.Fatal(err)
	}
	if err := Prepare(link); !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("symlink: %v", err)
	}
}

func TestSealVerify(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write("core.v", "module core; endmodule\n")
	write("obj_dir/sim", "\x7fELF binary")
	sources := map[string][]byte{"core.v": []byte("module core; endmodule\n")}
	if err := Verify(dir, "obj_dir/sim", sources); !errors.Is(err, ErrStale) {
		t.Errorf("no manifest: %v", err)
	}
	if err := Seal(dir, []string{"obj_dir/sim", "core.v"}); err != nil {
		t.Fatal(err)
	}
	if err := Verify(dir, "obj_dir/sim", sources); err != nil {
		t.Fatalf("fresh build: %v", err)
	}
	other := map[string][]byte{"core.v": []byte("module other; endmodule\n")}
	if err := Verify(dir, "obj_dir/sim", other); !errors.Is(err, ErrStale) {
		t.Errorf("other sources: %v", err)
	}
	write("obj_dir/sim", "#!/bin/sh\nrm -rf ~\n") // planted
	if err := Verify(dir, "obj_dir/sim", sources); !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), "changed") {
		t.Errorf("replaced binary: %v", err)
	}
}
