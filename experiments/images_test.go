package experiments

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// imgWantFigures are the figures the images section writes.
var imgWantFigures = []string{"images_reliability.png", "images_entropy.png", "images_ood.png", "mnist_extremes.png"}

// TestImagesQuick runs the images section alone in its quick
// configuration (imagesSettings: 1,000 training and 500 test images per
// data set, a PTM of 64 clauses, T 500 and 4 epochs, not the default
// recipe) and checks the summary's keys, accuracy floors a little below
// the measured quick figures, sane calibration, and out-of-distribution
// AUROCs that are reported and better than chance where the model
// separates the data sets at all. Then it runs the section again as two
// shards and merges them (imagesShardMerge). About 35 s of CPU in all.
func TestImagesQuick(t *testing.T) {
	dir := t.TempDir()
	last := time.Now()
	logf := func(stage string, done, total int) {
		if time.Since(last) > 10*time.Second || done == total {
			t.Logf("[progress] %s %d/%d", stage, done, total)
			last = time.Now()
		}
	}
	sum, err := Run(context.Background(), Options{Out: dir, Quick: true, Only: OnlyImages, Progress: logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("quick images section took %s", sum.Elapsed.Round(time.Second))
	raw, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var js map[string]any
	if err := json.Unmarshal(raw, &js); err != nil {
		t.Fatalf("summary.json: %v", err)
	}
	num := func(k string) float64 {
		t.Helper()
		v, ok := js[k].(float64)
		if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
			t.Errorf("summary.json %s = %v, want a finite number", k, js[k])
			return math.NaN()
		}
		return v
	}
	// Floors: about 0.1 below the quick run's measured accuracies (MNIST
	// PTM 0.749 (plain 0.743) with one bit-plane, 0.802 (plain 0.796)
	// with the recipe's two since the adaptive plane, baselines
	// 0.84-0.88; Fashion-MNIST PTM
	// 0.594 (plain 0.578; its own recipe: the adaptive plane, 7 x 7
	// window), baselines 0.75-0.78; the PTM of pipeline.TrainConv, 64
	// clauses, T 500, 4 epochs on 900 images), far above chance (0.1).
	floors := map[string][2]float64{"ptm": {0.65, 0.48}, "ptm_plain": {0.65, 0.48}, "mlp": {0.78, 0.65}, "mlp_ens": {0.78, 0.65}, "rf": {0.74, 0.67}}
	for _, m := range imgModels {
		t.Logf("%s: accuracy MNIST %.4f, Fashion-MNIST %.4f; ECE %.4f, %.4f; OOD AUROC(entropy) %.4f, (MI) %.4f", m.key,
			js["mnist.test."+m.key+".accuracy"], js["fashion_mnist.test."+m.key+".accuracy"],
			js["mnist.test."+m.key+".ece"], js["fashion_mnist.test."+m.key+".ece"],
			js["mnist.ood_fashion."+m.key+".auroc_entropy"], js["mnist.ood_fashion."+m.key+".auroc_mi"])
		t.Logf("%s: reverse OOD (Fashion-MNIST's models, MNIST's test images) AUROC(entropy) %.4f, (MI) %.4f", m.key,
			js["fashion_mnist.ood_mnist."+m.key+".auroc_entropy"], js["fashion_mnist.ood_mnist."+m.key+".auroc_mi"])
	}
	t.Logf("model bytes %v, mapping %v", js["mnist.ptm.model_bytes"], js["mnist.ptm.mapping"])
	for m, fl := range floors {
		for i, d := range []string{"mnist", "fashion_mnist"} {
			p := d + ".test." + m + "."
			if a := num(p + "accuracy"); a < fl[i] {
				t.Errorf("%saccuracy %.4f, want >= %.2f", p, a, fl[i])
			}
			if e := num(p + "ece"); !(e >= 0 && e <= 0.4) {
				t.Errorf("%sece %.4f, want 0..0.4", p, e)
			}
			if n := num(p + "nll"); !(n > 0 && n < 2.3) {
				t.Errorf("%snll %.4f, want 0 < NLL < ln 10", p, n)
			}
			for _, k := range []string{"auroc_entropy", "auroc_mi"} {
				if a := num(p + k); !(a > 0.5 && a <= 1) {
					t.Errorf("%s%s %.4f, want above chance (0.5]", p, k, a)
				}
			}
		}
		for _, ood := range []string{"mnist.ood_fashion.", "fashion_mnist.ood_mnist."} {
			for _, k := range []string{"auroc_entropy", "auroc_mi"} {
				a := num(ood + m + "." + k)
				if !(a >= 0 && a <= 1) {
					t.Errorf("%s%s.%s = %v, want an AUROC", ood, m, k, a)
				}
			}
		}
	}
	// The PTM's entropy ranks Fashion-MNIST above MNIST (measured: AUROC
	// 0.926 by entropy with one bit-plane, 0.915 with two; by MI 0.524 and
	// 0.563, near chance at this size).
	if a := num("mnist.ood_fashion.ptm.auroc_entropy"); a < 0.8 {
		t.Errorf("mnist.ood_fashion.ptm.auroc_entropy %.4f, want >= 0.8", a)
	}
	// The model file holds the 4-bit bank (64 clauses x 472 literals: the
	// MNIST recipe's two bit-planes) and the SPVs (at most 15 bits x 200
	// states per TA); measured 656,677 bytes (386,013 with one plane).
	if b := num("mnist.ptm.model_bytes"); !(b > 64*472*4/8 && b < 64*472*200*15/8) {
		t.Errorf("mnist.ptm.model_bytes %v, want a model file of 64 clauses x 472 literals", b)
	}
	if !strings.Contains(js["mnist.ptm.config"].(string), "64 coalesced clauses, T 500,") {
		t.Errorf("mnist.ptm.config %q, want the quick 64 clauses, T 500", js["mnist.ptm.config"])
	}
	if s, mb := num("mnist.ptm.train_s"), num("mnist.ptm.peak_rss_mb"); !(s > 0) || !(mb > 10) {
		t.Errorf("mnist.ptm.train_s %v, peak_rss_mb %v", s, mb)
	}
	// The stratified subsets hold the asked numbers of images, give or
	// take rounding per class.
	ic := imagesSettings(true)
	for _, d := range []string{"mnist", "fashion_mnist"} {
		if n, m := num(d+".train_images"), num(d+".test_images"); math.Abs(n-float64(ic.trainRows)) > 10 || math.Abs(m-float64(ic.testRows)) > 10 {
			t.Errorf("%s: %v training, %v test images, want about %d and %d", d, n, m, ic.trainRows, ic.testRows)
		}
	}
	for k := range js {
		if k != "figures" && !strings.HasPrefix(k, "mnist.") && !strings.HasPrefix(k, "fashion_mnist.") && !strings.HasPrefix(k, "meta.") {
			t.Errorf("summary.json has key %q outside the images section", k)
		}
	}
	report, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"## 7. Images", "### MNIST", "### Fashion-MNIST", "--only images --quick", "| MLP ensemble |",
		"### Out of distribution: models trained on MNIST, queried with Fashion-MNIST's test images (summary keys `mnist.ood_fashion.MODEL.*`)",
		"### Out of distribution: models trained on Fashion-MNIST, queried with MNIST's test images (summary keys `fashion_mnist.ood_mnist.MODEL.*`)",
		"PTM recipe: 64 coalesced clauses, T 500,",
		fmt.Sprintf("Better of AUROC(entropy) and AUROC(MI): PTM %.3f, MLP-MCd %.3f,",
			max(num("mnist.ood_fashion.ptm.auroc_entropy"), num("mnist.ood_fashion.ptm.auroc_mi")),
			max(num("mnist.ood_fashion.mlp.auroc_entropy"), num("mnist.ood_fashion.mlp.auroc_mi"))),
		// The quick PTM's best OOD AUROC (0.926 measured) is below 0.95.
		"Target (issue 28): the PTM's >= 0.95 and >= MLP-MCd's: **not met**"} {
		if !bytes.Contains(report, []byte(s)) {
			t.Errorf("report.md lacks %q", s)
		}
	}
	if bytes.Contains(report, []byte("NaN")) || bytes.Contains(report, []byte("%!")) || bytes.Contains(report, []byte("## 1.")) {
		t.Error("report.md contains NaN, a formatting error or another section")
	}
	for _, f := range imgWantFigures {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Errorf("figure %s: %v", f, err)
			continue
		}
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Errorf("figure %s is not a valid PNG: %v", f, err)
			continue
		}
		if b := img.Bounds(); b.Dx() < 200 || b.Dy() < 100 {
			t.Errorf("figure %s is %dx%d pixels", f, b.Dx(), b.Dy())
		}
		if !bytes.Contains(report, []byte("]("+f+")")) {
			t.Errorf("report.md does not link %s", f)
		}
	}
	if t.Failed() {
		return
	}
	imagesShardMerge(t, dir, logf)
}

// imgTimingKey reports whether a summary key of the images section is a
// measurement of time or memory (training seconds, peak RSS), which differ
// between runs.
func imgTimingKey(k string) bool {
	return strings.HasSuffix(k, ".train_s") || strings.HasSuffix(k, ".peak_rss_mb")
}

// imgTimingText matches the images report's times and memory: the
// training column of its tables and the PTM's training time and peak RSS.
var imgTimingText = regexp.MustCompile(`(?m)\| [0-9]+ \|$|training [0-9]+ s; peak RSS of the process after training ([0-9]+|NaN) MB`)

// imagesShardMerge runs the quick images section again as two shards
// (checking that each wrote only unit files, its units', and that the
// units cover the section), merges them and compares with the unsharded
// run in whole: summary.json number for number but times, report.md
// but times, figures byte for byte. Then one unit removed must stop the
// merge naming it (and --partial report without the section), and one
// unit in both shards name both files.
func imagesShardMerge(t *testing.T, whole string, logf func(string, int, int)) {
	units, err := ShardUnits(Options{Quick: true, Only: OnlyImages}, Shard{})
	if err != nil {
		t.Fatal(err)
	}
	if len(units) != len(imgSpecs)*len(imgGroups) {
		t.Errorf("images units %v, want one per data set and model", units)
	}
	base := t.TempDir()
	var dirs []string
	seen := map[string]bool{}
	for i := 1; i <= 2; i++ {
		dir := filepath.Join(base, fmt.Sprintf("shard%d", i))
		if _, err := Run(context.Background(), Options{Out: dir, Quick: true, Only: OnlyImages, Shard: Shard{i, 2}, Progress: logf}); err != nil {
			t.Fatalf("shard %d/2: %v", i, err)
		}
		want, err := ShardUnits(Options{Quick: true, Only: OnlyImages}, Shard{i, 2})
		if err != nil {
			t.Fatal(err)
		}
		files, err := filepath.Glob(filepath.Join(dir, "*"))
		if err != nil || len(files) != 1 || filepath.Base(files[0]) != unitsDir {
			t.Errorf("shard %d/2 wrote %v, want only %s/", i, files, unitsDir)
		}
		got, _ := filepath.Glob(filepath.Join(dir, unitsDir, "*.gob"))
		for j := range got {
			if h, err := readUnitHeader(got[j]); err == nil {
				t.Logf("shard %d/2: unit %s took %.1f s", i, h.Unit, h.Seconds)
			}
			got[j] = strings.TrimSuffix(filepath.Base(got[j]), ".gob")
			seen[got[j]] = true
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) || len(got) == 0 {
			t.Errorf("shard %d/2 wrote units %v, want %v", i, got, want)
		}
		dirs = append(dirs, dir)
	}
	if len(seen) != len(units) {
		t.Errorf("the shards wrote %d units, the section has %d", len(seen), len(units))
	}
	merged := filepath.Join(base, "merged")
	if _, err := Merge(context.Background(), MergeOptions{Dirs: dirs, Out: merged, Progress: logf}); err != nil {
		t.Fatal(err)
	}
	compareRuns(t, whole, merged, imgWantFigures, imgTimingKey, func(s string) string { return imgTimingText.ReplaceAllString(s, "TIME") })

	// A unit missing: the merge names it and writes nothing; --partial
	// writes the report without the section.
	const victim = "images.fashion_mnist.rf"
	m, _ := filepath.Glob(filepath.Join(base, "shard*", unitsDir, victim+".gob"))
	if len(m) != 1 {
		t.Fatalf("unit %s in %d shards", victim, len(m))
	}
	data, err := os.ReadFile(m[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(m[0]); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(base, "partial")
	_, err = Merge(context.Background(), MergeOptions{Dirs: dirs, Out: out})
	var me *MergeError
	if !errors.As(err, &me) || !slices.Equal(me.Missing, []string{victim}) || !strings.Contains(err.Error(), victim) {
		t.Errorf("merge without a unit: %v, want a MergeError naming %s", err, victim)
	}
	if _, err := os.Stat(filepath.Join(out, "summary.json")); err == nil {
		t.Error("a merge with a missing unit wrote summary.json")
	}
	sum, err := Merge(context.Background(), MergeOptions{Dirs: dirs, Out: out, Partial: true})
	if err != nil {
		t.Fatalf("partial merge: %v", err)
	}
	if got := sum.Labels["meta.missing_units"]; got != victim {
		t.Errorf("partial summary: meta.missing_units = %q", got)
	}
	if _, ok := sum.Value("mnist.test.ptm.accuracy"); ok {
		t.Error("partial summary has keys of the images section, which misses a unit")
	}
	// The unit in both shards: the merge names it and both files.
	if err := os.WriteFile(filepath.Join(dirs[0], unitsDir, victim+".gob"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dirs[1], unitsDir, victim+".gob"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Merge(context.Background(), MergeOptions{Dirs: dirs, Out: out})
	if !errors.As(err, &me) || len(me.Duplicated[victim]) != 2 {
		t.Errorf("merge with a unit twice: %v, want a MergeError naming %s twice", err, victim)
	}
}

func TestRunRejectsOnly(t *testing.T) {
	_, err := Run(context.Background(), Options{Out: t.TempDir(), Quick: true, Only: "pictures"})
	if err == nil || !strings.Contains(err.Error(), `run only "pictures": want images or tables`) {
		t.Errorf("err = %v", err)
	}
}
