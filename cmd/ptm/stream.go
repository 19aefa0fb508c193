package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strings"

	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/host/driver"
	"github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/stream"
	"github.com/ptmhw/ptm/host/transport"
	"github.com/ptmhw/ptm/internal/outfile"
)

func init() {
	register("stream", "load a model onto a board and stream a data set through it (UART or Ethernet)", cmdStream)
}

// streamJSON is the summary `ptm stream --json` prints: the figures the
// issue names first, then the uncertainty metrics.
type streamJSON struct {
	Queries         int             `json:"queries"`
	Requested       int             `json:"requested"`
	Verified        int             `json:"verified"`
	VerifiedByCRC   int             `json:"verified_by_crc"`
	Lost            int             `json:"lost"`
	NotRun          int             `json:"not_run,omitempty"`
	Duplicated      int             `json:"duplicated"`
	Mismatches      int             `json:"mismatches_vs_golden"`
	Retries         uint64          `json:"retries"`
	Windows         uint64          `json:"windows"`
	WindowSplits    uint64          `json:"window_splits"`
	CRCErrors       uint64          `json:"crc_errors"`
	QueriesPerS     float64         `json:"queries_per_s"`
	LinkUtilization float64         `json:"link_utilization"`
	LinkUtilSource  string          `json:"link_utilization_source"`
	LinkUtilHost    float64         `json:"link_utilization_host"`
	LinkUtilRx      float64         `json:"link_utilization_rx"`
	FirstMismatch   string          `json:"first_mismatch,omitempty"`
	Link            string          `json:"link"`
	Mode            string          `json:"mode"`
	K               int             `json:"k"`
	Uploaded        bool            `json:"uploaded"`
	UploadS         float64         `json:"upload_s"`
	WallS           float64         `json:"wall_s"`
	Metrics         *stream.Metrics `json:"metrics,omitempty"`
	// CountersReset: the board's STATUS counters were cleared during the
	// stream (stream.Board.CountersReset); Warnings are the run's
	// warnings (stream.Board.Warnings).
	CountersReset bool     `json:"board_counters_reset,omitempty"`
	Warnings      []string `json:"warnings,omitempty"`
	// Unanswered names what the driver gave up on at its deadline.
	Unanswered []driver.Unanswered `json:"unanswered,omitempty"`
}

func cmdStream(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("stream", "--uart PATH[@BAUD] | --eth IFACE[/BOARDMAC] [--uart ... --eth ...] --model MODEL --data DATA [--samples K] [--json]", stderr)
	var uarts, eths linkFlag
	fs.Var(&uarts, "uart", "serial port (or the Verilated board's pseudo-terminal), optionally @baud (default 115200); repeat --uart and --eth to spread the rows over several boards")
	fs.Var(&eths, "eth", "network interface for raw Ethernet, optionally /board-MAC")
	model := fs.String("model", "", "model `file`")
	data := fs.String("data", "", "data set: iris, wine, breast-cancer, xor, xor-noisy, xor-classic, mnist, fashion-mnist, a CSV file, or a folder of IDX files (docs/howto-image-data.md)")
	label := fs.String("label", "", "label column of a CSV file (default: the last column)")
	split := fs.String("split", "test", "rows to stream: test, train (as recorded in the model) or all")
	K := fs.Int("samples", 100, "samples K per query (a convolutional model: default the K its file records)")
	mode := fs.String("mode", "sums", "result mode: sums (every sample's clipped class sums, one byte each: the model's own mapping, exact entropy and mutual information), samples (the same as u32 raw sums), stats (vote counts and sums: the plain vote mapping) or votes (vote counts only: the smallest responses, for throughput)")
	seed := fs.Uint("seed", 1, "base seed: row i is sampled with seed+i")
	asJSON := fs.Bool("json", false, "print the summary as one JSON object")
	out := fs.String("out", "", "write the full result (summary and per-row results) as JSON to this `file`")
	force := fs.Bool("force-upload", false, "upload the model even if the board already holds it")
	testData := fs.String("test-data", "", "stream every row of this separate test `file` (CSV or built-in name) instead of --data and --split")
	limit := fs.Int("limit", 0, "stream only the first `N` rows of the split (0: all); `ptm eval --limit N` evaluates the same rows")
	ood := fs.String("ood", "", "convolutional models: stream the rows of this out-of-distribution data set instead of --data (its labels ignored), each with seed --seed + 0x5bd1e995 + row as `ptm eval --ood` samples them")
	oodSplit := fs.String("ood-split", "test", "rows of --ood: test or train (its predefined split) or all")
	connect := fs.Duration("connect", stream.DefaultConnect, "give up when the board has not answered its first INFO for this long (no board on the port)")
	deadline := fs.Duration("deadline", driver.DefaultDeadline, "give up on a query (or an upload) the board has not answered for this long, resending meanwhile with an adaptive timeout; the report names what was not answered")
	if err := parse(fs, args); err != nil {
		return err
	}
	if len(uarts)+len(eths) == 0 {
		return fmt.Errorf("%w: --uart or --eth is required (one per board)", errUsage)
	}
	uart, eth := uarts.one(), eths.one()
	if _, err := linkSpecs(uarts, eths); err != nil {
		return err
	}
	if isSet(fs, "ood-split") && *ood == "" {
		return fmt.Errorf("%w: --ood-split needs --ood", errUsage)
	}
	if *ood != "" && (*data != "" || *testData != "" || isSet(fs, "split")) {
		return fmt.Errorf("%w: --ood replaces --data, --test-data and --split (it streams the rows of --ood-split)", errUsage)
	}
	if *model == "" || (*data == "" && *testData == "" && *ood == "") {
		return fmt.Errorf("%w: --model and --data are required", errUsage)
	}
	if err := checkTestData(fs, *data, *testData); err != nil {
		return err
	}
	if *limit < 0 {
		return fmt.Errorf("%w: --limit %d, want >= 0 (0: all rows)", errUsage, *limit)
	}
	if err := checkFileOutput(pathFlag{"--out", *out}, pathFlag{"--model", *model}, pathFlag{"--data", *data}, pathFlag{"--test-data", *testData}, pathFlag{"--ood", *ood}); err != nil {
		return err
	}
	if *K < 1 || *K > 65535 {
		return fmt.Errorf("%w: --samples %d, want 1..65535", errUsage, *K)
	}
	if *connect <= 0 {
		return fmt.Errorf("%w: --connect %v, want a positive duration", errUsage, *connect)
	}
	if *deadline <= 0 {
		return fmt.Errorf("%w: --deadline %v, want a positive duration", errUsage, *deadline)
	}
	// --out is prepared now (internal/outfile: a temporary file beside a
	// regular target, a device opened and probed): an unusable path fails
	// before anything is streamed.
	var outFile *outfile.File
	if *out != "" {
		o, err := outfile.Create(*out)
		if err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		defer o.Abort()
		outFile = o
	}
	cfg := stream.Config{K: *K, Seed: uint32(*seed), ForceUpload: *force, Driver: driver.Opts{Deadline: *deadline}, Connect: *connect}
	switch *mode {
	case "stats":
		cfg.Mode = frame.ModeStats
	case "samples":
		cfg.Mode = frame.ModeSamples
	case "votes":
		cfg.Mode = frame.ModeVotes
	case "sums":
		cfg.Mode = frame.ModeSums
	default:
		return fmt.Errorf("%w: --mode %q, want sums, samples, stats or votes", errUsage, *mode)
	}
	f, cv, hash, err := modelfile.ReadAny(*model)
	if err != nil {
		return err
	}
	if cv != nil {
		if len(uarts)+len(eths) > 1 {
			return fmt.Errorf("%w: a convolutional model streams to one board (one --uart or --eth)", errUsage)
		}
		if *label != "" {
			return fmt.Errorf("%w: --label applies to CSV files; image data sets carry their labels", errUsage)
		}
		if !isSet(fs, "samples") {
			cfg.K = 0 // the model's K
		}
		sel := convSelection{data: *data, testData: *testData, split: *split, ood: *ood, oodSplit: *oodSplit, limit: *limit}
		return streamConv(cv, hash, sel, *uart, *eth, cfg, *asJSON, outFile, stdout, stderr)
	}
	if *ood != "" {
		return fmt.Errorf("%w: --ood streams the images of a convolutional model; for a tabular model give the out-of-distribution rows with --test-data", errUsage)
	}
	d, rows, err := evalRows(f, *data, *testData, *label, split, stderr)
	if err != nil {
		return err
	}
	rows = firstRows(rows, *limit)
	if cfg.Labels, err = pipeline.Labels(f, d, rows); err != nil {
		return err
	}
	X := make([][]float64, len(rows))
	for i, r := range rows {
		X[i] = d.X[r]
	}
	cfg.RowIDs = rows
	if len(uarts)+len(eths) > 1 {
		return streamBoards(uarts, eths, f, hash, X, cfg, *asJSON, outFile, stdout, stderr)
	}
	return streamOne(*uart, *eth, stdout, stderr, outFile, *asJSON, func(ctx context.Context, t transport.Transport) (*stream.Summary, error) {
		return stream.Run(ctx, t, f, hash, X, cfg)
	}, &cfg)
}

// convSelection names the images `ptm stream` sends for a convolutional
// model: the split of data, every image of testData, or the oodSplit of
// an out-of-distribution data set; the first limit of them (0: all).
type convSelection struct {
	data, testData, split string
	ood, oodSplit         string
	limit                 int
}

// firstRows returns the first limit rows (all of them for limit 0).
func firstRows(rows []int, limit int) []int {
	if limit > 0 && limit < len(rows) {
		return rows[:limit]
	}
	return rows
}

// streamConv is `ptm stream` for a convolutional model: the images of
// the split (or of --test-data, or of --ood) booleanized on the host and
// streamed as image queries (docs/protocol.md section 4, "Image
// queries"). The rows of --ood carry no labels and are queried with the
// seeds `ptm eval --ood` gives them.
func streamConv(f *modelfile.ConvFile, hash string, sel convSelection, uart, eth string, cfg stream.Config, asJSON bool, outFile *outfile.File, stdout, stderr io.Writer) error {
	name, split := sel.data, sel.split
	if sel.testData != "" {
		name, split = sel.testData, "all"
	}
	if sel.ood != "" {
		name = sel.ood
	}
	d, err := pipeline.LoadDataProgress(name, "", newProgress(stderr, "loading "+name).bytes)
	if err != nil {
		return err
	}
	var rows []int
	if sel.ood != "" {
		if !pipeline.IsImage(d) || d.Image.Rows != f.Head.Shape.H || d.Image.Cols != f.Head.Shape.W {
			return fmt.Errorf("%w: --ood %s: want %dx%d images, as the model takes (an image data set: mnist, fashion-mnist, an IDX folder)", errUsage, sel.ood, f.Head.Shape.H, f.Head.Shape.W)
		}
		if rows, err = oodRows(d, sel.oodSplit); err != nil {
			return err
		}
		cfg.Seed += oodSeedOffset // mod 2^32, as eval's fixed-point OOD seed
	} else if rows, err = pipeline.ConvRows(f, d, split); err != nil {
		return err
	}
	rows = firstRows(rows, sel.limit)
	if sel.ood == "" {
		if cfg.Labels, err = pipeline.ConvLabels(f, d, rows); err != nil {
			return err
		}
	}
	images := make([][]uint8, len(rows))
	for i, r := range rows {
		img := make([]uint8, len(d.X[r]))
		for k, v := range d.X[r] {
			img[k] = uint8(math.Max(0, math.Min(255, math.Round(v)))) // as pipeline.SampleConv reads pixels
		}
		images[i] = img
	}
	cfg.RowIDs = rows
	return streamOne(uart, eth, stdout, stderr, outFile, asJSON, func(ctx context.Context, t transport.Transport) (*stream.Summary, error) {
		return stream.RunConv(ctx, t, f, hash, images, cfg)
	}, &cfg)
}

// streamOne opens the link to one board, runs the stream and reports it.
func streamOne(uart, eth string, stdout, stderr io.Writer, outFile *outfile.File, asJSON bool,
	run func(context.Context, transport.Transport) (*stream.Summary, error), cfg *stream.Config) error {
	spec := "uart:" + uart
	if strings.HasPrefix(uart, "uart:") {
		spec = uart
	}
	if eth != "" {
		spec = "eth:" + eth
	}
	t, err := transport.Open(spec)
	if err != nil {
		return err
	}
	defer t.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	bar := newProgress(stderr, "streaming")
	cfg.Progress = bar.update
	sum, err := run(ctx, t)
	bar.end() // an interrupted stream leaves its bar short of the total
	// The --out file is written after the summary is printed: a write
	// error there loses nothing the terminal shows.
	var outErr error
	if sum != nil && outFile != nil {
		outErr = writeOut(outFile, sum)
	}
	if err != nil && sum == nil {
		if outErr != nil {
			fmt.Fprintln(stderr, "ptm stream:", outErr)
		}
		return noBoard(err, sum, spec)
	}
	j := streamJSON{
		Queries: sum.Queries, Requested: sum.Requested, Verified: sum.Verified, VerifiedByCRC: sum.VerifiedByCRC, Lost: sum.Lost, Unanswered: sum.Unanswered, Duplicated: sum.Duplicated, Mismatches: sum.Mismatches,
		Retries: sum.Retries, Windows: sum.Windows, WindowSplits: sum.WindowSplits, CRCErrors: sum.CRCErrors, QueriesPerS: sum.QueriesPerS, LinkUtilization: sum.LinkUtilization,
		LinkUtilSource: sum.LinkUtilSource, LinkUtilHost: sum.LinkUtilHost,
		LinkUtilRx: sum.LinkUtilRx, FirstMismatch: sum.FirstMismatch, Link: sum.Board.Link, Mode: sum.Mode, K: sum.K,
		Uploaded: sum.Board.Uploaded, UploadS: sum.Board.UploadS, WallS: sum.WallS, Metrics: sum.Metrics, NotRun: sum.NotRun,
		CountersReset: sum.Board.CountersReset, Warnings: sum.Board.Warnings,
	}
	if asJSON {
		if err := writeJSON(stdout, j); err != nil {
			return err
		}
	} else {
		printStream(stdout, j)
	}
	// A stream that stopped early (interrupted, or the driver's deadline)
	// still has its summary printed above; the error says why it stopped.
	if err != nil {
		if outErr != nil {
			fmt.Fprintln(stderr, "ptm stream:", outErr)
		}
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("interrupted: %d rows not run (%d answered, %d lost): %w", sum.NotRun, sum.Queries, sum.Lost, err)
		}
		return err
	}
	if sum.Lost > 0 || sum.Duplicated > 0 || sum.Mismatches > 0 {
		return errors.Join(fmt.Errorf("%d lost, %d duplicated, %d results differ from the golden model", sum.Lost, sum.Duplicated, sum.Mismatches), outErr)
	}
	return outErr
}

func printStream(w io.Writer, j streamJSON) {
	src := j.LinkUtilSource
	if src == "" {
		src = "unknown"
	}
	fmt.Fprintf(w, "streamed %d of %d rows x K=%d (%s mode) over %s in %.2fs: %s answered queries/s, board receive-line utilization %.2f (measured by: %s); host estimate %.2f (host->board) / %.2f (board->host)\n",
		j.Queries, j.Requested, j.K, j.Mode, j.Link, j.WallS, fmtRate(j.QueriesPerS), j.LinkUtilization, src, j.LinkUtilHost, j.LinkUtilRx)
	fmt.Fprintf(w, "  verified %d, lost %d, duplicated %d, mismatches vs golden %d, retries %d, CRC errors %d\n", j.Verified, j.Lost, j.Duplicated, j.Mismatches, j.Retries, j.CRCErrors)
	if j.NotRun > 0 {
		fmt.Fprintf(w, "  not run (the stream was interrupted): %d\n", j.NotRun)
	}
	if j.CountersReset {
		fmt.Fprintf(w, "  board counters reset during the stream: the board's counters cover only the time since, the utilization is the host's estimate\n")
	}
	for _, m := range j.Warnings {
		if m != stream.CountersResetWarning {
			fmt.Fprintf(w, "  warning: %s\n", m)
		}
	}
	if j.Windows > 0 {
		fmt.Fprintf(w, "  long answers in windows the line carries: %d windows received, %d split after a lost transmission\n", j.Windows, j.WindowSplits)
	}
	if j.VerifiedByCRC > 0 {
		fmt.Fprintf(w, "  %d of the verified rows arrived garbled with their CRC intact, equal to the golden answer's CRC\n", j.VerifiedByCRC)
	}
	if m := j.Metrics; m != nil {
		fmt.Fprintf(w, "  over the %d verified rows: accuracy %.4f  ECE %.4f  NLL %.4f  entropy right/wrong %s/%s bits\n",
			m.N, float64(m.Accuracy), float64(m.ECE), float64(m.NLL), fmtNum(float64(m.EntropyCorrect)), fmtNum(float64(m.EntropyIncorrect)))
	}
}

// writeOut writes v as indented JSON to the --out file and commits it.
func writeOut(o *outfile.File, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("--out: encoding the result: %w", err)
	}
	if _, err := o.Write(append(b, '\n')); err != nil {
		o.Abort()
		return fmt.Errorf("--out: %w", err)
	}
	if err := o.Commit(); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	return nil
}

// noBoard explains a stream that got no answer at all: the port opened
// but nothing on it speaks the protocol.
func noBoard(err error, sum *stream.Summary, spec string) error {
	if sum == nil && errors.Is(err, driver.ErrTimeout) {
		return fmt.Errorf("no answer on %s: no board seems to be running there (start one with `ptm board`, or check the port, the cable and the baud rate): %w", spec, err)
	}
	return err
}

// fmtRate prints a rate of at least 10 per second as an integer and a
// smaller one with two decimals (a stream on a noisy line answers less
// than one query a second: "0" said nothing).
func fmtRate(r float64) string {
	if r >= 10 {
		return fmt.Sprintf("%.0f", r)
	}
	return fmt.Sprintf("%.2f", r)
}
