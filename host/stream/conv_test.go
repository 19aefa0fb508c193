package stream_test

import (
	"bufio"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/conv/convtrain"
	"github.com/ptmhw/ptm/golden/dataset"
	"github.com/ptmhw/ptm/golden/lfsr"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/golden/ptm"
	"github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/softboard"
	"github.com/ptmhw/ptm/host/stream"
	"github.com/ptmhw/ptm/host/transport"
	"github.com/ptmhw/ptm/internal/testenv"
)

// convFixture is a small convolutional model trained on the first 300
// MNIST test images and the images after them to stream.
type convFixture struct {
	f      *modelfile.ConvFile
	d      *pipeline.Data
	images [][]uint8
	labels []int
	ids    []int
	hw     conv.HW
}

var (
	convMu  sync.Mutex
	convFix = map[int]*convFixture{}
)

// mnistTest reads the first n MNIST test images and labels (the t10k
// files), or returns why it cannot (MNIST not installed).
func mnistTest(t *testing.T, n int) (*dataset.Dataset, string) {
	t.Helper()
	dir, err := dataset.MNISTDir()
	if err != nil {
		return nil, "MNIST: " + err.Error()
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
	ds := &dataset.Dataset{Name: "mnist-t10k-head", Image: dataset.ImageShape{Rows: im.Rows, Cols: im.Cols}}
	for c := range 10 {
		ds.Classes = append(ds.Classes, strconv.Itoa(c))
	}
	np := im.Rows * im.Cols
	for r := range im.Rows {
		for c := range im.Cols {
			ds.Features = append(ds.Features, dataset.PixelName(r, c))
		}
	}
	for i := range n {
		x := make([]float64, np)
		for k, v := range im.Pixels[i*np : (i+1)*np] {
			x[k] = float64(v)
		}
		ds.X = append(ds.X, x)
		ds.Y = append(ds.Y, int(lb[i]))
	}
	return ds, ""
}

// convModel trains (once per test binary and number of threshold sets)
// a 32-clause convolutional model with sets threshold sets on 300 MNIST
// test images and returns it with the 120 images after them, or skips
// when MNIST is not installed.
func convModel(t *testing.T, sets int) *convFixture {
	t.Helper()
	convMu.Lock()
	defer convMu.Unlock()
	if fx := convFix[sets]; fx != nil {
		return fx
	}
	ds, skip := mnistTest(t, 420)
	if skip != "" {
		t.Skip(skip)
	}
	train := &dataset.Dataset{Name: ds.Name, Features: ds.Features, Classes: ds.Classes, X: ds.X[:300], Y: ds.Y[:300], Image: ds.Image}
	rc, err := convtrain.ImageDefaults(28, 28, 10)
	if err != nil {
		t.Fatal(err)
	}
	rc.Clauses, rc.T, rc.N, rc.Epochs, rc.JitterSets, rc.JitterSpread = 32, 100, 32, 3, sets, 20
	start := time.Now()
	f, err := pipeline.TrainConv(&pipeline.Data{Dataset: train}, pipeline.ConvConfig{Recipe: rc, Seed: 5, SplitSeed: 1, TestFraction: 0.1, ValRows: 30, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("[progress] trained a 32-clause convolutional model (%d threshold sets) on %d images in %.1fs (load %s)", sets, len(f.Split.Train), time.Since(start).Seconds(), testenv.LoadString())
	fx := &convFixture{f: f, d: &pipeline.Data{Dataset: ds},
		hw: conv.HW{Bits: f.BankBits, LFSRWidth: lfsr.DefaultWidth, ClauseLanes: 8, LiteralLanes: 8}}
	for i := 300; i < 420; i++ {
		img := make([]uint8, len(ds.X[i]))
		for k, v := range ds.X[i] {
			img[k] = uint8(v)
		}
		fx.images = append(fx.images, img)
		fx.labels = append(fx.labels, ds.Y[i])
		fx.ids = append(fx.ids, i)
	}
	convFix[sets] = fx
	return fx
}

// convBoard is a blank convolutional software board for fx's model shape
// (the stream uploads the bank).
func convBoard(t *testing.T, fx *convFixture, cfg softboard.Config) *softboard.Board {
	t.Helper()
	head := fx.f.Head
	cfg.Conv, cfg.HW = &head, fx.hw
	b, err := softboard.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestStreamConvEqualsEval: 120 MNIST images streamed at K = 16 to a
// blank convolutional software board (protocol version 7: the bank and
// weights uploaded, each image booleanized on the host under both
// threshold sets and sent as one query of two 98-byte planes) are
// answered equal to the golden conv.Core in every mode, and the rows'
// probabilities in sums and samples mode equal those of `ptm eval
// --fixed` (pipeline.SampleConv on the fixed-point core, the same
// seeds) on every row.
func TestStreamConvEqualsEval(t *testing.T) {
	fx := convModel(t, 2)
	const K, seed = 16, 9
	sums, err := pipeline.SampleConv(fx.f, fx.d, fx.ids, pipeline.ConvSampling{K: K, Seed: seed, Fixed: &fx.hw, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	// The file's fixed-point mapping, set apart from the float one, is
	// the one the rows use (the board's class sums are the fixed core's).
	f := *fx.f
	if f.Mapping.Kind != ptm.Softmax {
		t.Fatalf("mapping %+v, want softmax", f.Mapping)
	}
	fm := ptm.Mapping{Kind: ptm.Softmax, Temperature: 2 * f.Mapping.Temperature}
	f.FixedMapping = &fm
	evalQ := pipeline.ConvQueries(&f.Head, sums, K, f.MappingAt(fx.hw.Bits))
	floatQ := pipeline.ConvQueries(&f.Head, sums, K, f.Mapping)
	if slices.Equal(evalQ[0].Mean, floatQ[0].Mean) {
		t.Fatalf("image 0: the fixed and float mappings give the same probabilities %v", evalQ[0].Mean)
	}
	for _, mode := range []frame.Mode{frame.ModeSums, frame.ModeSamples, frame.ModeStats, frame.ModeVotes} {
		t.Run(mode.String(), func(t *testing.T) {
			b := convBoard(t, fx, softboard.Config{QueueFrames: 31})
			tr := pipeTo(t, b, nil)
			s, err := stream.RunConv(context.Background(), tr, &f, "", fx.images, stream.Config{K: K, Mode: mode, Seed: seed, Labels: fx.labels, RowIDs: fx.ids})
			if err != nil {
				t.Fatalf("%v (summary %+v)", err, s)
			}
			t.Logf("%s mode: %d images at K = %d, %d verified, %.0f queries/s against the software board, %d bytes sent, %d received, accuracy %.3f (load %s)",
				mode, s.Requested, K, s.Verified, s.QueriesPerS, s.BytesSent, s.BytesReceived, float64(s.Metrics.Accuracy), testenv.LoadString())
			if s.Verified != len(fx.images) || s.Lost != 0 || s.Mismatches != 0 || !s.Board.Uploaded || !s.Board.Info.IsConv() {
				t.Fatalf("verified %d of %d, lost %d, mismatches %d (%s), uploaded %v, info %v", s.Verified, len(fx.images), s.Lost, s.Mismatches, s.FirstMismatch, s.Board.Uploaded, &s.Board.Info)
			}
			if mode != frame.ModeSums && mode != frame.ModeSamples {
				return
			}
			for i, r := range s.Rows {
				q := evalQ[i]
				if r.Pred != q.Pred || float64(r.Entropy) != q.Entropy || float64(r.MutualInfo) != q.MutualInfo {
					t.Fatalf("image %d: stream pred %d entropy %v MI %v, eval --fixed pred %d entropy %v MI %v", r.Row, r.Pred, r.Entropy, r.MutualInfo, q.Pred, q.Entropy, q.MutualInfo)
				}
				for c, p := range r.Probs {
					if p != q.Mean[c] {
						t.Fatalf("image %d class %d: stream %v, eval --fixed %v", r.Row, c, p, q.Mean[c])
					}
				}
			}
		})
	}
}

// TestStreamConvNoisyLine: 10 images (100 under PTM_LONG_TESTS) of a
// one-set model (119-byte
// requests) at K = 16 in sums mode (171-byte answers: i8 clipped sums,
// T = 100) through 1% flipped and 1% dropped
// bytes each way, to a board whose receiver does not rescan (as the RTL
// one): 0 lost, 0 wrong. The bank is preloaded, as in
// TestLongAnswersNoisyLine.
func TestStreamConvNoisyLine(t *testing.T) {
	fx := convModel(t, 1)
	bank, err := fx.f.Bank(fx.hw.Bits)
	if err != nil {
		t.Fatal(err)
	}
	b := convBoard(t, fx, softboard.Config{QueueFrames: 31, ConvBank: bank})
	faults := &softboard.Faults{Seed: 29, FlipToBoard: 0.01, DropToBoard: 0.01, FlipToHost: 0.01, DropToHost: 0.01}
	host, fl, stop := b.Pipe(context.Background(), transport.StreamOpts{}, softboard.StreamOpts{NoRescan: true}, faults)
	t.Cleanup(func() {
		stop()
		host.Close()
	})
	n := testenv.Size(10, 100)
	beat := testenv.Heartbeat(t, 20*time.Second)
	start := time.Now()
	s, err := stream.RunConv(context.Background(), host, fx.f, "", fx.images[:n], stream.Config{K: 16, Mode: frame.ModeSums, Seed: 3, Labels: fx.labels[:n], RowIDs: fx.ids[:n],
		Progress: func(done, total int) { beat("%d of %d images answered", done, total) }})
	if err != nil {
		t.Fatalf("%v (summary %+v)", err, s)
	}
	st := fl.Stats()
	t.Logf("1%%/1%% faults: %d images, %d lost, %d mismatches, %d verified, %d windows, %d split, %d retries (%d timeouts), %d bytes sent, %d received; board: %v; faults to board %d flipped %d dropped, to host %d flipped %d dropped; %.1fs (load %s)",
		s.Requested, s.Lost, s.Mismatches, s.Verified, s.Windows, s.WindowSplits, s.Retries, s.Timeouts, s.BytesSent, s.BytesReceived, s.Board.Counters,
		st.FlippedToBoard, st.DroppedToBoard, st.FlippedToHost, st.DroppedToHost, time.Since(start).Seconds(), testenv.LoadString())
	if s.Lost != 0 || s.Mismatches != 0 || s.Verified != n || s.Duplicated != 0 {
		t.Fatalf("lost %d, mismatches %d, verified %d of %d, duplicated %d", s.Lost, s.Mismatches, s.Verified, n, s.Duplicated)
	}
	if st.DroppedToBoard == 0 || st.FlippedToHost == 0 || s.Board.Uploaded {
		t.Fatalf("faults %+v, uploaded %v: the line was not noisy, or the preloaded bank was not recognized", st, s.Board.Uploaded)
	}
}

// TestStreamConvKindMismatch: a convolutional model is refused by a
// tabular board and a version-6 board, and a tabular model by a
// convolutional board, before anything is streamed, naming the kinds.
func TestStreamConvKindMismatch(t *testing.T) {
	fx := convModel(t, 1)
	f, X, _, _ := testRows(t)
	for _, v := range []uint32{6, 7} {
		b := boardFor(t, f, softboard.Config{Version: v})
		_, err := stream.RunConv(context.Background(), pipeTo(t, b, nil), fx.f, "", fx.images[:2], stream.Config{K: 16})
		if err == nil || !strings.Contains(err.Error(), "the board serves a tabular model") {
			t.Errorf("version-%d tabular board, convolutional model: %v", v, err)
		}
	}
	cb := convBoard(t, fx, softboard.Config{})
	_, err := stream.Run(context.Background(), pipeTo(t, cb, nil), f, "", X[:2], stream.Config{K: 16})
	if err == nil || !strings.Contains(err.Error(), "serves a convolutional model") {
		t.Errorf("convolutional board, tabular model: %v", err)
	}
}
