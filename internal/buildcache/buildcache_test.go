package buildcache

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

func TestGet(t *testing.T) {
	root := t.TempDir()
	var builds atomic.Int32
	build := func(tmp string) error {
		builds.Add(1)
		return os.WriteFile(filepath.Join(tmp, "bin"), []byte("x"), 0o755)
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dir, _, err := Get(root, "k1", "bin", build)
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := os.Stat(filepath.Join(dir, "bin")); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := builds.Load(); n != 1 {
		t.Errorf("%d builds of one key by 8 concurrent callers, want 1", n)
	}
	if _, cached, err := Get(root, "k1", "bin", build); err != nil || !cached {
		t.Errorf("second Get: cached %v, %v", cached, err)
	}
	boom := errors.New("boom")
	if _, _, err := Get(root, "k2", "bin", func(string) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("failed build: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "k2")); err == nil {
		t.Error("a failed build left its directory")
	}
}

func TestHasher(t *testing.T) {
	a, b := NewHasher(), NewHasher()
	a.Add("ab", "c")
	b.Add("a", "bc")
	if a.Key() == b.Key() {
		t.Error("Add(\"ab\", \"c\") and Add(\"a\", \"bc\") give the same key")
	}
	c := NewHasher()
	c.Add("ab", "c")
	if a.Key() != c.Key() || len(a.Key()) != 24 {
		t.Errorf("keys %s, %s", a.Key(), c.Key())
	}
}

// TestTampered: a cached executable that changed since it was built is
// rebuilt, not run; a cache root others can write into is refused.
func TestTampered(t *testing.T) {
	root := t.TempDir()
	builds := 0
	build := func(tmp string) error {
		builds++
		return os.WriteFile(filepath.Join(tmp, "bin"), []byte("good"), 0o755)
	}
	dir, _, err := Get(root, "k", "bin", build)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bin"), []byte("evil"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir, cached, err := Get(root, "k", "bin", build)
	if err != nil || cached || builds != 2 {
		t.Fatalf("tampered build: cached %v, %d builds, %v; want a rebuild", cached, builds, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "bin")); string(b) != "good" {
		t.Errorf("rebuilt executable holds %q", b)
	}
	open := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Get(open, "k", "bin", build); !errors.Is(err, ErrUnsafe) {
		t.Errorf("world-writable root: %v, want ErrUnsafe", err)
	}
}
