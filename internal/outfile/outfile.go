// Package outfile is the one writer of every file a ptm command outputs
// (a model, a per-query CSV, a stream result, a report). It decides from
// the target what writing means, before any work:
//
//   - a regular file, or a name that does not exist yet, is written
//     through a temporary file created exclusively in the same directory,
//     synced and renamed over the target: a reader never sees half a file,
//     and a failure leaves the old file and no temporary file behind. A
//     symlink to a regular file is kept: the file it points to is
//     replaced;
//   - a character device (/dev/null, /dev/full, a terminal) or a FIFO is
//     written in place, as a shell redirection would: it is never
//     replaced by a regular file, and its own errors (/dev/full's "no
//     space left on device") are reported;
//   - a directory, a block device, a socket or anything else is refused
//     with an error naming the path and what it is.
package outfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrRefused is wrapped by the error of a target that is not written: a
// directory, a block device, a socket or another special file.
var ErrRefused = errors.New("not a file to write")

// kind is how a target is written.
type kind int

const (
	regular kind = iota // temporary file renamed over the target
	inPlace             // character device or FIFO, opened and written
)

// File is an output opened by Create: written with Write, then either
// Commit (the target now holds what was written) or Abort (the target is
// untouched, no temporary file is left).
type File struct {
	path  string   // as given, for messages
	final string   // the file the rename replaces (symlinks resolved)
	kind  kind     // how it is written
	tmp   *os.File // regular: the temporary file
	dev   *os.File // inPlace: the open device or FIFO (nil until written)
	err   error    // the first write error
	done  bool
}

// Check reports whether path can be written as an output, without
// creating or opening anything: nil for a regular file, a new name in an
// existing directory, a character device or a FIFO; an error wrapping
// ErrRefused (or the stat error) otherwise.
func Check(path string) error {
	_, _, err := classify(path)
	return err
}

// classify returns how path is written and the file a rename replaces.
func classify(path string) (kind, string, error) {
	if path == "" {
		return 0, "", fmt.Errorf("output: %w: empty file name", ErrRefused)
	}
	fi, err := os.Stat(path) // follows symlinks: the file that is written
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, lerr := os.Lstat(path); lerr == nil {
			// A dangling symlink: writing through it would create a file
			// elsewhere, renaming over it would drop the link.
			return 0, "", fmt.Errorf("output %s: %w: a symlink to a missing file", path, ErrRefused)
		}
		dir := filepath.Dir(path)
		di, derr := os.Stat(dir)
		if derr != nil {
			return 0, "", fmt.Errorf("output %s: directory %s: %w", path, dir, derr)
		}
		if !di.IsDir() {
			return 0, "", fmt.Errorf("output %s: %w: %s is not a directory", path, ErrRefused, dir)
		}
		return regular, path, nil
	case err != nil:
		return 0, "", fmt.Errorf("output %s: %w", path, err)
	}
	m := fi.Mode()
	switch {
	case m.IsRegular():
		final := path
		if li, lerr := os.Lstat(path); lerr == nil && li.Mode()&fs.ModeSymlink != 0 {
			// Replace the file the link points to and keep the link. A
			// link that cannot be resolved to a path (such as
			// /proc/self/fd/1) is written in place.
			r, rerr := filepath.EvalSymlinks(path)
			if rerr != nil {
				return inPlace, path, nil
			}
			if ri, err := os.Stat(r); err != nil || !os.SameFile(ri, fi) {
				return inPlace, path, nil
			}
			final = r
		}
		return regular, final, nil
	case m&fs.ModeCharDevice != 0, m&fs.ModeNamedPipe != 0:
		return inPlace, path, nil
	case m.IsDir():
		return 0, "", fmt.Errorf("output %s: %w: it is a directory: give a file name", path, ErrRefused)
	case m&fs.ModeDevice != 0:
		return 0, "", fmt.Errorf("output %s: %w: it is a block device", path, ErrRefused)
	case m&fs.ModeSocket != 0:
		return 0, "", fmt.Errorf("output %s: %w: it is a socket", path, ErrRefused)
	default:
		return 0, "", fmt.Errorf("output %s: %w: it is a special file (mode %v)", path, ErrRefused, m)
	}
}

// Create checks path as Check does and prepares the output, so that an
// unusable target fails before any work: for a regular target it creates
// the temporary file; a character device is opened and given a zero-byte
// write, which a device that never takes data (/dev/full) refuses. A
// FIFO is opened at the first Write (opening it waits for its reader).
func Create(path string) (*File, error) {
	k, final, err := classify(path)
	if err != nil {
		return nil, err
	}
	f := &File{path: path, final: final, kind: k}
	if k == inPlace {
		if fi, err := os.Stat(path); err == nil && fi.Mode()&fs.ModeCharDevice != 0 {
			// Open a character device now and write zero bytes: a device
			// that can never take data (/dev/full) fails here, before the
			// work whose result it would lose.
			d, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				return nil, fmt.Errorf("output %s: %w", path, err)
			}
			if _, err := d.Write(nil); err != nil {
				d.Close()
				return nil, fmt.Errorf("output %s: %w", path, err)
			}
			f.dev = d
		}
	}
	if k == regular {
		dir, base := filepath.Split(final)
		if dir == "" {
			dir = "."
		}
		tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
		if err != nil {
			return nil, fmt.Errorf("output %s: %w", path, err)
		}
		f.tmp = tmp
	}
	return f, nil
}

// Write writes p to the output. The first error is kept and returned by
// every later Write and by Commit.
func (f *File) Write(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	if f.done {
		return 0, fmt.Errorf("output %s: %w", f.path, os.ErrClosed)
	}
	var w io.Writer = f.tmp
	if f.kind == inPlace {
		if f.dev == nil {
			d, err := os.OpenFile(f.path, os.O_WRONLY, 0)
			if err != nil {
				f.err = fmt.Errorf("output %s: %w", f.path, err)
				return 0, f.err
			}
			f.dev = d
		}
		w = f.dev
	}
	n, err := w.Write(p)
	if err != nil {
		f.err = fmt.Errorf("writing %s: %w", f.path, err)
	}
	return n, f.err
}

// Commit finishes the output: a regular target is synced and renamed into
// place (its directory synced too); a device or FIFO is closed. On error
// the target is left as it was and the temporary file removed.
func (f *File) Commit() (err error) {
	if f.done {
		return fmt.Errorf("output %s: %w", f.path, os.ErrClosed)
	}
	if f.err != nil {
		f.Abort()
		return f.err
	}
	f.done = true
	if f.kind == inPlace {
		if f.dev == nil { // nothing written: open anyway so errors show
			d, err := os.OpenFile(f.path, os.O_WRONLY, 0)
			if err != nil {
				return fmt.Errorf("output %s: %w", f.path, err)
			}
			f.dev = d
		}
		if err := f.dev.Close(); err != nil {
			return fmt.Errorf("writing %s: %w", f.path, err)
		}
		return nil
	}
	defer func() {
		if err != nil {
			f.tmp.Close()
			os.Remove(f.tmp.Name())
		}
	}()
	if err := f.tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("writing %s: %w", f.path, err)
	}
	if err := f.tmp.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", f.path, err)
	}
	if err := f.tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", f.path, err)
	}
	// The target may have changed since Create: never rename over
	// anything but a regular file or nothing.
	if fi, err := os.Lstat(f.final); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("output %s: %w: it became %v while the output was prepared", f.path, ErrRefused, fi.Mode().Type())
	}
	if err := os.Rename(f.tmp.Name(), f.final); err != nil {
		return fmt.Errorf("writing %s: %w", f.path, err)
	}
	if d, derr := os.Open(filepath.Dir(f.final)); derr == nil { // make the rename durable
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// Abort abandons the output: the target is left as it was and the
// temporary file removed. It is safe after Commit (then it does nothing).
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	if f.tmp != nil {
		f.tmp.Close()
		os.Remove(f.tmp.Name())
	}
	if f.dev != nil {
		f.dev.Close()
	}
}

// InPlace reports whether the output is written in place (a character
// device or a FIFO) rather than as a regular file.
func (f *File) InPlace() bool { return f.kind == inPlace }

// WriteFile writes data to path as Create, Write and Commit do.
func WriteFile(path string, data []byte) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}
