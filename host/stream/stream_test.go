package stream_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/metrics"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/golden/ptm"
	"github.com/ptmhw/ptm/host/driver"
	"github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/softboard"
	"github.com/ptmhw/ptm/host/stream"
	"github.com/ptmhw/ptm/host/transport"
)

var hw = fixed.HW{Bits: 12, LFSRWidth: 32, ClauseLanes: 6, LiteralLanes: 8}

var irisOnce struct {
	sync.Once
	f    *modelfile.File
	d    *pipeline.Data
	err  error
	rows []int
}

// iris trains a small Iris model once (a few hundred ms).
func iris(t testing.TB) (*modelfile.File, *pipeline.Data, []int) {
	irisOnce.Do(func() {
		irisOnce.d, irisOnce.err = pipeline.LoadData(pipeline.Iris, "")
		if irisOnce.err != nil {
			return
		}
		irisOnce.f, irisOnce.err = pipeline.Train(irisOnce.d, pipeline.TrainConfig{
			Params:     ptm.Params{Clauses: 10, T: 6, S: 3, N: 16, Epochs: 8, Seed: 1, Feedback: ptm.ConsistentFeedback},
			Thresholds: 4, Bits: 12, SplitSeed: 1, Mapping: ptm.Mapping{Kind: ptm.Vote},
		})
		if irisOnce.err == nil {
			irisOnce.rows, irisOnce.err = pipeline.Rows(irisOnce.f, irisOnce.d, "test")
		}
	})
	if irisOnce.err != nil {
		t.Fatal(irisOnce.err)
	}
	return irisOnce.f, irisOnce.d, irisOnce.rows
}

func boardFor(t testing.TB, f *modelfile.File, cfg softboard.Config) *softboard.Board {
	cfg.Shape, cfg.HW = f.Bank.Shape, hw
	b, err := softboard.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func pipeTo(t testing.TB, b *softboard.Board, faults *softboard.Faults) transport.Transport {
	host, _, stop := b.Pipe(context.Background(), transport.StreamOpts{}, softboard.StreamOpts{}, faults)
	t.Cleanup(func() {
		stop()
		host.Close()
	})
	return host
}

func testRows(t testing.TB) (*modelfile.File, [][]float64, []int, []int) {
	f, d, rows := iris(t)
	labels, err := pipeline.Labels(f, d, rows)
	if err != nil {
		t.Fatal(err)
	}
	X := make([][]float64, len(rows))
	for i, r := range rows {
		X[i] = d.X[r]
	}
	return f, X, labels, rows
}

func TestIrisSamplesAndStats(t *testing.T) {
	f, X, labels, ids := testRows(t)
	b := boardFor(t, f, softboard.Config{KMax: 500})
	tr := pipeTo(t, b, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg := stream.Config{K: 200, Seed: 1000, Labels: labels, RowIDs: ids}
	s, err := stream.Run(ctx, tr, f, "", X, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s.Queries != len(X) || s.Lost != 0 || s.Duplicated != 0 || s.Mismatches != 0 || !s.Board.Uploaded {
		t.Fatalf("summary %+v", s)
	}
	if s.Metrics == nil || !(s.Metrics.Accuracy > 0.6) || math.IsNaN(float64(s.Metrics.MICorrect)) {
		t.Fatalf("metrics %+v", s.Metrics)
	}
	// The model has the default sampled encoding: each row went to the
	// board as one query of all its sets (one request per row), and its
	// samples are the golden fixed.Core.RunSets query of the row, exactly.
	if m := f.Sets().M(); m < 2 {
		t.Fatalf("the test model has %d input sets, want the default sampled encoding", m)
	}
	// (A resend on a loaded machine runs its query again.)
	if n, m := int(s.Board.Counters[frame.CounterName(frame.CounterInferred)]), f.Sets().M(); n < len(X)*m || n%m != 0 {
		t.Fatalf("the board counted %d core runs for %d rows of %d sets", n, len(X), m)
	}
	if s.Driver.Completed-s.Driver.Retries < uint64(len(X)) || s.BytesSent > uint64(len(X)*(frame.Overhead+frame.InferHeaderLen+f.Sets().M()*3)+4096) {
		t.Fatalf("%d rows: %d requests completed, %d bytes sent (one request of %d sets per row expected)", len(X), s.Driver.Completed, s.BytesSent, f.Sets().M())
	}
	core, err := fixed.NewCore(f.Bank, hw)
	if err != nil {
		t.Fatal(err)
	}
	for i, row := range s.Rows {
		xs, err := f.EncodeSets(X[i])
		if err != nil {
			t.Fatal(err)
		}
		raw, _, err := core.RunSets(xs, cfg.K, row.Seed, nil)
		if err != nil {
			t.Fatal(err)
		}
		is := make([]int, len(raw))
		for k, v := range raw {
			is[k] = int(v)
		}
		want := metrics.Query(f.Model.SumsToProbs(is, cfg.K, f.Mapping)).Mean
		for c := range want {
			if row.Probs[c] != want[c] {
				t.Fatalf("row %d: streamed mean %v, golden RunSets %v", row.Row, row.Probs, want)
			}
		}
	}
	t.Logf("iris test split, K=200 samples: %.0f queries/s, accuracy %.3f, ECE %.3f, H right/wrong %.3f/%.3f, MI right/wrong %.3f/%.3f",
		s.QueriesPerS, s.Metrics.Accuracy, s.Metrics.ECE, s.Metrics.EntropyCorrect, s.Metrics.EntropyIncorrect, s.Metrics.MICorrect, s.Metrics.MIIncorrect)

	// Sums mode: the clipped sums, one byte each, give the same
	// probabilities, entropy and mutual information in a quarter of the
	// answer bytes.
	cfg.Mode = frame.ModeSums
	s4, err := stream.Run(ctx, tr, f, "", X, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s4.Mismatches != 0 || s4.Lost != 0 || s4.Mode != "sums" || len(s4.Board.Warnings) != 0 {
		t.Fatalf("sums run %+v", s4)
	}
	for i := range s.Rows {
		if a, c := s.Rows[i], s4.Rows[i]; a.Pred != c.Pred || !slices.Equal(a.Probs, c.Probs) || a.Entropy != c.Entropy || a.MutualInfo != c.MutualInfo {
			t.Fatalf("row %d: samples %+v, sums %+v", i, a, c)
		}
	}
	if *s4.Metrics != *s.Metrics {
		t.Fatalf("metrics differ: samples %+v, sums %+v", s.Metrics, s4.Metrics)
	}
	if 3*s4.BytesReceived >= s.BytesReceived {
		t.Errorf("sums mode received %d bytes, samples mode %d: not 3x more compact", s4.BytesReceived, s.BytesReceived)
	}
	// The stream report equals `ptm eval --fixed` (pipeline.EvaluateFixed)
	// on the same rows and seeds: accuracy, ECE, entropy and MI right and
	// wrong, for the vote mapping and for a softmax mapping.
	_, d, _ := iris(t)
	f2 := *f
	f2.Mapping = ptm.Mapping{Kind: ptm.Softmax, Temperature: 0.5}
	for _, fm := range []*modelfile.File{f, &f2} {
		sm := s4
		if fm != f {
			if sm, err = stream.Run(ctx, tr, fm, "", X, cfg); err != nil {
				t.Fatal(err)
			}
		}
		ev, err := pipeline.EvaluateFixed(fm, fm.Bank, hw, d, ids, cfg.K, cfg.Seed, fm.Mapping, metrics.DefaultBins)
		if err != nil {
			t.Fatal(err)
		}
		r, m := ev.Report, sm.Metrics
		got := []float64{float64(m.Accuracy), float64(m.ECE), float64(m.EntropyCorrect), float64(m.EntropyIncorrect), float64(m.MICorrect), float64(m.MIIncorrect), float64(m.AUROCEntropy)}
		want := []float64{r.Accuracy, r.ECE, r.EntropyCorrect, r.EntropyIncorrect, r.MICorrect, r.MIIncorrect, r.AUROCEntropy}
		for k := range got {
			if got[k] != want[k] && !(math.IsNaN(got[k]) && math.IsNaN(want[k])) {
				t.Fatalf("%s mapping: stream report %v, eval --fixed %v (accuracy, ECE, H right/wrong, MI right/wrong, AUROC)", fm.Mapping.Kind, got, want)
			}
		}
		t.Logf("%s mapping: stream report = eval --fixed: accuracy %.3f, ECE %.4f, H right/wrong %.3f/%.3f, MI right/wrong %.3f/%.3f",
			fm.Mapping.Kind, got[0], got[1], got[2], got[3], got[4], got[5])
	}

	// A board that takes one set per query (MMAX 1) gets one request per
	// set: the same rows, exactly, and a warning.
	b1 := boardFor(t, f, softboard.Config{KMax: 500, MMax: 1})
	s5, err := stream.Run(ctx, pipeTo(t, b1, nil), f, "", X, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s5.Mismatches != 0 || s5.Lost != 0 || len(s5.Board.Warnings) != 1 || !strings.Contains(s5.Board.Warnings[0], "one request per set") {
		t.Fatalf("MMAX 1 run %+v", s5)
	}
	for i := range s4.Rows {
		if a, c := s4.Rows[i], s5.Rows[i]; !slices.Equal(a.Probs, c.Probs) || a.MutualInfo != c.MutualInfo {
			t.Fatalf("row %d: one query %+v, one request per set %+v", i, a, c)
		}
	}

	// Stats mode on the same seeds gives exactly the same predictive means
	// (votes / (K*U) equals the mean of the per-sample vote vectors), and
	// the board already holds the model: no second upload.
	cfg.Mode = frame.ModeStats
	s2, err := stream.Run(ctx, tr, f, "", X, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s2.Board.Uploaded || s2.Mismatches != 0 || s2.Lost != 0 {
		t.Fatalf("stats run %+v", s2)
	}
	for i := range s.Rows {
		a, c := s.Rows[i], s2.Rows[i]
		if a.Row != c.Row || a.Seed != c.Seed || a.Pred != c.Pred {
			t.Fatalf("row %d differs: %+v vs %+v", i, a, c)
		}
		for k := range a.Probs {
			if math.Abs(a.Probs[k]-c.Probs[k]) > 1e-12 {
				t.Fatalf("row %d: samples-mode mean %v, stats-mode votes/(K*U) %v", a.Row, a.Probs, c.Probs)
			}
		}
		if !math.IsNaN(float64(c.MutualInfo)) {
			t.Fatalf("stats mode reported a mutual information")
		}
	}
	if s2.Metrics.Accuracy != s.Metrics.Accuracy || math.Abs(float64(s2.Metrics.ECE-s.Metrics.ECE)) > 1e-12 {
		t.Fatalf("accuracy/ECE differ between modes: %+v vs %+v", s.Metrics, s2.Metrics)
	}
	// Votes mode: the same vote totals in u16 items, so the same rows.
	cfg.Mode = frame.ModeVotes
	s3, err := stream.Run(ctx, tr, f, "", X, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s3.Mismatches != 0 || s3.Lost != 0 || s3.Mode != "votes" {
		t.Fatalf("votes run %+v", s3)
	}
	for i := range s2.Rows {
		if a, c := s2.Rows[i], s3.Rows[i]; a.Pred != c.Pred || !slices.Equal(a.Probs, c.Probs) || a.Entropy != c.Entropy {
			t.Fatalf("row %d: stats %+v, votes %+v", i, a, c)
		}
	}
	if s3.BytesReceived >= s2.BytesReceived {
		t.Errorf("votes mode received %d bytes, stats mode %d: not more compact", s3.BytesReceived, s2.BytesReceived)
	}
	// The JSON carries the required fields under their exact names.
	js, err := json.Marshal(s2)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"queries", "lost", "duplicated", "mismatches_vs_golden", "retries", "crc_errors", "queries_per_s", "link_utilization"} {
		if _, ok := m[k]; !ok {
			t.Errorf("summary JSON lacks %q", k)
		}
	}
	if !strings.Contains(string(js), `"mean_mi_correct":null`) {
		t.Errorf("stats mode MI should be null in JSON")
	}
}

// The pipeline with faults on the link: 3000 queries stay exact.
func TestStreamUnderFaults(t *testing.T) {
	f, X, labels, _ := testRows(t)
	var rows [][]float64
	var lab []int
	for range 100 {
		rows = append(rows, X...)
		lab = append(lab, labels...)
	}
	if testing.Short() {
		rows, lab = rows[:1000], lab[:1000]
	}
	b := boardFor(t, f, softboard.Config{})
	tr := pipeTo(t, b, &softboard.Faults{Seed: 9, FlipToBoard: 1e-3, DropToBoard: 1e-3, FlipToHost: 1e-3, DropToHost: 1e-3})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	s, err := stream.Run(ctx, tr, f, "", rows, stream.Config{K: 4, Mode: frame.ModeStats, Labels: lab, Driver: driver.Opts{Timeout: 50 * time.Millisecond, ChunkWords: 64}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d queries under faults: %.0f/s, retries %d, host CRC errors %d, framing %d, timeouts %d, busy %d, late duplicates %d; board counters %v",
		s.Queries, s.QueriesPerS, s.Retries, s.CRCErrors, s.FramingErrors, s.Timeouts, s.Busy, s.LateDuplicates, s.Board.Counters)
	if s.Lost != 0 || s.Duplicated != 0 || s.Mismatches != 0 || s.Retries == 0 || s.CRCErrors == 0 {
		t.Fatalf("lost %d dup %d mismatches %d retries %d crc %d", s.Lost, s.Duplicated, s.Mismatches, s.Retries, s.CRCErrors)
	}
}

// lying wraps a transport and changes one result word of the INFER
// response with the given seq offset, re-computing the CRC: a board bug
// the golden comparison must catch.
type lying struct {
	transport.Transport
	n, target int
	buf       []byte
}

func (l *lying) Recv(ctx context.Context) ([]byte, error) {
	b, err := l.Transport.Recv(ctx)
	if err != nil || len(b) < frame.Overhead+4 || frame.Type(b[1]) != frame.TypeInfer.Response() {
		return b, err
	}
	l.n++
	if l.n != l.target {
		return b, err
	}
	l.buf = append(l.buf[:0], b...)
	binary.LittleEndian.PutUint32(l.buf[frame.HeaderLen:], binary.LittleEndian.Uint32(l.buf[frame.HeaderLen:])+1)
	binary.LittleEndian.PutUint32(l.buf[len(l.buf)-4:], frame.Checksum(l.buf[1:len(l.buf)-4]))
	return l.buf, nil
}

func TestMismatchDetected(t *testing.T) {
	f, X, _, _ := testRows(t)
	b := boardFor(t, f, softboard.Config{})
	tr := &lying{Transport: pipeTo(t, b, nil), target: 7}
	s, err := stream.Run(context.Background(), tr, f, "", X, stream.Config{K: 10, Mode: frame.ModeStats})
	if err != nil {
		t.Fatal(err)
	}
	if s.Mismatches != 1 || !strings.Contains(s.FirstMismatch, "votes of class 0") {
		t.Fatalf("mismatches %d, first %q", s.Mismatches, s.FirstMismatch)
	}
	t.Log(s.FirstMismatch)
}

func TestFitErrors(t *testing.T) {
	f, X, _, _ := testRows(t)
	other := f.Bank.Shape
	other.Features++
	b, err := softboard.New(softboard.Config{Shape: other, HW: hw})
	if err != nil {
		t.Fatal(err)
	}
	_, err = stream.Run(context.Background(), pipeTo(t, b, nil), f, "", X, stream.Config{K: 10})
	if err == nil || !strings.Contains(err.Error(), "Boolean features (o)") {
		t.Fatalf("shape mismatch: %v", err)
	}
	b = boardFor(t, f, softboard.Config{KMax: 50})
	_, err = stream.Run(context.Background(), pipeTo(t, b, nil), f, "", X, stream.Config{K: 51})
	if err == nil || !strings.Contains(err.Error(), "K = 51") {
		t.Fatalf("K too large: %v", err)
	}
	// A board of another probability width gets the model re-quantized to
	// its width, and its answers still equal the golden core's.
	h2 := hw
	h2.Bits = 14
	b, _ = softboard.New(softboard.Config{Shape: f.Bank.Shape, HW: h2})
	s14, err := stream.Run(context.Background(), pipeTo(t, b, nil), f, "", X, stream.Config{K: 5})
	if err != nil || s14.Mismatches != 0 || s14.Lost != 0 {
		t.Fatalf("14-bit board: %v %+v", err, s14)
	}
}

// faultyHost is the host's transport with per-row faults: INFER requests
// of the seeds in drop never reach the board, and the answers to the
// seeds in corrupt get their first word changed (with a good CRC, so
// only the golden check can notice).
type faultyHost struct {
	transport.Transport
	drop, corrupt map[uint32]bool
	mu            sync.Mutex
	seedOf        map[uint16]uint32
}

func (h *faultyHost) Send(b []byte) error {
	var f frame.Frame
	var q frame.InferRequest
	if f.DecodeFromBytes(b) == nil && f.Type == frame.TypeInfer && q.DecodeFromBytes(f.Payload) == nil {
		h.mu.Lock()
		h.seedOf[f.Seq] = q.Seed
		h.mu.Unlock()
		if h.drop[q.Seed] {
			return nil
		}
	}
	return h.Transport.Send(b)
}

func (h *faultyHost) Recv(ctx context.Context) ([]byte, error) {
	b, err := h.Transport.Recv(ctx)
	var f frame.Frame
	if err != nil || f.DecodeFromBytes(b) != nil || f.Type != frame.TypeInfer.Response() {
		return b, err
	}
	h.mu.Lock()
	seed, ok := h.seedOf[f.Seq]
	h.mu.Unlock()
	if !ok || !h.corrupt[seed] {
		return b, err
	}
	p := append([]byte(nil), f.Payload...)
	binary.LittleEndian.PutUint32(p, binary.LittleEndian.Uint32(p)+1)
	return frame.Append(nil, f.Type, f.Flags, f.Seq, p)
}

// Rows that the board never answers (the driver's deadline passes) and
// rows answered wrongly are marked lost and mismatch, have no prediction
// (lost), and are left out of the metrics; queries and queries/s count
// answered rows only; the deadline report names the lost rows.
func TestSummaryHonest(t *testing.T) {
	f, X, labels, _ := testRows(t)
	b := boardFor(t, f, softboard.Config{KMax: 500, QueueFrames: 4})
	const seed = 500
	n := len(X)
	lost := []int{n - 3, n - 2, n - 1}
	wrong := []int{4, 9}
	h := &faultyHost{Transport: pipeTo(t, b, nil), drop: map[uint32]bool{}, corrupt: map[uint32]bool{}, seedOf: map[uint16]uint32{}}
	for _, i := range lost {
		h.drop[uint32(seed+i)] = true
	}
	for _, i := range wrong {
		h.corrupt[uint32(seed+i)] = true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg := stream.Config{K: 20, Seed: seed, Labels: labels, Mode: frame.ModeStats, Driver: driver.Opts{Deadline: 300 * time.Millisecond, Window: 4}}
	s, err := stream.Run(ctx, h, f, "", X, cfg)
	var de *driver.DeadlineError
	if !errors.As(err, &de) || s == nil {
		t.Fatalf("Run returned %v, want a deadline error and a summary", err)
	}
	t.Log(err)
	if s.Requested != n || s.Lost != len(lost) || s.Queries != n-len(lost) || s.Mismatches != len(wrong) || s.Verified != n-len(lost)-len(wrong) {
		t.Fatalf("requested %d, queries %d, lost %d, mismatches %d, verified %d; want %d, %d, %d, %d, %d", s.Requested, s.Queries, s.Lost, s.Mismatches,
			s.Verified, n, n-len(lost), len(lost), len(wrong), n-len(lost)-len(wrong))
	}
	if want := float64(s.Queries) / s.WallS; math.Abs(s.QueriesPerS-want) > 1e-9*want {
		t.Errorf("queries/s %v, want answered rows / wall time = %v", s.QueriesPerS, want)
	}
	if got := de.Indices(); !slices.Equal(got, lost) {
		t.Errorf("the deadline error names rows %v, want %v", got, lost)
	}
	if len(s.Unanswered) != len(lost) {
		t.Errorf("summary lists %d unanswered, want %d", len(s.Unanswered), len(lost))
	}
	correct := 0
	for i, r := range s.Rows {
		switch {
		case slices.Contains(lost, i):
			if r.Status != stream.StatusLost || r.Pred != -1 || r.Probs != nil || r.Error == "" {
				t.Errorf("lost row %d: %+v", i, r)
			}
		case slices.Contains(wrong, i):
			if r.Status != stream.StatusMismatch || !r.Mismatch {
				t.Errorf("mismatched row %d: %+v", i, r)
			}
		default:
			if r.Status != stream.StatusOK || r.Pred < 0 {
				t.Errorf("row %d: %+v", i, r)
			}
			if r.Pred == *r.Label {
				correct++
			}
		}
	}
	m := s.Metrics
	if m == nil || m.N != s.Verified {
		t.Fatalf("metrics %+v over %d verified rows", m, s.Verified)
	}
	if want := float64(correct) / float64(s.Verified); math.Abs(float64(m.Accuracy)-want) > 1e-12 {
		t.Errorf("accuracy %v, want %v over the verified rows", m.Accuracy, want)
	}
	j, _ := json.Marshal(s.Rows[n-1])
	if !strings.Contains(string(j), `"status":"lost"`) || !strings.Contains(string(j), `"pred":-1`) {
		t.Errorf("lost row as JSON: %s", j)
	}
}
