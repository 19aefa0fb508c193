package driver_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ptmhw/ptm/host/driver"
	"github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/internal/testmodel"
	"github.com/ptmhw/ptm/host/softboard"
	"github.com/ptmhw/ptm/host/transport"
)

func loaded(t testing.TB, r *rig, ctx context.Context) {
	if _, err := r.d.Info(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.d.Load(ctx, softboard.BankWords(r.bank, testmodel.HW)); err != nil {
		t.Fatal(err)
	}
}

// Multi-fragment responses (samples mode, K*NT > 256 words) are
// reassembled, also when fragments get lost.
func TestFragmentsUnderFaults(t *testing.T) {
	faults := &softboard.Faults{Seed: 5, FlipToHost: 2e-4, DropToHost: 2e-4, FlipToBoard: 1e-3}
	r := newRig(t, testmodel.Multiclass, softboard.Config{}, driver.Opts{MaxRetries: 20}, faults)
	ctx := ctxT(t, 120*time.Second)
	loaded(t, r, ctx)
	r.streamAll(t, ctx, 150, 300, func(int) frame.Mode { return frame.ModeSamples }) // 900 words, 4 fragments
	st := r.d.Stats()
	t.Logf("driver %+v", st)
	if st.Retries == 0 {
		t.Fatal("no resends under faults")
	}
}

// Sequence numbers wrap around 65535 -> 0 without confusion.
func TestSeqWraparound(t *testing.T) {
	r := newRig(t, testmodel.Binary, softboard.Config{}, driver.Opts{FirstSeq: driver.Seq(65500)}, nil)
	ctx := ctxT(t, 30*time.Second)
	loaded(t, r, ctx)
	r.streamAll(t, ctx, 300, 2, func(int) frame.Mode { return frame.ModeStats })
}

// Responses delayed past the timeout make the driver resend; the late
// duplicates are ignored, never delivered twice. (MaxTimeout is below the
// delays, so the adaptive timeout cannot avoid the resends.)
func TestLateDuplicates(t *testing.T) {
	faults := &softboard.Faults{Seed: 3, MaxDelay: 12 * time.Millisecond}
	r := newRig(t, testmodel.Binary, softboard.Config{QueueFrames: 64}, driver.Opts{Timeout: time.Millisecond, MinTimeout: time.Millisecond, MaxTimeout: 2 * time.Millisecond, Window: 4}, faults)
	ctx := ctxT(t, 60*time.Second)
	loaded(t, r, ctx)
	r.streamAll(t, ctx, 200, 2, func(int) frame.Mode { return frame.ModeStats })
	st := r.d.Stats()
	t.Logf("driver %+v", st)
	if st.Timeouts == 0 || st.Stray == 0 {
		t.Fatalf("expected timeouts and late duplicates: %+v", st)
	}
}

// A timeout shorter than every round trip (MaxTimeout 2 ms, every answer
// 10-12 ms late) does not make the upload crawl: the late answers to
// chunks given up as lost or cancelled still count them written, so the
// bank arrives in a few hundred frames and is then exact. (Before late
// answers counted, the loss estimate shrank chunks to 1 word and this
// upload did not finish in 100 s.)
func TestLateLoadAnswers(t *testing.T) {
	faults := &softboard.Faults{Seed: 4, MinDelay: 10 * time.Millisecond, MaxDelay: 12 * time.Millisecond}
	r := newRig(t, testmodel.Multiclass, softboard.Config{QueueFrames: 64},
		driver.Opts{Timeout: time.Millisecond, MinTimeout: time.Millisecond, MaxTimeout: 2 * time.Millisecond, Window: 4, ChunkWords: 16}, faults)
	ctx := ctxT(t, 120*time.Second)
	loaded(t, r, ctx)
	st := r.d.Stats()
	t.Logf("driver %+v", st)
	words := len(softboard.BankWords(r.bank, testmodel.HW))
	if st.LateLoadAcks == 0 {
		t.Fatalf("%d words uploaded with every answer late, yet no late answer counted: %+v", words, st)
	}
	if chunks := uint64(words+15) / 16; st.LoadGoBacks > 3*chunks || st.Frames > 20*chunks {
		t.Fatalf("%d words (%d chunks of 16): %d go-backs, %d frames", words, chunks, st.LoadGoBacks, st.Frames)
	}
	r.streamAll(t, ctx, 20, 2, func(int) frame.Mode { return frame.ModeStats })
}

// Cancelling the context ends Stream with ctx.Err(); every request taken
// gets a result; nothing is lost.
func TestStreamCancel(t *testing.T) {
	faults := &softboard.Faults{Seed: 3, MaxDelay: 2 * time.Millisecond}
	r := newRig(t, testmodel.Binary, softboard.Config{}, driver.Opts{}, faults)
	loaded(t, r, ctxT(t, 10*time.Second))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reqs := make(chan driver.Request)
	res := make(chan driver.Result)
	go func() {
		for i := 0; ; i++ {
			select {
			case reqs <- driver.Request{Index: i, Features: []byte{0x15}, K: 3, Mode: frame.ModeStats}:
			case <-ctx.Done():
				close(reqs)
				return
			}
		}
	}()
	errc := make(chan error, 1)
	go func() { errc <- r.d.Stream(ctx, reqs, res) }()
	var ok, cancelled int
	for x := range res {
		if x.Err == nil {
			ok++
			if ok == 100 {
				cancel()
			}
		} else if errors.Is(x.Err, context.Canceled) {
			cancelled++
		} else {
			t.Errorf("request %d: %v", x.Index, x.Err)
		}
	}
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Stream returned %v", err)
	}
	t.Logf("%d answered, %d cancelled", ok, cancelled)
	// The driver still works afterwards.
	if _, err := r.d.Status(ctxT(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
}

// A board that never answers: every request fails with ErrTimeout naming
// it, after MaxRetries resends.
func TestTimeoutExhausted(t *testing.T) {
	// every INFER is lost (the driver needs the board's INFO first)
	wrap := func(tr transport.Transport) transport.Transport {
		return &dropper{Transport: tr, drop: func(f *frame.Frame) bool { return f.Type == frame.TypeInfer }}
	}
	r := newRigWith(t, testmodel.Binary, softboard.Config{}, driver.Opts{Timeout: 2 * time.Millisecond, MaxRetries: 3}, nil, wrap)
	ctx := ctxT(t, 10*time.Second)
	if _, err := r.d.Info(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := r.d.InferAll(ctx, []driver.Request{{Index: 41, Features: []byte{1}, K: 1}, {Index: 42, Features: []byte{1}, K: 1}})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range res {
		if !errors.Is(x.Err, driver.ErrTimeout) || x.Retries != 3 {
			t.Fatalf("request %d: retries %d, %v", x.Index, x.Retries, x.Err)
		}
		t.Log(x.Err)
	}
}

func BenchmarkStreamPipe(b *testing.B) {
	for _, q := range []int{1, 8} {
		b.Run(map[int]string{1: "queue1", 8: "queue8"}[q], func(b *testing.B) {
			r := newRig(b, testmodel.Multiclass, softboard.Config{QueueFrames: q}, driver.Opts{}, nil)
			ctx := context.Background()
			loaded(b, r, ctx)
			reqs := make(chan driver.Request)
			res := make(chan driver.Result, 64)
			go func() {
				for i := 0; i < b.N; i++ {
					reqs <- driver.Request{Index: i, Features: []byte{1, 2}, K: 4, Seed: uint32(i), Mode: frame.ModeStats}
				}
				close(reqs)
			}()
			b.ResetTimer()
			go r.d.Stream(ctx, reqs, res)
			for range res {
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
			b.ReportMetric(float64(r.d.Stats().Busy)/float64(b.N), "busy/query")
		})
	}
}

// A protocol version 4 or 5 board checks neither W nor INFER lengths, so
// the driver does: without the board's INFO it refuses INFER with a clear
// error and sends nothing; a Load of too many words before INFO is
// refused by the board when the words run past its bank (ERROR 3 to
// LOAD_DATA; version 5's LOAD_BEGIN answer no longer carries L*D) and
// reported so; with INFO, wrong sizes are refused before anything is
// sent.
func TestHostChecksVersion4(t *testing.T) {
	r := newRig(t, testmodel.Binary, softboard.Config{}, driver.Opts{}, nil)
	ctx := ctxT(t, 10*time.Second)
	res, err := r.d.InferAll(ctx, []driver.Request{{Index: 7, Features: []byte{1}, K: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Err == nil || !strings.Contains(res[0].Err.Error(), "call Info first") {
		t.Fatalf("INFER without INFO: %v", res[0].Err)
	}
	if n := r.d.Stats().Link.FramesSent; n != 0 {
		t.Fatalf("%d frames sent for a refused request", n)
	}
	W := len(softboard.BankWords(r.bank, testmodel.HW))
	var be *frame.BoardError
	if err := r.d.Load(ctx, make([]uint16, W+1)); !errors.As(err, &be) || be.Cmd != frame.TypeLoadData || be.Code != frame.CodeBadLength ||
		!strings.Contains(err.Error(), "the board refused a word of this chunk and ended the load") {
		t.Fatalf("Load of W+1 words without INFO: %v, want the board's ERROR 3 to LOAD_DATA", err)
	}
	loaded(t, r, ctx)
	sent := r.d.Stats().Link.FramesSent
	res, err = r.d.InferAll(ctx, []driver.Request{
		{Index: 1, Features: []byte{1, 2}, K: 1},             // one feature byte too many
		{Index: 2, Features: nil, K: 1},                      // none
		{Index: 3, Features: make([]byte, 9), K: 1, Sets: 9}, // more sets than MMAX (8)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range res {
		if x.Err == nil {
			t.Errorf("request %d accepted", x.Index)
		}
	}
	if n := r.d.Stats().Link.FramesSent; n != sent {
		t.Fatalf("%d frames sent for refused requests", n-sent)
	}
	if err := r.d.Load(ctx, make([]uint16, W+1)); err == nil || !strings.Contains(err.Error(), "L*D") {
		t.Fatalf("Load of W+1 words with INFO: %v", err)
	}
}
