package modelfile

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// sampleTuning is a tuning record that agrees with sample's model.
func sampleTuning() *Tuning {
	return &Tuning{Candidates: 8, Scored: 8,
		Chosen: TunedChoice{Clauses: 4, T: 3, S: 3.9, Epochs: 5, Thresholds: 2, Bandwidth: 0, Sets: 1},
		Score:  &TuneScore{Accuracy: 0.95, NLL: 0.12, Rows: 2},
		Rule:   "accuracy (ties: NLL), inner 4-fold CV on the training rows, K = 100", Budget: "10m0s", Work: 1e9, BudgetWork: 3.6e10,
		Fixed: []string{"s"}}
}

// TestTuningRoundTrip: the optional tuning record survives a write and a
// read; a file without one decodes with none.
func TestTuningRoundTrip(t *testing.T) {
	f := sample(t)
	f.Tuning = sampleTuning()
	path := filepath.Join(t.TempDir(), "m.ptm")
	if _, err := Write(path, f); err != nil {
		t.Fatal(err)
	}
	g, _, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g.Tuning, f.Tuning) {
		t.Errorf("decoded tuning %+v, wrote %+v", g.Tuning, f.Tuning)
	}
	f.Tuning = nil
	data, err := Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), `"tuning"`) {
		t.Error("a file without tuning carries a tuning field")
	}
}

// TestTuningRejects: a record that contradicts the model or itself is
// refused, naming the field.
func TestTuningRejects(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Tuning)
		want string
	}{
		{"chosen-clauses", func(x *Tuning) { x.Chosen.Clauses = 5 }, "differs from the model's params"},
		{"chosen-s", func(x *Tuning) { x.Chosen.S = 2 }, "differs from the model's params"},
		{"sets", func(x *Tuning) { x.Chosen.Sets = 8 }, "the model has 1"},
		{"scored-over", func(x *Tuning) { x.Scored = 9 }, "tuning.scored 9"},
		{"scored-one", func(x *Tuning) { x.Scored = 1 }, "tuning.scored 1"},
		{"score-missing", func(x *Tuning) { x.Score = nil }, "tuning.score must be present"},
		{"score-unscored", func(x *Tuning) { x.Scored = 0 }, "tuning.score must be present"},
		{"accuracy", func(x *Tuning) { x.Score.Accuracy = 1.5 }, "tuning.score: accuracy 1.5"},
		{"no-rule", func(x *Tuning) { x.Rule = "" }, "tuning.rule"},
		{"candidates", func(x *Tuning) { x.Candidates = 0 }, "tuning.candidates 0"},
		{"fixed-empty", func(x *Tuning) { x.Fixed = []string{""} }, "tuning.fixed[0]"},
	} {
		f := sample(t)
		f.Tuning = sampleTuning()
		c.edit(f.Tuning)
		_, err := Encode(f)
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrInvalid with %q", c.name, err, c.want)
		}
	}
}
