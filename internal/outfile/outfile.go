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
//
// A symlink is followed, not refused: `-o /dev/stdout` (a link to
// /proc/self/fd/1) and a link kept in a results folder are ordinary
// uses, and what decides the writing is the file the link reaches, so a
// link is written as that file is (a link to /dev/null in place, a link
// to a regular file by replacing that file and keeping the link). Only a
// dangling link is refused: writing through it would create a file
// somewhere else.
//
// Check is the pre-flight of a command that works long before it writes
// (training, an evaluation, a stream): it does what Create would do to
// the target without writing anything that stays, so a target that
// cannot be written fails at the start and no run is lost. An output
// directory (gen --out, experiments --out) is checked by CheckDir and
// its files written with WriteFile.
package outfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
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

// Check reports whether path can be written as an output, leaving the
// target as it was: for a regular file or a new name, a temporary file is
// created in the directory and removed (so a directory that cannot take a
// file fails now); a character device is opened and given a zero-byte
// write, which /dev/full refuses with "no space left on device"; a FIFO
// is only classified (opening it would wait for its reader). A directory,
// block device, socket or dangling symlink gives an error wrapping
// ErrRefused; every error names the path.
func Check(path string) error {
	k, final, err := classify(path)
	if err != nil {
		return err
	}
	switch k {
	case regular:
		tmp, err := createTemp(path, final)
		if err != nil {
			return err
		}
		tmp.Close()
		os.Remove(tmp.Name())
	case inPlace:
		d, err := probeDevice(path)
		if err != nil {
			return err
		}
		if d != nil {
			d.Close()
		}
	}
	return nil
}

// createTemp creates the temporary file that is renamed over final.
func createTemp(path, final string) (*os.File, error) {
	dir, base := filepath.Split(final)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("output %s: %w", path, err)
	}
	return tmp, nil
}

// probeDevice opens a character device for writing and writes zero bytes
// to it: a device that can never take data (/dev/full) fails here, before
// the work whose result it would lose. It returns nil, nil for a target
// that is not a character device (a FIFO is opened at its first write).
func probeDevice(path string) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("output %s: %w", path, err)
	}
	if fi.Mode()&fs.ModeCharDevice == 0 {
		return nil, nil
	}
	d, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("output %s: %w", path, err)
	}
	if _, err := d.Write(nil); err != nil {
		d.Close()
		return nil, fmt.Errorf("output %s: %w", path, err)
	}
	return d, nil
}

// CheckDir reports whether dir can be an output directory, whose files
// are then written with WriteFile: an existing directory in which a file
// can be created (a temporary file is created and removed), or a name
// that does not exist yet below an existing directory (MkdirAll creates
// the missing levels). Anything else (a regular file, a device, a FIFO,
// a dangling symlink) gives an error wrapping ErrRefused and naming dir.
func CheckDir(dir string) error {
	if dir == "" {
		return fmt.Errorf("output directory: %w: empty name", ErrRefused)
	}
	p := dir
	for {
		fi, err := os.Stat(p)
		if err == nil {
			if !fi.IsDir() {
				if p == dir {
					return fmt.Errorf("output directory %s: %w: it is %s", dir, ErrRefused, Describe(fi.Mode()))
				}
				return fmt.Errorf("output directory %s: %w: %s is %s", dir, ErrRefused, p, Describe(fi.Mode()))
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return fmt.Errorf("output directory %s: %w", dir, err)
		}
		if _, lerr := os.Lstat(p); lerr == nil {
			return fmt.Errorf("output directory %s: %w: %s is a symlink to a missing file", dir, ErrRefused, p)
		}
		up := filepath.Dir(p)
		if up == p {
			return fmt.Errorf("output directory %s: %w", dir, err)
		}
		p = up
	}
	tmp, err := os.CreateTemp(p, ".ptm-check-*")
	if err != nil {
		return fmt.Errorf("output directory %s: %w", dir, err)
	}
	tmp.Close()
	os.Remove(tmp.Name())
	return nil
}

// Describe names a file mode's kind for messages ("a regular file", "a
// character device", ...).
func Describe(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	default:
		return fmt.Sprintf("a special file (mode %v)", m)
	}
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
	switch k {
	case inPlace:
		if f.dev, err = probeDevice(path); err != nil {
			return nil, err
		}
	case regular:
		if f.tmp, err = createTemp(path, final); err != nil {
			return nil, err
		}
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
