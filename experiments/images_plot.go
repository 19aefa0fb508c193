package experiments

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ptmhw/ptm/golden/metrics"
)

// imgShort and imgShortModel are the short names of the figures' panels.
var (
	imgShort      = map[string]string{"mnist": "MNIST", "fashion_mnist": "Fashion"}
	imgShortModel = map[string]string{"ptm": "PTM", "ptm_plain": "PTM plain", "mlp": "MLP-MCd", "mlp_ens": "MLP ens.", "rf": "RF"}
)

// imagesFigures draws the section's figures and returns their markdown.
func (r *runner) imagesFigures(res []*imgResult) (string, error) {
	var b strings.Builder
	// Reliability: one row per data set, one panel per model.
	var rows [][]*plot.Plot
	for _, d := range res {
		var row []*plot.Plot
		for _, m := range imgModels {
			p, err := reliabilityPanel(imgShort[d.spec.key]+", "+imgShortModel[m.key], d.testQ[m.key], d.testY, r.cfg.bins)
			if err != nil {
				return "", err
			}
			row = append(row, p)
		}
		rows = append(rows, row)
	}
	if err := savePNG(filepath.Join(r.out, "images_reliability.png"), 16*vg.Inch, 6.5*vg.Inch, func(dc draw.Canvas) error {
		drawGrid(dc, rows, "Reliability on the test images (accuracy against confidence per bin)")
		return nil
	}); err != nil {
		return "", err
	}
	b.WriteString(r.figure("images_reliability.png", "Reliability diagrams of every model on MNIST and Fashion-MNIST test images"))
	b.WriteString("\n")
	// Entropy of right and wrong predictions, per data set.
	var ent []*plot.Plot
	for _, d := range res {
		p := plot.New()
		p.Title.Text = d.spec.name + ": predictive entropy (bits) of right and wrong test predictions"
		var groups [][]float64
		var names []string
		var fills []color.Color
		for _, m := range imgModels {
			right, wrong := rightWrong(d.testQ[m.key], d.testY)
			groups = append(groups, right.entropy, wrong.entropy)
			names = append(names, fmt.Sprintf("%s right (%d)", m.name, len(right.entropy)), fmt.Sprintf("wrong (%d)", len(wrong.entropy)))
			fills = append(fills, colRight, colWrong)
		}
		if err := boxes(p, groups, fills, names); err != nil {
			return "", err
		}
		p.Y.Min = 0
		ent = append(ent, p)
	}
	if err := savePNG(filepath.Join(r.out, "images_entropy.png"), 14*vg.Inch, 5*vg.Inch, func(dc draw.Canvas) error {
		drawGrid(dc, [][]*plot.Plot{ent}, "")
		return nil
	}); err != nil {
		return "", err
	}
	b.WriteString(r.figure("images_entropy.png", "Entropy of right and wrong test predictions per model"))
	b.WriteString("\n")
	// OOD: per data set (a row), entropy histograms of its test images
	// against the other data set's, models trained on it.
	var oodRows [][]*plot.Plot
	for _, d := range res {
		in, out := imgShort[d.spec.key], imgShort[imgSpecs[d.spec.ood].key]
		var row []*plot.Plot
		for _, m := range imgModels {
			p := plot.New()
			p.Title.Text = fmt.Sprintf("trained on %s: %s (AUROC %.3f)", in, imgShortModel[m.key],
				r.sum.get(d.spec.key+"."+d.spec.oodKey+"."+m.key+".auroc_entropy"))
			p.X.Label.Text = "predictive entropy (bits)"
			for j, qs := range [][]metrics.QueryStats{d.testQ[m.key], d.oodQ[m.key]} {
				v := make(plotter.Values, len(qs))
				for i, q := range qs {
					v[i] = q.Entropy
				}
				h, err := plotter.NewHist(v, 30)
				if err != nil {
					return "", err
				}
				h.Normalize(1)
				c, name := colClass0, in+" test"
				if j == 1 {
					c, name = colClass1, out+" test"
				}
				h.FillColor = color.NRGBA{R: c.R, G: c.G, B: c.B, A: 0x80}
				h.LineStyle.Color = c
				p.Add(h)
				p.Legend.Add(name, h)
			}
			p.Legend.Top = true
			p.X.Min = 0
			row = append(row, p)
		}
		oodRows = append(oodRows, row)
	}
	if err := savePNG(filepath.Join(r.out, "images_ood.png"), 16*vg.Inch, 7.2*vg.Inch, func(dc draw.Canvas) error {
		drawGrid(dc, oodRows, "Entropy on the training data set's test images and on the other data set's test images (normalized histograms)")
		return nil
	}); err != nil {
		return "", err
	}
	b.WriteString(r.figure("images_ood.png", "Entropy histograms: models trained on MNIST, MNIST test against Fashion-MNIST test images (top); trained on Fashion-MNIST, the reverse (bottom)"))
	b.WriteString("\n")
	// The least and the most certain MNIST test digits under the PTM.
	txt, err := r.imagesExtremes(0, res[0])
	if err != nil {
		return "", err
	}
	b.WriteString(txt)
	return b.String(), nil
}

// imgExtremes is how many images each row of the extremes figure shows.
const imgExtremes = 16

// imagesExtremes draws the test images of d the PTM unit found the least
// certain (top row) and the most certain (bottom row) as pictures, and
// lists their labels and predictions. The pixels are read from the data
// set by row (loaded here when no unit of this process loaded it: a
// merge), and their labels checked against the units'.
func (r *runner) imagesExtremes(i int, d *imgResult) (string, error) {
	qs := d.testQ["ptm"]
	top, bottom := d.ptm.Least, d.ptm.Most
	n := len(top)
	if len(bottom) != n {
		return "", fmt.Errorf("unit images.%s.ptm: %d least and %d most certain images", d.spec.key, n, len(bottom))
	}
	g, err := r.imgLoad(i)
	if err != nil {
		return "", err
	}
	ds := g.test.Data.Dataset
	h, w := ds.Image.Rows, ds.Image.Cols
	for _, k := range append(slices.Clone(top), bottom...) {
		if k < 0 || k >= len(d.testRows) || k >= len(qs) {
			return "", fmt.Errorf("unit images.%s.ptm: extreme image %d of %d test images", d.spec.key, k, len(d.testRows))
		}
		if row := d.testRows[k]; row >= ds.Len() || ds.Y[row] != d.testY[k] || len(ds.X[row]) != h*w {
			return "", fmt.Errorf("%s row %d is not the test image the units scored (label %d)", d.spec.key, row, d.testY[k])
		}
	}
	const scale, pad = 3, 4
	H, W := h*scale, w*scale
	img := image.NewGray(image.Rect(0, 0, n*(W+pad)+pad, 2*(H+pad)+pad))
	for i := range img.Pix {
		img.Pix[i] = 0x80
	}
	for row, set := range [][]int{top, bottom} {
		for col, k := range set {
			px := ds.X[d.testRows[k]]
			x0, y0 := pad+col*(W+pad), pad+row*(H+pad)
			for y := 0; y < H; y++ {
				for x := 0; x < W; x++ {
					img.SetGray(x0+x, y0+y, color.Gray{Y: 255 - uint8(px[(y/scale)*w+x/scale])})
				}
			}
		}
	}
	name := d.spec.key + "_extremes.png"
	if err := writeFigure(filepath.Join(r.out, name), func(w io.Writer) error { return png.Encode(w, img) }); err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(r.figure(name, d.spec.name+" test images: the least certain (top) and the most certain (bottom) under the PTM"))
	list := func(set []int) string {
		var parts []string
		for _, k := range set {
			parts = append(parts, fmt.Sprintf("%s→%s (%.2f)", d.classes[d.testY[k]], d.classes[qs[k].Pred], qs[k].Entropy))
		}
		return strings.Join(parts, ", ")
	}
	fmt.Fprintf(&b, "\n%s test images under the PTM, label→prediction (entropy in bits), left to right. Top row, the %d least certain: %s. Bottom row, the %d most certain: %s.\n\n",
		d.spec.name, n, list(top), n, list(bottom))
	return b.String(), nil
}
