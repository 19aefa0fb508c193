package driver_test

import (
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ptmhw/ptm/host/driver"
	"github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/internal/testmodel"
	"github.com/ptmhw/ptm/host/softboard"
	"github.com/ptmhw/ptm/host/transport"
)

// longTests reports whether the long fault runs are wanted
// (PTM_LONG_TESTS=1, as `make test-long` sets).
func longTests() bool { return os.Getenv("PTM_LONG_TESTS") == "1" }

// A board that becomes 400 ms per command slower in the middle of a
// stream (a simulation whose host gets loaded): with the requests queued
// in its buffer a round trip grows from well under a millisecond to
// hundreds of times the RTO in effect. The adaptive timeout (back-off on
// a silent link, RTT estimate from requests answered at their first
// transmission) must lose nothing. With a fixed number of attempts and a
// fixed cap on the back-off, requests were lost, and their resends piled
// up in the board's queue; the cap now rises with every late answer to
// a request resent on a timeout.
func TestSlowBoard(t *testing.T) {
	r := newRig(t, testmodel.Multiclass, softboard.Config{QueueFrames: 4},
		driver.Opts{Timeout: 5 * time.Millisecond, MinTimeout: time.Millisecond}, nil)
	ctx := ctxT(t, 10*time.Minute)
	loaded(t, r, ctx)
	r.streamAll(t, ctx, 50, 3, func(int) frame.Mode { return frame.ModeStats })
	fast := r.d.Stats()
	r.board.SetExecTime(400 * time.Millisecond)
	r.streamAll(t, ctx, 20, 3, func(int) frame.Mode { return frame.ModeStats })
	st := r.d.Stats()
	t.Logf("SRTT %v before, %v after the slow-down; driver %+v", fast.SRTT, st.SRTT, st)
	// Every answer after the slow-down takes at least 400 ms. Only
	// answers to first transmissions are RTT samples (Karn's rule), and on
	// a busy queue most requests are resent, so how many samples arrive
	// depends on timing; but one is enough to move the smoothed RTT
	// (gain 1/8) at least 1/8 of the way, to about 50 ms.
	if st.SRTT < 45*time.Millisecond {
		t.Errorf("smoothed RTT %v after the slow-down (%v before), the board takes 400 ms per command", st.SRTT, fast.SRTT)
	}
	// Requests resent while the board still worked on them are answered
	// late: the driver must see those answers as spurious timeouts (they
	// lift the back-off cap that a merely lossy link keeps at 2).
	if st.SpuriousTimeouts == 0 {
		t.Errorf("no spurious timeout recognized although the board slowed from %v to 400 ms per command (%d timeouts, %d late answers)",
			fast.SRTT, st.Timeouts, st.Stray)
	}
}

// noisy is 1% bit flips and 1% byte drops in each direction.
func noisy(seed uint64) *softboard.Faults {
	return &softboard.Faults{Seed: seed, FlipToBoard: 0.01, DropToBoard: 0.01, FlipToHost: 0.01, DropToHost: 0.01}
}

// Upload and queries at 1% bit flips + 1% byte drops per direction with
// the default options (510-word chunks: a 1035-byte frame survives such a
// link once in 10^9): Load must shrink its chunks, and nothing may be
// lost or wrong. 1,000 queries; 10,000 with PTM_LONG_TESTS=1.
func TestNoisyLink(t *testing.T) {
	n := 1000
	if longTests() {
		n = 10000
	}
	r := newRig(t, testmodel.Multiclass, softboard.Config{QueueFrames: 4}, driver.Opts{}, noisy(21))
	ctx := ctxT(t, 30*time.Minute)
	if _, err := r.d.Info(ctx); err != nil {
		t.Fatal(err)
	}
	words := softboard.BankWords(r.bank, testmodel.HW)
	start := time.Now()
	if err := r.d.Load(ctx, words); err != nil {
		t.Fatal(err)
	}
	if !equal16(r.board.Words(), words) {
		t.Fatal("board's bank differs from the upload")
	}
	up := r.d.Stats()
	t.Logf("upload of %d words in %v: smallest chunk %d words, %d frames, %d go-backs, %d gap answers, %d timeouts",
		len(words), time.Since(start).Round(time.Millisecond), up.MinChunkWords, up.Frames, up.LoadGoBacks, up.LoadGaps, up.Timeouts)
	if up.MinChunkWords >= frame.MaxLoadWords {
		t.Errorf("the chunks never shrank on a lossy link")
	}
	start = time.Now()
	r.streamAll(t, ctx, n, 3, func(int) frame.Mode { return frame.ModeStats })
	st := r.d.Stats()
	t.Logf("%d queries in %v: %d frames, %d resends (%d timeouts, %d fast, %d drop hints), %d late duplicates; SRTT %v; faults %+v",
		n, time.Since(start).Round(time.Millisecond), st.Frames-up.Frames, st.Retries-up.Retries, st.Timeouts-up.Timeouts,
		st.FastRetransmits-up.FastRetransmits, st.DropHints-up.DropHints, st.Stray, st.SRTT, r.link.Stats())
}

// dropper is a host transport that silently drops the frames drop
// selects (a link that loses them every time).
type dropper struct {
	transport.Transport
	drop    func(f *frame.Frame) bool
	dropped atomic.Int64
}

func (d *dropper) Send(b []byte) error {
	var f frame.Frame
	if err := f.DecodeFromBytes(b); err == nil && d.drop(&f) {
		d.dropped.Add(1)
		return nil
	}
	return d.Transport.Send(b)
}

// An upload whose words from 40 on never reach the board: Load must give
// up at the deadline (not after a fixed number of attempts) with a
// *DeadlineError naming the words the board waits for, i.e. the first
// unacknowledged offset, at most 40 and past the last chunk written
// before it.
func TestLoadDeadlineNamesMissingWords(t *testing.T) {
	const stuck = 40
	wrap := func(tr transport.Transport) transport.Transport {
		return &dropper{Transport: tr, drop: func(f *frame.Frame) bool {
			var ld frame.LoadData
			if f.Type != frame.TypeLoadData || ld.DecodeFromBytes(f.Payload) != nil {
				return false
			}
			return int(ld.Offset) <= stuck && stuck < int(ld.Offset)+ld.N()
		}}
	}
	r := newRigWith(t, testmodel.Multiclass, softboard.Config{},
		driver.Opts{ChunkWords: 16, Deadline: 300 * time.Millisecond, Timeout: 5 * time.Millisecond, MinTimeout: time.Millisecond}, nil, wrap)
	ctx := ctxT(t, time.Minute)
	if _, err := r.d.Info(ctx); err != nil {
		t.Fatal(err)
	}
	err := r.d.Load(ctx, softboard.BankWords(r.bank, testmodel.HW))
	var de *driver.DeadlineError
	if !errors.As(err, &de) || !errors.Is(err, driver.ErrTimeout) || len(de.Unanswered) != 1 {
		t.Fatalf("Load returned %v, want one *DeadlineError", err)
	}
	t.Log(err)
	u := de.Unanswered[0]
	if u.Index > stuck || u.Index < stuck-16 || !u.Expired || !strings.Contains(u.Label, "LOAD_DATA") {
		t.Fatalf("the error names %+v; the board waits for word %d at most", u, stuck)
	}
	if u.Attempts < 2 {
		t.Errorf("the missing words were sent %d times before the deadline", u.Attempts)
	}
}

// A board that stops answering after 30 queries: Stream must stop at the
// deadline with a *DeadlineError that lists every request left without an
// answer (the expired one and the ones abandoned with it), each request
// taken must get exactly one result, and the answered ones must be exact.
func TestStreamDeadlineReport(t *testing.T) {
	wrap := func(tr transport.Transport) transport.Transport {
		return &dropper{Transport: tr, drop: func(f *frame.Frame) bool {
			if f.Type != frame.TypeInfer {
				return false
			}
			var q frame.InferRequest
			if q.DecodeFromBytes(f.Payload) != nil {
				return false
			}
			return q.Seed >= 1030 // the rig's request i has seed 1000+i
		}}
	}
	r := newRigWith(t, testmodel.Multiclass, softboard.Config{QueueFrames: 4},
		driver.Opts{Deadline: 500 * time.Millisecond, Window: 4}, nil, wrap)
	ctx := ctxT(t, time.Minute)
	loaded(t, r, ctx)
	const n = 100
	xs := testmodel.Features(n, r.bank.Features, 3)
	reqs := make(chan driver.Request)
	res := make(chan driver.Result)
	go func() {
		defer close(reqs)
		for i, x := range xs {
			select {
			case reqs <- driver.Request{Index: i, Features: frame.PackFeatures(nil, x), K: 3, Seed: uint32(1000 + i), Mode: frame.ModeStats}:
			case <-ctx.Done():
				return
			}
		}
	}()
	errc := make(chan error, 1)
	go func() { errc <- r.d.Stream(ctx, reqs, res) }()
	seen := map[int]int{}
	var failed []int
	for x := range res {
		seen[x.Index]++
		if x.Err != nil {
			if !errors.Is(x.Err, driver.ErrTimeout) {
				t.Errorf("request %d: %v, want a timeout", x.Index, x.Err)
			}
			failed = append(failed, x.Index)
			continue
		}
		if x.Index >= 30 {
			t.Errorf("request %d answered, but the board never got it", x.Index)
		}
		if want := r.golden(t, xs[x.Index], 3, uint32(1000+x.Index), frame.ModeStats); !equalWords(x.Words, want) {
			t.Errorf("request %d: wrong words", x.Index)
		}
	}
	err := <-errc
	var de *driver.DeadlineError
	if !errors.As(err, &de) {
		t.Fatalf("Stream returned %v, want a *DeadlineError", err)
	}
	t.Log(err)
	for i, c := range seen {
		if c != 1 {
			t.Errorf("request %d got %d results", i, c)
		}
	}
	for i := range 30 {
		if seen[i] != 1 {
			t.Errorf("request %d (answerable) got no result", i)
		}
	}
	got := de.Indices()
	if len(got) != len(failed) || len(got) == 0 || got[0] != 30 {
		t.Fatalf("the error lists requests %v; the failed results were %v (want from 30 on)", got, failed)
	}
	expired := 0
	for _, u := range de.Unanswered {
		if u.Expired {
			expired++
		}
		if u.Attempts < 1 || u.Index < 30 {
			t.Errorf("unanswered entry %+v", u)
		}
	}
	if expired == 0 {
		t.Errorf("no entry is marked expired: %+v", de.Unanswered)
	}
	// The driver is still usable.
	if _, err := r.d.Status(ctxT(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
}

// A board slow from its first command (a Verilated board on a loaded
// host, every answer 100 ms late) with an initial timeout of 2 ms, fifty
// times too short: the first request is resent until its back-off
// covers the round trip, so its answer is no RTT sample (Karn). Its
// time since the last resend is only a lower bound of the round trip,
// which may be any fraction of it; an estimate started from it stayed
// below the real round trip (sim/board TestIrisStreamSlowBoard: SRTT
// 991 ms against answers held 1 s). The estimate must start from a real
// sample, so it never falls below the board's time per command.
func TestSlowFromFirstCommand(t *testing.T) {
	const exec = 100 * time.Millisecond
	r := newRig(t, testmodel.Multiclass, softboard.Config{QueueFrames: 4},
		driver.Opts{Timeout: 2 * time.Millisecond, MinTimeout: time.Millisecond}, nil)
	r.board.SetExecTime(exec)
	ctx := ctxT(t, 5*time.Minute)
	for i := range 6 {
		if _, err := r.d.Info(ctx); err != nil {
			t.Fatalf("INFO %d: %v", i, err)
		}
		if st := r.d.Stats(); st.SRTT != 0 && st.SRTT < exec {
			t.Fatalf("after INFO %d: smoothed RTT %v, but every command takes %v (%d timeouts, %d late answers)",
				i, st.SRTT, exec, st.Timeouts, st.Stray)
		}
	}
	st := r.d.Stats()
	t.Logf("driver %+v", st)
	if st.SRTT < exec {
		t.Errorf("smoothed RTT %v after 6 commands, but every command takes %v", st.SRTT, exec)
	}
}
