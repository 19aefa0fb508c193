package modelfile

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/internal/names"
	"github.com/ptmhw/ptm/internal/outfile"
)

// Limits of the model file format. Read and Decode check every header
// field against them before allocating anything, so an edited or hostile
// file (even one with a valid checksum) gives an error naming the field,
// never a panic or an out-of-memory crash. Encode and Write refuse a File
// beyond them.
const (
	// MaxFileSize bounds a model file (1 GiB). Decoding a format-2 file
	// needs the file plus 12 bytes per SPV value (the float model and the
	// bank) plus 16 per TA, at most about 1.1 GiB (MaxSPVValues) however
	// small the file.
	MaxFileSize = 1 << 30
	// MaxClasses bounds the number of classes.
	MaxClasses = 1 << 10
	// MaxFeatures bounds the number of raw (named) features.
	MaxFeatures = 1 << 16
	// MaxBoolFeatures bounds the number of Boolean features o (a clause
	// has 2o literals).
	MaxBoolFeatures = 1 << 20
	// MaxClauses bounds the clauses per TM.
	MaxClauses = 1 << 20
	// MaxSPVValues bounds TAs x 2N, the number of SPV entries (the
	// in-memory model has 12 bytes per entry: float64 SPV and uint32
	// bank), whatever the file's size.
	MaxSPVValues = MaxFileSize / 12
	// MaxRows bounds the row count a split may record.
	MaxRows = 1 << 30
	// MaxSplitRows bounds the training and test row indices a format-2
	// split lists together (it stores them as runs, so that the header's
	// size no longer bounds them).
	MaxSplitRows = 1 << 23
)

// ErrTooLarge is wrapped by the error Read returns for a file larger than
// MaxFileSize.
var ErrTooLarge = errors.New("model file too large")

// FingerprintPrefix starts every data fingerprint (see File.DataFingerprint).
const FingerprintPrefix = "sha256:"

// checkFingerprint accepts "" (no fingerprint recorded) or
// "sha256:" followed by 64 lower-case hex digits.
func checkFingerprint(s string) error {
	if s == "" {
		return nil
	}
	h, ok := strings.CutPrefix(s, FingerprintPrefix)
	if !ok || len(h) != 64 {
		return fmt.Errorf("data fingerprint %q, want %q and 64 hex digits", s, FingerprintPrefix)
	}
	if _, err := hex.DecodeString(h); err != nil || strings.ToLower(h) != h {
		return fmt.Errorf("data fingerprint %q is not lower-case hex", s)
	}
	return nil
}

// quoteNames replaces, when quote is not nil, every name of list that
// internal/names refuses by its escaped form (names.Quote) and appends
// "field[i]" to *quote; with quote nil it does nothing (the name is
// refused by checkNames).
func quoteNames(quote *[]string, field string, list []string) {
	if quote == nil {
		return
	}
	for i, n := range list {
		if names.Check(n) != nil {
			list[i] = names.Quote(n)
			*quote = append(*quote, fmt.Sprintf("%s[%d]", field, i))
		}
	}
}

// trailingJSON reports whether the header (data[16:16+hl]) holds anything
// but white space after the JSON value dec has decoded, and the file
// offset where it starts. (json.Decoder.More does not see a trailing ']'
// or '}'.)
func trailingJSON(data []byte, hl int64, dec *json.Decoder) (int64, bool) {
	off := 16 + dec.InputOffset()
	rest := data[off : 16+hl]
	trimmed := bytes.TrimLeft(rest, " \t\r\n")
	if len(trimmed) == 0 {
		return 0, false
	}
	return off + int64(len(rest)-len(trimmed)), true
}

// checkNames reports an empty or duplicated name, or one that
// internal/names refuses (a control or bidirectional-control character,
// which would act on the terminal inspect or an error message prints it
// to; the CSV loader applies the same rule); field names the list.
func checkNames(field string, list []string, limit int) error {
	if len(list) > limit {
		return fmt.Errorf("%s: %d names, limit %d", field, len(list), limit)
	}
	seen := make(map[string]int, len(list))
	for i, n := range list {
		if strings.TrimSpace(n) == "" {
			return fmt.Errorf("%s[%d]: empty name", field, i)
		}
		if err := names.Check(n); err != nil {
			return fmt.Errorf("%s[%d]: name %q: %w", field, i, n, err)
		}
		if j, dup := seen[n]; dup {
			return fmt.Errorf("%s[%d]: duplicate name %q (also %s[%d])", field, i, n, field, j)
		}
		seen[n] = i
	}
	return nil
}

// Check validates a split: every row index within Rows, each list strictly
// ascending (so without duplicates), no row both trained on and held out,
// at least one training row, and a test fraction in [0, 1). The error
// names the field (split.train, split.test, ...).
func (s *Split) Check() error {
	if s.Rows < 1 || s.Rows > MaxRows {
		return fmt.Errorf("split.rows: %d, want 1..%d", s.Rows, MaxRows)
	}
	if !(s.TestFraction >= 0 && s.TestFraction < 1) {
		return fmt.Errorf("split.test_fraction: %v, want 0 <= f < 1", s.TestFraction)
	}
	if len(s.Train) == 0 {
		return fmt.Errorf("split.train: no training rows")
	}
	if len(s.Train)+len(s.Test) > s.Rows {
		return fmt.Errorf("split: %d training and %d test rows, but only %d rows", len(s.Train), len(s.Test), s.Rows)
	}
	for _, l := range []struct {
		name string
		idx  []int
	}{{"split.train", s.Train}, {"split.test", s.Test}} {
		for i, r := range l.idx {
			if r < 0 || r >= s.Rows {
				return fmt.Errorf("%s[%d]: row %d is outside the %d rows (0..%d)", l.name, i, r, s.Rows, s.Rows-1)
			}
			if i > 0 && r <= l.idx[i-1] {
				return fmt.Errorf("%s[%d]: row %d after row %d: indices must be strictly ascending", l.name, i, r, l.idx[i-1])
			}
		}
	}
	// Both lists are ascending: a merge finds a shared row.
	for i, j := 0, 0; i < len(s.Train) && j < len(s.Test); {
		switch {
		case s.Train[i] == s.Test[j]:
			return fmt.Errorf("split.test[%d]: row %d is also a training row", j, s.Test[j])
		case s.Train[i] < s.Test[j]:
			i++
		default:
			j++
		}
	}
	return nil
}

// checkMeta validates what the header carries besides the model's shape:
// names, split and data fingerprint.
func checkMeta(classes, features []string, split *Split, fingerprint string) (field string, err error) {
	if err := checkNames("classes", classes, MaxClasses); err != nil {
		return "classes", err
	}
	if err := checkNames("features", features, MaxFeatures); err != nil {
		return "features", err
	}
	if err := split.Check(); err != nil {
		return "split", err
	}
	if err := checkFingerprint(fingerprint); err != nil {
		return "data_fingerprint", err
	}
	return "", nil
}

// checkHeader validates every header field against the format's limits
// and against each other, before anything is allocated from them.
func checkHeader(h *header, split *Split) (field string, err error) {
	if field, err := checkMeta(h.Classes, h.Features, split, h.DataFingerprint); err != nil {
		return field, err
	}
	p := h.Params
	if err := p.Validate(); err != nil {
		return "params", err
	}
	if p.Clauses > MaxClauses {
		return "params.clauses", fmt.Errorf("%d clauses, limit %d", p.Clauses, MaxClauses)
	}
	nc := len(h.Classes)
	if nc < 2 {
		return "classes", fmt.Errorf("%d classes, want 2..%d", nc, MaxClasses)
	}
	if h.Binary && nc != 2 {
		return "binary", fmt.Errorf("a binary model has 2 classes, the header names %d", nc)
	}
	if h.BoolInputs < 1 || h.BoolInputs > MaxBoolFeatures {
		return "bool_features", fmt.Errorf("%d Boolean features, want 1..%d", h.BoolInputs, MaxBoolFeatures)
	}
	if err := fixed.CheckBits(h.Bits); err != nil {
		return "quant_bits", err
	}
	if err := h.Mapping.Validate(); err != nil {
		return "mapping", err
	}
	if h.Booleanizer == nil {
		return "booleanizer", errors.New("missing")
	}
	if err := h.Booleanizer.Validate(); err != nil {
		return "booleanizer", err
	}
	if n := h.Booleanizer.NumFeatures(); n != len(h.Features) {
		return "features", fmt.Errorf("%d feature names, the booleanizer has %d features", len(h.Features), n)
	}
	if n := h.Booleanizer.NumBits(); n != h.BoolInputs {
		return "bool_features", fmt.Errorf("%d, the booleanizer makes %d bits", h.BoolInputs, n)
	}
	if err := checkEncoding(h.Encoding, h.Booleanizer); err != nil {
		return "encoding", err
	}
	// Shape, in int64 and bounded step by step so that nothing overflows.
	nt := int64(nc)
	if h.Binary {
		nt = 1
	}
	tas := nt * int64(p.Clauses) * 2 * int64(h.BoolInputs)
	if tas > MaxSPVValues/2 {
		return "params.clauses", fmt.Errorf("%d TMs x %d clauses x %d literals = %d TAs, limit %d", nt, p.Clauses, 2*h.BoolInputs, tas, MaxSPVValues/2)
	}
	spv := tas * 2 * int64(p.N)
	if spv > MaxSPVValues {
		return "params.N", fmt.Errorf("%d TAs x %d states = %d SPV values, limit %d", tas, 2*p.N, spv, MaxSPVValues)
	}
	if int64(h.TAs) != tas {
		return "tas", fmt.Errorf("%d, the shape gives %d", h.TAs, tas)
	}
	if int64(h.SPVValues) != spv {
		return "spv_values", fmt.Errorf("%d, the shape gives %d", h.SPVValues, spv)
	}
	return "", nil
}

// readModel reads an encoded model from r, checking the magic, version
// and header length in the first 16 bytes before reading on, and refusing
// more than MaxFileSize bytes. A bad fixed header is returned as read, so
// that Decode reports it. size is the file's size when known (a regular
// file), else -1: with it the data is read into one buffer of that size,
// without the growing copies of io.ReadAll.
func readModel(r io.Reader, name string, size int64) ([]byte, error) {
	head := make([]byte, 16)
	n, err := io.ReadFull(r, head)
	if err != nil && err != io.EOF && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("modelfile: %s: %w", name, err)
	}
	head = head[:n]
	if n < 16 || string(head[:8]) != Magic {
		return head, nil
	}
	tooLarge := &Error{File: name, Offset: MaxFileSize, Field: "size", Err: ErrTooLarge,
		Msg: fmt.Sprintf("the file is larger than the %d-byte limit of a model file", MaxFileSize)}
	if size > 16 && size <= MaxFileSize {
		data := make([]byte, size)
		copy(data, head)
		n, err := io.ReadFull(r, data[16:])
		switch {
		case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
			return data[:16+n], nil // shorter than when it was opened
		case err != nil:
			return nil, fmt.Errorf("modelfile: %s: %w", name, err)
		}
		var probe [1]byte
		if _, err := io.ReadFull(r, probe[:]); err == io.EOF {
			return data, nil
		}
		// The file grew since it was opened: read on (the slow path).
		rest, err := io.ReadAll(io.LimitReader(r, MaxFileSize-size))
		if err != nil {
			return nil, fmt.Errorf("modelfile: %s: %w", name, err)
		}
		if size+1+int64(len(rest)) > MaxFileSize {
			return nil, tooLarge
		}
		return append(append(data, probe[0]), rest...), nil
	}
	data, err := io.ReadAll(io.MultiReader(bytes.NewReader(head), io.LimitReader(r, MaxFileSize-16+1)))
	if err != nil {
		return nil, fmt.Errorf("modelfile: %s: %w", name, err)
	}
	if len(data) > MaxFileSize {
		return nil, tooLarge
	}
	return data, nil
}

// openModel opens path for reading, refusing a directory and a regular
// file larger than MaxFileSize before reading anything.
func openModel(path string) (*os.File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("modelfile: %w", err)
	}
	fi, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, fmt.Errorf("modelfile: %w", err)
	}
	if fi.IsDir() {
		fh.Close()
		return nil, &Error{File: path, Offset: -1, Msg: "is a directory, not a model file", Err: ErrNotModel}
	}
	if fi.Mode().IsRegular() && fi.Size() > MaxFileSize {
		fh.Close()
		return nil, &Error{File: path, Offset: -1, Field: "size", Err: ErrTooLarge,
			Msg: fmt.Sprintf("the file has %d bytes, the limit of a model file is %d", fi.Size(), MaxFileSize)}
	}
	return fh, nil
}

// writeFile writes data to path with internal/outfile, the one writer
// of every output: a regular file (or a new name) through an exclusively
// created temporary file renamed over it, a character device or FIFO in
// place (never replaced by a regular file), anything else refused. A
// symlink planted at the temporary name is never followed, and a failure
// leaves no temporary file behind.
func writeFile(path string, data []byte) error {
	if err := outfile.WriteFile(path, data); err != nil {
		return fmt.Errorf("modelfile: %w", err)
	}
	return nil
}
