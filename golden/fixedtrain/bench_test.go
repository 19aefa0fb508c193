package fixedtrain

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/ptmhw/ptm/golden/ptm"
)

// cpuTime is the process's user+system CPU time: on a shared machine the
// stable figure beside the wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchShape is one benchmark configuration: the classic noisy XOR (5000
// rows, 40% label noise, T = 15, s = 3.9, N = 100, two classes) with m
// clauses per class and f features (2 of them informative).
type benchShape struct {
	name     string
	clauses  int
	features int
	warm     int // epochs trained before timing
}

var benchShapes = []benchShape{
	{"xor-m10-f12", 10, 12, 10},
	{"xor-m100-f12", 100, 12, 10},
	{"xor-m10-f784", 10, 784, 2},
}

func benchParams(sh benchShape) ptm.Params {
	return ptm.Params{Clauses: sh.clauses, T: 15, S: 3.9, N: 100, Seed: 3, Feedback: ptm.ConsistentFeedback}
}

func benchData(sh benchShape) ([][]bool, []int) {
	return classicXOR(5000, sh.features, 0.4, rand.New(rand.NewPCG(1, 1)))
}

// BenchmarkEpoch is one epoch of 5000 rows: the fixed trainer on one
// goroutine and on GOMAXPROCS, and the float trainer of golden/ptm, for
// each benchShape (docs/fixed-point-training.md 10 has the figures).
func BenchmarkEpoch(b *testing.B) {
	for _, sh := range benchShapes {
		X, y := benchData(sh)
		for _, w := range []int{1, 0} {
			name := "fixed-serial"
			if w == 0 {
				name = "fixed-parallel"
			}
			b.Run(fmt.Sprintf("%s/%s", sh.name, name), func(b *testing.B) {
				tr, err := New(Config{Params: benchParams(sh), Workers: w}, 2, sh.features, false)
				if err != nil {
					b.Fatal(err)
				}
				for e := 0; e < sh.warm; e++ {
					_ = tr.RunEpoch(X, y)
				}
				b.ResetTimer()
				c0 := cpuTime()
				for i := 0; i < b.N; i++ {
					_ = tr.RunEpoch(X, y)
				}
				b.ReportMetric(float64((cpuTime()-c0).Microseconds())/1e3/float64(b.N), "cpu-ms/epoch")
			})
		}
		b.Run(fmt.Sprintf("%s/float", sh.name), func(b *testing.B) {
			m, err := ptm.New(benchParams(sh), 2, sh.features, false)
			if err != nil {
				b.Fatal(err)
			}
			tr := ptm.NewTrainer(m)
			for e := 0; e < sh.warm; e++ {
				_ = tr.RunEpoch(X, y)
			}
			b.ResetTimer()
			c0 := cpuTime()
			for i := 0; i < b.N; i++ {
				_ = tr.RunEpoch(X, y)
			}
			b.ReportMetric(float64((cpuTime()-c0).Microseconds())/1e3/float64(b.N), "cpu-ms/epoch")
		})
	}
}

// BenchmarkApplyTPM is one TPM1/TPM3 update of an SPV of 2N = 200 states
// whose mass spreads over 86 states (the mean support of the classic
// noisy XOR after 10 epochs).
func BenchmarkApplyTPM(b *testing.B) {
	q := make([]uint16, 200)
	left := 1 << 15
	for i := 0; i < 86; i++ {
		v := left / 4
		if i == 85 {
			v = left
		}
		q[i] = uint16(v)
		left -= v
	}
	dith := ditherTable(200)
	mv := MovesOf(3.9)
	lo, hi := 0, 85
	for i := 0; i < b.N; i++ {
		k := TPM3
		if i%2 == 0 {
			k = TPM1
		}
		_, lo, hi = applyTPM(k, q, lo, hi, mv, uint32(i)*7919, dith)
	}
}
