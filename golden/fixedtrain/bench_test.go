package fixedtrain

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptmhw/ptm/golden/ptm"
	"github.com/ptmhw/ptm/internal/phaseprof"
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
// goroutine (fixed-serial), on GOMAXPROCS with the default threshold of
// the parallel schedule (fixed-parallel), on GOMAXPROCS with the parallel
// schedule whatever the size (fixed-forced: the measurement that sets
// parallelTAs), and the float trainer of golden/ptm, for each benchShape
// (docs/fixed-point-training.md 10 has the figures). fixed-critical is
// fixed-forced measured in thread CPU time per phase: crit-ms/epoch is
// the critical path (the longest worker of every phase plus the caller
// between phases), work-ms/epoch the same work on one thread, and
// bound-x their ratio, the speedup an idle machine would give before the
// cost of waking the workers; a loaded machine inflates wall time, not
// these.
func BenchmarkEpoch(b *testing.B) {
	for _, sh := range benchShapes {
		X, y := benchData(sh)
		for _, w := range []int{1, 0, -1, -2} {
			name := map[int]string{1: "fixed-serial", 0: "fixed-parallel", -1: "fixed-forced", -2: "fixed-critical"}[w]
			b.Run(fmt.Sprintf("%s/%s", sh.name, name), func(b *testing.B) {
				tr, err := New(Config{Params: benchParams(sh), Workers: max(w, 0)}, 2, sh.features, false)
				if err != nil {
					b.Fatal(err)
				}
				if w < 0 {
					tr.parallelMin = 0
				}
				if w == -2 && tr.useParallel() {
					tr.prof = phaseprof.New(tr.workers)
					runtime.LockOSThread() // the caller's thread CPU clock stays its own
					defer runtime.UnlockOSThread()
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
				if pr := tr.prof; pr != nil && pr.Phases() > 0 {
					// the warm-up epochs are profiled too: scale by all epochs
					e := float64(sh.warm + b.N)
					crit, work := pr.Totals()
					b.ReportMetric(float64(crit.Microseconds())/1e3/e, "crit-ms/epoch")
					b.ReportMetric(float64(work.Microseconds())/1e3/e, "work-ms/epoch")
					b.ReportMetric(float64(work)/float64(crit), "bound-x")
				}
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

// TestWriteBenchRows writes BenchmarkEpoch's rows for the pyTsetlinMachine
// driver (scripts/pytmbench, docs/fixed-point-training.md section 10) into
// the folder named by $PTM_BENCH_ROWS: xor-f12.txt and xor-f784.txt, each
// a line "rows features" and then one line per row, its features (0 or 1)
// and its label. Without the variable it does nothing.
func TestWriteBenchRows(t *testing.T) {
	dir := os.Getenv("PTM_BENCH_ROWS")
	if dir == "" {
		t.Skip("PTM_BENCH_ROWS names the folder to write")
	}
	for _, sh := range []benchShape{benchShapes[0], benchShapes[2]} {
		X, y := benchData(sh)
		var b strings.Builder
		fmt.Fprintln(&b, len(X), sh.features)
		for r, x := range X {
			for _, v := range x {
				if v {
					b.WriteString("1 ")
				} else {
					b.WriteString("0 ")
				}
			}
			fmt.Fprintln(&b, y[r])
		}
		path := filepath.Join(dir, fmt.Sprintf("xor-f%d.txt", sh.features))
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkTypeIChunks is Type I feedback (TPM3: the clause does not
// fire) on TAs whose mass spreads over states 0..99 of N = 100 (four
// chunks of 32 states, the supports of the 784-feature benchmark after two
// epochs), three passes over a clause after each restore of its SPVs:
// "l1" one clause of 16 TAs (6.4 KB of SPVs, in the first-level cache),
// "l3" the clauses of the 784-feature benchmark in turn (1,568 TAs, 627
// KB, each; 12.5 MB in all). ns/chunk is the CPU time of the passes
// less that of a restore alone (measured in the same run), per chunk of 32
// states moved: the kernel's cost per chunk with the data in cache and
// with the data where training finds it (docs/fixed-point-training.md
// 10.1).
func BenchmarkTypeIChunks(b *testing.B) {
	for _, sh := range []struct {
		name            string
		features, count int
	}{{"l1", 8, 1}, {"l3", 784, 10}} {
		b.Run(sh.name, func(b *testing.B) {
			tr, err := New(Config{Params: benchParams(benchShape{clauses: sh.count})}, 2, sh.features, false)
			if err != nil {
				b.Fatal(err)
			}
			n2 := 2 * tr.n
			for ta := range tr.inc {
				q := tr.spv[ta*n2 : (ta+1)*n2]
				clear(q)
				left := 1 << uint(tr.bits)
				for i := 0; i < 100; i++ {
					q[i] = uint16(left / (100 - i))
					left -= int(q[i])
				}
				tr.lo[ta], tr.hi[ta], tr.inc[ta] = 0, 99, 0
			}
			saved := tr.SPVs()
			savedInc := append([]uint16(nil), tr.inc...)
			savedLo := append([]uint16(nil), tr.lo...)
			savedHi := append([]uint16(nil), tr.hi...)
			nc, nl := 2*sh.count, tr.lits
			restore := func(c int) {
				copy(tr.spv[c*nl*n2:(c+1)*nl*n2], saved[c*nl*n2:])
				copy(tr.inc[c*nl:(c+1)*nl], savedInc[c*nl:])
				copy(tr.lo[c*nl:(c+1)*nl], savedLo[c*nl:])
				copy(tr.hi[c*nl:(c+1)*nl], savedHi[c*nl:])
			}
			// a TPM3 pass moves mass at most one state down: the supports
			// stay 0..96 or wider, four chunks, over three passes
			const passes = 3
			c0 := cpuTime()
			for i := 0; i < b.N; i++ {
				c := i % nc
				restore(c)
				for p := 0; p < passes; p++ {
					tr.clane[c].s = tr.typeIRange(c, 0, nl, false, tr.clane[c].s)
				}
			}
			work := cpuTime() - c0
			c0 = cpuTime()
			for i := 0; i < b.N; i++ {
				restore(i % nc)
			}
			work -= cpuTime() - c0
			if err := tr.Check(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(work.Nanoseconds())/float64(4*passes*b.N*nl), "ns/chunk")
		})
	}
}

// BenchmarkTypeIWork counts the Type I work of one serial epoch at each
// benchShape after its warm-up epochs (docs/fixed-point-training.md 10.1):
// TA updates (TPM1 or TPM3, one per literal of a clause given Type I
// feedback), the TPM1 share, chunks of 32 states moved (those from the
// support's lowest to its highest before the update; fixed points move
// none) and the mean support.
func BenchmarkTypeIWork(b *testing.B) {
	for _, sh := range benchShapes {
		b.Run(sh.name, func(b *testing.B) {
			X, y := benchData(sh)
			tr, err := New(Config{Params: benchParams(sh), Workers: 1}, 2, sh.features, false)
			if err != nil {
				b.Fatal(err)
			}
			for e := 0; e < sh.warm; e++ {
				_ = tr.RunEpoch(X, y)
			}
			var updates, tpm1, chunks, states int
			typeIHook = func(tr *Trainer, c int, fires bool) {
				for i := 0; i < tr.lits; i++ {
					ta := c*tr.lits + i
					lo, hi := int(tr.lo[ta]), int(tr.hi[ta])
					up := fires && tr.lit[i]
					if (up && lo == 2*tr.n-1) || (!up && hi == 0) {
						continue
					}
					updates++
					if up {
						tpm1++
					}
					chunks += hi/chunk - lo/chunk + 1
					states += hi - lo + 1
				}
			}
			defer func() { typeIHook = nil }()
			for i := 0; i < b.N; i++ {
				_ = tr.RunEpoch(X, y)
			}
			e := float64(b.N)
			b.ReportMetric(float64(updates)/e, "TA-updates/epoch")
			b.ReportMetric(float64(tpm1)/float64(updates), "TPM1-share")
			b.ReportMetric(float64(chunks)/e, "chunks/epoch")
			b.ReportMetric(float64(states)/float64(updates), "support")
		})
	}
}
