package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/ptmhw/ptm/golden/metrics"
	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/internal/outfile"
)

// streamRow is one row of `ptm stream --out` (the per-query results).
type streamRow struct {
	Row     int       `json:"row"`
	Status  string    `json:"status"`
	Probs   []float64 `json:"probs"`
	Pred    int       `json:"pred"`
	Label   int       `json:"label"`
	Entropy float64   `json:"entropy"`
	MI      float64   `json:"mutual_info"`
}

// readStreamRows reads the verified rows of a `ptm stream --out` file.
func readStreamRows(path string) ([]streamRow, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Rows []streamRow `json:"rows"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var ok []streamRow
	for _, r := range doc.Rows {
		if r.Status == "ok" && len(r.Probs) > 0 {
			ok = append(ok, r)
		}
	}
	if len(ok) == 0 {
		return nil, fmt.Errorf("%s: no verified rows", path)
	}
	return ok, nil
}

// step is one timed step of the demo (scripts/demo.sh's steps file:
// "seconds<TAB>name" lines).
type step struct {
	name    string
	seconds float64
}

func readSteps(path string) ([]step, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []step
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		secs, name, ok := strings.Cut(sc.Text(), "\t")
		if !ok {
			return nil, fmt.Errorf("%s:%d: want seconds<TAB>step", path, n)
		}
		s, err := strconv.ParseFloat(secs, 64)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out = append(out, step{name, s})
	}
	return out, sc.Err()
}

// writeReportMD writes the Markdown report of a demo run to md, with
// reliability.png and entropy.png beside it when md is a regular file
// (internal/outfile writes all three; a report written to a device such
// as /dev/null has no figures).
func writeReportMD(md string, ev, st, sy map[string]any, rows []streamRow, steps []step) error {
	out, err := outfile.Create(md)
	if err != nil {
		return fmt.Errorf("--md: %w", err)
	}
	defer out.Abort()
	dir := filepath.Dir(md)
	var b strings.Builder
	b.WriteString("# PTM on the iCEBreaker image: demo report\n\n")
	b.WriteString("Written by `make demo` (scripts/demo.sh, `ptm report --md`). Every figure below is this run's.\n\n")
	if len(steps) > 0 {
		b.WriteString("## Steps\n\n| step | seconds |\n|---|---|\n")
		total := 0.0
		for _, s := range steps {
			fmt.Fprintf(&b, "| %s | %.1f |\n", s.name, s.seconds)
			total += s.seconds
		}
		fmt.Fprintf(&b, "| **total** | **%.1f** |\n\n", total)
	}
	if sy != nil {
		fmt.Fprintf(&b, "## The image (`ptm synth`)\n\n")
		fmt.Fprintf(&b, "| | |\n|---|---|\n")
		fmt.Fprintf(&b, "| device, top | %s, %s (Ethernet %s) |\n", field(sy, "%s", "device"), field(sy, "%s", "top"), field(sy, "%v", "ethernet"))
		fmt.Fprintf(&b, "| core | %s lanes (%s x %s), B = %s, D = %s |\n", field(sy, "%.0f", "lanes"), field(sy, "%.0f", "clause_lanes"),
			field(sy, "%.0f", "literal_lanes"), field(sy, "%.0f", "bits"), field(sy, "%.0f", "depth"))
		fmt.Fprintf(&b, "| logic cells | %s / %s |\n| block RAMs | %s / %s |\n", field(sy, "%.0f", "luts"), field(sy, "%.0f", "luts_available"),
			field(sy, "%.0f", "brams"), field(sy, "%.0f", "brams_available"))
		fmt.Fprintf(&b, "| Fmax | %s MHz |\n| PLL clock | %s MHz (timing met: %s) |\n", field(sy, "%.2f", "fmax_mhz"), field(sy, "%.2f", "clock_mhz"), field(sy, "%v", "timing_met"))
		if r, ok := sy["core_clock_ratio"].(float64); ok && r == 2 {
			fmt.Fprintf(&b, "| two clocks (`--core-clock-ratio 2`) | core %s MHz (Fmax %s), board shell %s MHz (Fmax %s) |\n", field(sy, "%.2f", "clock_mhz"),
				field(sy, "%.2f", "core_fmax_mhz"), field(sy, "%.2f", "shell_clock_mhz"), field(sy, "%.2f", "shell_fmax_mhz"))
		}
		fmt.Fprintf(&b, "| UART | %s baud (%s clocks per bit) |\n", field(sy, "%.0f", "uart_baud"), field(sy, "%.0f", "clks_per_bit"))
		fmt.Fprintf(&b, "| core rate at the PLL clock | %s samples/s, %s queries/s at K = 100 (at Fmax %s MHz: %s samples/s) |\n", field(sy, "%.0f", "samples_per_s_at_clock"),
			field(sy, "%.0f", "queries_per_s_k100_at_clock"), field(sy, "%.2f", "fmax_mhz"), field(sy, "%.0f", "samples_per_s"))
		fmt.Fprintf(&b, "| binding | %s |\n", field(sy, "%s", "binding"))
		if s, ok := sy["search"].([]any); ok && len(s) > 0 {
			fmt.Fprintf(&b, "| lane search | %d steps (docs/synthesis.md) |\n", len(s))
		}
		fmt.Fprintf(&b, "| from the result cache | %s |\n\n", field(sy, "%v", "cached"))
	}
	if st != nil {
		fmt.Fprintf(&b, "## The Verilated image over its UART (`ptm stream`)\n\n")
		fmt.Fprintf(&b, "| | |\n|---|---|\n")
		fmt.Fprintf(&b, "| link, mode, K | %s, %s, %s |\n", field(st, "%s", "link"), field(st, "%s", "mode"), field(st, "%.0f", "k"))
		fmt.Fprintf(&b, "| queries (verified) | %s (%s) |\n", field(st, "%.0f", "queries"), field(st, "%.0f", "verified"))
		fmt.Fprintf(&b, "| mismatches vs the golden fixed-point model | %s (lost %s) |\n", field(st, "%.0f", "mismatches_vs_golden"), field(st, "%.0f", "lost"))
		fmt.Fprintf(&b, "| accuracy, ECE | %s, %s |\n", field(st, "%.4f", "metrics", "accuracy"), field(st, "%.4f", "metrics", "ece"))
		fmt.Fprintf(&b, "| AUROC(entropy), AUROC(MI) | %s, %s |\n", field(st, "%.4f", "metrics", "auroc_entropy"), field(st, "%.4f", "metrics", "auroc_mi"))
		fmt.Fprintf(&b, "| mean entropy right / wrong | %s / %s bits |\n", field(st, "%.4f", "metrics", "mean_entropy_correct"), field(st, "%.4f", "metrics", "mean_entropy_incorrect"))
		fmt.Fprintf(&b, "| mean MI right / wrong | %s / %s bits |\n", field(st, "%.4f", "metrics", "mean_mi_correct"), field(st, "%.4f", "metrics", "mean_mi_incorrect"))
		fmt.Fprintf(&b, "| simulated queries/s (wall) | %s |\n\n", field(st, "%.1f", "queries_per_s"))
	}
	if ev != nil {
		fmt.Fprintf(&b, "## The golden float model on the same rows (`ptm eval`)\n\n")
		fmt.Fprintf(&b, "accuracy %s, ECE %s, AUROC(entropy) %s, entropy right / wrong %s / %s bits.\n\n",
			field(ev, "%.4f", "accuracy"), field(ev, "%.4f", "ece"), field(ev, "%.4f", "auroc_entropy"),
			field(ev, "%.4f", "entropy_correct"), field(ev, "%.4f", "entropy_incorrect"))
	}
	if len(rows) > 0 && !out.InPlace() {
		if err := reliabilityPNG(filepath.Join(dir, "reliability.png"), rows); err != nil {
			return err
		}
		if err := entropyPNG(filepath.Join(dir, "entropy.png"), rows); err != nil {
			return err
		}
		b.WriteString("## Figures (the board's answers)\n\n")
		b.WriteString("![reliability diagram](reliability.png)\n\n![entropy, right vs wrong](entropy.png)\n")
	}
	if _, err := io.WriteString(out, b.String()); err != nil {
		return fmt.Errorf("--md: %w", err)
	}
	if err := out.Commit(); err != nil {
		return fmt.Errorf("--md: %w", err)
	}
	return nil
}

// savePlot writes p as a w x h PNG to path through internal/outfile.
func savePlot(p *plot.Plot, w, h vg.Length, path string) error {
	wt, err := p.WriterTo(w, h, "png")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	out, err := outfile.Create(path)
	if err != nil {
		return err
	}
	if _, err := wt.WriteTo(out); err != nil {
		out.Abort()
		return err
	}
	return out.Commit()
}

// queryStats turns stream rows into metrics.QueryStats and labels.
func queryStats(rows []streamRow) ([]metrics.QueryStats, []int) {
	qs := make([]metrics.QueryStats, len(rows))
	labels := make([]int, len(rows))
	for i, r := range rows {
		qs[i] = metrics.QueryStats{Mean: r.Probs, Entropy: r.Entropy, MutualInfo: r.MI, Pred: r.Pred, Conf: r.Probs[r.Pred]}
		labels[i] = r.Label
	}
	return qs, labels
}

// reliabilityPNG draws the reliability diagram (accuracy against mean
// confidence per bin, the diagonal for reference; 10 bins).
func reliabilityPNG(path string, rows []streamRow) error {
	qs, labels := queryStats(rows)
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Reliability diagram (%d board answers)", len(rows))
	p.X.Label.Text, p.Y.Label.Text = "confidence", "accuracy"
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
	diag, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
	if err != nil {
		return err
	}
	diag.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
	var pts plotter.XYs
	for _, bin := range metrics.ReliabilityBins(qs, labels, 10) {
		if bin.Count > 0 && !math.IsNaN(bin.Accuracy) {
			pts = append(pts, plotter.XY{X: bin.Confidence, Y: bin.Accuracy})
		}
	}
	line, points, err := plotter.NewLinePoints(pts)
	if err != nil {
		return err
	}
	line.Color, points.Color = color.RGBA{B: 0xb8, G: 0x7f, R: 0x2c, A: 0xff}, color.RGBA{B: 0xb8, G: 0x7f, R: 0x2c, A: 0xff}
	p.Add(diag, line, points)
	return savePlot(p, 4*vg.Inch, 4*vg.Inch, path)
}

// entropyPNG draws the predictive entropy of right and wrong answers
// side by side (one point per query, jittered by rank).
func entropyPNG(path string, rows []streamRow) error {
	p := plot.New()
	p.Title.Text = "Predictive entropy: right vs wrong"
	p.Y.Label.Text = "entropy (bits)"
	var right, wrong plotter.XYs
	for i, r := range rows {
		x := 0.0
		if r.Pred != r.Label {
			x = 1
		}
		pt := plotter.XY{X: x + 0.3*(float64(i%7)/6-0.5), Y: r.Entropy}
		if x == 0 {
			right = append(right, pt)
		} else {
			wrong = append(wrong, pt)
		}
	}
	for _, g := range []struct {
		pts plotter.XYs
		c   color.Color
		n   string
	}{{right, color.RGBA{G: 0x80, A: 0xff}, "right"}, {wrong, color.RGBA{R: 0xc0, A: 0xff}, "wrong"}} {
		if len(g.pts) == 0 {
			continue
		}
		s, err := plotter.NewScatter(g.pts)
		if err != nil {
			return err
		}
		s.Color = g.c
		p.Add(s)
		p.Legend.Add(fmt.Sprintf("%s (%d)", g.n, len(g.pts)), s)
	}
	p.NominalX("right", "wrong")
	p.X.Min, p.X.Max = -0.5, 1.5
	p.Y.Min = 0
	return savePlot(p, 4*vg.Inch, 4*vg.Inch, path)
}

// reportMDFlags are the flags of `ptm report` that write the Markdown
// report.
type reportMDFlags struct {
	md, rows, steps *string
	// the image report (--images): the OOD rows, their summary, the
	// image data set, the OOD data set's name and the board's kind
	oodRows, oodStream, images, oodName, board *string
	synthSearch                                *string // the search's ptm synth --json (image report)
}

func (f reportMDFlags) write(ev, st, sy map[string]any, stdout, stderr io.Writer) error {
	if *f.images != "" {
		return f.writeImages(ev, st, sy, stdout, stderr)
	}
	if *f.oodRows != "" || *f.oodStream != "" {
		return fmt.Errorf("%w: --ood-rows and --ood-stream belong to the image report (--images)", errUsage)
	}
	if *f.synthSearch != "" {
		return fmt.Errorf("%w: --synth-search belongs to the image report (--images)", errUsage)
	}
	if *f.md == "" {
		return nil
	}
	var rows []streamRow
	var err error
	if *f.rows != "" {
		if rows, err = readStreamRows(*f.rows); err != nil {
			return err
		}
	}
	steps, err := readSteps(*f.steps)
	if err != nil {
		return err
	}
	if err := writeReportMD(*f.md, ev, st, sy, rows, steps); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wrote %s\n", *f.md)
	return nil
}

// writeImages is `ptm report --images`: the image report of a stream of
// images (scripts/demo-images.sh), its figures from the board's answers.
func (f reportMDFlags) writeImages(ev, st, sy map[string]any, stdout, stderr io.Writer) error {
	if *f.md == "" || *f.rows == "" {
		return fmt.Errorf("%w: --images writes the image report: give --md and --rows too", errUsage)
	}
	r := imageReport{md: *f.md, ev: ev, st: st, sy: sy, board: *f.board, dataName: *f.images, oodName: *f.oodName}
	var err error
	if r.sySearch, err = readJSONMap(*f.synthSearch); err != nil {
		return fmt.Errorf("--synth-search: %w", err)
	}
	if r.sySearch != nil && sy == nil {
		return fmt.Errorf("%w: --synth-search lists the search of the image: give the image too (--synth)", errUsage)
	}
	if r.board == "" {
		r.board = "not named (give --board)"
	}
	if r.in, err = readStreamRows(*f.rows); err != nil {
		return fmt.Errorf("--rows: %w", err)
	}
	for _, x := range r.in {
		if len(x.Probs) != len(r.in[0].Probs) || x.Pred < 0 || x.Pred >= len(x.Probs) || x.Label < 0 || x.Label >= len(x.Probs) {
			return fmt.Errorf("--rows %s: row %d: %d probabilities, prediction %d, label %d: want %d classes and a label (an in-distribution stream)",
				*f.rows, x.Row, len(x.Probs), x.Pred, x.Label, len(r.in[0].Probs))
		}
	}
	if r.full, err = readJSONMap(*f.rows); err != nil {
		return fmt.Errorf("--rows: %w", err)
	}
	if *f.oodRows != "" {
		if r.ood, err = readStreamRows(*f.oodRows); err != nil {
			return fmt.Errorf("--ood-rows: %w", err)
		}
		if r.oodName == "" {
			r.oodName = "OOD"
		}
	}
	if r.stOOD, err = readJSONMap(*f.oodStream); err != nil {
		return fmt.Errorf("--ood-stream: %w", err)
	}
	if r.steps, err = readSteps(*f.steps); err != nil {
		return err
	}
	if r.data, err = pipeline.LoadDataProgress(*f.images, "", newProgress(stderr, "loading "+*f.images).bytes); err != nil {
		return fmt.Errorf("--images: %w", err)
	}
	if !pipeline.IsImage(r.data) {
		return fmt.Errorf("%w: --images %s: not an image data set", errUsage, *f.images)
	}
	if err := r.write(stdout); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wrote %s\n", *f.md)
	return nil
}
