package modelfile

import (
	"bufio"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/ptm"
)

// Widths of the stored SPVs (File.SPVBits): the fixed-point trainer's
// words (B = 8..15) and the float models' 16 bits fit, as does any bank
// width of golden/fixed.
const (
	MinSPVBits = fixed.MinBits
	MaxSPVBits = 16
)

// FloatSPVBits is the width `ptm train` stores a float-trained tabular
// model's SPVs at (File.SPVBits; 0 still means MaxSPVBits for other
// writers): rounding moves a P(include) by less than N * 2^-14 (at most
// 0.00043 on Iris with the tuned defaults, whose file it takes from
// 238,380 to 159,517 bytes; docs/model-file-size.md). A fixed-point
// trained model is stored exactly at its trainer's width, at most 15.
const FloatSPVBits = 14

// maxD2 bounds the magnitude of a stored second difference: masses are
// below 2^16, so first differences lie strictly within +-2^16 and second
// differences within +-2^17.
const maxD2 = 1 << 17

// checkSPVBits validates a stored SPV width.
func checkSPVBits(w int) error {
	if w < MinSPVBits || w > MaxSPVBits {
		return fmt.Errorf("%d-bit stored SPVs, want %d..%d", w, MinSPVBits, MaxSPVBits)
	}
	return nil
}

// spvBits resolves the width at which f's SPVs are stored (File.SPVBits).
func (f *File) spvBits() (int, error) {
	if f.SPVBits != 0 {
		return f.SPVBits, checkSPVBits(f.SPVBits)
	}
	if b := f.Bank.Bits; b <= MaxSPVBits && exactAt(f.Model, b) {
		return b, nil
	}
	return MaxSPVBits, nil
}

// exactAt reports whether every SPV of m is q / 2^w for integers q summing
// to 2^w.
func exactAt(m *ptm.Model, w int) bool {
	n2 := 2 * m.N
	for ta := 0; ta < m.NumTAs(); ta++ {
		var sum float64
		for _, v := range m.SPV[ta*n2 : (ta+1)*n2] {
			x := math.Ldexp(v, w)
			if x != math.Trunc(x) || x < 0 || x > 1<<MaxSPVBits {
				return false
			}
			sum += x
		}
		if sum != math.Ldexp(1, w) {
			return false
		}
	}
	return true
}

// Rounding reports what Canonicalize changed.
type Rounding struct {
	// Bits is the stored width W.
	Bits int
	// TAs counts the automata whose SPV changed.
	TAs int
	// MaxSPV is the largest change of one state's probability.
	MaxSPV float64
	// MaxInclude is the largest change of a TA's P(include).
	MaxInclude float64
}

// Canonicalize rounds f's SPVs to the stored width W (File.SPVBits,
// resolved and recorded) exactly as Encode does, and re-quantizes the bank
// from them, so that f equals what writing and reading it gives back. A
// model trained by the fixed-point trainer, or read from a format-2 file,
// is already canonical and is left as it is. f must validate.
func (f *File) Canonicalize() (Rounding, error) {
	if err := f.validate(false); err != nil {
		return Rounding{}, err
	}
	w, err := f.spvBits()
	if err != nil {
		return Rounding{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	r := Rounding{Bits: w}
	m := f.Model
	n2 := 2 * m.N
	q := make([]uint32, n2)
	scale := math.Ldexp(1, -w)
	for ta := 0; ta < m.NumTAs(); ta++ {
		p := m.SPV[ta*n2 : (ta+1)*n2]
		if err := fixed.QuantizeSPV(p, w, q); err != nil {
			return Rounding{}, fmt.Errorf("%w: TA %d: %w", ErrInvalid, ta, err)
		}
		changed := false
		var inc, inc0 float64
		for n, v := range q {
			x := float64(v) * scale
			if n >= m.N {
				inc += x
				inc0 += p[n]
			}
			if x != p[n] {
				changed = true
				r.MaxSPV = math.Max(r.MaxSPV, math.Abs(x-p[n]))
				p[n] = x
			}
		}
		if changed {
			r.TAs++
			r.MaxInclude = math.Max(r.MaxInclude, math.Abs(inc-inc0))
		}
	}
	f.SPVBits = w
	if r.TAs == 0 {
		return r, nil
	}
	m.RefreshInclude()
	bank, err := fixed.Quantize(m, f.Bank.Bits)
	if err != nil {
		return Rounding{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	f.Bank = bank
	return r, nil
}

// encodePayload codes every SPV of m at w bits (doc.go): per TA in flat
// order its support lo..hi and the second differences of its masses over
// lo..hi-1, zigzag varints; the mass of hi is 2^w minus the others. The
// records are compressed with DEFLATE (compress/flate, BestCompression).
func encodePayload(m *ptm.Model, w int) ([]byte, error) {
	n2 := 2 * m.N
	return encodeRecords(m.NumTAs(), n2, nil, func(ta int, q []uint32) error {
		if err := fixed.QuantizeSPV(m.SPV[ta*n2:(ta+1)*n2], w, q); err != nil {
			return fmt.Errorf("%w: TA %d: %w", ErrInvalid, ta, err)
		}
		return nil
	})
}

// encodeRecords codes tas SPVs of n2 states each, spv(ta, q) writing TA
// ta's masses into q (len n2, at least one mass > 0), as the format-2
// payload (doc.go): the records of encodePayload, then extra (nil for a
// tabular file), DEFLATE-compressed.
func encodeRecords(tas, n2 int, extra []byte, spv func(ta int, q []uint32) error) ([]byte, error) {
	q := make([]uint32, n2)
	var out bytes.Buffer
	zw, err := flate.NewWriter(&out, flate.BestCompression)
	if err != nil {
		return nil, fmt.Errorf("modelfile: %w", err)
	}
	rec := make([]byte, 0, 6+3*n2)
	for ta := 0; ta < tas; ta++ {
		if err := spv(ta, q); err != nil {
			return nil, err
		}
		lo, hi, err := spvSupport(q, ta)
		if err != nil {
			return nil, err
		}
		rec = binary.AppendUvarint(rec[:0], uint64(lo))
		rec = binary.AppendUvarint(rec, uint64(hi-lo))
		var prev, pd int64
		for _, v := range q[lo:hi] {
			d := int64(v) - prev
			rec = binary.AppendVarint(rec, d-pd)
			prev, pd = int64(v), d
		}
		if _, err := zw.Write(rec); err != nil {
			return nil, fmt.Errorf("modelfile: %w", err)
		}
	}
	if len(extra) > 0 {
		if _, err := zw.Write(extra); err != nil {
			return nil, fmt.Errorf("modelfile: %w", err)
		}
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("modelfile: %w", err)
	}
	return out.Bytes(), nil
}

// maxRecords bounds the inflated records of tas TAs with values SPV
// values in all: two varints of at most 3 bytes per TA, one of at most 3
// per other value.
func maxRecords(tas, values int64) int64 { return 6*tas + 3*(values-tas) }

// records reads the inflated TA records, counting the bytes read.
type records struct {
	r io.ByteReader
	n int64 // bytes read
}

// uvarint reads a minimal unsigned varint of at most 3 bytes.
func (rr *records) uvarint() (uint64, error) {
	var v uint64
	for i := 0; ; i++ {
		b, err := rr.r.ReadByte()
		if err == io.EOF {
			return 0, errors.New("the records end inside a varint")
		}
		if err != nil {
			return 0, fmt.Errorf("DEFLATE stream: %w", err)
		}
		rr.n++
		v |= uint64(b&0x7f) << (7 * i)
		switch {
		case b < 0x80 && i > 0 && b == 0:
			return 0, errors.New("varint not minimally encoded")
		case b < 0x80:
			return v, nil
		case i == 2:
			return 0, errors.New("varint of more than 3 bytes")
		}
	}
}

// decodeV2 decodes the payload of a format-2 file. h has passed
// checkHeader; data's checksum is verified.
func decodeV2(data []byte, name string, hl int64, h *header, split Split) (*File, error) {
	fail := func(off int64, field string, format string, a ...any) error {
		return errorf(name, off, field, ErrInvalid, format, a...)
	}
	if err := checkSPVBits(h.SPVBits); err != nil {
		return nil, fail(16, "spv_bits", "%v", err)
	}
	tas, values := int64(h.TAs), int64(h.SPVValues)
	// The records are at least 2 bytes per TA and at most maxRecords;
	// DEFLATE inflates at most 1032 times and stores incompressible data
	// with 5 bytes per block of up to 65,535.
	maxP := maxRecords(tas, values) + maxRecords(tas, values)/1024 + 1024
	if p := h.PayloadBytes; p < 1 || p > maxP || p*1032 < 2*tas {
		return nil, fail(16, "payload_bytes", "%d bytes for %d TAs of %d states, want %d..%d", p, tas, values/tas, (2*tas+1031)/1032, maxP)
	}
	if want := 16 + hl + h.PayloadBytes + 32; int64(len(data)) != want {
		return nil, fail(int64(len(data)), "payload", "file is %d bytes, its header describes %d", len(data), want)
	}
	m, err := ptm.New(h.Params, len(h.Classes), h.BoolInputs, h.Binary)
	if err != nil {
		return nil, fail(16, "params", "%v", err)
	}
	if m.NumTAs() != h.TAs || len(m.SPV) != h.SPVValues {
		return nil, fail(16, "tas", "header shape gives %d TAs and %d SPV values, header says %d and %d", m.NumTAs(), len(m.SPV), h.TAs, h.SPVValues)
	}
	bank := &fixed.Bank{Shape: fixed.ShapeOf(m), Bits: h.Bits, N: m.N, SPV: make([]uint32, h.SPVValues), Thresh: make([]uint32, h.TAs)}
	n2 := 2 * m.N
	w := h.SPVBits
	scale := math.Ldexp(1, -w)
	lits := m.NumLiterals()
	where := func(ta int) string {
		return fmt.Sprintf("payload: TA %d (TM %d, clause %d, literal %d)", ta, ta/lits/m.Clauses, ta/lits%m.Clauses, ta%lits)
	}
	err = decodeRecords(data, name, 16+hl, h.PayloadBytes, h.TAs, n2, w, where, nil, func(ta int, q []uint32) error {
		p := m.SPV[ta*n2 : (ta+1)*n2]
		for k, v := range q {
			p[k] = float64(v) * scale
		}
		bq := bank.SPV[ta*n2 : (ta+1)*n2]
		if h.Bits == w {
			copy(bq, q)
		} else if err := fixed.QuantizeSPV(p, h.Bits, bq); err != nil {
			return err
		}
		bank.Thresh[ta] = fixed.ThresholdOf(bq, h.Bits)
		return nil
	})
	if err != nil {
		return nil, err
	}
	m.RefreshInclude()
	f := &File{Model: m, Booleanizer: h.Booleanizer, Features: h.Features, Classes: h.Classes, Split: split, Mapping: h.Mapping, Bank: bank,
		DataFingerprint: h.DataFingerprint, Encoding: h.Encoding, Tuning: h.Tuning, FixedTraining: h.FixedTraining, SPVBits: w, Format: Version}
	if err := f.validate(false); err != nil {
		return nil, &Error{File: name, Offset: -1, Msg: err.Error(), Err: ErrInvalid}
	}
	return f, nil
}

// decodeRecords inflates and checks the format-2 records of tas SPVs of
// n2 states at w bits, the payload being data[off:off+size], and hands
// every TA's masses to put (q is reused), then lets rest read what
// follows the records (nil: nothing may). where names a TA in errors.
func decodeRecords(data []byte, name string, off, size int64, tas, n2, w int, where func(ta int) string, rest func(rr *records) error, put func(ta int, q []uint32) error) error {
	full := int64(1) << w
	q := make([]uint32, n2)
	payload := bytes.NewReader(data[off : off+size])
	zr := flate.NewReader(payload)
	defer zr.Close()
	rr := &records{r: bufio.NewReaderSize(zr, 1<<16)}
	for ta := 0; ta < tas; ta++ {
		at := rr.n
		fail := func(format string, a ...any) error {
			return errorf(name, off, where(ta), ErrInvalid, "record at byte %d of the inflated records: %s", at, fmt.Sprintf(format, a...))
		}
		lo, err := rr.uvarint()
		if err != nil {
			return fail("support start: %v", err)
		}
		width, err := rr.uvarint()
		if err != nil {
			return fail("support width: %v", err)
		}
		if lo >= uint64(n2) || width >= uint64(n2)-lo {
			return fail("support %d..%d+%d outside the %d states", lo, lo, width, n2)
		}
		hi := int(lo + width)
		clear(q)
		var prev, pd, sum int64
		for k := int(lo); k < hi; k++ {
			u, err := rr.uvarint()
			if err != nil {
				return fail("state %d: %v", k, err)
			}
			d2 := int64(u >> 1)
			if u&1 != 0 {
				d2 = ^d2
			}
			if d2 <= -maxD2 || d2 >= maxD2 {
				return fail("state %d: second difference %d outside +-%d", k, d2, maxD2)
			}
			d := pd + d2
			v := prev + d
			switch {
			case v < 0 || v >= full:
				return fail("state %d: mass %d outside 0..%d", k, v, full-1)
			case k == int(lo) && v == 0:
				return fail("state %d: the support starts with zero mass", k)
			}
			sum += v
			if sum >= full {
				return fail("state %d: masses reach %d before the support's last state %d, the whole SPV holds %d", k, sum, hi, full)
			}
			q[k] = uint32(v)
			prev, pd = v, d
		}
		q[hi] = uint32(full - sum)
		if err := put(ta, q); err != nil {
			return fail("%v", err)
		}
	}
	if rest != nil {
		if err := rest(rr); err != nil {
			return err
		}
	}
	if _, err := rr.r.ReadByte(); err != io.EOF {
		if err == nil {
			err = errors.New("data")
		}
		return errorf(name, off, "payload", ErrInvalid, "after the last TA's record (byte %d of the inflated records): %v", rr.n, err)
	}
	if payload.Len() != 0 {
		return errorf(name, off+size-int64(payload.Len()), "payload", ErrInvalid, "%d bytes after the end of the DEFLATE stream", payload.Len())
	}
	return nil
}

// splitRuns is a Split as format 2 stores it: the row index lists as
// maximal runs of consecutive rows, [first, last] inclusive, ascending.
type splitRuns struct {
	Dataset      string   `json:"dataset"`
	Rows         int      `json:"rows"`
	Seed         uint64   `json:"seed"`
	TestFraction float64  `json:"test_fraction"`
	Train        [][2]int `json:"train"`
	Test         [][2]int `json:"test"`
}

// runsOf returns the maximal runs of an ascending index list.
func runsOf(idx []int) [][2]int {
	runs := [][2]int{}
	for i, r := range idx {
		if i > 0 && r == idx[i-1]+1 {
			runs[len(runs)-1][1] = r
			continue
		}
		runs = append(runs, [2]int{r, r})
	}
	return runs
}

// runsOfSplit is s in format 2's form.
func runsOfSplit(s *Split) splitRuns {
	return splitRuns{Dataset: s.Dataset, Rows: s.Rows, Seed: s.Seed, TestFraction: s.TestFraction, Train: runsOf(s.Train), Test: runsOf(s.Test)}
}

// parseSplitRuns decodes a format-2 split, checking its runs (within the
// rows, ascending, maximal, at most MaxSplitRows indices in all) before
// expanding them.
func parseSplitRuns(raw json.RawMessage) (Split, error) {
	var r splitRuns
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Split{}, err
	}
	if r.Rows < 1 || r.Rows > MaxRows {
		return Split{}, fmt.Errorf("split.rows: %d, want 1..%d", r.Rows, MaxRows)
	}
	total := 0
	for _, l := range []struct {
		name string
		runs [][2]int
	}{{"split.train", r.Train}, {"split.test", r.Test}} {
		for i, run := range l.runs {
			switch {
			case run[0] < 0 || run[1] < run[0] || run[1] >= r.Rows:
				return Split{}, fmt.Errorf("%s[%d]: run %d..%d is not within the %d rows (0..%d) or is reversed", l.name, i, run[0], run[1], r.Rows, r.Rows-1)
			case i > 0 && run[0] <= l.runs[i-1][1]+1:
				return Split{}, fmt.Errorf("%s[%d]: run %d..%d after run %d..%d: runs must be ascending, apart and maximal", l.name, i, run[0], run[1], l.runs[i-1][0], l.runs[i-1][1])
			}
			total += run[1] - run[0] + 1 // disjoint runs within Rows: no overflow
			if total > MaxSplitRows {
				return Split{}, fmt.Errorf("%s: more than %d row indices in the split", l.name, MaxSplitRows)
			}
		}
	}
	expand := func(runs [][2]int) []int {
		n := 0
		for _, run := range runs {
			n += run[1] - run[0] + 1
		}
		idx := make([]int, 0, n)
		for _, run := range runs {
			for x := run[0]; x <= run[1]; x++ {
				idx = append(idx, x)
			}
		}
		return idx
	}
	return Split{Dataset: r.Dataset, Rows: r.Rows, Seed: r.Seed, TestFraction: r.TestFraction, Train: expand(r.Train), Test: expand(r.Test)}, nil
}

// spvSupport returns the first and last state of q with mass, the
// support both SPV codings code; an SPV with no mass (TA ta) is an error.
func spvSupport(q []uint32, ta int) (lo, hi int, err error) {
	for lo < len(q) && q[lo] == 0 {
		lo++
	}
	if lo == len(q) {
		return 0, 0, fmt.Errorf("%w: TA %d: an SPV with no mass", ErrInvalid, ta)
	}
	hi = len(q) - 1
	for q[hi] == 0 {
		hi--
	}
	return lo, hi, nil
}
