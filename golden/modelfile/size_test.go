package modelfile

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"math"
	"math/bits"
	"os"
	"slices"
	"testing"

	"github.com/ptmhw/ptm/golden/fixed"
)

// TestConvSizeByWidth rewrites a convolutional model with its SPVs at 12
// down to 8 bits (each from the stored SPVs scaled to the trainer's
// width, rounded by halves as SetSPVs does; the include masses and bank
// kept), checks that every file reads back to the same content, that
// the files shrink with the width and that each stored P(include) is
// within half a unit of 2^-W of the trainer's (plus the source's own
// rounding), and logs that distance (and rounding whole SPVs'), what
// the bytes are: the
// header, the DEFLATE-coded records, the SPV supports, and an estimate of
// what an ideal adaptive coder of the records' residuals would need
// (static per-context entropy; contexts: the previous mass's magnitude and
// the previous residual's), so that a better lossless coding can be
// judged against DEFLATE. The model is a small synthetic one, or the file
// PTM_SIZE_MODEL names (docs/model-file-size.md:
// PTM_SIZE_MODEL=mnist.ptm go test -run ConvSizeByWidth -v
// ./golden/modelfile).
func TestConvSizeByWidth(t *testing.T) {
	var f *ConvFile
	if p := os.Getenv("PTM_SIZE_MODEL"); p != "" {
		var err error
		if f, _, err = ReadConv(p); err != nil {
			t.Fatal(err)
		}
	} else {
		f = convTrainedLike(t, 8, 12)
	}
	n2 := 2 * f.Trainer.N
	up := uint(f.Trainer.Bits - f.SPVBits)
	src := make([]uint16, n2)
	prev := math.MaxInt
	// How far the source's own SPVs are from the trainer's include masses.
	var srcErr float64
	for ta := range f.Include {
		srcErr = max(srcErr, math.Abs(math.Ldexp(float64(f.incOf(ta)), -f.SPVBits)-math.Ldexp(float64(f.Include[ta]), -f.Trainer.Bits)))
	}
	for w := min(12, f.SPVBits); w >= 8; w-- {
		g := *f
		g.SPVBits = w
		g.SPVCoding = SPVCodingRange // the source may be DEFLATE-coded
		if err := g.SetSPVs(func(ta int) []uint16 {
			for i, v := range f.SPV[ta*n2 : (ta+1)*n2] {
				src[i] = v << up
			}
			return src
		}); err != nil {
			t.Fatal(err)
		}
		g.Include = f.Include
		data, err := EncodeConv(&g)
		if err != nil {
			t.Fatalf("W %d: %v", w, err)
		}
		back, err := DecodeConv(data, "sized.ptm")
		if err != nil {
			t.Fatalf("W %d: %v", w, err)
		}
		if !slices.Equal(back.SPV, g.SPV) || !slices.Equal(back.Include, f.Include) || !slices.Equal(back.Thresh, f.Thresh) {
			t.Fatalf("W %d: the file read back differs", w)
		}
		// P(include) of the stored SPVs against the trainer's, rounded by
		// halves and (as before) as a whole.
		var halves, whole float64
		p := make([]float64, n2)
		q := make([]uint32, n2)
		for ta := range f.Include {
			exact := math.Ldexp(float64(f.Include[ta]), -f.Trainer.Bits)
			halves = max(halves, math.Abs(math.Ldexp(float64(g.incOf(ta)), -w)-exact))
			for i, v := range f.SPV[ta*n2 : (ta+1)*n2] {
				p[i] = float64(v)
			}
			if err := fixed.QuantizeSPV(p, w, q); err != nil {
				t.Fatal(err)
			}
			var inc uint32
			for _, v := range q[f.Trainer.N:] {
				inc += v
			}
			whole = max(whole, math.Abs(math.Ldexp(float64(inc), -w)-exact))
		}
		t.Logf("SPVs at %d bits: largest |P(include) - the trainer's|: %.5f rounded by halves, %.5f rounded as a whole", w, halves, whole)
		if bound := math.Ldexp(1, -w-1) + srcErr; halves > bound {
			t.Errorf("W %d: rounded by halves, a P(include) %.5f from the trainer's, more than half a unit plus the source's %.5f", w, halves, srcErr)
		}
		hl := int(binary.LittleEndian.Uint32(data[12:]))
		_, stream, rest := rangeParts(t, data)
		def := recoded(t, &g, SPVCodingDeflate)
		t.Logf("SPVs at %d bits: range-coded file %d bytes (SPV stream %d, DEFLATE-coded extras %d); DEFLATE-coded file %d bytes", w, len(data), len(stream), len(rest), len(def))
		if len(data) >= len(def) {
			t.Errorf("W %d: range-coded file %d bytes, not smaller than DEFLATE-coded (%d)", w, len(data), len(def))
		}
		est, states, widths, hit, off1 := residualEntropy(g.SPV, n2)
		t.Logf("SPVs at %d bits: file %d bytes (header %d, payload %d); %d states coded, supports of median %d states (10%%: %d, 90%%: %d); records: DEFLATE %d bytes, ideal context coder about %.0f",
			w, len(data), hl, len(data)-16-hl-32, states, widths[len(widths)/2], widths[len(widths)/10], widths[len(widths)*9/10], deflated(rawRecords(g.SPV, n2)), est)
		t.Logf("SPVs at %d bits: a mass after one of 32-63 units predicted exactly %.3f of the time, off by one %.3f", w, hit, off1)
		if len(data) >= prev {
			t.Errorf("W %d: %d bytes, not fewer than at %d bits (%d)", w, len(data), w+1, prev)
		}
		prev = len(data)
	}
}

// rawRecords codes SPVs as encodeRecords does, uncompressed.
func rawRecords(spv []uint16, n2 int) []byte {
	var out []byte
	for ta := 0; ta < len(spv)/n2; ta++ {
		q := spv[ta*n2 : (ta+1)*n2]
		lo, hi := 0, n2-1
		for q[lo] == 0 {
			lo++
		}
		for q[hi] == 0 {
			hi--
		}
		out = binary.AppendUvarint(out, uint64(lo))
		out = binary.AppendUvarint(out, uint64(hi-lo))
		var prev, pd int64
		for _, v := range q[lo:hi] {
			d := int64(v) - prev
			out = binary.AppendVarint(out, d-pd)
			prev, pd = int64(v), d
		}
	}
	return out
}

func deflated(b []byte) int {
	var out bytes.Buffer
	w, _ := flate.NewWriter(&out, flate.BestCompression)
	w.Write(b)
	w.Close()
	return out.Len()
}

// residualEntropy estimates in bytes what an adaptive coder would need
// for the masses over each support lo..hi-1 predicted from the three
// before (q1 + (q1 - q4)/3, the best of several tried), the residuals'
// entropy under the context (bit length of q1, of the previous residual);
// it returns the states coded, the supports' widths, sorted, and after a
// mass of 32-63 units the fractions of residuals 0 and +-1.
func residualEntropy(spv []uint16, n2 int) (float64, int, []int, float64, float64) {
	counts := map[[2]int]map[int64]int{}
	var widths []int
	var mid [3]int
	states := 0
	for ta := 0; ta < len(spv)/n2; ta++ {
		q := spv[ta*n2 : (ta+1)*n2]
		lo, hi := 0, n2-1
		for q[lo] == 0 {
			lo++
		}
		for q[hi] == 0 {
			hi--
		}
		widths = append(widths, hi-lo+1)
		var h [4]int64
		var last int64
		for k := lo; k < hi; k++ {
			v := int64(q[k])
			r := v - max(0, h[0]+(h[0]-h[3]+1)/3)
			c := [2]int{bits.Len64(uint64(h[0])), bits.Len64(uint64(max(last, -last)))}
			if counts[c] == nil {
				counts[c] = map[int64]int{}
			}
			counts[c][r]++
			if c[0] == 6 {
				mid[min(max(r, -r), 2)]++
			}
			h = [4]int64{v, h[0], h[1], h[2]}
			last = r
			states++
		}
	}
	var e float64
	for _, m := range counts {
		n := 0
		for _, k := range m {
			n += k
		}
		for _, k := range m {
			e -= float64(k) * math.Log2(float64(k)/float64(n))
		}
	}
	slices.Sort(widths)
	all := float64(max(1, mid[0]+mid[1]+mid[2]))
	return e / 8, states, widths, float64(mid[0]) / all, float64(mid[1]) / all
}
