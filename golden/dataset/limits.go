package dataset

import (
	"fmt"
	"io"
)

// Limits of the CSV loader. Input beyond them is refused with a
// [*ParseError] naming the line (and byte offset), instead of exhausting
// memory: a device such as /dev/zero or /dev/urandom, or a binary file,
// fails at its first control byte (any byte below 0x20 but tab, CR and
// LF, and 0x7f).
const (
	// MaxCSVBytes bounds the size of a CSV input (1 GiB).
	MaxCSVBytes = 1 << 30
	// MaxLineBytes bounds one line (16 MiB).
	MaxLineBytes = 1 << 24
	// MaxColumns bounds the columns of the header (label included).
	MaxColumns = 1 << 16
	// MaxCells bounds rows x feature columns (2^27 values, 1 GiB as float64).
	MaxCells = 1 << 27
)

// progressEvery is how many bytes pass between two Progress calls.
const progressEvery = 1 << 20

// guard passes a CSV input through, counting lines and bytes: it stops at
// a control byte (other than tab, CR and LF: a NUL byte, say), a line longer than MaxLineBytes and input beyond
// MaxCSVBytes, and reports progress.
type guard struct {
	r        io.Reader
	file     string
	off      int64 // bytes passed on
	line     int   // 1-based line of the next byte
	lineLen  int64 // bytes of the current line so far
	total    int64 // input size, -1 when unknown
	progress func(read, total int64)
	next     int64 // offset of the next progress call
}

func newGuard(r io.Reader, file string, total int64, progress func(read, total int64)) *guard {
	return &guard{r: r, file: file, line: 1, total: total, progress: progress, next: progressEvery}
}

func (g *guard) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	for i, c := range p[:n] {
		switch {
		case c < 0x20 && c != '\t' && c != '\r' && c != '\n', c == 0x7f:
			g.off += int64(i)
			what := fmt.Sprintf("control byte 0x%02x", c)
			if c == 0 {
				what = "a NUL byte"
			}
			// Nothing of this chunk is passed on: the CSV reader must see the
			// error before it parses (and complains about) a garbled header.
			return 0, &ParseError{File: g.file, Line: g.line,
				Msg: fmt.Sprintf("binary data (%s at byte offset %d): not a CSV text file", what, g.off)}
		case c == '\n':
			g.line++
			g.lineLen = 0
			continue
		}
		g.lineLen++
		if g.lineLen > MaxLineBytes {
			g.off += int64(i)
			return i, &ParseError{File: g.file, Line: g.line,
				Msg: fmt.Sprintf("line longer than %d bytes (at byte offset %d): not a CSV file, or a row too long", MaxLineBytes, g.off)}
		}
	}
	g.off += int64(n)
	if g.off > MaxCSVBytes {
		return 0, &ParseError{File: g.file, Line: g.line,
			Msg: fmt.Sprintf("input larger than the %d-byte limit of a CSV file", MaxCSVBytes)}
	}
	if g.progress != nil && (g.off >= g.next || err == io.EOF) {
		g.progress(g.off, g.total)
		g.next = g.off + progressEvery
	}
	return n, err
}
