package driver_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/host/driver"
	"github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/internal/testmodel"
	"github.com/ptmhw/ptm/host/softboard"
	"github.com/ptmhw/ptm/host/transport"
)

type rig struct {
	bank  *fixed.Bank
	board *softboard.Board
	host  *transport.Stream
	link  *softboard.FaultyLink
	d     *driver.Driver
	core  *fixed.Core
	stop  func() error
}

func newRig(t testing.TB, sh fixed.Shape, bcfg softboard.Config, dopts driver.Opts, faults *softboard.Faults) *rig {
	t.Helper()
	return newRigWith(t, sh, bcfg, dopts, faults, nil)
}

// newRigWith is newRig with, if wrap is set, the host's transport
// wrapped by it.
func newRigWith(t testing.TB, sh fixed.Shape, bcfg softboard.Config, dopts driver.Opts, faults *softboard.Faults,
	wrap func(transport.Transport) transport.Transport) *rig {
	t.Helper()
	return newRigServe(t, sh, bcfg, dopts, softboard.StreamOpts{}, faults, wrap)
}

// newRigServe is newRigWith with the board served with sopts.
func newRigServe(t testing.TB, sh fixed.Shape, bcfg softboard.Config, dopts driver.Opts, sopts softboard.StreamOpts,
	faults *softboard.Faults, wrap func(transport.Transport) transport.Transport) *rig {
	t.Helper()
	bank := testmodel.Bank(sh, testmodel.HW.Bits, 7)
	if bcfg.Shape == (fixed.Shape{}) {
		bcfg.Shape = sh
	}
	if bcfg.HW == (fixed.HW{}) {
		bcfg.HW = testmodel.HW
	}
	board, err := softboard.New(bcfg)
	if err != nil {
		t.Fatal(err)
	}
	host, link, stop := board.Pipe(context.Background(), transport.StreamOpts{}, sopts, faults)
	core, err := fixed.NewCore(bank, testmodel.HW)
	if err != nil {
		t.Fatal(err)
	}
	var tr transport.Transport = host
	if wrap != nil {
		tr = wrap(host)
	}
	r := &rig{bank: bank, board: board, host: host, link: link, d: driver.New(tr, dopts), core: core, stop: stop}
	t.Cleanup(func() {
		r.d.Close()
		if err := r.stop(); err != nil {
			t.Errorf("board: %v", err)
		}
		r.host.Close()
	})
	return r
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// golden returns the words the board must answer.
func (r *rig) golden(t *testing.T, x []bool, k int, seed uint32, mode frame.Mode) []uint32 {
	sums, st, err := r.core.Run(x, k, seed, nil)
	if err != nil {
		t.Fatal(err)
	}
	return frame.ResultWords(mode, r.bank.T, sums, st)
}

func equalWords(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// streamAll runs n requests and checks every result against the golden
// core: none lost, none duplicated, none wrong.
func (r *rig) streamAll(t *testing.T, ctx context.Context, n, k int, modeOf func(i int) frame.Mode) {
	t.Helper()
	xs := testmodel.Features(n, r.bank.Features, 3)
	reqs := make(chan driver.Request)
	res := make(chan driver.Result, 16)
	go func() {
		defer close(reqs)
		for i, x := range xs {
			reqs <- driver.Request{Index: i, Features: frame.PackFeatures(nil, x), K: k, Seed: uint32(1000 + i), Mode: modeOf(i)}
		}
	}()
	errc := make(chan error, 1)
	go func() { errc <- r.d.Stream(ctx, reqs, res) }()
	seen := make([]int, n)
	var wrong, failed, got int
	lastLog := time.Now()
	for res := range res {
		if got++; time.Since(lastLog) > 30*time.Second {
			lastLog = time.Now()
			t.Logf("%d of %d results; driver %+v", got, n, r.d.Stats())
		}
		if res.Index < 0 || res.Index >= n {
			t.Fatalf("result for unknown index %d", res.Index)
		}
		seen[res.Index]++
		if res.Err != nil {
			failed++
			if failed < 5 {
				t.Errorf("request %d: %v", res.Index, res.Err)
			}
			continue
		}
		if want := r.golden(t, xs[res.Index], k, uint32(1000+res.Index), modeOf(res.Index)); !equalWords(res.Words, want) {
			wrong++
			if wrong < 5 {
				t.Errorf("request %d (seq %d): words %v, golden %v", res.Index, res.Seq, res.Words, want)
			}
		}
	}
	if err := <-errc; err != nil {
		t.Fatalf("Stream: %v", err)
	}
	var lost, dup int
	for _, s := range seen {
		if s == 0 {
			lost++
		}
		if s > 1 {
			dup++
		}
	}
	if lost+dup+wrong+failed > 0 {
		t.Fatalf("%d lost, %d duplicated, %d wrong, %d failed of %d", lost, dup, wrong, failed, n)
	}
}

func TestUploadAndStreamExact(t *testing.T) {
	for _, sh := range []fixed.Shape{testmodel.Multiclass, testmodel.Binary} {
		t.Run(fmt.Sprintf("NC%d", sh.Classes), func(t *testing.T) {
			r := newRig(t, sh, softboard.Config{}, driver.Opts{}, nil)
			ctx := ctxT(t, 60*time.Second)
			in, err := r.d.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if in.Loaded != 0 || in.Shape() != sh || in.HW() != testmodel.HW {
				t.Fatalf("info %v", in)
			}
			// Inference before a model is loaded is refused.
			_, err = r.d.InferAll(ctx, []driver.Request{{Features: make([]byte, in.FeatureBytes()), K: 1, Mode: frame.ModeStats}})
			if err != nil {
				t.Fatal(err)
			}
			words := softboard.BankWords(r.bank, testmodel.HW)
			if err := r.d.Load(ctx, words); err != nil {
				t.Fatal(err)
			}
			if in, err = r.d.Info(ctx); err != nil || in.Loaded != 1 || in.ModelCRC != frame.WordsCRC(words) {
				t.Fatalf("after load: %v %v", in, err)
			}
			r.streamAll(t, ctx, 1200, 7, func(i int) frame.Mode { return frame.Mode(i % 2) })
			st := r.d.Stats()
			t.Logf("driver stats: %+v", st)
			// (Timeouts are possible even here when the machine is loaded:
			// a response held up beyond the 20 ms RTO floor is resent, and
			// when the original's answer then comes a round trip after the
			// resend, the requests sent before the resend are taken for
			// lost and resent too (fast retransmits). Every late duplicate
			// answers such a copy; without a timeout there is none.)
			resent := st.Timeouts + st.FastRetransmits + st.DropHints
			if st.Link.CRCErrors != 0 || st.Link.FramingErrors != 0 || st.Link.Skipped != 0 || st.Stray > resent ||
				st.Timeouts == 0 && (st.FastRetransmits != 0 || st.Stray != 0) {
				t.Errorf("clean link saw errors: %+v", st)
			}
			bs := r.board.Status()
			if got := bs.Counters[frame.CounterInferred]; got < 1200 {
				t.Errorf("board inferred %d vectors, want at least 1200", got)
			}
		})
	}
}

func TestRefusals(t *testing.T) {
	r := newRig(t, testmodel.Multiclass, softboard.Config{KMax: 50}, driver.Opts{}, nil)
	ctx := ctxT(t, 20*time.Second)
	if _, err := r.d.Info(ctx); err != nil {
		t.Fatal(err)
	}
	res, _ := r.d.InferAll(ctx, []driver.Request{{Index: 3, Features: make([]byte, 2), K: 5, Mode: frame.ModeStats}})
	var be *frame.BoardError
	if !errors.As(res[0].Err, &be) || be.Code != frame.CodeNoModel {
		t.Fatalf("infer without model: %v", res[0].Err)
	}
	if err := r.d.Load(ctx, make([]uint16, 5)); err == nil {
		t.Fatal("load of the wrong size accepted")
	}
	if err := r.d.Load(ctx, softboard.BankWords(r.bank, testmodel.HW)); err != nil {
		t.Fatal(err)
	}
	res, _ = r.d.InferAll(ctx, []driver.Request{{Index: 4, Features: make([]byte, 2), K: 51, Mode: frame.ModeStats}, {Index: 5, Features: make([]byte, 3), K: 1}})
	for _, x := range res {
		if x.Err == nil {
			t.Errorf("request %d accepted", x.Index)
		}
	}
	// The board checks K itself too.
	_, _, err := r.d.Exec(ctx, frame.TypeInfer, (&frame.InferRequest{Mode: frame.ModeStats, K: 51, Count: 1, Features: make([]byte, 2)}).AppendTo(nil))
	if !errors.As(err, &be) || be.Code != frame.CodeBadK || be.Detail != 0 {
		t.Fatalf("K=51: %v", err)
	}
	_, _, err = r.d.Exec(ctx, frame.Type(0x55), nil)
	if !errors.As(err, &be) || be.Code != frame.CodeUnknownCommand {
		t.Fatalf("unknown command: %v", err)
	}
}
