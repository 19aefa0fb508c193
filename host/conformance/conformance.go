package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/host/driver"
	"github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/transport"
)

// Opts configures Check.
type Opts struct {
	// Driver configures the driver used for the checks (its window is
	// forced to 1 so that every refusal is attributed to one command).
	Driver driver.Opts
	// Strict also requires softboard's choices where the protocol leaves
	// one (the ERROR details of malformed commands).
	Strict bool
	// Garbage is the number of random bytes sent to test resynchronization
	// (default 10,000; negative skips the check).
	Garbage int
	// Queries is the number of random inferences compared with the golden
	// model in each mode (default 50).
	Queries int
}

// Result is the outcome of one check.
type Result struct {
	Name   string
	OK     bool
	Detail string
}

// Report lists every check.
type Report struct {
	Info    frame.Info
	Results []Result
}

// Failed returns the failed checks.
func (r *Report) Failed() []Result {
	var f []Result
	for _, c := range r.Results {
		if !c.OK {
			f = append(f, c)
		}
	}
	return f
}

// String summarizes the report, one line per check.
func (r *Report) String() string {
	var b bytes.Buffer
	for _, c := range r.Results {
		mark := "ok  "
		if !c.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(&b, "%s %s", mark, c.Name)
		if c.Detail != "" {
			fmt.Fprintf(&b, ": %s", c.Detail)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

type checker struct {
	ctx    context.Context
	d      *driver.Driver
	t      transport.Transport
	opts   Opts
	rep    *Report
	in     *frame.Info
	strict bool
}

func (c *checker) add(name string, err error) {
	r := Result{Name: name, OK: err == nil}
	if err != nil {
		r.Detail = err.Error()
	}
	c.rep.Results = append(c.rep.Results, r)
}

// expectError runs a command and requires an ERROR with code (and, when
// detail >= 0 and strict or exact, that detail).
func (c *checker) expectError(name string, typ frame.Type, payload []byte, code frame.ErrorCode, detail int64, exact bool) {
	_, p, err := c.d.Exec(c.ctx, typ, payload)
	var be *frame.BoardError
	switch {
	case err == nil:
		c.add(name, fmt.Errorf("accepted (response % x), want ERROR code %d (%v)", p, code, code))
	case !errors.As(err, &be):
		c.add(name, fmt.Errorf("want ERROR code %d, got %w", code, err))
	case be.Code != code:
		c.add(name, fmt.Errorf("ERROR code %d (%v), want %d (%v)", be.Code, be.Code, code, code))
	case be.Cmd != typ:
		c.add(name, fmt.Errorf("ERROR names command %v, want %v", be.Cmd, typ))
	case detail >= 0 && (exact || c.strict) && int64(be.Detail) != detail:
		c.add(name, fmt.Errorf("ERROR detail %d, want %d", be.Detail, detail))
	default:
		c.add(name, nil)
	}
}

func (c *checker) expectOK(name string, typ frame.Type, payload, want []byte) []byte {
	rt, p, err := c.d.Exec(c.ctx, typ, payload)
	switch {
	case err != nil:
		c.add(name, err)
	case rt != typ.Response():
		c.add(name, fmt.Errorf("response type %v, want %v", rt, typ.Response()))
	case want != nil && !bytes.Equal(p, want):
		c.add(name, fmt.Errorf("response % x, want % x", p, want))
	default:
		c.add(name, nil)
	}
	return p
}

// Check runs the conformance checks against the board behind t, using
// bank as the model (it must fit the board).
func Check(ctx context.Context, t transport.Transport, bank *fixed.Bank, opts Opts) (*Report, error) {
	if opts.Garbage == 0 {
		opts.Garbage = 10000
	}
	if opts.Queries <= 0 {
		opts.Queries = 50
	}
	dopts := opts.Driver
	dopts.Window = 1
	d := driver.New(t, dopts)
	defer d.Close()
	c := &checker{ctx: ctx, d: d, t: t, opts: opts, rep: &Report{}, strict: opts.Strict}

	in, err := d.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("conformance: INFO: %w", err)
	}
	c.in, c.rep.Info = in, *in
	c.add("INFO magic, version and shape are sane", nil)
	if in.RxBuffer == 0 {
		c.add("INFO word 18 (receive buffer depth) is at least 1", fmt.Errorf("it is 0"))
	} else {
		c.add("INFO word 18 (receive buffer depth) is at least 1", nil)
	}
	if in.IsConv() {
		return c.rep, fmt.Errorf("conformance: the board serves a convolutional model, the bank is tabular: it does not fit the board (%v); CheckConv checks a convolutional board", in)
	}
	if in.Shape() != bank.Shape || int(in.B) != bank.Bits {
		return c.rep, fmt.Errorf("conformance: the bank (%+v, %d bits) does not fit the board (%v)", bank.Shape, bank.Bits, in)
	}
	if d := in.HW().LayoutOf(bank.Shape).Depth; d != int(in.D) {
		c.add("INFO D equals the depth LC x LL imply", fmt.Errorf("D = %d, want %d", in.D, d))
	} else {
		c.add("INFO D equals the depth LC x LL imply", nil)
	}
	c.expectError("INFO with a payload is refused", frame.TypeInfo, []byte{0}, frame.CodeBadLength, 0, false)
	c.expectError("unknown command", frame.Type(0x7e), nil, frame.CodeUnknownCommand, 0, true)
	c.expectError("a response type sent as a command is unknown", frame.TypeInfer.Response(), nil, frame.CodeUnknownCommand, 0, true)

	fb := in.FeatureBytes()
	infer := func(mode frame.Mode, k, count int) []byte {
		return (&frame.InferRequest{Mode: mode, K: uint16(k), Seed: 1, Count: uint16(count), Features: make([]byte, count*fb)}).AppendTo(nil)
	}
	hw := in.HW()
	words := frame.BankWords(bank, hw)
	W := len(words)
	crc := frame.WordsCRC(words)
	u32 := func(v ...uint32) []byte { return frame.AppendWords(nil, v) }

	// Upload by hand, exercising the rules (protocol version 5: the
	// board does not check W, answers LOAD_BEGIN and LOAD_COMMIT with an
	// empty payload and LOAD_DATA with its next offset, answers a resend
	// of written words with ERROR 6 and its next offset and refuses words
	// past the bank).
	c.expectError("LOAD_BEGIN with a 3-byte payload", frame.TypeLoadBegin, []byte{1, 2, 3}, frame.CodeBadLength, 0, true)
	c.expectOK("LOAD_BEGIN(W+1) is answered (the host checks W)", frame.TypeLoadBegin, u32(uint32(W+1)), []byte{})
	c.expectOK("LOAD_BEGIN(L*D)", frame.TypeLoadBegin, u32(uint32(W)), []byte{})
	c.expectError("INFER while a load is in progress", frame.TypeInfer, infer(frame.ModeStats, 1, 1), frame.CodeNoModel, 0, true)
	step := max(1, min(W/4, frame.MaxLoadWords))
	chunk := func(off, n int) []byte { return frame.AppendLoadData(nil, uint32(off), words[off:off+n]) }
	ack := func(off, n int) []byte { return u32(uint32(off + n)) } // the next offset
	off := 0
	n := min(step, W)
	c.expectOK("LOAD_DATA at next", frame.TypeLoadData, chunk(0, n), ack(0, n))
	off = n
	c.expectError("LOAD_DATA resend of written words answered with next", frame.TypeLoadData, chunk(0, n), frame.CodeLoadGap, int64(off), true)
	if off < W {
		if off+1 < W {
			c.expectError("LOAD_DATA gap answered with next", frame.TypeLoadData, chunk(off+1, 1), frame.CodeLoadGap, int64(off), true)
		}
		if off >= 1 && off+1 <= W {
			c.expectError("LOAD_DATA partial overlap answered with next", frame.TypeLoadData, chunk(off-1, 2), frame.CodeLoadGap, int64(off), true)
		}
		c.expectError("LOAD_COMMIT of a short load answered with next", frame.TypeLoadCommit, u32(uint32(W), crc), frame.CodeLoadGap, int64(off), true)
		part := frame.WordsCRC(words[:off])
		c.expectError("LOAD_COMMIT of a partial upload (W = next < L*D) refused", frame.TypeLoadCommit, u32(uint32(off), part), frame.CodeLoadGap, int64(off), true)
	}
	for off < W-1 {
		n := min(frame.MaxLoadWords, W-1-off)
		c.expectOK(fmt.Sprintf("LOAD_DATA at %d", off), frame.TypeLoadData, chunk(off, n), ack(off, n))
		off += n
	}
	// the last word with one more: the last is written, the chunk refused
	c.expectError("LOAD_DATA running past the bank refused", frame.TypeLoadData,
		frame.AppendLoadData(nil, uint32(off), []uint16{words[off], 0}), frame.CodeBadLength, 0, true)
	c.expectError("LOAD_DATA past the bank refused", frame.TypeLoadData, frame.AppendLoadData(nil, uint32(W), words[:1]), frame.CodeBadLength, 0, true)
	c.expectError("LOAD_COMMIT with a wrong CRC", frame.TypeLoadCommit, u32(uint32(W), crc^1), frame.CodeCommitMismatch, 0, true)
	c.expectOK("LOAD_COMMIT", frame.TypeLoadCommit, u32(uint32(W), crc), []byte{})
	c.expectOK("repeated LOAD_COMMIT is acknowledged again", frame.TypeLoadCommit, u32(uint32(W), crc), []byte{})
	n = min(step, W)
	c.expectError("LOAD_DATA resend after the commit: no load in progress", frame.TypeLoadData, chunk(0, n), frame.CodeNoLoad, int64(W), true)
	c.expectError("LOAD_DATA with no load in progress", frame.TypeLoadData, frame.AppendLoadData(nil, uint32(W), words[:1]), frame.CodeNoLoad, int64(W), true)
	if in2, err := d.Info(ctx); err != nil {
		c.add("INFO after the upload", err)
	} else if in2.Loaded != 1 || in2.ModelCRC != crc {
		c.add("INFO after the upload", fmt.Errorf("loaded = %d, CRC 0x%08x; want 1, 0x%08x", in2.Loaded, in2.ModelCRC, crc))
	} else {
		c.add("INFO after the upload", nil)
	}

	// INFER refusals: what protects the board (protocol version 4; the
	// host checks lengths, counts and result sizes).
	c.expectError("INFER K = 0", frame.TypeInfer, infer(frame.ModeStats, 0, 1), frame.CodeBadK, 0, true)
	if in.KMax < 0xffff {
		c.expectError("INFER K = KMAX+1", frame.TypeInfer, infer(frame.ModeStats, int(in.KMax)+1, 1), frame.CodeBadK, 0, true)
	}
	c.expectError("INFER without a whole feature vector (count = 0)", frame.TypeInfer, infer(frame.ModeStats, 1, 0), frame.CodeBadLength, 0, true)
	c.expectError("INFER one feature byte short", frame.TypeInfer, infer(frame.ModeStats, 1, 1)[:frame.InferHeaderLen+fb-1], frame.CodeBadLength, 0, true)
	c.expectError("INFER with a 3-byte payload", frame.TypeInfer, []byte{1, 0, 1}, frame.CodeBadLength, 0, true)
	bad := infer(frame.ModeStats, 1, 1)
	bad[0] = 4
	c.expectError("INFER mode 4", frame.TypeInfer, bad, frame.CodeBadLength, 0, true)
	if in.MMax < 255 {
		bad = infer(frame.ModeStats, 1, int(in.MMax)+1) // the length of one query of MMAX+1 sets
		bad[1], bad[8] = byte(in.MMax+1), 1
		c.expectError("INFER with MMAX+1 sets", frame.TypeInfer, bad, frame.CodeBadLength, 0, true)
	}
	if in.MMax >= 2 {
		two := infer(frame.ModeStats, 1, 2) // one query of 2 sets: 2*FB feature bytes
		two[1], two[8] = 2, 1
		c.expectError("INFER of 2 sets one vector short", frame.TypeInfer, two[:len(two)-fb], frame.CodeBadLength, 0, true)
	}

	// Results, bit for bit.
	core, err := fixed.NewCore(bank, hw)
	if err != nil {
		return c.rep, fmt.Errorf("conformance: golden core: %w", err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	randVec := func() []bool { // a random Boolean feature vector
		x := make([]bool, bank.Features)
		for j := range x {
			x[j] = rng.IntN(2) == 1
		}
		return x
	}
	mmax := max(1, min(int(in.MMax), 8))
	for _, mode := range []frame.Mode{frame.ModeStats, frame.ModeSamples, frame.ModeVotes, frame.ModeSums} {
		var reqs []driver.Request
		var xs [][][]bool
		for i := range opts.Queries {
			// Queries of 1..MMAX sets (K below M for some: sets
			// without samples do not run).
			sets := 1 + i%mmax
			var q [][]bool
			var feats []byte
			for range sets {
				x := randVec()
				q = append(q, x)
				feats = frame.PackFeatures(feats, x)
			}
			k := 1 + rng.IntN(min(int(in.KMax), 64))
			if i == 0 && mode == frame.ModeSamples {
				// A response of several fragments.
				k = min(int(in.KMax), (frame.WordsPerFragment*5/2)/bank.TMs+1)
			}
			if i == 0 && mode == frame.ModeVotes {
				k = int(in.KMax) // the largest votes (u32 items if they need them)
			}
			if i%5 == 4 {
				k = 1 + rng.IntN(sets)
			}
			xs = append(xs, q)
			reqs = append(reqs, driver.Request{Index: i, Features: feats, Sets: sets, K: k, Seed: rng.Uint32(), Mode: mode})
		}
		res, err := d.InferAll(ctx, reqs)
		name := fmt.Sprintf("%d INFER results in %v mode (1..%d sets) equal the golden model", len(reqs), mode, mmax)
		if err != nil {
			c.add(name, err)
			continue
		}
		var bad error
		for i, r := range res {
			if r.Err != nil {
				bad = fmt.Errorf("request %d: %w", i, r.Err)
				break
			}
			sums, st, _ := core.RunSets(xs[i], reqs[i].K, reqs[i].Seed, nil)
			want := frame.ResultWords(mode, bank.T, sums, st)
			if !equal(r.Words, want) {
				bad = fmt.Errorf("request %d (%d sets, K %d, seed %d): %d words %v..., golden %d words %v...", i, reqs[i].Sets, reqs[i].K, reqs[i].Seed,
					len(r.Words), head(r.Words), len(want), head(want))
				break
			}
		}
		c.add(name, bad)
	}
	// A multi-vector INFER: vector i runs with seed + i, results in order.
	{
		const count = 3
		var feats []byte
		var xs [][]bool
		for range count {
			x := randVec()
			xs = append(xs, x)
			feats = frame.PackFeatures(feats, x)
		}
		seed := rng.Uint32() | 0xffff0000 // seed + i wraps for some seeds: exercise the carry
		q := frame.InferRequest{Mode: frame.ModeStats, K: uint16(min(int(in.KMax), 7)), Seed: seed, Count: count, Features: feats}
		p := c.expectOK("multi-vector INFER", frame.TypeInfer, q.AppendTo(nil), nil)
		got, _ := frame.Uint32s(nil, p)
		var want []uint32
		for i, x := range xs {
			sums, st, _ := core.Run(x, int(q.K), seed+uint32(i), nil)
			want = append(want, frame.ResultWords(frame.ModeStats, bank.T, sums, st)...)
		}
		if !equal(got, want) {
			c.add("multi-vector INFER: vector i uses seed + i", fmt.Errorf("words %v..., golden %v...", head(got), head(want)))
		} else {
			c.add("multi-vector INFER: vector i uses seed + i", nil)
		}
		// the same vectors in votes mode: count*NC items of ItemBytes each
		q.Mode = frame.ModeVotes
		ib := in.ItemBytes(frame.ModeVotes, int(q.K))
		p = c.expectOK("multi-vector INFER in votes mode", frame.TypeInfer, q.AppendTo(nil), nil)
		got, gerr := frame.Items(nil, p, frame.ModeVotes, ib)
		want = want[:0]
		for i, x := range xs {
			sums, st, _ := core.Run(x, int(q.K), seed+uint32(i), nil)
			want = append(want, frame.ResultWords(frame.ModeVotes, bank.T, sums, st)...)
		}
		if gerr == nil && !equal(got, want) {
			gerr = fmt.Errorf("%d-byte items %v..., golden %v...", ib, head(got), head(want))
		}
		c.add(fmt.Sprintf("multi-vector INFER in votes mode: %d-byte vote items", ib), gerr)

		// Several queries of MMAX sets in one INFER, in sums mode: query
		// i uses seed + i, its sets seeds seed + i + m*0x9E3779B9.
		if M := mmax; M > 1 {
			var mf []byte
			var mq [][][]bool
			for range count {
				var q [][]bool
				for range M {
					x := randVec()
					q = append(q, x)
					mf = frame.PackFeatures(mf, x)
				}
				mq = append(mq, q)
			}
			q := frame.InferRequest{Mode: frame.ModeSums, Sets: uint8(M), K: uint16(min(int(in.KMax), 2*M+1)), Seed: seed, Count: count, Features: mf}
			name := fmt.Sprintf("multi-query INFER of %d sets in sums mode", M)
			p := c.expectOK(name, frame.TypeInfer, q.AppendTo(nil), nil)
			ib := in.ItemBytes(frame.ModeSums, int(q.K))
			got, gerr := frame.Items(nil, p, frame.ModeSums, ib)
			want = want[:0]
			for i, xs := range mq {
				sums, st, _ := core.RunSets(xs, int(q.K), seed+uint32(i), nil)
				want = append(want, frame.ResultWords(frame.ModeSums, bank.T, sums, st)...)
			}
			if gerr == nil && !equal(got, want) {
				gerr = fmt.Errorf("%d-byte items %v..., golden %v...", ib, head(got), head(want))
			}
			c.add(name+": query i uses seed + i, set m seed + i + m*0x9E3779B9", gerr)
		}

		// INFER_WINDOW (protocol version 6): every window of an answer
		// is that slice of the golden answer, in every mode; a window
		// past the end is cut there, one selecting nothing is answered
		// empty. A version-5 board does not know the command.
		if in.Windows() {
			for _, mode := range []frame.Mode{frame.ModeSamples, frame.ModeStats, frame.ModeVotes, frame.ModeSums} {
				q := frame.InferRequest{Mode: mode, K: uint16(min(int(in.KMax), 5)), Seed: seed, Count: count, Features: feats}
				ib := in.ItemBytes(mode, int(q.K))
				var want []uint32
				for i, x := range xs {
					sums, st, _ := core.Run(x, int(q.K), seed+uint32(i), nil)
					want = append(want, frame.ResultWords(mode, bank.T, sums, st)...)
				}
				gold := frame.AppendItems(nil, want, ib)
				n := uint16(len(want))
				var werr error
				var windows []frame.Window
				for _, fc := range [][2]uint16{{0, n}, {0, 1}, {1, 2}, {n / 2, n / 3}, {n - 1, 1}, {n - 2, 7}, {0, n + 100},
					{n, 1}, {n + 5, 3}, {0, 0}, {3, 0}, {0xfff0, 0x20}, {0xffff, 0xffff}, {uint16(rng.UintN(uint(n))), uint16(rng.UintN(uint(n) + 1))}} {
					windows = append(windows, frame.Window{First: fc[0], Count: fc[1]})
				}
				for _, w := range windows {
					rt, p, err := c.d.Exec(ctx, frame.TypeInferWindow, frame.AppendInferWindow(nil, q.AppendTo(nil), w))
					switch wantp := w.Select(gold, ib); {
					case err != nil:
						werr = fmt.Errorf("window [%d, +%d): %w", w.First, w.Count, err)
					case rt != frame.TypeInferWindow.Response():
						werr = fmt.Errorf("window [%d, +%d): response type %v", w.First, w.Count, rt)
					case !bytes.Equal(p, wantp):
						werr = fmt.Errorf("window [%d, +%d) of %d items: % x, golden % x", w.First, w.Count, n, p[:min(len(p), 16)], wantp[:min(len(wantp), 16)])
					}
					if werr != nil {
						break
					}
				}
				c.add(fmt.Sprintf("INFER_WINDOW in %s mode: every window is that slice of the golden answer (%d queries, %d items)", mode, count, n), werr)
			}
			win := func(p []byte) []byte { return frame.AppendInferWindow(nil, p, frame.Window{First: 1, Count: 2}) }
			c.expectError("INFER_WINDOW shorter than its 14-byte header", frame.TypeInferWindow, win(infer(frame.ModeStats, 1, 1))[:13], frame.CodeBadLength, 0, true)
			c.expectError("INFER_WINDOW K = 0", frame.TypeInferWindow, win(infer(frame.ModeStats, 0, 1)), frame.CodeBadK, 0, true)
			c.expectError("INFER_WINDOW without a whole feature vector", frame.TypeInferWindow, win(infer(frame.ModeStats, 1, 0)), frame.CodeBadLength, 0, true)
		} else {
			c.expectError("INFER_WINDOW is unknown to a version-5 board", frame.TypeInferWindow, frame.AppendInferWindow(nil, infer(frame.ModeStats, 1, 1), frame.Window{Count: 1}), frame.CodeUnknownCommand, 0, true)
		}
	}

	// STATUS and RESET_STATUS.
	c.expectOK("RESET_STATUS", frame.TypeResetStatus, nil, []byte{})
	if st, err := d.Status(ctx); err != nil {
		c.add("STATUS after RESET_STATUS", err)
	} else if st.Counters[frame.CounterCRCErrors] != 0 || st.Counters[frame.CounterInferred] != 0 || st.Counters[frame.CounterExecuted] > 2 {
		c.add("STATUS after RESET_STATUS", fmt.Errorf("counters not cleared: %v", st.Map()))
	} else {
		c.add("STATUS after RESET_STATUS", nil)
	}

	// Receive-line accounting: between two STATUS reads the UART receiver
	// finishes exactly the INFO and STATUS frames sent in between (11
	// bytes each), in at least 10 bit times per byte; on Ethernet the UART
	// counts nothing.
	{
		s0, err0 := d.Status(ctx)
		_, err1 := d.Info(ctx)
		s1, err2 := d.Status(ctx)
		err := errors.Join(err0, err1, err2)
		if err == nil {
			db := s1.Counters[frame.CounterUARTBytes] - s0.Counters[frame.CounterUARTBytes]
			dt := s1.Counters[frame.CounterUARTBitTimes] - s0.Counters[frame.CounterUARTBitTimes]
			want := uint32(2 * frame.Overhead)
			if in.BitRate == 0 {
				want = 0
			}
			switch {
			case db != want:
				err = fmt.Errorf("UART bytes counted %d, want %d (INFO + STATUS frames)", db, want)
			case want > 0 && dt < 10*db:
				err = fmt.Errorf("UART bit times %d for %d bytes, want >= %d", dt, db, 10*db)
			}
		}
		c.add("STATUS counters 11-12 count the UART bytes received and the bit times", err)
	}

	// Garbage, then a valid command.
	if opts.Garbage > 0 {
		junk := make([]byte, opts.Garbage)
		for i := range junk {
			junk[i] = byte(rng.Uint32())
			if i%61 == 0 {
				junk[i] = frame.SOF
			}
		}
		var gerr error
		for o := 0; o < len(junk) && gerr == nil; o += frame.MaxFrameLen {
			gerr = t.Send(junk[o:min(o+frame.MaxFrameLen, len(junk))])
		}
		if gerr == nil {
			time.Sleep(50 * time.Millisecond) // let an idle timeout pass
			_, gerr = d.Info(ctx)
		}
		c.add(fmt.Sprintf("INFO answered after %d random bytes", opts.Garbage), gerr)
		if st, err := d.Status(ctx); err == nil && st.Counters[frame.CounterCRCErrors]+st.Counters[frame.CounterFraming]+st.Counters[frame.CounterEthDropped] == 0 {
			c.add("garbage counted as CRC, framing or Ethernet drops", fmt.Errorf("counters %v", st.Map()))
		} else if err == nil {
			c.add("garbage counted as CRC, framing or Ethernet drops", nil)
		}
	}
	return c.rep, nil
}

func equal(a, b []uint32) bool {
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

func head(w []uint32) []uint32 { return w[:min(len(w), 6)] }
