package convtrain

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/dataset"
	"github.com/ptmhw/ptm/internal/phaseprof"
)

// BenchmarkStep is one training step (one image) of a coalesced model on
// 28x28 stroke images with a 10x10 window (361 patches, 272 literals),
// after a warm-up epoch of 500 images, at 32, 128 and 256 clauses and 1 or
// 2 workers; seeds fixed. ns/op is per image.
func BenchmarkStep(b *testing.B) {
	sh := conv.Shape{H: 28, W: 28, Planes: 1, WY: 10, WX: 10}
	X, y := strokes(2000, 28, 5)
	B := booleanize(b, sh, conv.Encoder{Thresholds: []int{127}}, X)
	for _, clauses := range []int{32, 128, 256} {
		for _, w := range []int{1, 2} {
			b.Run(fmt.Sprintf("clauses=%d/workers=%d", clauses, w), func(b *testing.B) {
				tr, err := New(Config{Shape: sh, Structure: conv.Coalesced, Classes: 3, Clauses: clauses, T: 100, S: 5, N: 100, Seed: 1, Workers: w})
				if err != nil {
					b.Fatal(err)
				}
				defer tr.Close()
				if err := tr.RunEpoch(B[:500], y[:500]); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := tr.Update(B[i%len(B)], y[i%len(B)]); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// cpuTime is the process's user+system CPU time: on a shared machine the
// stable figure beside the wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchImages is the number of MNIST training images of BenchmarkConvEpoch
// (the first ones), booleanized at pixel > 75.
const benchImages = 2000

// mnistBench returns the first benchImages MNIST training images
// booleanized at pixel > 75 (28 x 28, one plane) and their labels; it
// skips when MNIST is not installed.
func mnistBench(tb testing.TB) ([][]bool, []int) {
	d, err := dataset.MNIST(nil)
	if err != nil {
		tb.Skipf("MNIST not available: %v", err)
	}
	sh := conv.Shape{H: 28, W: 28, Planes: 1, WY: 10, WX: 10}
	enc := conv.Encoder{Thresholds: []int{75}}
	X := make([][]bool, benchImages)
	y := make([]int, benchImages)
	img := make([]uint8, 28*28)
	for r, i := range d.Predefined.Train[:benchImages] {
		for j, v := range d.X[i] {
			img[j] = uint8(v)
		}
		if X[r], err = enc.Booleanize(sh, img, nil); err != nil {
			tb.Fatal(err)
		}
		y[r] = d.Y[i]
	}
	return X, y
}

// TestWriteBenchImages writes BenchmarkConvEpoch's images for the
// pyTsetlinMachine driver (docs/fixed-point-training.md section 10.3) to the
// file named by $PTM_CONV_BENCH_IMAGES: benchImages x 784 bytes of 0 or 1
// (row-major), then benchImages label bytes. Without the variable it
// does nothing.
func TestWriteBenchImages(t *testing.T) {
	path := os.Getenv("PTM_CONV_BENCH_IMAGES")
	if path == "" {
		t.Skip("PTM_CONV_BENCH_IMAGES names the file to write")
	}
	X, y := mnistBench(t)
	buf := make([]byte, 0, len(X)*(28*28+1))
	for _, x := range X {
		for _, b := range x {
			v := byte(0)
			if b {
				v = 1
			}
			buf = append(buf, v)
		}
	}
	for _, v := range y {
		buf = append(buf, byte(v))
	}
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Fatal(err)
	}
}

// convBench is one configuration of BenchmarkConvEpoch.
type convBench struct {
	name    string
	st      conv.Structure
	clauses int // all clauses (per-class: 10 x clauses per class)
	T       int
	s       float64
}

// convBenches: per-class at 10 and 100 clauses per class (T 2.5 per
// clause of a class, as pyTsetlinMachine's MNIST convolution demo), s 3,
// and the coalesced model of the earlier MNIST recipe (1024 clauses, T
// 8000, s 3) for reference; all on a 10 x 10 window, N 100, B 15, seed 1.
var convBenches = []convBench{
	{"perclass-m10", conv.PerClass, 100, 25, 3},
	{"perclass-m100", conv.PerClass, 1000, 250, 3},
	{"coalesced-1024", conv.Coalesced, 1024, 8000, 3},
}

// BenchmarkConvEpoch is one training epoch over the first 2,000 MNIST
// training images (pixel > 75, 10 x 10 window) after one warm-up epoch,
// per convBenches configuration: workers=1, workers=2, and critical (2
// workers measured in thread CPU time per phase: crit-ms/epoch is the
// critical path, the longest worker of every phase plus the caller between
// phases, work-ms/epoch the same work on one thread, bound-x their ratio,
// the 2-core speedup an idle machine gives before the hand-offs).
// cpu-ms/epoch is the process CPU time, wall-ms/epoch the wall time. The
// pyTsetlinMachine side of the comparison is in
// docs/fixed-point-training.md section 10.3.
func BenchmarkConvEpoch(b *testing.B) {
	X, y := mnistBench(b)
	sh := conv.Shape{H: 28, W: 28, Planes: 1, WY: 10, WX: 10}
	for _, c := range convBenches {
		for _, mode := range []string{"workers=1", "workers=2", "critical"} {
			b.Run(c.name+"/"+mode, func(b *testing.B) {
				w := 2
				if mode == "workers=1" {
					w = 1
				}
				tr, err := New(Config{Shape: sh, Structure: c.st, Classes: 10, Clauses: c.clauses, T: c.T, S: c.s, N: 100, Seed: 1, Workers: w})
				if err != nil {
					b.Fatal(err)
				}
				defer tr.Close()
				if mode == "critical" {
					// the caller's thread CPU clock between phases is its
					// own only while it stays on one thread
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					tr.prof = phaseprof.New(w)
				}
				if err := tr.RunEpoch(X, y); err != nil {
					b.Fatal(err)
				}
				if tr.prof != nil {
					tr.prof.Reset()
				}
				b.ResetTimer()
				c0, w0 := cpuTime(), time.Now()
				for i := 0; i < b.N; i++ {
					if err := tr.RunEpoch(X, y); err != nil {
						b.Fatal(err)
					}
				}
				n := float64(b.N)
				b.ReportMetric(float64((cpuTime()-c0).Microseconds())/1e3/n, "cpu-ms/epoch")
				b.ReportMetric(float64(time.Since(w0).Microseconds())/1e3/n, "wall-ms/epoch")
				if pr := tr.prof; pr != nil && pr.Phases() > 0 {
					crit, work := pr.Totals()
					b.ReportMetric(float64(crit.Microseconds())/1e3/n, "crit-ms/epoch")
					b.ReportMetric(float64(work.Microseconds())/1e3/n, "work-ms/epoch")
					b.ReportMetric(float64(work)/float64(crit), "bound-x")
				}
			})
		}
	}
}
