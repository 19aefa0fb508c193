package ptm

import (
	"slices"
	"testing"
)

// SampleSets with one set is Sample; with M sets it draws K/M (+1) samples
// per set in set order, from the same stream.
func TestSampleSets(t *testing.T) {
	m, err := New(Params{Clauses: 4, T: 3, S: 2, N: 4, Epochs: 1, Seed: 3, Feedback: ConsistentFeedback}, 3, 3, false)
	if err != nil {
		t.Fatal(err)
	}
	tr := NewTrainer(m)
	X := [][]bool{{true, false, true}, {false, true, true}, {true, true, false}}
	for range 5 {
		if err := tr.RunEpoch(X, []int{0, 1, 2}); err != nil {
			t.Fatal(err)
		}
	}
	a, _ := NewSampler(m, 9).Sample(X[0], 10, nil)
	b, err := NewSampler(m, 9).SampleSets(X[:1], 10, nil)
	if err != nil || !slices.Equal(a, b) {
		t.Fatalf("one set: %v %v, Sample gives %v", b, err, a)
	}
	s := NewSampler(m, 9)
	var want []int
	for i, k := range []int{4, 3, 3} {
		v, _ := s.Sample(X[i], k, nil)
		want = append(want, v...)
	}
	got, err := NewSampler(m, 9).SampleSets(X, 10, nil)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("three sets: %v %v, want %v", got, err, want)
	}
	if _, err := s.SampleSets(nil, 3, nil); err == nil {
		t.Error("no sets accepted")
	}
}
