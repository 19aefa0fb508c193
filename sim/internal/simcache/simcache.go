// Package simcache keeps the Verilator simulator builds of sim/cosim and
// sim/board safe to reuse: the cache lives in a per-user directory that
// must belong to the current user and be writable by nobody else, and a
// cached build is run only after its files are checked against the
// manifest written when it was built and against the sources it must have
// been built from.
package simcache

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ptmhw/ptm/internal/buildcache"
)

// Manifest is the name of the file, in a build directory, that lists the
// SHA-256 of the build's sources and binary.
const Manifest = "manifest.sha256"

// ErrUnsafe is wrapped by Prepare's error for a cache directory that
// another user could have written into (the same error as
// internal/buildcache's).
var ErrUnsafe = buildcache.ErrUnsafe

// ErrStale is wrapped by Verify's error for a build whose files do not
// match (rebuild it).
var ErrStale = errors.New("cached simulator build does not match")

// Dir returns the cache directory: $env when set, else <user cache
// dir>/name, else a per-user <temp dir>/name-<uid> (never a directory
// shared by all users); internal/buildcache.DefaultRoot.
func Dir(env, name string) string { return buildcache.DefaultRoot(env, name) }

// Prepare creates dir (mode 0700) if it does not exist and checks that it
// is a directory, not a symbolic link, owned by the current user and not
// writable by group or others (internal/buildcache.SafeDir).
func Prepare(dir string) error {
	if err := buildcache.SafeDir(dir); err != nil {
		return fmt.Errorf("simcache: %w (choose another cache)", err)
	}
	return nil
}

// Seal writes dir's manifest: the SHA-256 of each of files (paths
// relative to dir).
func Seal(dir string, files []string) error {
	files = append([]string(nil), files...)
	sort.Strings(files)
	var b bytes.Buffer
	for _, f := range files {
		sum, err := buildcache.FileSum(filepath.Join(dir, f))
		if err != nil {
			return fmt.Errorf("simcache: %w", err)
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, f)
	}
	if err := os.WriteFile(filepath.Join(dir, Manifest), b.Bytes(), 0o600); err != nil {
		return fmt.Errorf("simcache: %w", err)
	}
	return nil
}

// Verify checks a cached build before it is run: dir is a real directory,
// every file of its manifest (the binary among them) has its recorded
// SHA-256 and is a regular file, binary is listed, and every source in
// sources (relative path -> the content it must have) is listed and has
// that content. A mismatch wraps ErrStale.
func Verify(dir, binary string, sources map[string][]byte) error {
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("%w: %s is not a directory", ErrStale, dir)
	}
	m, err := os.ReadFile(filepath.Join(dir, Manifest))
	if err != nil {
		return fmt.Errorf("%w: %s has no manifest: %w", ErrStale, dir, err)
	}
	listed := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(m))
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != 64 || name == "" || strings.Contains(name, "..") {
			return fmt.Errorf("%w: %s: malformed manifest line %q", ErrStale, dir, sc.Text())
		}
		listed[name] = sum
	}
	if _, ok := listed[binary]; !ok {
		return fmt.Errorf("%w: %s: the manifest does not list %s", ErrStale, dir, binary)
	}
	for name, data := range sources {
		want := sha256.Sum256(data)
		if listed[name] != hex.EncodeToString(want[:]) {
			return fmt.Errorf("%w: %s: source %s is not the one this build needs", ErrStale, dir, name)
		}
	}
	for name, sum := range listed {
		p := filepath.Join(dir, name)
		if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
			return fmt.Errorf("%w: %s is missing or not a regular file", ErrStale, p)
		}
		got, err := buildcache.FileSum(p)
		if err != nil || got != sum {
			return fmt.Errorf("%w: %s changed since it was built", ErrStale, p)
		}
	}
	return nil
}

// Build returns the build directory cacheDir/name of sources (relative
// path -> content): the cached one when it verifies against them (cached
// is then true), or a new one: the sources are written into a temporary
// directory inside cacheDir, compile runs there and must produce binary
// (relative path), the binary and the sources are sealed, and the
// directory is renamed into place (a concurrent build that won the rename
// is taken when it verifies). cacheDir is created and checked by Prepare;
// a stale build is removed. name should carry a hash of everything the
// build depends on.
func Build(cacheDir, name, binary string, sources map[string][]byte, compile func(dir string) error) (dir string, cached bool, err error) {
	if err := Prepare(cacheDir); err != nil {
		return "", false, err
	}
	dir = filepath.Join(cacheDir, name)
	if _, err := os.Lstat(dir); err == nil {
		if Verify(dir, binary, sources) == nil {
			return dir, true, nil
		}
		if err := os.RemoveAll(dir); err != nil {
			return "", false, fmt.Errorf("simcache: removing a stale build: %w", err)
		}
	}
	tmp, err := os.MkdirTemp(cacheDir, "build-")
	if err != nil {
		return "", false, fmt.Errorf("simcache: %w", err)
	}
	defer os.RemoveAll(tmp)
	sealed := []string{binary}
	for name, data := range sources {
		p := filepath.Join(tmp, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", false, fmt.Errorf("simcache: %w", err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return "", false, fmt.Errorf("simcache: %w", err)
		}
		sealed = append(sealed, name)
	}
	if err := compile(tmp); err != nil {
		return "", false, err
	}
	if err := Seal(tmp, sealed); err != nil {
		return "", false, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if Verify(dir, binary, sources) == nil { // a concurrent build won
			return dir, true, nil
		}
		return "", false, fmt.Errorf("simcache: %w", err)
	}
	return dir, false, nil
}
