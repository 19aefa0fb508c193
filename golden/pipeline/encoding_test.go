package pipeline

import (
	"slices"
	"strings"
	"testing"

	"github.com/ptmhw/ptm/golden/booleanize"
	"github.com/ptmhw/ptm/golden/metrics"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/ptm"
)

// TestSampledEncodingMakesSamplesDisagree is the reason the sampled
// encoding exists, checked on a small scale: over 6 Iris splits the default
// encoding's samples disagree on far fewer rows than the plain PTM's, its
// entropy and mutual information rank the wrong predictions (pooled AUROC
// well above the plain model's), and accuracy does not suffer.
func TestSampledEncodingMakesSamplesDisagree(t *testing.T) {
	d, err := LoadData(Iris, "")
	if err != nil {
		t.Fatal(err)
	}
	p := ptm.DefaultParams()
	p.Epochs = 60
	type pooledQ struct {
		q []metrics.QueryStats
		y []int
	}
	run := func(enc Encoding, mp ptm.Mapping) metrics.Report {
		var all pooledQ
		for s := range 6 {
			p.Seed = uint64(s + 1)
			f, err := Train(d, TrainConfig{Params: p, Thresholds: 6, SplitSeed: p.Seed, Encoding: &enc})
			if err != nil {
				t.Fatal(err)
			}
			r, err := Evaluate(f, d, f.Split.Test, 100, p.Seed, mp, 10)
			if err != nil {
				t.Fatal(err)
			}
			all.q, all.y = append(all.q, r.Queries...), append(all.y, r.Labels...)
		}
		return metrics.Evaluate(all.q, all.y, 10)
	}
	vote := ptm.Mapping{Kind: ptm.Vote}
	plain, sampled := run(Plain, vote), run(DefaultEncoding, vote)
	t.Logf("plain:   accuracy %.3f AUROC(H) %.3f AUROC(MI) %.3f identical %.2f MI right/wrong %.3f/%.3f",
		plain.Accuracy, plain.AUROCEntropy, plain.AUROCMI, plain.Identical, plain.MICorrect, plain.MIIncorrect)
	t.Logf("sampled: accuracy %.3f AUROC(H) %.3f AUROC(MI) %.3f identical %.2f MI right/wrong %.3f/%.3f",
		sampled.Accuracy, sampled.AUROCEntropy, sampled.AUROCMI, sampled.Identical, sampled.MICorrect, sampled.MIIncorrect)
	if !(sampled.AUROCEntropy >= 0.85 && sampled.AUROCMI >= 0.85) {
		t.Errorf("sampled encoding: AUROC(entropy) %.3f, AUROC(MI) %.3f, want >= 0.85", sampled.AUROCEntropy, sampled.AUROCMI)
	}
	if !(sampled.AUROCMI > plain.AUROCMI+0.1) {
		t.Errorf("sampled encoding AUROC(MI) %.3f, plain %.3f: want at least 0.1 more", sampled.AUROCMI, plain.AUROCMI)
	}
	if !(sampled.Identical < plain.Identical-0.05) || !(sampled.MIIncorrect > 3*sampled.MICorrect) {
		t.Errorf("sampled encoding: identical %.2f (plain %.2f), MI wrong %.3f vs right %.3f", sampled.Identical, plain.Identical, sampled.MIIncorrect, sampled.MICorrect)
	}
	if sampled.Accuracy < plain.Accuracy-0.03 {
		t.Errorf("sampled encoding accuracy %.3f, plain %.3f", sampled.Accuracy, plain.Accuracy)
	}
}

// TestTrainCuts checks that the threshold placement reaches the model:
// the booleanizer and the sets are FitSupervised's on the training rows,
// the placement is recorded in both and survives the model file, and a
// bad placement is refused before training.
func TestTrainCuts(t *testing.T) {
	d, err := LoadData(Iris, "")
	if err != nil {
		t.Fatal(err)
	}
	p := ptm.DefaultParams()
	p.Epochs = 2
	enc := DefaultEncoding
	enc.Cuts = booleanize.Supervised
	f, err := Train(d, TrainConfig{Params: p, SplitSeed: 1, Encoding: &enc})
	if err != nil {
		t.Fatal(err)
	}
	tr := d.Subset(f.Split.Train)
	want, err := booleanize.FitSupervised(tr.X, tr.Y, 3, 6, false)
	if err != nil {
		t.Fatal(err)
	}
	if f.Booleanizer.Cuts != booleanize.Supervised || f.Encoding.Cuts != booleanize.Supervised {
		t.Errorf("recorded placement %q / %q, want supervised", f.Booleanizer.Cuts, f.Encoding.Cuts)
	}
	if !slices.EqualFunc(f.Booleanizer.Thresholds, want.Thresholds, slices.Equal) {
		t.Errorf("booleanizer %v, want %v", f.Booleanizer.Thresholds, want.Thresholds)
	}
	data, err := modelfile.Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	g, err := modelfile.Decode(data, "test")
	if err != nil {
		t.Fatal(err)
	}
	if g.Booleanizer.Cuts != booleanize.Supervised || g.Encoding.Cuts != booleanize.Supervised {
		t.Errorf("after the file: %q / %q", g.Booleanizer.Cuts, g.Encoding.Cuts)
	}
	bad := DefaultEncoding
	bad.Cuts = "trees"
	if _, err := Train(d, TrainConfig{Params: p, SplitSeed: 1, Encoding: &bad}); err == nil || !strings.Contains(err.Error(), `"trees"`) {
		t.Errorf("bad placement: %v", err)
	}
}

// TestTrainBandwidth: the training jitter changes what the automata learn
// from and nothing else. Set to the inference bandwidth it is the default
// (the same file); set to 0 the automata learn the plain thermometer (the
// same bank as the plain PTM's) while the file keeps the sampled encoding.
func TestTrainBandwidth(t *testing.T) {
	d, err := LoadData(Iris, "")
	if err != nil {
		t.Fatal(err)
	}
	p := ptm.DefaultParams()
	p.Epochs = 3
	train := func(e Encoding) *modelfile.File {
		t.Helper()
		f, err := Train(d, TrainConfig{Params: p, SplitSeed: 1, Encoding: &e})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	encode := func(f *modelfile.File) []byte {
		t.Helper()
		b, err := modelfile.Encode(f)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	base := train(DefaultEncoding)
	same := DefaultEncoding
	bw := same.Bandwidth
	same.TrainBandwidth = &bw
	if !slices.Equal(encode(train(same)), encode(base)) {
		t.Error("training jitter = the inference bandwidth gave another file than the default")
	}
	zero := DefaultEncoding
	var z float64
	zero.TrainBandwidth = &z
	fz := train(zero)
	plain := train(Plain)
	if !slices.Equal(fz.Bank.SPV, plain.Bank.SPV) {
		t.Error("training jitter 0: the bank differs from the plain PTM's")
	}
	if slices.Equal(fz.Bank.SPV, base.Bank.SPV) {
		t.Error("training jitter 0: the same bank as the jittered training")
	}
	fz.Bank, fz.Model = base.Bank, base.Model
	if !slices.Equal(encode(fz), encode(base)) {
		t.Error("training jitter 0 changed the file beyond the trained automata")
	}
	bad := DefaultEncoding
	neg := -0.5
	bad.TrainBandwidth = &neg
	if _, err := Train(d, TrainConfig{Params: p, SplitSeed: 1, Encoding: &bad}); err == nil || !strings.Contains(err.Error(), "training bandwidth") {
		t.Errorf("negative training jitter: %v", err)
	}
}
