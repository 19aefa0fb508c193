package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/metrics"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/ptm"
	"github.com/ptmhw/ptm/host/driver"
	"github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/transport"
)

// Config configures Run.
type Config struct {
	// K is the number of samples per row (default 100).
	K int
	// Seed is the base seed: row id i uses Seed + i.
	Seed uint32
	// Mode is frame.ModeSamples (default), frame.ModeStats or
	// frame.ModeVotes.
	Mode frame.Mode
	// Labels are the rows' true classes (model class indices), or nil.
	Labels []int
	// RowIDs name the rows (e.g. data-set row numbers) in the per-row
	// results and in the seed derivation; nil means 0, 1, 2, ...
	RowIDs []int
	// Bins is the number of ECE bins (default metrics.DefaultBins).
	Bins int
	// ForceUpload uploads the bank even if the board already holds it.
	ForceUpload bool
	// Driver configures the driver.
	Driver driver.Opts
	// Connect bounds the wait for the board's first answer (INFO): a port
	// from which not a single byte arrived in that time fails with an
	// error wrapping driver.ErrTimeout, instead of after the driver's whole
	// deadline; when bytes did arrive (a noisy link garbling the answers)
	// INFO keeps being retried up to the driver's deadline. 0 means
	// DefaultConnect.
	Connect time.Duration
	// Progress, if set, is called as results arrive (done of total
	// requests): answered or failed, not those left undone because ctx was
	// cancelled.
	Progress func(done, total int)
}

// Num is a float64 that marshals NaN and infinities as JSON null.
type Num float64

// MarshalJSON implements json.Marshaler.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// Row statuses (Row.Status).
const (
	StatusOK       = "ok"       // answered, equal to the golden model: counted in the metrics
	StatusMismatch = "mismatch" // answered, but different from the golden model: not in the metrics
	StatusLost     = "lost"     // no answer (the driver gave up, or the stream failed first)
	StatusNotRun   = "not_run"  // no answer because the caller stopped the stream (its context was cancelled: ptm stream's SIGINT)
)

// Row is one row's result.
type Row struct {
	Row  int    `json:"row"`  // the row id
	Seed uint32 `json:"seed"` // the seed it was run with
	// Status is StatusOK, StatusMismatch, StatusLost or StatusNotRun.
	Status string `json:"status"`
	// Probs and Pred are the board's predictive mean and its class
	// (mismatched rows show the board's answer too); a lost row, or a
	// mismatched one whose answer has the wrong length, has no Probs and
	// Pred -1.
	Probs   []float64 `json:"probs,omitempty"`
	Pred    int       `json:"pred"`
	Label   *int      `json:"label,omitempty"`
	Entropy Num       `json:"entropy"`
	// MutualInfo is null in stats mode.
	MutualInfo Num  `json:"mutual_info"`
	Retries    int  `json:"retries"`
	Mismatch   bool `json:"mismatch_vs_golden,omitempty"`
	// CRCMatched: part of the answer arrived garbled and was verified by
	// its CRC against the golden answer (driver.Request.Expect).
	CRCMatched bool   `json:"verified_by_crc,omitempty"`
	Error      string `json:"error,omitempty"`
}

// Metrics are the test-set uncertainty metrics (golden/metrics.Report),
// over the verified rows only (status "ok"): N of them.
type Metrics struct {
	N                int `json:"n"`
	Bins             int `json:"ece_bins"`
	Accuracy         Num `json:"accuracy"`
	ECE              Num `json:"ece"`
	NLL              Num `json:"nll"`
	Brier            Num `json:"brier"`
	AUROCEntropy     Num `json:"auroc_entropy"`
	AUROCMI          Num `json:"auroc_mi"`
	EntropyCorrect   Num `json:"mean_entropy_correct"`
	EntropyIncorrect Num `json:"mean_entropy_incorrect"`
	MICorrect        Num `json:"mean_mi_correct"`
	MIIncorrect      Num `json:"mean_mi_incorrect"`
}

// Board describes the board a run used.
type Board struct {
	Link      string            `json:"link"`
	Info      frame.Info        `json:"info"`
	Generator string            `json:"generator"`
	Uploaded  bool              `json:"uploaded"`   // false when the board already held the bank
	UploadS   float64           `json:"upload_s"`   // upload wall time
	HashMatch bool              `json:"hash_match"` // INFO hash32 equals the model file's hash prefix
	Counters  map[string]uint32 `json:"counters"`   // STATUS counters accumulated during the stream
	BitRate   int               `json:"line_rate"`  // bits/s used for link_utilization, 0 if unknown
	ModelHash string            `json:"model_hash"` // the model file's hash, when given
	Warnings  []string          `json:"warnings,omitempty"`
	// CountersReset: the board's counters were cleared during the stream;
	// Counters then hold their values since the reset.
	CountersReset bool `json:"counters_reset,omitempty"`
}

// Summary is the outcome of Run. The first eight fields are the figures
// `ptm stream` reports; their JSON names are fixed. Requested = Queries + Lost + NotRun
// and Queries = Verified + Mismatches; the metrics cover the verified
// rows only.
type Summary struct {
	Queries         int     `json:"queries"`              // rows the board answered (verified or mismatched)
	Lost            int     `json:"lost"`                 // rows without an answer (failed, or not run because the stream failed)
	NotRun          int     `json:"not_run"`              // rows without an answer because the caller stopped the stream (context cancelled)
	Duplicated      int     `json:"duplicated"`           // rows that got more than one result
	Mismatches      int     `json:"mismatches_vs_golden"` // answered rows whose words differ from fixed.Core.Run
	Retries         uint64  `json:"retries"`              // resends during the stream, all causes (a window split counts one)
	CRCErrors       uint64  `json:"crc_errors"`           // frames the host's receiver dropped for a bad CRC
	QueriesPerS     float64 `json:"queries_per_s"`        // Queries (answered rows) / WallS
	LinkUtilization float64 `json:"link_utilization"`     // the board's receive line utilization (UART), else 0; see LinkUtilSource

	Requested int `json:"requested"` // rows requested
	Verified  int `json:"verified"`  // answered rows equal to the golden model (status "ok")
	// VerifiedByCRC counts the verified rows of which a response fragment
	// arrived garbled but with its header and CRC intact, the CRC equal to
	// the golden answer's (frame.CRCMatches): the board sent exactly the
	// golden answer. CRCMatched counts such fragments.
	VerifiedByCRC int    `json:"verified_by_crc"`
	CRCMatched    uint64 `json:"crc_matched"`
	// Windows counts the answer windows received (INFER_WINDOW answers:
	// parts of answers that did not go whole, docs/protocol.md section
	// 4); WindowSplits the windows given up after a lost transmission and
	// asked for again in shorter windows. Both 0 on a clean line.
	Windows      uint64 `json:"windows"`
	WindowSplits uint64 `json:"window_splits"`

	FirstMismatch  string       `json:"first_mismatch,omitempty"` // the first mismatch, described
	LinkUtilSource string       `json:"link_utilization_source"`  // "board" (STATUS counters 11-12), "host" (wall-clock estimate) or "" (unknown)
	LinkUtilHost   float64      `json:"link_utilization_host"`    // host-to-board line utilization estimated on the host's wall clock (UART), else 0
	LinkUtilRx     float64      `json:"link_utilization_rx"`      // board-to-host line utilization estimated on the host's wall clock (UART), else 0
	WallS          float64      `json:"wall_s"`                   // wall time of the stream (upload excluded)
	Mode           string       `json:"mode"`                     // samples, stats or votes
	K              int          `json:"k"`                        // samples per row
	Seed           uint32       `json:"seed"`                     // base seed
	FramingErrors  uint64       `json:"framing_errors"`           // frames the host's receiver dropped for a bad length or idle line
	Timeouts       uint64       `json:"timeouts"`                 // resends after a timeout
	Busy           uint64       `json:"busy"`                     // busy answers from the board
	LateDuplicates uint64       `json:"late_duplicates"`          // responses to requests already answered (ignored)
	BytesSent      uint64       `json:"bytes_sent"`               // host to board during the stream
	BytesReceived  uint64       `json:"bytes_received"`           // board to host during the stream
	Board          Board        `json:"board"`                    // the board and its counters
	Driver         driver.Stats `json:"driver"`                   // the driver's counters (whole session)
	Metrics        *Metrics     `json:"metrics,omitempty"`        // when labels were given
	Rows           []Row        `json:"rows"`                     // per row, in input order
	// Unanswered lists what the driver gave up on when its deadline
	// passed (the rows lost by it), or is empty.
	Unanswered []driver.Unanswered `json:"unanswered,omitempty"`
}

// DefaultConnect is Config.Connect's default: long enough for a Verilated
// board on a loaded machine to answer its first INFO, short enough to tell
// a user soon that nothing is there.
const DefaultConnect = 30 * time.Second

// CheckFit checks that a board (its INFO words) can run bank with K
// samples in mode. The error names what differs.
func CheckFit(in *frame.Info, bank *fixed.Bank, k int, mode frame.Mode) error {
	if in.IsConv() {
		return fmt.Errorf("stream: the board serves a convolutional model (%dx%d images), the model is tabular: %v", in.ImgH, in.ImgW, in)
	}
	sh := bank.Shape
	bsh := in.Shape()
	for _, c := range []struct {
		what       string
		board, mdl int
	}{
		{"classes (NC)", bsh.Classes, sh.Classes}, {"TMs (NT)", bsh.TMs, sh.TMs}, {"clauses per TM (m)", bsh.Clauses, sh.Clauses},
		{"Boolean features (o)", bsh.Features, sh.Features}, {"T", bsh.T, sh.T}, {"probability bits (B)", int(in.B), bank.Bits},
	} {
		if c.board != c.mdl {
			return fmt.Errorf("stream: the board is built for %d %s, the model has %d (board: %v)", c.board, c.what, c.mdl, in)
		}
	}
	hw := in.HW()
	if err := hw.Check(sh); err != nil {
		return fmt.Errorf("stream: the board's lanes do not fit the model: %w", err)
	}
	if d := hw.LayoutOf(sh).Depth; d != int(in.D) {
		return fmt.Errorf("stream: the board reports bank depth D = %d, but %d clause x %d literal lanes need %d for this shape", in.D, in.LC, in.LL, d)
	}
	if k < 1 || k > int(in.KMax) || k > 0xffff {
		return fmt.Errorf("stream: K = %d, the board accepts 1..%d", k, in.KMax)
	}
	if n := in.ResultBytes(mode, k); n > frame.MaxResponseBytes {
		return fmt.Errorf("stream: K = %d in %v mode gives %d result bytes per row, more than one response can carry (%d); use sums or stats mode or a smaller K", k, mode, n, frame.MaxResponseBytes)
	}
	return nil
}

// Run streams rows (raw feature vectors, the booleanizer's input) through
// the board behind t with the model of f. hash is the model file's hash
// (modelfile.Read's second result) or "". It returns the summary; on an
// error after streaming began the partial summary is returned too.
//
// Its steps: check the configuration and encode the rows (checkConfig,
// encodeRows), connect (connect), fit the model to the board (boardBank,
// CheckFit), plan the requests (subRequests), upload the bank if needed
// (upload), describe the board (describeBoard), compute the golden
// answers (goldenAnswers), stream (streamAll), take the link's and the
// board's figures (linkFigures, boardCounters), and check every row
// against the golden answers (checkRows).
func Run(ctx context.Context, t transport.Transport, f *modelfile.File, hash string, rows [][]float64, cfg Config) (*Summary, error) {
	cfg, err := checkConfig(f, rows, cfg)
	if err != nil {
		return nil, err
	}
	// Booleanize first: a bad row is an error before the board is touched.
	enc, err := encodeRows(f, rows, cfg)
	if err != nil {
		return nil, err
	}
	d := driver.New(t, cfg.Driver)
	defer d.Close()
	s := &Summary{Requested: len(rows), Mode: cfg.Mode.String(), K: cfg.K, Seed: cfg.Seed}
	s.Board.Link = t.Name()
	s.Board.ModelHash = hash

	in, err := connect(ctx, d, t, cfg)
	if err != nil {
		return nil, err
	}
	bank, err := boardBank(f, in)
	if err != nil {
		return nil, err
	}
	if err := CheckFit(in, bank, cfg.K, cfg.Mode); err != nil {
		return nil, err
	}
	// A model with a sampled input encoding of M sets sends each row as
	// one query of M sets (docs/protocol.md section 4); a board whose
	// MMAX is below M gets one request per set instead, with the set's
	// share of the K samples and its seed (docs/fixed-point.md section
	// 8), and the answers are combined per row.
	M := f.Sets().M()
	subs := subRequests(enc, M, int(in.MMax), cfg)
	if M > 1 && int(in.MMax) < M {
		s.Board.Warnings = append(s.Board.Warnings, fmt.Sprintf("the board runs at most %d sets per query (INFO MMAX), the model has %d: one request per set", in.MMax, M))
	}
	if in, err = upload(ctx, d, s, in, frame.BankWords(bank, in.HW()), cfg); err != nil {
		return nil, err
	}
	describeBoard(s, t, in, hash)
	core, err := fixed.NewCore(bank, in.HW())
	if err != nil {
		return nil, fmt.Errorf("stream: golden core: %w", err)
	}
	want, err := goldenAnswers(core, subs, cfg, bank.T)
	if err != nil {
		return nil, err
	}
	status0, err := d.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("stream: %w", err)
	}

	link0, drv0 := t.Stats(), d.Stats()
	start := time.Now()
	results, streamErr := streamAll(ctx, d, subs, want, cfg)
	wall := time.Since(start)
	linkFigures(s, t.Stats().Sub(link0), d.Stats(), drv0, wall)
	boardCounters(ctx, s, d, in, status0, d.Stats().Completed-drv0.Completed)

	mapping := rowMapping(s, f.Mapping, cfg)
	mv := modelView{classes: bank.Classes, tms: bank.TMs, sets: M, probs: func(sums []int, K int, mp ptm.Mapping) [][]float64 {
		return f.Model.SumsToProbs(sums, K, mp)
	}}
	if err := checkRows(s, mv, cfg, mapping, len(rows), subs, results, want, streamErr); err != nil {
		return s, err
	}
	if wall > 0 {
		s.QueriesPerS = float64(s.Queries) / wall.Seconds()
	}
	if streamErr != nil {
		return s, fmt.Errorf("stream: %w", streamErr)
	}
	return s, nil
}

// checkConfig fills in cfg's defaults and checks it against f and rows.
func checkConfig(f *modelfile.File, rows [][]float64, cfg Config) (Config, error) {
	if cfg.K == 0 {
		cfg.K = 100
	}
	if f == nil || f.Bank == nil || f.Booleanizer == nil || f.Model == nil {
		return cfg, fmt.Errorf("stream: the model file has no model, bank or booleanizer")
	}
	return checkCommon(cfg, len(rows), f.Bank.Classes)
}

// checkCommon fills in cfg's defaults (but K) and checks it against the
// number of rows and the model's classes.
func checkCommon(cfg Config, rows, classes int) (Config, error) {
	if cfg.Bins <= 0 {
		cfg.Bins = metrics.DefaultBins
	}
	if err := metrics.CheckBins(cfg.Bins); err != nil {
		return cfg, fmt.Errorf("stream: %w", err)
	}
	if cfg.Labels != nil && len(cfg.Labels) != rows {
		return cfg, fmt.Errorf("stream: %d labels for %d rows", len(cfg.Labels), rows)
	}
	if cfg.RowIDs != nil && len(cfg.RowIDs) != rows {
		return cfg, fmt.Errorf("stream: %d row ids for %d rows", len(cfg.RowIDs), rows)
	}
	if cfg.Mode > frame.ModeSums {
		return cfg, fmt.Errorf("stream: unknown mode %d", cfg.Mode)
	}
	for i, y := range cfg.Labels {
		if y < 0 || y >= classes {
			return cfg, fmt.Errorf("stream: row %d has label %d, the model has %d classes", i, y, classes)
		}
	}
	return cfg, nil
}

// connect reads the board's INFO, giving up after cfg.Connect when not a
// byte arrived (no board there); a port that answers, only garbled so
// far, is waited for up to the driver's deadline.
func connect(ctx context.Context, d *driver.Driver, t transport.Transport, cfg Config) (*frame.Info, error) {
	connect := cfg.Connect
	if connect <= 0 {
		connect = DefaultConnect
	}
	cctx, cancelConnect := context.WithTimeout(ctx, connect)
	in, err := d.Info(cctx)
	cancelConnect()
	if err != nil && ctx.Err() == nil && cctx.Err() != nil {
		if t.Stats().BytesRecv > 0 {
			// Something answers, only garbled so far (a noisy link): wait
			// for INFO as for any request, up to the driver's deadline.
			in, err = d.Info(ctx)
		} else {
			err = fmt.Errorf("no answer to INFO within %v: %w", connect, driver.ErrTimeout)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("stream: %w", err)
	}
	return in, nil
}

// boardBank returns the bank the board runs: the model file's, or, for a
// board built for another probability width, the model's float SPVs
// quantized to its width (the model file keeps one quantization; any
// other is derived exactly as fixed.Quantize specifies).
func boardBank(f *modelfile.File, in *frame.Info) (*fixed.Bank, error) {
	bank := f.Bank
	if b := int(in.B); b != bank.Bits && fixed.CheckBits(b) == nil {
		q, err := fixed.Quantize(f.Model, b)
		if err != nil {
			return nil, fmt.Errorf("stream: quantizing the model to the board's %d bits: %w", b, err)
		}
		bank = q
	}
	return bank, nil
}

// upload loads the bank words onto the board unless it already holds
// them (INFO's CRC) or cfg.ForceUpload, and returns the INFO read after
// the upload.
func upload(ctx context.Context, d *driver.Driver, s *Summary, in *frame.Info, words []uint16, cfg Config) (*frame.Info, error) {
	crc := frame.WordsCRC(words)
	if !cfg.ForceUpload && in.Loaded == 1 && in.ModelCRC == crc {
		return in, nil
	}
	start := time.Now()
	if err := d.Load(ctx, words); err != nil {
		return nil, fmt.Errorf("stream: uploading %d words: %w", len(words), err)
	}
	s.Board.Uploaded, s.Board.UploadS = true, time.Since(start).Seconds()
	in, err := d.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("stream: %w", err)
	}
	if in.Loaded != 1 || in.ModelCRC != crc {
		return nil, fmt.Errorf("stream: after the upload the board reports loaded = %d, CRC 0x%08x; want 1, 0x%08x", in.Loaded, in.ModelCRC, crc)
	}
	return in, nil
}

// describeBoard records the board's INFO, generator version, hash check
// and line rate in s.
func describeBoard(s *Summary, t transport.Transport, in *frame.Info, hash string) {
	s.Board.Info = *in
	s.Board.Generator = fmt.Sprintf("%d.%d.%d", in.Generator>>16, in.Generator>>8&0xff, in.Generator&0xff)
	if len(hash) >= 8 {
		var h32 uint32
		if _, err := fmt.Sscanf(hash[:8], "%08x", &h32); err == nil {
			s.Board.HashMatch = h32 == in.Hash32
			if !s.Board.HashMatch {
				s.Board.Warnings = append(s.Board.Warnings, fmt.Sprintf("the board was generated for model hash %08x, this model file is %s (the uploaded bank is what runs)", in.Hash32, hash[:8]))
			}
		}
	}
	s.Board.BitRate = t.Stats().LineRate
	if s.Board.BitRate == 0 {
		s.Board.BitRate = int(in.BitRate)
	}
}

// goldenAnswers runs the golden fixed-point core for every request: the
// result words the board must send (fixed.Core.RunSets, docs/fixed-point.md).
// They are computed before streaming: the driver uses them to verify a
// garbled answer by its CRC (driver.Request.Expect), and checkRows
// compares every answer with them.
func goldenAnswers(core *fixed.Core, subs []subRequest, cfg Config, T int) ([][]uint32, error) {
	want := make([][]uint32, len(subs))
	var sums []int32
	for j, sb := range subs {
		var st fixed.Stats
		var err error
		sums, st, err = core.RunSets(sb.xs, sb.k, sb.seed, sums)
		if err != nil {
			return nil, fmt.Errorf("stream: golden run of row %d set %d: %w", rowID(cfg, sb.row), sb.set, err)
		}
		want[j] = frame.ResultWords(cfg.Mode, T, sums, st)
	}
	return want, nil
}

// streamAll sends every request through the driver's pipelined stream and
// returns the results per request (index j of subs; more than one is a
// duplicate) and the stream's error.
func streamAll(ctx context.Context, d *driver.Driver, subs []subRequest, want [][]uint32, cfg Config) ([][]driver.Result, error) {
	results := make([][]driver.Result, len(subs))
	reqs := make(chan driver.Request)
	res := make(chan driver.Result, 64)
	go func() {
		defer close(reqs)
		// A board that answers windows (protocol version 6) gets every
		// answer through a noisy line in windows the line carries; the
		// golden answer's CRC is the last resort of a version-5 board only.
		in := d.BoardInfo()
		byCRC := in == nil || !in.Windows() || d.Opts().NoWindows
		for j, sb := range subs {
			r := driver.Request{Index: j, Features: sb.feats, Sets: len(sb.xs), K: sb.k, Seed: sb.seed, Mode: cfg.Mode}
			if byCRC {
				r.Expect = want[j]
			}
			select {
			case reqs <- r:
			case <-ctx.Done():
				return
			}
		}
	}()
	errc := make(chan error, 1)
	go func() { errc <- d.Stream(ctx, reqs, res) }()
	n := 0
	for r := range res {
		if r.Index >= 0 && r.Index < len(subs) {
			results[r.Index] = append(results[r.Index], r)
		}
		// A request the caller stopped (its context cancelled) was not
		// done: the progress counts the answered and the failed ones.
		if ctx.Err() != nil && errors.Is(r.Err, ctx.Err()) {
			continue
		}
		n++
		if cfg.Progress != nil {
			cfg.Progress(n, len(subs))
		}
	}
	return results, <-errc
}

// linkFigures records the stream's wall time, the host's line
// utilization estimates and the driver's and link's counters in s.
func linkFigures(s *Summary, link transport.Stats, drv, drv0 driver.Stats, wall time.Duration) {
	link.LineRate = s.Board.BitRate
	s.WallS = wall.Seconds()
	s.LinkUtilHost, s.LinkUtilRx = link.TxUtilization(wall), link.RxUtilization(wall)
	s.LinkUtilization = s.LinkUtilHost
	if s.LinkUtilHost > 0 {
		s.LinkUtilSource = "host"
	}
	s.Windows = drv.Windows - drv0.Windows
	s.WindowSplits = drv.Splits - drv0.Splits
	s.Retries = drv.Retries - drv0.Retries + s.WindowSplits
	s.Timeouts = drv.Timeouts - drv0.Timeouts
	s.Busy = drv.Busy - drv0.Busy
	s.LateDuplicates = drv.Stray - drv0.Stray
	s.CRCMatched = drv.CRCMatched - drv0.CRCMatched
	s.CRCErrors, s.FramingErrors = link.CRCErrors, link.FramingErrors
	s.BytesSent, s.BytesReceived = link.BytesSent, link.BytesRecv
	s.Driver = drv
}

// boardCounters reads STATUS after the stream and records the board's
// counters over the stream (against status0, read before it) and, on a
// UART, the board's own measure of its receive line (docs/protocol.md
// section 5). answered is the number of requests the board answered
// during the stream (driver.Stats.Completed). When the counters were
// cleared meanwhile (a RESET_STATUS from another host, a board reset;
// counterDeltas tells) they cover only the time since, are reported as
// they are, with a warning, and the line utilization is the host's
// estimate (a difference across a reset would be meaningless).
func boardCounters(ctx context.Context, s *Summary, d *driver.Driver, in *frame.Info, status0 frame.Status, answered uint64) {
	st, err := d.Status(ctx)
	if err != nil {
		return
	}
	deltas, reset := counterDeltas(status0, st, answered, s.WallS, s.Board.BitRate, in.BitRate != 0)
	s.Board.Counters = map[string]uint32{}
	for k, v := range deltas.Counters {
		s.Board.Counters[frame.CounterName(k)] = v
	}
	if reset {
		s.Board.CountersReset = true
		s.Board.Warnings = append(s.Board.Warnings, CountersResetWarning)
		return
	}
	bytes, ticks := deltas.Counters[frame.CounterUARTBytes], deltas.Counters[frame.CounterUARTBitTimes]
	if in.BitRate != 0 && ticks > 0 && st.Counters[frame.CounterUARTBitTimes] != math.MaxUint32 {
		s.LinkUtilization, s.LinkUtilSource = 10*float64(bytes)/float64(ticks), "board"
	}
}

// CountersResetWarning is the warning a Summary carries when the board's
// STATUS counters were cleared during the stream (Board.CountersReset).
const CountersResetWarning = "board counters reset during the stream (a RESET_STATUS from another host, or a board reset): board.counters cover only the time since, and the line utilization is the host's estimate"

// minFrameBytes is the size of the smallest frame (an empty payload): a
// board that answered a request received at least this many bytes of it.
const minFrameBytes = 11

// counterDeltas returns the board's counters over a stream, from the
// STATUS read before it (before) and after it (after), and whether the
// counters were cleared in between. Counters wrap modulo 2^32, so a
// difference is taken modulo 2^32; a reset shows in two ways:
//
//   - a counter below its value before the stream (a reset late in the
//     stream, or early but with few counts since), unless its difference
//     modulo 2^32 is one the stream could have counted (wrapped: at the
//     line's bit rate lineRate for the bit times, at its byte rate for
//     the others on a UART);
//   - fewer counts than the stream must have caused, for a reset early in
//     the stream after which the counters grew past their values before:
//     every request the board answered (answered) was received whole and
//     executed at least once, so a board that keeps counter 0 executed at
//     least answered frames, and a board streamed to over its UART (uart:
//     INFO word 17 is not 0) received at least answered * 11 bytes.
//
// After a reset the counters are the board's values since it (after);
// otherwise the differences.
func counterDeltas(before, after frame.Status, answered uint64, wallS float64, lineRate int, uart bool) (frame.Status, bool) {
	reset := false
	var d frame.Status
	for k, v := range after.Counters {
		// Every counter but the bit times counts at most one event per
		// byte on the line (a frame, a core run, an error is at least a
		// byte), so on a UART it can wrap only when the stream's bytes
		// reach 2^32 (days at 115,200 baud, 4 hours at 3 Mbaud). Over
		// Ethernet that bound would allow a wrap in 5 minutes, and no
		// counter wraps in hours there: one below its value before is a
		// reset.
		rate := 0
		if uart {
			rate = lineRate / 10
		}
		if k == frame.CounterUARTBitTimes {
			rate = lineRate
		}
		if v < before.Counters[k] && !wrapped(before.Counters[k], v, wallS, rate) {
			reset = true
		}
		d.Counters[k] = v - before.Counters[k]
	}
	// Counter 0 is optional (STATUS_ALL = 0 boards read 0): a board keeps
	// it when it counted the STATUS read before the stream.
	if before.Counters[frame.CounterExecuted] != 0 && uint64(d.Counters[frame.CounterExecuted]) < answered {
		reset = true
	}
	if uart && uint64(d.Counters[frame.CounterUARTBytes]) < answered*minFrameBytes {
		reset = true
	}
	if reset {
		return after, true
	}
	return d, false
}

// wrapped reports whether a counter found at after, below its value
// before the stream, may have wrapped modulo 2^32 rather than been
// cleared: its difference modulo 2^32 is no more than the stream's wall
// time allows at rate counts per second (with a margin). The bit-time
// counter wraps after about 10 hours at 115,200 baud, 24 minutes at 3
// Mbaud; the bytes received ten times later. A reset late in the stream
// leaves a difference near 2^32, which no stream of less than days
// explains.
func wrapped(before, after uint32, wallS float64, rate int) bool {
	if rate <= 0 {
		return false
	}
	return float64(after-before) <= wallS*float64(rate)*1.5
}

// rowMapping is the probability mapping of the rows: the model file's.
// Stats and votes modes carry vote counts only, so a softmax model is
// reported with its plain vote there (and a warning); samples and sums
// modes carry every sample's class sums (clipped in sums mode, as the
// mappings use them).
func rowMapping(s *Summary, mapping ptm.Mapping, cfg Config) ptm.Mapping {
	if err := mapping.Validate(); err != nil {
		mapping = ptm.Mapping{Kind: ptm.Vote}
	}
	if !perSample(cfg.Mode) && mapping.Kind != ptm.Vote {
		s.Board.Warnings = append(s.Board.Warnings, fmt.Sprintf("%v mode carries vote counts only: the model's %s mapping is replaced by the plain vote", cfg.Mode, mapping.Kind))
		mapping = ptm.Mapping{Kind: ptm.Vote}
	}
	return mapping
}

// perSample reports whether mode carries every sample's class sums.
func perSample(m frame.Mode) bool { return m == frame.ModeSamples || m == frame.ModeSums }

// modelView is what checking the rows needs of a model, tabular or
// convolutional: its classes, TMs (class sums per sample), threshold sets
// and the per-sample probabilities of K samples of class sums.
type modelView struct {
	classes, tms, sets int
	probs              func(sums []int, K int, mp ptm.Mapping) [][]float64
}

// checkRows checks every row's answers against the golden answers, fills
// s.Rows and the counts, and computes the metrics over the verified rows.
func checkRows(s *Summary, mv modelView, cfg Config, mapping ptm.Mapping, nrows int, subs []subRequest,
	results [][]driver.Result, want [][]uint32, streamErr error) error {
	var de *driver.DeadlineError
	if errors.As(streamErr, &de) {
		s.Unanswered = de.Unanswered
		for k := range s.Unanswered { // driver indices are sub-request positions: name the rows
			if j := s.Unanswered[k].Index; j >= 0 && j < len(subs) {
				s.Unanswered[k].Index = rowID(cfg, subs[j].row)
			}
		}
	}
	rowSubs := make([]int, nrows+1) // subs of row i: rowSubs[i]..rowSubs[i+1]-1
	for _, sb := range subs {
		rowSubs[sb.row+1]++
	}
	for i := range nrows {
		rowSubs[i+1] += rowSubs[i]
	}
	var qs []metrics.QueryStats
	var labels []int
	s.Rows = make([]Row, nrows)
	for i := range nrows {
		row := &s.Rows[i]
		q, ok := checkRow(s, row, mv, cfg, mapping, i, subs[rowSubs[i]:rowSubs[i+1]], results[rowSubs[i]:rowSubs[i+1]], want[rowSubs[i]:rowSubs[i+1]], streamErr)
		if ok && cfg.Labels != nil {
			qs = append(qs, q)
			labels = append(labels, cfg.Labels[i])
		}
	}
	if cfg.Labels != nil {
		rep := metrics.Evaluate(qs, labels, cfg.Bins)
		s.Metrics = &Metrics{N: rep.N, Bins: cfg.Bins, Accuracy: Num(rep.Accuracy), ECE: Num(rep.ECE), NLL: Num(rep.NLL), Brier: Num(rep.Brier),
			AUROCEntropy: Num(rep.AUROCEntropy), AUROCMI: Num(rep.AUROCMI), EntropyCorrect: Num(rep.EntropyCorrect), EntropyIncorrect: Num(rep.EntropyIncorrect),
			MICorrect: Num(rep.MICorrect), MIIncorrect: Num(rep.MIIncorrect)}
	}
	return nil
}

// checkRow checks row i's answers (one, or one per set on a board with
// too small an MMAX) word for word against the golden answers, then
// combines them (samples concatenated in set order, vote counts added).
// A row with any request unanswered is lost. It reports the row's query
// statistics and whether the row is verified (status "ok").
func checkRow(s *Summary, row *Row, mv modelView, cfg Config, mapping ptm.Mapping, i int,
	subs []subRequest, results [][]driver.Result, want [][]uint32, streamErr error) (metrics.QueryStats, bool) {
	row.Row, row.Seed, row.Pred = rowID(cfg, i), seedOf(cfg, i), -1
	if cfg.Labels != nil {
		y := cfg.Labels[i]
		row.Label = &y
	}
	M := mv.sets
	var isums []int
	votes := make([]float64, mv.classes)
	lost, malformed := "", ""
	for j, sb := range subs {
		rs := results[j]
		if len(rs) > 1 {
			s.Duplicated++
		}
		if len(rs) == 0 || rs[0].Err != nil {
			if lost == "" {
				switch {
				case len(rs) > 0:
					lost = rs[0].Err.Error()
				case streamErr != nil:
					lost = fmt.Sprintf("not run: the stream stopped: %v", streamErr)
				default:
					lost = "no result"
				}
				if len(sb.xs) < M {
					lost = fmt.Sprintf("set %d: %s", sb.set, lost)
				}
			}
			continue
		}
		r := rs[0]
		row.Retries += r.Retries
		if r.CRCMatched > 0 {
			row.CRCMatched = true
		}
		if k := firstDiff(r.Words, want[j]); k >= 0 {
			row.Mismatch = true
			if s.FirstMismatch == "" {
				s.FirstMismatch = describeMismatch(row.Row, sb.seed, r, want[j], k, mv, cfg.Mode)
			}
			if len(r.Words) != len(want[j]) { // no probabilities from a malformed answer
				malformed = fmt.Sprintf("%d result words, want %d", len(r.Words), len(want[j]))
				continue
			}
		}
		if perSample(cfg.Mode) {
			for _, w := range r.Words {
				isums = append(isums, int(int32(w)))
			}
		} else {
			for c := range votes {
				votes[c] += float64(r.Words[c])
			}
		}
	}
	if lost != "" && errors.Is(streamErr, context.Canceled) {
		// Stopped by the caller (SIGINT), not lost by the link or board.
		s.NotRun++
		row.Status, row.Error, row.Mismatch, row.CRCMatched = StatusNotRun, lost, false, false
		row.Entropy, row.MutualInfo = Num(math.NaN()), Num(math.NaN())
		return metrics.QueryStats{}, false
	}
	if lost != "" {
		s.Lost++
		row.Status, row.Error, row.Mismatch, row.CRCMatched = StatusLost, lost, false, false
		row.Entropy, row.MutualInfo = Num(math.NaN()), Num(math.NaN())
		return metrics.QueryStats{}, false
	}
	s.Queries++
	row.Status = StatusOK
	if row.Mismatch {
		s.Mismatches++
		row.Status = StatusMismatch
	}
	if malformed != "" {
		row.Error = malformed
		row.Entropy, row.MutualInfo = Num(math.NaN()), Num(math.NaN())
		return metrics.QueryStats{}, false
	}
	var q metrics.QueryStats
	if perSample(cfg.Mode) {
		q = metrics.Query(mv.probs(isums, cfg.K, mapping))
	} else {
		// The vote mapping's predictive mean, exactly, from the vote
		// counts: (1-e) * votes/(K*U) + e/NC.
		U := float64(fixed.VoteUnit(mv.classes))
		mean := make([]float64, mv.classes)
		e := mapping.Smoothing
		for c := range mean {
			mean[c] = (1-e)*votes[c]/(float64(cfg.K)*U) + e/float64(mv.classes)
		}
		q = statsQuery(mean)
	}
	row.Probs, row.Pred = q.Mean, q.Pred
	row.Entropy, row.MutualInfo = Num(q.Entropy), Num(q.MutualInfo)
	if row.Status != StatusOK {
		return q, false // a wrong answer says nothing about the model
	}
	s.Verified++
	if row.CRCMatched {
		s.VerifiedByCRC++
	}
	return q, true
}

// subRequest is one INFER request of a row: a query of its sets set ..
// set+len(xs)-1 (all of them, unless the board's MMAX is too small).
type subRequest struct {
	row, set int
	k        int
	seed     uint32
	xs       [][]bool
	feats    []byte
}

// encodeRows encodes every row with every set of the model's encoding.
func encodeRows(f *modelfile.File, rows [][]float64, cfg Config) ([][][]bool, error) {
	enc := make([][][]bool, len(rows))
	for i, r := range rows {
		xs, err := f.EncodeSets(r)
		if err != nil {
			return nil, fmt.Errorf("stream: row %d: %w", rowID(cfg, i), err)
		}
		enc[i] = xs
	}
	return enc, nil
}

// subRequests returns the requests of the encoded rows, in row order: one
// query of all M sets per row when the board takes M sets (mmax >= M),
// else one request per set with its share of the samples and its seed
// (sets with no sample left out), sets in order within a row.
func subRequests(enc [][][]bool, M, mmax int, cfg Config) []subRequest {
	var subs []subRequest
	for i, xs := range enc {
		if M <= mmax {
			var feats []byte
			for _, x := range xs {
				feats = frame.PackFeatures(feats, x)
			}
			subs = append(subs, subRequest{row: i, k: cfg.K, seed: seedOf(cfg, i), xs: xs, feats: feats})
			continue
		}
		for m, x := range xs {
			k := fixed.SetK(cfg.K, M, m)
			if k == 0 {
				continue
			}
			subs = append(subs, subRequest{row: i, set: m, k: k, seed: fixed.SubSeed(seedOf(cfg, i), m), xs: [][]bool{x}, feats: frame.PackFeatures(nil, x)})
		}
	}
	return subs
}

func rowID(cfg Config, i int) int {
	if cfg.RowIDs != nil {
		return cfg.RowIDs[i]
	}
	return i
}

func seedOf(cfg Config, i int) uint32 { return cfg.Seed + uint32(rowID(cfg, i)) }

// firstDiff returns the first index where a and b differ (a length
// difference counts at the shorter length), or -1.
func firstDiff(a, b []uint32) int {
	for k := range min(len(a), len(b)) {
		if a[k] != b[k] {
			return k
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

func describeMismatch(id int, seed uint32, r driver.Result, want []uint32, k int, b modelView, mode frame.Mode) string {
	if k >= len(r.Words) || k >= len(want) {
		return fmt.Sprintf("row %d (seed %d, seq %d): the board sent %d words, the golden model gives %d", id, seed, r.Seq, len(r.Words), len(want))
	}
	what := fmt.Sprintf("word %d", k)
	if mode == frame.ModeSamples || mode == frame.ModeSums {
		what += fmt.Sprintf(" (sample %d, class sum of TM %d)", k/b.tms, k%b.tms)
	} else if mode == frame.ModeVotes {
		what += fmt.Sprintf(" (votes of class %d)", k)
	} else {
		switch {
		case k < b.classes:
			what += fmt.Sprintf(" (votes of class %d)", k)
		case k < b.classes+b.tms:
			what += fmt.Sprintf(" (clipped sum of TM %d)", k-b.classes)
		default:
			what += fmt.Sprintf(" (sum of squares of TM %d)", k-b.classes-b.tms)
		}
	}
	return fmt.Sprintf("row %d (seed %d, seq %d): %s is %d (0x%08x), the golden model gives %d (0x%08x)", id, seed, r.Seq, what,
		int32(r.Words[k]), r.Words[k], int32(want[k]), want[k])
}

// statsQuery builds the per-query metrics that the vote totals allow: the
// mean and its entropy; the per-sample terms are unknown (NaN).
func statsQuery(mean []float64) metrics.QueryStats {
	q := metrics.QueryStats{Mean: mean, Entropy: metrics.Entropy(mean), ExpectedEntropy: math.NaN(), MutualInfo: math.NaN(), StdMean: math.NaN()}
	q.Pred, q.Conf = 0, mean[0]
	for c, v := range mean {
		if v > q.Conf {
			q.Pred, q.Conf = c, v
		}
	}
	return q
}
