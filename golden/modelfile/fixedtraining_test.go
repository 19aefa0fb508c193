package modelfile

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// withFixedTraining is sample with a FixedTraining record (12 clause
// lanes: 3 TMs x 4 clauses).
func withFixedTraining(t testing.TB) *File {
	t.Helper()
	f := sample(t)
	lanes := make([]uint64, 12)
	for i := range lanes {
		lanes[i] = 0x9E3779B97F4A7C15 * uint64(i+1)
	}
	f.FixedTraining = &FixedTraining{Lanes: Lanes{Control: 1 << 63, Clauses: lanes}, Thresholds: 6,
		Encoding: json.RawMessage(`{"sets":4,"bandwidth":0.15}`), Calibrate: true, TemperatureFloor: 0.05}
	return f
}

// TestFixedTrainingRecord: the tabular fixed_training record round-trips
// exactly (64-bit lane states included), is absent from files without it,
// and a record that does not fit the model is refused naming the field.
func TestFixedTrainingRecord(t *testing.T) {
	f := withFixedTraining(t)
	data, err := Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	g, err := Decode(data, "m.ptm")
	if err != nil {
		t.Fatal(err)
	}
	r, s := f.FixedTraining, g.FixedTraining
	if s == nil || s.Lanes.Control != r.Lanes.Control || !slices.Equal(s.Lanes.Clauses, r.Lanes.Clauses) || s.Thresholds != 6 ||
		!bytes.Equal(s.Encoding, r.Encoding) || !s.Calibrate || s.TemperatureFloor != 0.05 {
		t.Fatalf("record %+v read back as %+v", r, s)
	}
	if b, err := Encode(g); err != nil || !bytes.Equal(b, data) {
		t.Fatalf("re-encoding: %v", err)
	}
	plain, err := Encode(sample(t))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(plain, []byte("fixed_training")) {
		t.Fatal("a file without the record has the field")
	}
	ft := func(h map[string]any) map[string]any { return h["fixed_training"].(map[string]any) }
	cases := []struct {
		name string
		edit func(h map[string]any)
		want string
	}{
		{"lanes short", func(h map[string]any) {
			l := ft(h)["lanes"].(map[string]any)
			l["clauses"] = l["clauses"].([]any)[2:]
		}, "fixed_training.lanes: 10 clause lanes, the model has 12 clauses"},
		{"lane zero", func(h map[string]any) { ft(h)["lanes"].(map[string]any)["clauses"].([]any)[5] = 0 }, "fixed_training.lanes.clauses[5]: lane state 0"},
		{"control zero", func(h map[string]any) { ft(h)["lanes"].(map[string]any)["control"] = 0 }, "control lane state 0"},
		{"thresholds", func(h map[string]any) { ft(h)["thresholds"] = 0 }, "fixed_training.thresholds"},
		{"encoding", func(h map[string]any) { ft(h)["encoding"] = 3 }, "fixed_training.encoding"},
		{"unknown", func(h map[string]any) { ft(h)["bogus"] = 1 }, "bogus"},
	}
	for _, c := range cases {
		_, err := Decode(reseal(t, data, c.edit), "m.ptm")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
