package pipeline

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"testing"

	"github.com/ptmhw/ptm/golden/ptm"
)

// TestIrisDefaultsBitExact guards the training contract of the plain
// (one-set) encoding: Iris with `ptm train`'s other defaults and
// the split of hw/refmodel gives the same SPVs, bit for bit, as the code
// that recorded this hash (on amd64). A change here is a change of the
// golden model and of every design derived from it. The SPVs are Train's,
// canonical for the model file (rounded to 16 bits, golden/modelfile
// format 2; the hash before that rounding was 19dc2931...).
func TestIrisDefaultsBitExact(t *testing.T) {
	d, err := LoadData(Iris, "")
	if err != nil {
		t.Fatal(err)
	}
	p := ptm.DefaultParams()
	plain := Plain
	f, err := Train(d, TrainConfig{Params: p, Thresholds: 6, SplitSeed: p.Seed, Encoding: &plain})
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	var b [8]byte
	for _, v := range f.Model.SPV {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
		h.Write(b[:])
	}
	const want = "5ff5dcd2a604fcaff957169c5fdf296ca4c6894484f234abfbc090c8c52102a8"
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		t.Errorf("SPV hash %s, want %s", got, want)
	}
}
