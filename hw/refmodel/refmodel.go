// Package refmodel builds the shipped example models behind the committed
// reference designs (rtl/generated/) and the trained-model co-simulation
// tests: Iris and the classic noisy XOR, trained by the golden pipeline
// exactly as `ptm train` does (deterministic: fixed seeds), then quantized.
// The model hash is the SHA-256 of the encoded model file, the same hash
// `ptm gen --model` puts in generated headers. Regenerate the committed
// designs with `go test ./hw -run 'TestReferenceDesigns|TestGoldenText' -update`.
package refmodel

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/golden/ptm"
)

// Model is a quantized trained model and its identity.
type Model struct {
	Name string      // short name, used for directories and module prefixes
	Bank *fixed.Bank // quantized model
	Hash string      // hex SHA-256 of the quantized thresholds and shape
	// Test are held-out inputs for co-simulation.
	Test [][]bool
	// File is the model file the bank was quantized from.
	File *modelfile.File
}

// Models returns every reference model. It is the one place to change the
// model source.
func Models() ([]Model, error) {
	iris, err := Iris()
	if err != nil {
		return nil, err
	}
	xor, err := NoisyXOR()
	if err != nil {
		return nil, err
	}
	return []Model{iris, xor}, nil
}

// Hash returns the hex SHA-256 of a bank's shape, bits and thresholds (for
// banks that have no model file, such as random ones).
func Hash(b *fixed.Bank) string {
	h := sha256.New()
	fmt.Fprintf(h, "%+v bits=%d\n", b.Shape, b.Bits)
	var w [4]byte
	for _, v := range b.Thresh {
		binary.LittleEndian.PutUint32(w[:], v)
		h.Write(w[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Iris is the shipped Iris example: `ptm train --data iris --seed 1 --no-tune` with
// the default hyper-parameters (3 classes x 20 clauses, T = 10, s = 2,
// N = 100, 6 thermometer thresholds per feature -> 24 Boolean features,
// the default sampled input encoding and the calibrated default mapping),
// quantized to 8 bits; its test inputs are the 30 held-out rows, each
// encoded by every set of the model's encoding (set-major per row).
func Iris() (Model, error) {
	d, err := pipeline.LoadData(pipeline.Iris, "")
	if err != nil {
		return Model{}, err
	}
	p := ptm.DefaultParams()
	return fromPipeline("iris", d, pipeline.TrainConfig{Params: p, Thresholds: 6, SplitSeed: p.Seed}, pipeline.DefaultCalibrate, 8)
}

// NoisyXOR is the shipped noisy-XOR example: the classic configuration of
// the Tsetlin-machine literature (12 features of which 2 are informative,
// 40% training label noise, 10 clauses per class, T = 15, s = 3.9), N = 100,
// 40 epochs, the plain encoding (its features are already Boolean),
// quantized to 12 bits; its test inputs are the first 200 clean test rows.
func NoisyXOR() (Model, error) {
	d, err := pipeline.LoadData(pipeline.XORClassic, "")
	if err != nil {
		return Model{}, err
	}
	p := ptm.Params{Clauses: 10, T: 15, S: 3.9, N: 100, Epochs: 40, Seed: 3, Feedback: ptm.ConsistentFeedback}
	plain := pipeline.Plain
	m, err := fromPipeline("xor", d, pipeline.TrainConfig{Params: p, Thresholds: 1, SplitSeed: 3, Encoding: &plain}, false, 12)
	if err != nil {
		return Model{}, err
	}
	m.Test = m.Test[:200]
	return m, nil
}

// fromPipeline trains a model file with the golden pipeline, quantizes it
// to bits and collects its booleanized test rows.
func fromPipeline(name string, d *pipeline.Data, cfg pipeline.TrainConfig, calibrate bool, bits int) (Model, error) {
	f, err := pipeline.TrainAndCalibrate(d, cfg, calibrate)
	if err != nil {
		return Model{}, fmt.Errorf("refmodel: %s: %w", name, err)
	}
	data, err := modelfile.Encode(f)
	if err != nil {
		return Model{}, fmt.Errorf("refmodel: %s: %w", name, err)
	}
	b, err := fixed.Quantize(f.Model, bits)
	if err != nil {
		return Model{}, fmt.Errorf("refmodel: %s: %w", name, err)
	}
	var test [][]bool
	for _, r := range f.Split.Test {
		xs, err := f.EncodeSets(d.X[r])
		if err != nil {
			return Model{}, fmt.Errorf("refmodel: %s: row %d: %w", name, r+1, err)
		}
		test = append(test, xs...)
	}
	return Model{Name: name, Bank: b, Hash: modelfile.Hash(data), Test: test, File: f}, nil
}
