package driver_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/host/driver"
	"github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/internal/testmodel"
	"github.com/ptmhw/ptm/host/softboard"
	"github.com/ptmhw/ptm/host/transport"
)

var update = flag.Bool("update", false, "rewrite testdata/session.rec from a live softboard session")

// session is a fixed sequence of driver operations; it returns the
// results of the inference requests.
func session(t *testing.T, tr transport.Transport) []driver.Result {
	t.Helper()
	// A long timeout, also after RTT samples (MinTimeout), so that a
	// loaded machine cannot add a resend that the recording would then
	// contain.
	d := driver.New(tr, driver.Opts{FirstSeq: driver.Seq(0xfff0), Timeout: 30 * time.Second, MinTimeout: 30 * time.Second, MaxTimeout: 30 * time.Second, Window: 4})
	defer d.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := d.Info(ctx); err != nil {
		t.Fatal(err)
	}
	if err := d.ResetStatus(ctx); err != nil {
		t.Fatal(err)
	}
	bank := testmodel.Bank(testmodel.Multiclass, testmodel.HW.Bits, 99)
	if err := d.Load(ctx, softboard.BankWords(bank, testmodel.HW)); err != nil {
		t.Fatal(err)
	}
	xs := testmodel.Features(40, testmodel.Multiclass.Features, 99)
	reqs := make([]driver.Request, len(xs))
	for i, x := range xs {
		reqs[i] = driver.Request{Index: i, Features: frame.PackFeatures(nil, x), K: 5 + i, Seed: uint32(i * 7), Mode: frame.Mode(i % 3)}
	}
	res, err := d.InferAll(ctx, reqs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Status(ctx); err != nil {
		t.Fatal(err)
	}
	core, _ := fixed.NewCore(bank, testmodel.HW)
	r := &rig{core: core, bank: bank}
	for i, x := range res {
		if x.Err != nil {
			t.Fatalf("request %d: %v", i, x.Err)
		}
		if want := r.golden(t, xs[i], reqs[i].K, reqs[i].Seed, reqs[i].Mode); !equalWords(x.Words, want) {
			t.Fatalf("request %d: %v, golden %v", i, x.Words, want)
		}
	}
	return res
}

func record(t *testing.T) transport.Recording {
	board, err := softboard.New(softboard.Config{Shape: testmodel.Multiclass, HW: testmodel.HW, QueueFrames: 16})
	if err != nil {
		t.Fatal(err)
	}
	host, _, stop := board.Pipe(context.Background(), transport.StreamOpts{}, softboard.StreamOpts{}, nil)
	rec := transport.NewRecorder(host)
	session(t, rec)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	host.Close()
	return rec.Recording()
}

// A live session is recorded and played back: the driver must send
// exactly the recorded frames and get the same results.
func TestRecordPlayback(t *testing.T) {
	rec := record(t)
	pb := transport.NewPlayback(rec)
	session(t, pb)
	if err := pb.Close(); err != nil {
		t.Fatal(err)
	}
}

// The recording in testdata pins the wire format: the driver must still
// produce exactly those frames, and the recorded board answers must still
// equal the golden model. Regenerate with go test -run Golden -update.
func TestGoldenRecording(t *testing.T) {
	path := filepath.Join("testdata", "session.rec")
	if *update {
		rec := record(t)
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rec.WriteTo(f); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rec, err := transport.ReadRecording(f)
	if err != nil {
		t.Fatal(err)
	}
	pb := transport.NewPlayback(rec)
	session(t, pb)
	if err := pb.Close(); err != nil {
		t.Fatal(err)
	}
}
