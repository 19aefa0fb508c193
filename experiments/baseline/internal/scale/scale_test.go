package scale

import (
	"math"
	"testing"
)

func TestFitTransform(t *testing.T) {
	X := [][]float64{{1, 5}, {3, 5}, {5, 5}}
	s := Fit(X)
	if s.Mean[0] != 3 || s.Mean[1] != 5 {
		t.Fatalf("mean = %v, want [3 5]", s.Mean)
	}
	if want := math.Sqrt(8.0 / 3); math.Abs(s.Std[0]-want) > 1e-15 {
		t.Fatalf("std[0] = %v, want %v", s.Std[0], want)
	}
	if s.Std[1] != 1 {
		t.Fatalf("constant feature std = %v, want 1", s.Std[1])
	}
	z := s.TransformAll(X)
	sum, sq := 0.0, 0.0
	for _, r := range z {
		sum += r[0]
		sq += r[0] * r[0]
		if r[1] != 0 {
			t.Fatalf("constant feature not centred: %v", r[1])
		}
	}
	if math.Abs(sum) > 1e-12 || math.Abs(sq/3-1) > 1e-12 {
		t.Fatalf("standardized mean %v, variance %v", sum/3, sq/3)
	}
	if X[0][0] != 1 {
		t.Fatal("TransformAll modified its input")
	}
}
