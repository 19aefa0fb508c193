package synth

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// Row is one line of a design-space sweep: a Result, or the
// configuration and the error of a run that failed.
type Row struct {
	Result
	Error string `json:"error,omitempty"`
}

// Describe returns the configuration part of a Result for o (what is known
// before any tool runs).
func Describe(o Options) Result {
	r := Result{Device: o.Device, CoreOnly: o.CoreOnly, Ethernet: !o.CoreOnly && !o.NoEth, SetsMax: o.boardSetsMax(), Model: o.Model, TargetMHz: o.FreqMHz, Seed: o.Seed}
	if dev, err := LookupDevice(o.Device); err == nil {
		r.Device, r.Board, r.LUTsAvailable, r.BRAMsAvailable = dev.Name, dev.Board, dev.LCs, dev.BRAMs
	}
	if r.TargetMHz == 0 {
		r.TargetMHz = DefaultMHz
	}
	if d := o.Design; d != nil {
		p := d.Params
		r.ModelHash = p.Hash
		r.TMs, r.Classes, r.Clauses, r.Features, r.TAs = d.Shape.TMs, d.Shape.Classes, d.Shape.Clauses, d.Shape.Features, d.Shape.TAs()
		r.Bits, r.LFSRWidth, r.Lanes, r.ClauseLanes, r.LiteralLanes, r.Depth = p.Bits, p.W, p.L, p.LC, p.LL, p.D
		r.RequestCyclesK100 = RequestPeriod(&p, QueryK)
		r.CyclesPerSample = float64(r.RequestCyclesK100) / QueryK
	}
	return r
}

// FailedRow is the sweep row of a run that returned err without a Result.
func FailedRow(o Options, err error) Row {
	r := Row{Result: Describe(o), Error: err.Error()}
	switch {
	case errors.Is(err, ErrNoFit):
		r.Binding = "does not fit"
	case errors.Is(err, ErrTiming):
		r.Binding = "timing"
	default:
		r.Binding = "error"
	}
	return r
}

// ReadRows reads a stream of JSON rows (synth --json output, one object
// after another).
func ReadRows(rd io.Reader) ([]Row, error) {
	dec := json.NewDecoder(rd)
	var rows []Row
	for {
		var r Row
		err := dec.Decode(&r)
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return rows, fmt.Errorf("synth: results: %w", err)
		}
		rows = append(rows, r)
	}
}

// si formats a rate with a k/M suffix.
func si(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2f M", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1f k", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

// Table renders rows as the Markdown design-space table of
// docs/synthesis.md.
func Table(rows []Row) string {
	var b strings.Builder
	b.WriteString("| model | device | top | L (LC x LL) | B | W | D | cycles/sample | logic cells | BRAM | Fmax / target MHz | samples/s | queries/s K=100 | link queries/s | binds |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		model := strings.TrimSuffix(filepath.Base(r.Model), filepath.Ext(r.Model))
		if model == "" || model == "." {
			model = "-"
		}
		top := "board"
		switch {
		case r.CoreOnly:
			top = "core"
		case !r.Ethernet:
			top = "board, UART only"
		}
		cfg := fmt.Sprintf("| %s | %s | %s | %d (%dx%d) | %d | %d | %d | %.2f ", model, r.Device, top,
			r.Lanes, r.ClauseLanes, r.LiteralLanes, r.Bits, r.LFSRWidth, r.Depth, r.CyclesPerSample)
		b.WriteString(cfg)
		if r.Error != "" {
			msg := r.Error
			if i := strings.Index(msg, " (log: "); i >= 0 {
				msg = msg[:i]
			}
			fmt.Fprintf(&b, "| - | - | - | - | - | - | %s: %s |\n", r.Binding, strings.ReplaceAll(msg, "|", "/"))
			continue
		}
		link := "-"
		if !r.CoreOnly && len(r.Links) > 0 {
			link = si(r.Links[0].QueriesPerS) + " (UART)"
		}
		fmax := fmt.Sprintf("%.1f / %.0f", r.FmaxMHz, r.TargetMHz)
		if !r.TimingMet {
			fmax += " (fail)"
		}
		packed := ""
		if r.BankPass.Packed > 0 {
			packed = " p"
		}
		fmt.Fprintf(&b, "| %d/%d (%.0f%%) | %d/%d%s | %s | %s | %s | %s | %s |\n",
			r.LUTs, r.LUTsAvailable, 100*float64(r.LUTs)/float64(max(1, r.LUTsAvailable)),
			r.BRAMs, r.BRAMsAvailable, packed, fmax, si(r.SamplesPerS), si(r.QueriesPerSK100), link, r.Binding)
	}
	return b.String()
}
