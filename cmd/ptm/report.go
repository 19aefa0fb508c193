package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

func init() {
	register("report", "print a readable report from the JSON of eval, stream and synth", cmdReport)
}

// readJSONMap reads a JSON object; an empty path gives nil.
func readJSONMap(path string) (map[string]any, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// field formats a number from a JSON object at a dotted path.
func field(m map[string]any, format string, keys ...string) string {
	var v any = m
	for _, k := range keys {
		mm, ok := v.(map[string]any)
		if !ok {
			return "n/a"
		}
		v = mm[k]
	}
	switch x := v.(type) {
	case float64:
		return fmt.Sprintf(format, x)
	case bool:
		return fmt.Sprint(x)
	case string:
		return x
	}
	return "n/a"
}

func cmdReport(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report", "[--eval EVAL.json] [--stream STREAM.json] [--synth SYNTH.json] [--md report.md --rows STREAM-FULL.json --steps STEPS.tsv] [--images DATA --ood-rows OOD-FULL.json --ood-stream OOD.json --ood-name NAME --board KIND]", stderr)
	evalPath := fs.String("eval", "", "output of `ptm eval --json` (the golden float model)")
	streamPath := fs.String("stream", "", "output of `ptm stream --json` (the board)")
	synthPath := fs.String("synth", "", "output of `ptm synth --json`")
	md := reportMDFlags{
		md:    fs.String("md", "", "also write a Markdown report to this `file`, with reliability.png and entropy.png beside it"),
		rows:  fs.String("rows", "", "per-query results of `ptm stream --out` (the figures)"),
		steps: fs.String("steps", "", "the demo's timed steps (seconds<TAB>step lines)"),
		images: fs.String("images", "", "the image report: the image data set the --rows were streamed from (mnist, fashion-mnist, an IDX folder), for its pictures; "+
			"writes entropy histograms and the least certain images beside --md"),
		oodRows:     fs.String("ood-rows", "", "image report: per-query results of `ptm stream --ood --out` (the out-of-distribution images)"),
		oodStream:   fs.String("ood-stream", "", "image report: the summary of that stream (`ptm stream --ood --json`)"),
		oodName:     fs.String("ood-name", "", "image report: the out-of-distribution data set's name"),
		board:       fs.String("board", "", "image report: the kind of board that answered, as the report names it"),
		synthSearch: fs.String("synth-search", "", "image report: the `ptm synth --json` of the search that chose the image (its steps are listed; --synth is the image itself, e.g. the same build at measured cycles)"),
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if *evalPath == "" && *streamPath == "" && *synthPath == "" && *md.images == "" {
		return fmt.Errorf("%w: give at least one of --eval, --stream, --synth", errUsage)
	}
	ev, err := readJSONMap(*evalPath)
	if err != nil {
		return err
	}
	st, err := readJSONMap(*streamPath)
	if err != nil {
		return err
	}
	sy, err := readJSONMap(*synthPath)
	if err != nil {
		return err
	}
	w := stdout
	if st != nil {
		fmt.Fprintf(w, "Board (%s, K=%s, %s mode): %s queries, %s queries/s, receive-line utilization %s (measured by: %s)\n",
			field(st, "%s", "link"), field(st, "%.0f", "k"), field(st, "%s", "mode"),
			field(st, "%.0f", "queries"), field(st, "%.1f", "queries_per_s"), field(st, "%.2f", "link_utilization"),
			field(st, "%s", "link_utilization_source"))
		fmt.Fprintf(w, "  agreement with the golden fixed-point model: %s mismatches, %s lost, %s duplicated (%s retries, %s CRC errors)\n",
			field(st, "%.0f", "mismatches_vs_golden"), field(st, "%.0f", "lost"), field(st, "%.0f", "duplicated"),
			field(st, "%.0f", "retries"), field(st, "%.0f", "crc_errors"))
		fmt.Fprintf(w, "  accuracy %s   ECE %s   NLL %s   AUROC(entropy) %s   AUROC(MI) %s\n",
			field(st, "%.4f", "metrics", "accuracy"), field(st, "%.4f", "metrics", "ece"), field(st, "%.4f", "metrics", "nll"),
			field(st, "%.4f", "metrics", "auroc_entropy"), field(st, "%.4f", "metrics", "auroc_mi"))
		fmt.Fprintf(w, "  mean entropy      right %s  wrong %s bits\n",
			field(st, "%.4f", "metrics", "mean_entropy_correct"), field(st, "%.4f", "metrics", "mean_entropy_incorrect"))
		fmt.Fprintf(w, "  mutual information right %s  wrong %s bits\n",
			field(st, "%.4f", "metrics", "mean_mi_correct"), field(st, "%.4f", "metrics", "mean_mi_incorrect"))
	}
	if ev != nil {
		kind := "float"
		if f, _ := ev["fixed"].(bool); f {
			kind = "fixed-point"
		}
		fmt.Fprintf(w, "Golden %s model (same rows, K=%s): accuracy %s, ECE %s, AUROC(entropy) %s, AUROC(MI) %s, entropy right/wrong %s/%s, MI right/wrong %s/%s\n", kind,
			field(ev, "%.0f", "samples"), field(ev, "%.4f", "accuracy"), field(ev, "%.4f", "ece"),
			field(ev, "%.4f", "auroc_entropy"), field(ev, "%.4f", "auroc_mi"),
			field(ev, "%.4f", "entropy_correct"), field(ev, "%.4f", "entropy_incorrect"),
			field(ev, "%.4f", "mi_correct"), field(ev, "%.4f", "mi_incorrect"))
	}
	if sy != nil {
		fmt.Fprintf(w, "FPGA (%s): %s/%s logic cells, %s/%s block RAMs, clock %s MHz (Fmax %s MHz, timing met %s), %s cycles/sample -> %s samples/s at the clock (%s at Fmax)\n",
			field(sy, "%s", "device"), field(sy, "%.0f", "luts"), field(sy, "%.0f", "luts_available"),
			field(sy, "%.0f", "brams"), field(sy, "%.0f", "brams_available"), field(sy, "%.2f", "clock_mhz"),
			field(sy, "%.2f", "fmax_mhz"), field(sy, "%v", "timing_met"), field(sy, "%.2f", "cycles_per_sample"),
			field(sy, "%.0f", "samples_per_s_at_clock"), field(sy, "%.0f", "samples_per_s"))
	}
	return md.write(ev, st, sy, stdout, stderr)
}
