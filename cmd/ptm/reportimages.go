package main

import (
	"fmt"
	"image"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/ptmhw/ptm/golden/metrics"
	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/internal/outfile"
)

// pictured is how many images each picture grid of the image report
// shows (4 x 4).
const pictured = 16

// imageFigures are the figures of the image report, all computed from
// the board's verified answers (the rows of `ptm stream --out`).
type imageFigures struct {
	N, NOOD int
	// In is golden/metrics' report over the in-distribution rows.
	In metrics.Report
	// OOD scores the OOD rows against the in-distribution ones (NOOD > 0).
	OOD pipeline.OODReport
}

// computeImageFigures evaluates the board's answers with the golden
// model's own metric code (metrics.Evaluate, pipeline.ScoreOOD).
func computeImageFigures(in, ood []streamRow) imageFigures {
	qs, labels := queryStats(in)
	f := imageFigures{N: len(in), NOOD: len(ood), In: metrics.Evaluate(qs, labels, metrics.DefaultBins)}
	if len(ood) > 0 {
		oqs, _ := queryStats(ood)
		f.OOD = pipeline.ScoreOOD(qs, oqs)
	}
	return f
}

// imageReport is what `ptm report --images` writes the image report
// from.
type imageReport struct {
	md                string
	ev, st, stOOD     map[string]any // eval --json, stream --json (in-distribution and OOD)
	sy, sySearch      map[string]any // synth --json: the image, and the search that chose it (nil: none)
	full              map[string]any // the in-distribution stream --out file (its board object)
	in, ood           []streamRow
	data              *pipeline.Data // the in-distribution images (the rows' pixels)
	board             string         // the board's kind, as the demo names it
	steps             []step
	dataName, oodName string
}

// printImageFigures prints the board's image figures on w.
func printImageFigures(w io.Writer, f imageFigures) {
	fmt.Fprintf(w, "Board answers (%d images): accuracy %.4f   ECE %.4f   NLL %.4f   AUROC(entropy) %.4f   AUROC(MI) %.4f\n",
		f.N, f.In.Accuracy, f.In.ECE, f.In.NLL, f.In.AUROCEntropy, f.In.AUROCMI)
	if f.NOOD > 0 {
		fmt.Fprintf(w, "  OOD (%d images against the %d): AUROC(entropy) %.4f   AUROC(MI) %.4f   entropy in %.4f  OOD %.4f bits\n",
			f.NOOD, f.N, f.OOD.AUROCEntropy, f.OOD.AUROCMI, f.OOD.EntropyIn, f.OOD.EntropyOOD)
	}
}

// write writes the Markdown image report and its figures beside it.
func (r *imageReport) write(stdout io.Writer) error {
	out, err := outfile.Create(r.md)
	if err != nil {
		return fmt.Errorf("--md: %w", err)
	}
	defer out.Abort()
	dir := filepath.Dir(r.md)
	fig := computeImageFigures(r.in, r.ood)
	printImageFigures(stdout, fig)
	var b strings.Builder
	b.WriteString("# PTM on images: demo report\n\n")
	fmt.Fprintf(&b, "Written by `make demo DATA=%s` (scripts/demo-images.sh, `ptm report --images`). Every figure below is this run's, computed from the board's answers.\n\n", r.dataName)
	if len(r.steps) > 0 {
		b.WriteString("## Steps\n\n| step | seconds |\n|---|---|\n")
		total := 0.0
		for _, s := range r.steps {
			fmt.Fprintf(&b, "| %s | %.1f |\n", s.name, s.seconds)
			total += s.seconds
		}
		fmt.Fprintf(&b, "| **total** | **%.1f** |\n\n", total)
	}
	b.WriteString("## The board (`ptm stream`)\n\n| | |\n|---|---|\n")
	fmt.Fprintf(&b, "| board | %s |\n", r.board)
	fmt.Fprintf(&b, "| model hash | %s |\n", field(r.full, "%s", "board", "model_hash"))
	info := func(k string) string { return field(r.full, "%.0f", "board", "info", k) }
	fmt.Fprintf(&b, "| the board's INFO | protocol %s, %sx%s images, %sx%s window, %s classes, %s clauses, T = %s, %s-bit bank, %s x %s lanes, KMAX %s, UART %s baud |\n",
		info("Version"), info("ImgH"), info("ImgW"), info("WinY"), info("WinX"), info("NC"), info("M"), info("T"), info("B"), info("LC"), info("LL"), info("KMax"), info("BitRate"))
	if r.st != nil {
		fmt.Fprintf(&b, "| link, mode, K | %s, %s, %s |\n", field(r.st, "%s", "link"), field(r.st, "%s", "mode"), field(r.st, "%.0f", "k"))
		fmt.Fprintf(&b, "| %s test images N (verified) | %s (%s) |\n", r.dataName, field(r.st, "%.0f", "queries"), field(r.st, "%.0f", "verified"))
		fmt.Fprintf(&b, "| mismatches vs the golden fixed-point model | %s (lost %s, duplicated %s) |\n", field(r.st, "%.0f", "mismatches_vs_golden"),
			field(r.st, "%.0f", "lost"), field(r.st, "%.0f", "duplicated"))
		fmt.Fprintf(&b, "| queries/s (answered images / stream wall time; a software or Verilated board shares this machine's CPUs with the host's golden check) | %s |\n", field(r.st, "%.1f", "queries_per_s"))
		fmt.Fprintf(&b, "| retries, answer windows (split) | %s, %s (%s) |\n", field(r.st, "%.0f", "retries"), field(r.st, "%.0f", "windows"), field(r.st, "%.0f", "window_splits"))
	}
	if r.stOOD != nil {
		fmt.Fprintf(&b, "| %s test images M, out of distribution (verified) | %s (%s) |\n", r.oodName, field(r.stOOD, "%.0f", "queries"), field(r.stOOD, "%.0f", "verified"))
		fmt.Fprintf(&b, "| their mismatches vs the golden model | %s (lost %s, duplicated %s); %s queries/s |\n", field(r.stOOD, "%.0f", "mismatches_vs_golden"),
			field(r.stOOD, "%.0f", "lost"), field(r.stOOD, "%.0f", "duplicated"), field(r.stOOD, "%.1f", "queries_per_s"))
	}
	if r.sy != nil {
		writeImageSynth(&b, r.sy, r.sySearch)
	}
	b.WriteString("\n## Uncertainty: the board's answers and the golden evaluation of the same images\n\n")
	b.WriteString("The board column is computed from the answers the board sent (`ptm stream --out`), with golden/metrics; ")
	b.WriteString("the golden column is `ptm eval --fixed` on the same images with the same seeds (the bit-exact fixed-point model).\n\n")
	b.WriteString("| figure | board | golden `eval --fixed` |\n|---|---|---|\n")
	row := func(name string, v float64, keys ...string) {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", name, fmtFig(v), field(r.ev, "%.4f", keys...))
	}
	fmt.Fprintf(&b, "| images | %d | %s |\n", fig.N, field(r.ev, "%.0f", "queries"))
	row("accuracy", fig.In.Accuracy, "accuracy")
	row(fmt.Sprintf("ECE (%d bins)", metrics.DefaultBins), fig.In.ECE, "ece")
	row("NLL (nats)", fig.In.NLL, "nll")
	row("AUROC(entropy), wrong vs right", fig.In.AUROCEntropy, "auroc_entropy")
	row("AUROC(MI), wrong vs right", fig.In.AUROCMI, "auroc_mi")
	row("mean entropy right (bits)", fig.In.EntropyCorrect, "entropy_correct")
	row("mean entropy wrong (bits)", fig.In.EntropyIncorrect, "entropy_incorrect")
	if fig.NOOD > 0 {
		fmt.Fprintf(&b, "| %s images (OOD) | %d | %s |\n", r.oodName, fig.NOOD, field(r.ev, "%.0f", "ood", "rows"))
		row(fmt.Sprintf("OOD AUROC(entropy), %s vs %s", r.dataName, r.oodName), fig.OOD.AUROCEntropy, "ood", "auroc_entropy")
		row(fmt.Sprintf("OOD AUROC(MI), %s vs %s", r.dataName, r.oodName), fig.OOD.AUROCMI, "ood", "auroc_mi")
		row(fmt.Sprintf("mean entropy, %s images (bits)", r.dataName), fig.OOD.EntropyIn, "ood", "entropy_in")
		row(fmt.Sprintf("mean entropy, %s images (bits)", r.oodName), fig.OOD.EntropyOOD, "ood", "entropy_ood")
	}
	b.WriteString("\n")
	if !out.InPlace() {
		if err := r.figures(&b, dir, fig); err != nil {
			return err
		}
	}
	if _, err := io.WriteString(out, b.String()); err != nil {
		return fmt.Errorf("--md: %w", err)
	}
	if err := out.Commit(); err != nil {
		return fmt.Errorf("--md: %w", err)
	}
	return nil
}

// fmtFig formats a figure with four decimals (n/a for NaN).
func fmtFig(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%.4f", v)
}

// figures draws the image report's PNGs into dir and adds their section.
func (r *imageReport) figures(b *strings.Builder, dir string, fig imageFigures) error {
	if err := reliabilityPNG(filepath.Join(dir, "reliability.png"), r.in); err != nil {
		return err
	}
	var right, wrong, inH, oodH []float64
	for _, x := range r.in {
		inH = append(inH, x.Entropy)
		if x.Pred == x.Label {
			right = append(right, x.Entropy)
		} else {
			wrong = append(wrong, x.Entropy)
		}
	}
	for _, x := range r.ood {
		oodH = append(oodH, x.Entropy)
	}
	hmax := math.Log2(float64(len(r.in[0].Probs)))
	if err := histPNG(filepath.Join(dir, "entropy-right-wrong.png"), "Predictive entropy: right vs wrong", hmax,
		histSeries{"right", right, color.RGBA{G: 0x80, A: 0xff}}, histSeries{"wrong", wrong, color.RGBA{R: 0xc0, A: 0xff}}); err != nil {
		return err
	}
	b.WriteString("## Figures (the board's answers)\n\n")
	b.WriteString("![reliability diagram](reliability.png)\n![entropy, right vs wrong](entropy-right-wrong.png)\n")
	if len(r.ood) > 0 {
		if err := histPNG(filepath.Join(dir, "entropy-ood.png"), fmt.Sprintf("Predictive entropy: %s vs %s", r.dataName, r.oodName), hmax,
			histSeries{r.dataName + " (in)", inH, color.RGBA{B: 0xb8, G: 0x7f, R: 0x2c, A: 0xff}}, histSeries{r.oodName + " (OOD)", oodH, color.RGBA{R: 0xe0, G: 0x80, A: 0xff}}); err != nil {
			return err
		}
		b.WriteString("![entropy, in vs out of distribution](entropy-ood.png)\n")
	}
	b.WriteString("\nThe histograms give each group's fraction of its images per entropy bin (20 bins from 0 to log2 of the class count).\n\n")

	order := make([]int, len(r.in))
	for i := range order {
		order[i] = i
	}
	// the least certain: highest entropy first (row id breaks ties)
	sort.SliceStable(order, func(a, c int) bool { return r.in[order[a]].Entropy > r.in[order[c]].Entropy })
	least := order[:min(pictured, len(order))]
	var wrongs []int
	for i := len(order) - 1; i >= 0; i-- { // the most certain wrong: lowest entropy first
		if x := r.in[order[i]]; x.Pred != x.Label {
			wrongs = append(wrongs, order[i])
		}
	}
	wrongs = wrongs[:min(pictured, len(wrongs))]
	for _, g := range []struct {
		file, title, what string
		idx               []int
	}{
		{"least-certain.png", "The least certain images (highest entropy)", "the least certain", least},
		{"confident-wrong.png", "The most certain wrong answers (lowest entropy)", "the most certain wrong", wrongs},
	} {
		fmt.Fprintf(b, "### %s\n\n", g.title)
		if len(g.idx) == 0 {
			b.WriteString("None: every answer was right.\n\n")
			continue
		}
		if err := r.gridPNG(filepath.Join(dir, g.file), g.idx); err != nil {
			return err
		}
		fmt.Fprintf(b, "![%s](%s)\n\n| data set row | label | prediction | confidence | entropy (bits) | MI (bits) |\n|---|---|---|---|---|---|\n", g.what, g.file)
		for _, i := range g.idx {
			x := r.in[i]
			fmt.Fprintf(b, "| %d | %s | %s | %.3f | %.3f | %.4f |\n", x.Row, r.className(x.Label), r.className(x.Pred), x.Probs[x.Pred], x.Entropy, x.MI)
		}
		b.WriteString("\n")
	}
	return nil
}

// className names class c by the data set's class names.
func (r *imageReport) className(c int) string {
	if c >= 0 && c < len(r.data.Classes) {
		return r.data.Classes[c]
	}
	return fmt.Sprint(c)
}

// histSeries is one group of a histogram figure.
type histSeries struct {
	name string
	v    []float64
	c    color.Color
}

// histPNG draws step histograms of the groups, each as its fraction of
// images per bin (20 bins over [0, hmax]).
func histPNG(path, title string, hmax float64, groups ...histSeries) error {
	const bins = 20
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text, p.Y.Label.Text = "entropy (bits)", "fraction of the group's images"
	p.X.Min, p.X.Max, p.Y.Min = 0, hmax, 0
	for _, g := range groups {
		if len(g.v) == 0 {
			continue
		}
		counts := make([]float64, bins)
		for _, v := range g.v {
			k := int(v / hmax * bins)
			counts[max(0, min(bins-1, k))]++
		}
		pts := make(plotter.XYs, bins+1)
		for k := range bins + 1 {
			pts[k].X = hmax * float64(k) / bins
			pts[k].Y = counts[min(k, bins-1)] / float64(len(g.v))
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		l.StepStyle = plotter.PostStep
		l.Color = g.c
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s (%d)", g.name, len(g.v)), l)
	}
	p.Legend.Top = true
	return savePlot(p, 5*vg.Inch, 3.5*vg.Inch, path)
}

// digit returns row's first image plane as a grey image, ink dark.
func (r *imageReport) digit(row int) (image.Image, error) {
	if row < 0 || row >= r.data.Len() {
		return nil, fmt.Errorf("row %d: the data set %s has %d rows (are the stream rows from --images?)", row, r.data.Name, r.data.Len())
	}
	h, w := r.data.Image.Rows, r.data.Image.Cols
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i, v := range r.data.X[row][:h*w] {
		img.Pix[i] = 255 - uint8(math.Max(0, math.Min(255, math.Round(v))))
	}
	return img, nil
}

// gridPNG draws the images of the rows idx of r.in, 4 to a line, each
// titled with its label, prediction and entropy.
func (r *imageReport) gridPNG(path string, idx []int) error {
	const cols = 4
	lines := (len(idx) + cols - 1) / cols
	plots := make([][]*plot.Plot, lines)
	for j := range plots {
		plots[j] = make([]*plot.Plot, cols)
	}
	for k, i := range idx {
		x := r.in[i]
		img, err := r.digit(x.Row)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		p := plot.New()
		p.HideAxes()
		p.Title.Text = fmt.Sprintf("label %s\nsaid %s\nH %.2f bits", r.className(x.Label), r.className(x.Pred), x.Entropy)
		p.Title.TextStyle.Font.Size = vg.Points(9)
		b := img.Bounds()
		p.Add(plotter.NewImage(img, 0, 0, float64(b.Dx()), float64(b.Dy())))
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, float64(b.Dx()), 0, float64(b.Dy())
		plots[k/cols][k%cols] = p
	}
	w, h := vg.Points(float64(cols)*110), vg.Points(float64(lines)*145)
	c := vgimg.New(w, h)
	dc := draw.New(c)
	t := draw.Tiles{Rows: lines, Cols: cols, PadX: vg.Points(6), PadY: vg.Points(6), PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(4)}
	canvases := plot.Align(plots, t, dc)
	for j := range plots {
		for i, p := range plots[j] {
			if p != nil {
				p.Draw(canvases[j][i])
			}
		}
	}
	o, err := outfile.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(o); err != nil {
		o.Abort()
		return fmt.Errorf("%s: %w", path, err)
	}
	return o.Commit()
}

// writeImageSynth writes the image report's section on the UP5K image:
// sy is its `ptm synth --json`, search (nil: none) the search's, whose
// steps are listed.
func writeImageSynth(b *strings.Builder, sy, search map[string]any) {
	fmt.Fprintf(b, "\n## The image for the iCEBreaker (`ptm synth`)\n\n| | |\n|---|---|\n")
	fmt.Fprintf(b, "| device, board | %s, %s (%s toolchain) |\n", field(sy, "%s", "device"), field(sy, "%s", "board"), field(sy, "%s", "toolchain"))
	fmt.Fprintf(b, "| core | %s x %s lanes, %s patches per cycle, %s scan, B = %s, LFSR width %s |\n", field(sy, "%.0f", "clause_lanes"),
		field(sy, "%.0f", "literal_lanes"), field(sy, "%.0f", "patch_lanes"), field(sy, "%s", "scan"), field(sy, "%.0f", "bits"), field(sy, "%.0f", "lfsr_width"))
	fmt.Fprintf(b, "| logic cells (packed) | %s / %s |\n", field(sy, "%.0f", "luts"), field(sy, "%.0f", "luts_available"))
	fmt.Fprintf(b, "| block RAMs, SPRAMs, DSPs | %s / %s, %s, %s |\n", field(sy, "%.0f", "brams"), field(sy, "%.0f", "brams_available"),
		field(sy, "%.0f", "sprams"), field(sy, "%.0f", "dsps"))
	fmt.Fprintf(b, "| clock | %s MHz, timing met: %s (Fmax %s MHz, nextpnr seed %s) |\n", field(sy, "%.2f", "clock_mhz"), field(sy, "%v", "timing_met"),
		field(sy, "%.2f", "fmax_mhz"), field(sy, "%.0f", "seed"))
	fmt.Fprintf(b, "| UART | %s baud (%s clocks per bit) |\n", field(sy, "%.0f", "uart_baud"), field(sy, "%.0f", "clks_per_bit"))
	fmt.Fprintf(b, "| cycles per sample | %s (%s) |\n", field(sy, "%.1f", "cycles_per_sample"), field(sy, "%s", "cycles_source"))
	fmt.Fprintf(b, "| rate at the clock | %s samples/s, %s queries/s at K = 16 |\n", field(sy, "%.0f", "samples_per_s_at_clock"),
		field(sy, "%.0f", "queries_per_s_k16_at_clock"))
	fmt.Fprintf(b, "| binding | %s |\n", field(sy, "%s", "binding"))
	fmt.Fprintf(b, "| bitstream | %s |\n", field(sy, "%s", "bitstream"))
	steps, _ := search["search"].([]any)
	if len(steps) == 0 {
		return
	}
	fmt.Fprintf(b, "\nThe search (docs/synthesis-flow.md, \"Convolutional models\"), step by step:\n\n")
	b.WriteString("| lanes | patches per cycle | scan | target MHz | expected cycles per sample | logic cells | Fmax MHz | outcome |\n|---|---|---|---|---|---|---|---|\n")
	for _, x := range steps {
		st, ok := x.(map[string]any)
		if !ok {
			continue
		}
		fmt.Fprintf(b, "| %s x %s | %s | %s | %s | %s | %s | %s | %s |\n", field(st, "%.0f", "clause_lanes"), field(st, "%.0f", "literal_lanes"),
			field(st, "%.0f", "patch_lanes"), field(st, "%s", "scan"), field(st, "%g", "freq_mhz"), field(st, "%.1f", "expected_cycles_per_sample"),
			field(st, "%.0f", "luts"), field(st, "%.2f", "fmax_mhz"), field(st, "%s", "outcome"))
	}
}
