// Package buildcache keeps tool outputs (Verilator simulators and test
// benches) in a directory per content hash, so that an identical build is
// made once and shared by the tests of every package, every run and every
// checkout on the machine. Builders of the same key wait for each other
// (a lock file), so parallel test processes do not compile the same thing
// twice; a finished build appears atomically (rename of a temporary
// directory). Since the cached executables are run, the cache follows the
// rules of sim/internal/simcache: a per-user root that nobody else may
// write into (mode 0700, owner checked, no symbolic link), and a cached
// executable runs only when its SHA-256 still matches the one recorded
// when it was built (else it is rebuilt).
package buildcache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrUnsafe is wrapped by Get's error for a cache root that another user
// could have written into.
var ErrUnsafe = errors.New("build cache directory is not safe")

// DefaultRoot is $<env> when set, else <user cache dir>/<name>, else a
// per-user <temp dir>/<name>-<uid>.
func DefaultRoot(env, name string) string {
	if d := os.Getenv(env); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, name)
	}
	return filepath.Join(os.TempDir(), name+"-"+strconv.Itoa(os.Getuid()))
}

// SafeDir creates root (mode 0700) if needed and checks that it is a
// directory, not a symbolic link, owned by the current user and not
// writable by group or others: a cache another user could write into is
// refused (its error wraps ErrUnsafe). sim/internal/simcache uses it too.
func SafeDir(root string) error {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return err
	}
	fi, err := os.Lstat(root)
	if err != nil {
		return err
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return fmt.Errorf("%w: %s is a symbolic link", ErrUnsafe, root)
	case !fi.IsDir():
		return fmt.Errorf("%w: %s is not a directory", ErrUnsafe, root)
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("%w: %s is writable by group or others (mode %v)", ErrUnsafe, root, fi.Mode().Perm())
	}
	if uid, ok := owner(fi); ok && uid != os.Getuid() {
		return fmt.Errorf("%w: %s belongs to user %d, not to us (%d)", ErrUnsafe, root, uid, os.Getuid())
	}
	return nil
}

// sumName is the file, next to a build's done file, holding its SHA-256.
const sumName = "done.sha256"

// FileSum returns the hex SHA-256 of a file's content (sim/internal/simcache
// uses it too).
func FileSum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// intact reports whether dir holds done as a regular file whose SHA-256
// is the one recorded when it was built.
func intact(dir, done string) bool {
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return false
	}
	p := filepath.Join(dir, done)
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	want, err := os.ReadFile(filepath.Join(dir, sumName))
	if err != nil {
		return false
	}
	got, err := FileSum(p)
	return err == nil && got == strings.TrimSpace(string(want))
}

// Hasher accumulates a cache key.
type Hasher struct{ h hash.Hash }

// NewHasher returns an empty key.
func NewHasher() *Hasher {
	return &Hasher{h: sha256.New()}
}

// Add adds strings (each length-prefixed, so that the parts cannot run
// into each other).
func (k *Hasher) Add(parts ...string) {
	for _, p := range parts {
		fmt.Fprintf(k.h, "%d:%s\n", len(p), p)
	}
}

// AddFile adds a file's name (as given) and contents.
func (k *Hasher) AddFile(name string) error {
	b, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	k.Add("file "+name, string(b))
	return nil
}

// Key is the accumulated key: 24 hex digits.
func (k *Hasher) Key() string { return hex.EncodeToString(k.h.Sum(nil))[:24] }

// Get returns root/name, running build(tmp) into a fresh temporary
// directory and renaming it to root/name when root/name does not hold an
// intact build yet. done names the file inside the build (relative; the
// executable) whose SHA-256 is recorded and checked on every later Get.
// cached reports that the build was already there (or was made meanwhile
// by another process).
func Get(root, name, done string, build func(tmp string) error) (dir string, cached bool, err error) {
	if err := SafeDir(root); err != nil {
		return "", false, err
	}
	dir = filepath.Join(root, name)
	exists := func() bool { return intact(dir, done) }
	if exists() {
		return dir, true, nil
	}
	unlock, err := lock(filepath.Join(root, name+".lock"))
	if err != nil {
		return "", false, err
	}
	defer unlock()
	if exists() { // built by another process while we waited
		return dir, true, nil
	}
	tmp, err := os.MkdirTemp(root, "tmp-"+name+"-")
	if err != nil {
		return "", false, err
	}
	defer os.RemoveAll(tmp)
	if err := build(tmp); err != nil {
		return "", false, err
	}
	sum, err := FileSum(filepath.Join(tmp, done))
	if err != nil {
		return "", false, err
	}
	if err := os.WriteFile(filepath.Join(tmp, sumName), []byte(sum+"\n"), 0o600); err != nil {
		return "", false, err
	}
	os.RemoveAll(dir) // a leftover that is not intact
	if err := os.Rename(tmp, dir); err != nil {
		if exists() {
			return dir, true, nil
		}
		return "", false, err
	}
	return dir, false, nil
}
