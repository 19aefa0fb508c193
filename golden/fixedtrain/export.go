package fixedtrain

import (
	"fmt"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/ptm"
)

// Model returns the trained PTM as a float model whose SPVs are the fixed
// SPVs over 2^B (exact in float64), so that fixed.Quantize at B bits gives
// back exactly the trainer's SPVs and Bank's thresholds: the result is an
// ordinary model for model files, `ptm eval`, the generator and the board.
func (tr *Trainer) Model() (*ptm.Model, error) {
	p := tr.cfg.Params
	p.Epochs = tr.Epochs
	m, err := ptm.New(p, tr.classes, tr.features, tr.binary)
	if err != nil {
		return nil, fmt.Errorf("fixedtrain: %w", err)
	}
	scale := 1 / float64(uint32(1)<<uint(tr.bits))
	for i, q := range tr.spv {
		m.SPV[i] = float64(q) * scale
	}
	m.RefreshInclude()
	return m, nil
}

// Bank returns the B-bit bank of the trained model: the SPVs as they are
// and the include thresholds min(include mass, 2^B - 1)
// (docs/fixed-point.md 2.2), derived from the maintained include masses.
func (tr *Trainer) Bank() (*fixed.Bank, error) {
	sh := fixed.Shape{Binary: tr.binary, Classes: tr.classes, TMs: tr.tms, Clauses: tr.clauses, Features: tr.features, T: tr.cfg.T}
	b := &fixed.Bank{Shape: sh, Bits: tr.bits, N: tr.n, SPV: make([]uint32, len(tr.spv)), Thresh: make([]uint32, len(tr.inc))}
	for i, q := range tr.spv {
		b.SPV[i] = uint32(q)
	}
	max := uint32(1)<<uint(tr.bits) - 1
	for ta, q := range tr.inc {
		b.Thresh[ta] = min(uint32(q), max)
	}
	if err := b.Check(); err != nil {
		return nil, fmt.Errorf("fixedtrain: bank: %w", err)
	}
	return b, nil
}

// Check verifies the trainer's invariants: every SPV sums to exactly 2^B,
// every include mass equals the sum of its SPV's include states, and every
// support holds all of its SPV's mass. It is a test aid and costs a pass
// over all SPVs.
func (tr *Trainer) Check() error { return tr.check(tr.bits) }
