package experiments

import (
	"bufio"
	"fmt"
	"image/color"
	"io"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/ptmhw/ptm/internal/outfile"
)

// Colours used across figures.
var (
	colClass0  = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff} // blue
	colClass1  = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff} // red
	colRight   = color.RGBA{R: 0x8c, G: 0xc8, B: 0x8c, A: 0xff} // green
	colWrong   = color.RGBA{R: 0xe8, G: 0x8a, B: 0x8a, A: 0xff} // pink
	colExclude = color.RGBA{R: 0x9e, G: 0x9e, B: 0x9e, A: 0xff} // grey
	colInclude = color.RGBA{R: 0x2c, G: 0x7f, B: 0xb8, A: 0xff} // blue
	colRegion  = color.Black
)

// savePNG renders draw onto a w x h PNG canvas and writes it to path.
func savePNG(path string, w, h vg.Length, render func(dc draw.Canvas) error) error {
	img := vgimg.New(w, h)
	dc := draw.New(img)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	if err := render(dc); err != nil {
		return err
	}
	return writeFigure(path, func(w io.Writer) error {
		_, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(w)
		return err
	})
}

// writeFigure writes a figure file through internal/outfile (the one
// writer of every output: a regular file replaced atomically, a device or
// FIFO written in place, never replaced), buffered.
func writeFigure(path string, encode func(w io.Writer) error) error {
	f, err := outfile.Create(path)
	if err != nil {
		return fmt.Errorf("figure: %w", err)
	}
	bw := bufio.NewWriter(f)
	if err := encode(bw); err != nil {
		f.Abort()
		return fmt.Errorf("figure %s: %w", filepath.Base(path), err)
	}
	if err := bw.Flush(); err != nil {
		f.Abort()
		return fmt.Errorf("figure %s: %w", filepath.Base(path), err)
	}
	if err := f.Commit(); err != nil {
		return fmt.Errorf("figure %s: %w", filepath.Base(path), err)
	}
	return nil
}

// drawGrid draws a row-major grid of plots (nil cells stay empty) onto dc
// with aligned data areas.
func drawGrid(dc draw.Canvas, plots [][]*plot.Plot, title string) {
	if title != "" {
		st := draw.TextStyle{Color: color.Black, Font: font.From(plot.DefaultFont, 13), Handler: plot.DefaultTextHandler,
			XAlign: draw.XCenter, YAlign: draw.YTop}
		dc.FillText(st, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: dc.Max.Y - vg.Points(4)}, title)
		dc = draw.Crop(dc, 0, 0, 0, -vg.Points(22))
	}
	cols := 0
	for _, row := range plots {
		cols = max(cols, len(row))
	}
	t := draw.Tiles{Rows: len(plots), Cols: cols, PadX: vg.Points(6), PadY: vg.Points(6),
		PadLeft: vg.Points(4), PadRight: vg.Points(8), PadBottom: vg.Points(4), PadTop: vg.Points(4)}
	full := make([][]*plot.Plot, len(plots))
	for j, row := range plots {
		full[j] = make([]*plot.Plot, cols)
		copy(full[j], row)
	}
	canvases := plot.Align(full, t, dc)
	for j := range full {
		for i, p := range full[j] {
			if p != nil {
				p.Draw(canvases[j][i])
			}
		}
	}
}

// grid is a plotter.GridXYZ over regularly spaced cell centres, z stored
// row-major (row r = y index).
type grid struct {
	xs, ys []float64
	z      []float64
}

func (g grid) Dims() (c, r int)   { return len(g.xs), len(g.ys) }
func (g grid) Z(c, r int) float64 { return g.z[r*len(g.xs)+c] }
func (g grid) X(c int) float64    { return g.xs[c] }
func (g grid) Y(r int) float64    { return g.ys[r] }
func (g grid) Min() (v float64)   { return minMax(g.z, true) }
func (g grid) Max() (v float64)   { return minMax(g.z, false) }
func linspace(lo, hi float64, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = lo + (hi-lo)*(float64(i)+0.5)/float64(n)
	}
	return v
}

func minMax(v []float64, lowest bool) float64 {
	m := v[0]
	for _, x := range v {
		if lowest {
			m = min(m, x)
		} else {
			m = max(m, x)
		}
	}
	return m
}

// heatPlot returns a heat map of g with the colour map cm over [lo, hi].
func heatPlot(g grid, cm palette.ColorMap, lo, hi float64, title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	cm.SetMin(lo)
	cm.SetMax(hi)
	h := plotter.NewHeatMap(g, cm.Palette(64))
	h.Min, h.Max = lo, hi
	h.Rasterized = true
	h.Underflow, h.Overflow = h.Palette.Colors()[0], h.Palette.Colors()[63]
	p.Add(h)
	return p
}

// squareLine returns the outline of the origin-centred square of half-width
// r, drawn with the given dash pattern.
func squareLine(r float64, dashes []vg.Length) (*plotter.Line, error) {
	l, err := plotter.NewLine(plotter.XYs{{X: -r, Y: -r}, {X: r, Y: -r}, {X: r, Y: r}, {X: -r, Y: r}, {X: -r, Y: -r}})
	if err != nil {
		return nil, err
	}
	l.Color = colRegion
	l.Width = vg.Points(0.8)
	l.Dashes = dashes
	return l, nil
}

// colorBarPlot returns a vertical colour bar of cm over [lo, hi].
func colorBarPlot(cm palette.ColorMap, lo, hi float64, label string) *plot.Plot {
	p := plot.New()
	cm.SetMin(lo)
	cm.SetMax(hi)
	p.Add(&plotter.ColorBar{ColorMap: cm, Vertical: true})
	p.HideX()
	p.Y.Label.Text = label
	p.Y.Padding = 0
	return p
}

// boxes builds a box plot of groups of values at positions 0, 1, ...;
// empty groups get no box. names label the positions.
func boxes(p *plot.Plot, groups [][]float64, fills []color.Color, names []string) error {
	w := vg.Points(14)
	for i, g := range groups {
		if len(g) == 0 {
			continue
		}
		b, err := plotter.NewBoxPlot(w, float64(i), plotter.Values(g))
		if err != nil {
			return err
		}
		b.FillColor = fills[i%len(fills)]
		b.GlyphStyle.Radius = vg.Points(1.5)
		p.Add(b)
	}
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = 0.6
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Tick.Label.YAlign = draw.YCenter
	return nil
}
