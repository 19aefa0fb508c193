// Package buildcache keeps tool outputs (Verilator simulators and test
// benches) in a directory per content hash, so that an identical build is
// made once and shared by the tests of every package, every run and every
// checkout on the machine. Builders of the same key wait for each other
// (a lock file), so parallel test processes do not compile the same thing
// twice; a finished build appears atomically (rename of a temporary
// directory).
package buildcache

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"os"
	"path/filepath"
)

// DefaultRoot is $<env> when set, else <user cache dir>/<name>, else
// <temp dir>/<name>.
func DefaultRoot(env, name string) string {
	if d := os.Getenv(env); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, name)
	}
	return filepath.Join(os.TempDir(), name)
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
// directory and renaming it to root/name when root/name does not exist
// yet. done names a file inside the build (relative) whose presence marks
// a finished build. cached reports that the build was already there (or was
// made meanwhile by another process).
func Get(root, name, done string, build func(tmp string) error) (dir string, cached bool, err error) {
	dir = filepath.Join(root, name)
	exists := func() bool {
		_, err := os.Stat(filepath.Join(dir, done))
		return err == nil
	}
	if exists() {
		return dir, true, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", false, err
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
	os.RemoveAll(dir) // an unfinished leftover (no done file)
	if err := os.Rename(tmp, dir); err != nil {
		if exists() {
			return dir, true, nil
		}
		return "", false, err
	}
	return dir, false, nil
}
