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
// golden model and of every design derived from it.
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
	const want = "19dc29311258c98fa08417dd69318cd7f8de0ce48cc22b14252e4d28630afefd"
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		t.Errorf("SPV hash %s, want %s", got, want)
	}
}
