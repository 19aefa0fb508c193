package ptm

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"
)

// cpuTime returns the process's user+system CPU time. Benchmarks report it
// per operation beside the wall time, because on a shared machine the CPU
// time is the stable figure.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchModel trains a classic noisy-XOR model (10 clauses per class, T=15,
// s=3.9, 12 features; NOTES.md) for warm epochs, so benchmarks measure the
// steady state rather than the first epochs.
func benchModel(b *testing.B, n, warm int) (*Model, *Trainer, [][]bool, []int) {
	rng := rand.New(rand.NewPCG(1, 1))
	X, y := classicXOR(5000, 0.4, rng)
	m, err := New(Params{Clauses: 10, T: 15, S: 3.9, N: n, Epochs: warm, Seed: 3, Feedback: ConsistentFeedback}, 2, 12, false)
	if err != nil {
		b.Fatal(err)
	}
	tr := NewTrainer(m)
	for e := 0; e < warm; e++ {
		_ = tr.RunEpoch(X, y)
	}
	return m, tr, X, y
}

// BenchmarkTrainEpoch is one epoch of 5000 rows of the classic noisy XOR.
func BenchmarkTrainEpoch(b *testing.B) {
	for _, n := range []int{16, 100} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			_, tr, X, y := benchModel(b, n, 10)
			b.ResetTimer()
			c0 := cpuTime()
			for i := 0; i < b.N; i++ {
				_ = tr.RunEpoch(X, y)
			}
			b.ReportMetric(float64((cpuTime()-c0).Milliseconds())/float64(b.N), "cpu-ms/epoch")
		})
	}
}

// BenchmarkSample is K-sample inference on the trained classic noisy-XOR
// model; the samples/s metric counts individual PTM samples.
func BenchmarkSample(b *testing.B) {
	for _, K := range []int{1, 100} {
		b.Run(fmt.Sprintf("K=%d", K), func(b *testing.B) {
			m, _, X, _ := benchModel(b, 100, 10)
			s := NewSampler(m, 1)
			var dst []int
			b.ResetTimer()
			c0 := cpuTime()
			for i := 0; i < b.N; i++ {
				dst, _ = s.Sample(X[i%len(X)], K, dst)
			}
			b.ReportMetric(float64(b.N)*float64(K)/b.Elapsed().Seconds(), "samples/s")
			b.ReportMetric(float64(b.N)*float64(K)/(cpuTime()-c0).Seconds(), "samples/cpu-s")
		})
	}
}

func BenchmarkApplyTPM(b *testing.B) {
	p := make([]float64, 200)
	p[99], p[100] = 0.5, 0.5
	for i := 0; i < b.N; i++ {
		ApplyTPM(TPM(1+i%4), p, 3.9)
	}
}
