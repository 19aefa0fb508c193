package board

import (
	"bufio"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ptmhw/ptm/golden/conv/convtrain"
	"github.com/ptmhw/ptm/golden/dataset"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/host/conformance"
	"github.com/ptmhw/ptm/host/driver"
	pframe "github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/stream"
	"github.com/ptmhw/ptm/host/transport"
	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/internal/testenv"
)

// convMNIST is a small convolutional model trained (pipeline.TrainConv,
// the image recipe with 16 clauses, T = 200, one threshold set or two
// jittered ones) on the first 300 MNIST test images, and the images after
// them. Models of either number of sets share one board build (the
// generated core depends on the head's shape, classes, clauses and T).
type convMNIST struct {
	f      *modelfile.ConvFile
	images [][]uint8
	labels []int
	ids    []int
}

var (
	convMNISTMu  sync.Mutex
	convMNISTVal = map[[2]int]*convMNIST{}
)

// mnistConvModel trains the model of sets threshold sets once per test
// binary (16 clauses, T = 200, on the first 300 images; or, clauses = 128,
// the 128-clause model with T = 1024 on the first 2,000), or skips the
// test when MNIST is not installed. 300 images after the training ones
// are streamed.
func mnistConvModel(t *testing.T, sets, clauses int) *convMNIST {
	t.Helper()
	convMNISTMu.Lock()
	defer convMNISTMu.Unlock()
	key := [2]int{sets, clauses}
	if m := convMNISTVal[key]; m != nil {
		return m
	}
	{
		dir, err := dataset.MNISTDir()
		if err != nil {
			t.Skip("MNIST: " + err.Error())
		}
		open := func(name string) *gzip.Reader {
			fh, err := os.Open(filepath.Join(dir, name+".gz"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { fh.Close() })
			zr, err := gzip.NewReader(bufio.NewReader(fh))
			if err != nil {
				t.Fatal(err)
			}
			return zr
		}
		im, err := dataset.ReadImages(open(dataset.IDXFiles[2]), "t10k images")
		if err != nil {
			t.Fatal(err)
		}
		lb, err := dataset.ReadLabels(open(dataset.IDXFiles[3]), "t10k labels", 10)
		if err != nil {
			t.Fatal(err)
		}
		ntrain, T := 300, 200
		if clauses > 16 {
			ntrain, T = 2000, 8*clauses
		}
		nimg := ntrain + 300
		np := im.Rows * im.Cols
		ds := &dataset.Dataset{Name: "mnist-t10k-head", Image: dataset.ImageShape{Rows: im.Rows, Cols: im.Cols}}
		for c := range 10 {
			ds.Classes = append(ds.Classes, string(rune('0'+c)))
		}
		for r := range im.Rows {
			for c := range im.Cols {
				ds.Features = append(ds.Features, dataset.PixelName(r, c))
			}
		}
		m := &convMNIST{}
		for i := range nimg {
			x := make([]float64, np)
			for k, v := range im.Pixels[i*np : (i+1)*np] {
				x[k] = float64(v)
			}
			if i < ntrain {
				ds.X = append(ds.X, x)
				ds.Y = append(ds.Y, int(lb[i]))
				continue
			}
			m.images = append(m.images, append([]uint8(nil), im.Pixels[i*np:(i+1)*np]...))
			m.labels = append(m.labels, int(lb[i]))
			m.ids = append(m.ids, i)
		}
		rc, err := convtrain.ImageDefaults(28, 28, 10)
		if err != nil {
			t.Fatal(err)
		}
		rc.Clauses, rc.T, rc.N, rc.Epochs = clauses, T, 32, 2
		if sets > 1 {
			rc.JitterSets, rc.JitterSpread = sets, 20
		}
		start := time.Now()
		m.f, err = pipeline.TrainConv(&pipeline.Data{Dataset: ds}, pipeline.ConvConfig{Recipe: rc, Seed: 5, SplitSeed: 1, TestFraction: 0.1, ValRows: 30, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("[progress] trained a %d-clause convolutional model (%d threshold sets, T = %d) on %d images in %.1fs (load %s)",
			clauses, sets, T, len(m.f.Split.Train), time.Since(start).Seconds(), testenv.LoadString())
		convMNISTVal[key] = m
		return m
	}
}

// mnistBoardOptions is the Verilated convolutional board of m's model:
// UART only, `ptm eval --fixed`'s lanes (8 x 8, the bank's bits, 32-bit
// LFSRs), one patch per cycle.
func mnistBoardOptions(t *testing.T, m *convMNIST) Options {
	t.Helper()
	bank, err := m.f.Bank(m.f.BankBits)
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.ConvBank = bank
	o.Config = hw.Config{} // the convolutional defaults (DefaultConfig's 8 bits are not the bank's)
	o.NoEthernet = true
	return o
}

// streamConv streams m's images n through the board with host/stream's
// RunConv (every answer checked against the golden conv.Core) and fails
// unless every image got exactly one answer equal to the golden one.
func streamConv(t *testing.T, tr transport.Transport, m *convMNIST, n int, cfg stream.Config) *stream.Summary {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Hour)
	defer cancel()
	last := time.Now()
	cfg.Labels, cfg.RowIDs = m.labels[:n], m.ids[:n]
	cfg.Progress = func(done, total int) {
		if time.Since(last) > 30*time.Second {
			last = time.Now()
			t.Logf("[progress] %d of %d images", done, total)
		}
	}
	s, err := stream.RunConv(ctx, tr, m.f, "", m.images[:n], cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s.Queries != n || s.Verified != n || s.Lost != 0 || s.Duplicated != 0 || s.Mismatches != 0 {
		t.Fatalf("%v mode: %d queries, %d verified, %d lost, %d duplicated, %d mismatches vs golden (%s)", cfg.Mode, s.Queries, s.Verified, s.Lost,
			s.Duplicated, s.Mismatches, s.FirstMismatch)
	}
	t.Logf("%v mode K=%d: upload %v (%.1f s), %d images, 0 lost/duplicated/mismatched, %.2f queries/s (simulation wall clock), %d retries (%d timeouts, %d busy), %d CRC errors; board counters %v",
		s.Mode, s.K, s.Board.Uploaded, s.Board.UploadS, s.Queries, s.QueriesPerS, s.Retries, s.Timeouts, s.Busy, s.CRCErrors, s.Board.Counters)
	return s
}

// TestConvMNIST: the Verilated convolutional board of a small trained
// MNIST model (16 clauses, two threshold sets: every query two core runs)
// passes host/conformance's CheckConv, then streams MNIST test images at
// K = 16 in every mode (host/stream.RunConv, each answer equal to the
// golden conv.Core's), and measures the board's clocks per query in a
// pipelined votes-mode stream (the simulator's clock count; K = 16).
// PTM_LONG_TESTS=1 streams 200 images per mode instead of 6.
func TestConvMNIST(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end simulation skipped in -short mode")
	}
	testenv.Heartbeat(t, 0)
	m := mnistConvModel(t, 2, 16)
	o := mnistBoardOptions(t, m)
	p := start(t, o)
	tr := openUART(t, p)
	bank := o.ConvBank
	rep, err := conformance.CheckConv(testenv.Context(t), tr, bank, conformance.Opts{Strict: true, Queries: 4})
	if err != nil {
		t.Fatalf("conformance: %v\n%v", err, rep)
	}
	for _, f := range rep.Failed() {
		t.Errorf("%s: %s", f.Name, f.Detail)
	}
	t.Logf("[progress] conformance:\n%s", rep)
	n := testenv.Size(6, 100)
	for _, mode := range []pframe.Mode{pframe.ModeSums, pframe.ModeSamples, pframe.ModeStats} {
		streamConv(t, tr, m, n, stream.Config{K: 16, Seed: 4, Mode: mode, Driver: driver.Opts{Window: 8}})
	}
}

// TestConvMNISTThroughput measures the Verilated convolutional board of
// the small one-set MNIST model (16 clauses on 8 x 8 lanes, one patch per
// cycle) in a pipelined votes-mode stream at K = 16, where the core, not
// the simulated line, is the bound (a 119-byte request is 9,520 clocks at
// 8 clocks per bit): its clocks per query, from the board's STATUS
// counter 12 (UART bit times, 8 clocks each, counted while the board
// runs) over two streams of 4 and 4 + n images, so that the pipeline's
// fill and drain cancel; and the core's cycles per query by
// docs/conv-core.md's schedule with every group scanning all 361 patches
// (an upper bound: a group ends early when its clauses are resolved). n
// is 16, or 200 with PTM_LONG_TESTS=1.
func TestConvMNISTThroughput(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end simulation skipped in -short mode")
	}
	testenv.Heartbeat(t, 0)
	m := mnistConvModel(t, 1, 16)
	o := mnistBoardOptions(t, m)
	p := start(t, o)
	tr := openUART(t, p)
	n := testenv.Size(16, 200)
	const K = 16
	// timeouts far above the simulation's round trips: a resend would be
	// executed again and cost the core a query
	rto := testenv.Scale(20 * time.Second)
	cfg := stream.Config{K: K, Seed: 4, Mode: pframe.ModeVotes, Driver: driver.Opts{Window: 8, Timeout: rto, MinTimeout: rto}}
	s1 := streamConv(t, tr, m, 4, cfg)
	s2 := streamConv(t, tr, m, 4+n, cfg)
	if s1.Retries+s2.Retries != 0 {
		t.Errorf("%d resends: the clocks per query count them", s1.Retries+s2.Retries)
	}
	b1, b2 := s1.Board.Counters["uart_bit_times"], s2.Board.Counters["uart_bit_times"]
	if b2 <= b1 {
		t.Fatalf("UART bit times: %d for 4 images, %d for %d", b1, b2, 4+n)
	}
	per := float64(b2-b1) * float64(o.ClksPerBit) / float64(n)
	d := p.Build.ConvDesign.Params
	sample := d.SampleCyclesMax()
	core := K*sample + d.L + 3 + d.P*d.H
	t.Logf("votes mode, K = %d: %.0f board clocks per query (%d images %d bit times, 4 images %d); the core's schedule: at most %d cycles per sample, %d per query (G = %d, BT = %d, LC = %d, %d patches); %.0f queries/s at 48 MHz; %.2f queries/s on the simulation's wall clock",
		K, per, 4+n, b2, b1, sample, core, d.G, d.BT, d.LC, d.ScanCycles(), 48e6/per, s2.QueriesPerS)
	if per > 1.2*float64(core) || per < 0.5*float64(core) {
		t.Errorf("%.0f board clocks per query, the core's schedule at most %d: the stream was not core-bound", per, core)
	}
}

// TestConvMNISTFaults uploads the one-set MNIST model (4,512 words) and
// streams MNIST test images (119-byte requests) through the Verilated
// convolutional board with 1% of the bytes flipped and 1% dropped in each
// direction of the UART, at K = 16, with the driver's default timeouts:
// no image may be lost, answered twice or answered wrongly, and the
// recovery is counted. Votes mode (31-byte answers): 3 images (about
// 70 s), 100 with PTM_LONG_TESTS=1 (31 minutes: 3,140 resends, the host
// waiting out backed-off timeouts). (Sums mode on this line costs about 110 s of wall
// time per image: 3 images took 339 s, 21 windows of 320-byte answers,
// each window carrying the 123-byte request again, 1,426 resends.)
func TestConvMNISTFaults(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end simulation skipped in -short mode")
	}
	testenv.Heartbeat(t, 0)
	m := mnistConvModel(t, 1, 16)
	o := mnistBoardOptions(t, m)
	f := Fault{Flip: 0.01, Drop: 0.01}
	o.Faults = Faults{UARTRx: f, UARTTx: f}
	o.Seed = 13
	p := start(t, o)
	n := testenv.Size(3, 100)
	s := streamConv(t, openUART(t, p), m, n, stream.Config{K: 16, Seed: 4, Mode: pframe.ModeVotes, ForceUpload: true,
		Driver: driver.Opts{Window: 4, Deadline: 60 * time.Minute}})
	checkRecovery(t, s)
	t.Logf("%d images: %d windows (%d split), %d resends", n, s.Windows, s.WindowSplits, s.Retries)
}

// TestConvMNIST128 (PTM_LONG_TESTS=1 only) is the 128-clause MNIST model
// (one threshold set, T = 1024, trained on the first 2,000 images less the
// held-out and validation rows) on the Verilated
// convolutional board with 8 x 8 lanes: 100 test images streamed in sums
// and votes modes at K = 16, every answer equal to the golden conv.Core,
// and the board's clocks per query in votes mode (STATUS counter 12 over
// the stream, no resends).
func TestConvMNIST128(t *testing.T) {
	t.Parallel()
	if !testenv.Long() {
		t.Skip("PTM_LONG_TESTS=1: the 128-clause model's board")
	}
	testenv.Heartbeat(t, 0)
	m := mnistConvModel(t, 1, 128)
	o := mnistBoardOptions(t, m)
	p := start(t, o)
	tr := openUART(t, p)
	rto := testenv.Scale(60 * time.Second)
	const n, K = 100, 16
	streamConv(t, tr, m, n, stream.Config{K: K, Seed: 4, Mode: pframe.ModeSums, Driver: driver.Opts{Window: 8}})
	s := streamConv(t, tr, m, n, stream.Config{K: K, Seed: 4, Mode: pframe.ModeVotes, Driver: driver.Opts{Window: 8, Timeout: rto, MinTimeout: rto}})
	per := float64(s.Board.Counters["uart_bit_times"]) * float64(o.ClksPerBit) / n
	d := p.Build.ConvDesign.Params
	sample := d.SampleCyclesMax()
	t.Logf("128 clauses, votes mode, K = %d: %.0f board clocks per query over %d images (%d resends); the core's schedule at most %d per sample, %d per query; %.0f queries/s at 48 MHz",
		K, per, n, s.Retries, sample, K*sample+d.L+3+d.P*d.H, 48e6/per)
}
