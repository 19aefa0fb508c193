package scripts_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptmhw/ptm/golden/dataset"
	"github.com/ptmhw/ptm/internal/testenv"
)

// progressLines copies a script's output into buf and logs its step
// lines ("==> ...") as they come, so that `go test -v` shows the steps.
type progressLines struct {
	t   *testing.T
	mu  sync.Mutex
	buf bytes.Buffer
	rem []byte
}

func (p *progressLines) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf.Write(b)
	p.rem = append(p.rem, b...)
	for {
		i := bytes.IndexByte(p.rem, '\n')
		if i < 0 {
			break
		}
		if line := string(p.rem[:i]); strings.HasPrefix(line, "==>") {
			p.t.Logf("[progress] %s (load %s)", line, testenv.LoadString())
		}
		p.rem = p.rem[i+1:]
	}
	return len(b), nil
}

// goldenEval is the part of `ptm eval --json` the test compares with the
// report.
type goldenEval struct {
	Fixed        bool     `json:"fixed"`
	Queries      int      `json:"queries"`
	Samples      int      `json:"samples"`
	Accuracy     float64  `json:"accuracy"`
	ECE          float64  `json:"ece"`
	NLL          float64  `json:"nll"`
	AUROCEntropy *float64 `json:"auroc_entropy"`
	AUROCMI      *float64 `json:"auroc_mi"`
	OOD          struct {
		Rows         int     `json:"rows"`
		AUROCEntropy float64 `json:"auroc_entropy"`
		AUROCMI      float64 `json:"auroc_mi"`
		EntropyIn    float64 `json:"entropy_in"`
		EntropyOOD   float64 `json:"entropy_ood"`
	} `json:"ood"`
}

// streamSummary is the part of `ptm stream --json` the test reads.
type streamSummary struct {
	Queries    int `json:"queries"`
	Verified   int `json:"verified"`
	Lost       int `json:"lost"`
	Duplicated int `json:"duplicated"`
	Mismatches int `json:"mismatches_vs_golden"`
	K          int `json:"k"`
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// unsetSim clears the settings of the recipe and of the Verilated
// board's core, so that a test's run takes the script's defaults.
var unsetSim = []string{"RECIPE=", "LANES=", "PATCHES=", "W=", "SCAN=", "COSIM="}

// TestDemoImagesBadSettings gives scripts/demo-images.sh a bad value of
// each of its recipe and board-configuration settings: each must be
// refused before any work (no output folder made) with exit status 2 and
// a message naming the setting and its value.
func TestDemoImagesBadSettings(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip(err)
	}
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip(err)
	}
	ctx := testenv.Context(t)
	tmp := t.TempDir()
	ptm := filepath.Join(tmp, "ptm")
	build := exec.CommandContext(ctx, gocmd, "build", "-o", ptm, "./cmd/ptm")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, c := range []struct {
		set  string
		want string // in the message, beside "SETTING=value"
	}{
		{"LANES=16", "want CLAUSExLITERAL lanes"},
		{"LANES=1x", "want CLAUSExLITERAL lanes"},
		{"LANES=0x16", "want CLAUSExLITERAL lanes"},
		{"LANES=ax16", "want CLAUSExLITERAL lanes"},
		{"PATCHES=0", "want a positive count of patches"},
		{"PATCHES=seven", "want a positive count of patches"},
		{"W=-16", "want a positive LFSR width"},
		{"SCAN=sideways", "want range, full or compact"},
		{"COSIM=many", "want a count of images"},
		{"SYNTH=2", "want 1 (build the UP5K image) or 0"},
		{"RECIPE=--clauses", "want a recipe name"},
		{"RECIPE=mnist-up6k", "want one of mnist, fashion-mnist"},
	} {
		out := filepath.Join(tmp, "out")
		cmd := exec.CommandContext(ctx, bash, "demo-images.sh", ptm, out)
		cmd.Env = append(os.Environ(), append(append([]string{"QUICK=", "DATA=mnist", "MODEL=", "N=", "M=", "K=", "BOARD=sim", "SYNTH=", "OOD="}, unsetSim...), c.set)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err == nil {
			code = 0
		}
		msg := stderr.String()
		if code != 2 || !strings.Contains(msg, "demo-images.sh: "+c.set+": ") || !strings.Contains(msg, c.want) {
			t.Errorf("%s: exit %d (%v), stderr %q; want exit 2 and a message naming %s with %q", c.set, code, err, msg, c.set, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: the script made %s before refusing the setting", c.set, out)
		}
	}
}

// quickDemo runs `make demo DATA=mnist QUICK=1 BOARD=board`'s script
// and checks its report (every answer verified, every figure the board's
// answers give equal to eval --fixed's, the board row starting with
// boardRow, the five figures, six steps); it returns the ptm binary, the
// output folder, bash and the test's context.
func quickDemo(t *testing.T, board, boardRow string) (ptm, out, bash string, ctx context.Context) {
	t.Helper()
	var err error
	if _, err := dataset.MNISTDir(); err != nil {
		t.Skipf("MNIST: %v", err)
	}
	if _, err := os.Stat(dataset.FashionMNISTDir); err != nil && os.Getenv(dataset.EnvFashionMNISTDir) == "" {
		t.Skipf("Fashion-MNIST: %v", err)
	}
	bash, err = exec.LookPath("bash")
	if err != nil {
		t.Skip(err)
	}
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip(err)
	}
	ctx = testenv.Context(t)
	tmp := t.TempDir()
	ptm = filepath.Join(tmp, "ptm")
	start := time.Now()
	build := exec.CommandContext(ctx, gocmd, "build", "-o", ptm, "./cmd/ptm")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Logf("[progress] built ptm in %.1fs (load %s)", time.Since(start).Seconds(), testenv.LoadString())
	out = filepath.Join(tmp, "demo")
	cmd := exec.CommandContext(ctx, bash, "demo-images.sh", ptm, out)
	cmd.Env = append(os.Environ(), append([]string{"QUICK=1", "DATA=mnist", "MODEL=", "N=", "M=", "K=", "BOARD=" + board, "SYNTH=", "OOD="}, unsetSim...)...)
	logw := &progressLines{t: t}
	cmd.Stdout, cmd.Stderr = logw, logw
	start = time.Now()
	err = cmd.Run()
	if err != nil {
		t.Fatalf("demo-images.sh: %v\n%s", err, logw.buf.String())
	}
	t.Logf("[progress] the quick demo ran in %.1fs (load %s)", time.Since(start).Seconds(), testenv.LoadString())

	var ev goldenEval
	readJSON(t, filepath.Join(out, "golden-eval.json"), &ev)
	if !ev.Fixed || ev.Queries != 30 || ev.Samples != 16 || ev.OOD.Rows != 20 {
		t.Fatalf("golden evaluation: fixed %v, %d images, K %d, %d OOD images; want the fixed-point model, 30, 16, 20", ev.Fixed, ev.Queries, ev.Samples, ev.OOD.Rows)
	}
	for _, c := range []struct {
		file string
		n    int
	}{{"stream.json", 30}, {"stream-ood.json", 20}} {
		var s streamSummary
		readJSON(t, filepath.Join(out, c.file), &s)
		if s.Queries != c.n || s.Verified != c.n || s.Lost != 0 || s.Duplicated != 0 || s.Mismatches != 0 || s.K != 16 {
			t.Errorf("%s: %+v; want %d images verified, 0 lost, 0 duplicated, 0 mismatches, K 16", c.file, s, c.n)
		}
	}

	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	report := string(md)
	f := func(v float64) string {
		if math.IsNaN(v) {
			return "n/a"
		}
		return fmt.Sprintf("%.4f", v)
	}
	ptr := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	// The board column (computed by ptm report from the streamed answers)
	// and the golden column (eval --fixed) must both be the golden value.
	for _, w := range []struct {
		name string
		v    float64
	}{
		{"accuracy", ev.Accuracy}, {"ECE (10 bins)", ev.ECE}, {"NLL (nats)", ev.NLL},
		{"AUROC(entropy), wrong vs right", ptr(ev.AUROCEntropy)}, {"AUROC(MI), wrong vs right", ptr(ev.AUROCMI)},
		{"OOD AUROC(entropy), mnist vs fashion-mnist", ev.OOD.AUROCEntropy}, {"OOD AUROC(MI), mnist vs fashion-mnist", ev.OOD.AUROCMI},
		{"mean entropy, mnist images (bits)", ev.OOD.EntropyIn}, {"mean entropy, fashion-mnist images (bits)", ev.OOD.EntropyOOD},
	} {
		line := fmt.Sprintf("| %s | %s | %s |", w.name, f(w.v), f(w.v))
		if !strings.Contains(report, line) {
			t.Errorf("report.md lacks %q (the board's figure equal to the golden one)", line)
		}
	}
	for _, w := range []string{
		"| images | 30 | 30 |",
		"| fashion-mnist images (OOD) | 20 | 20 |",
		"| mnist test images N (verified) | 30 (30) |",
		"| mismatches vs the golden fixed-point model | 0 (lost 0, duplicated 0) |",
		"| link, mode, K | uart ",
		boardRow,
		"| model hash | ",
	} {
		if !strings.Contains(report, w) {
			t.Errorf("report.md lacks %q", w)
		}
	}
	for _, name := range []string{"reliability.png", "entropy-right-wrong.png", "entropy-ood.png", "least-certain.png", "confident-wrong.png"} {
		if !strings.Contains(report, "("+name+")") {
			t.Errorf("report.md does not show %s", name)
		}
		fh, err := os.Open(filepath.Join(out, name))
		if err != nil {
			t.Error(err)
			continue
		}
		cfg, err := png.DecodeConfig(bufio.NewReader(fh))
		fh.Close()
		if err != nil || cfg.Width < 200 || cfg.Height < 200 {
			t.Errorf("%s: %dx%d, %v; want a PNG figure", name, cfg.Width, cfg.Height, err)
		}
	}
	steps, err := os.ReadFile(filepath.Join(out, "steps.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(steps), "\n"); n != 6 {
		t.Errorf("steps.tsv has %d steps, want 6:\n%s", n, steps)
	}
	if t.Failed() {
		t.Logf("report.md:\n%s\nscript output:\n%s", report, logw.buf.String())
	}
	return ptm, out, bash, ctx
}

// TestDemoImagesQuickSim runs the quick demo on the Verilated RTL board
// (BOARD=sim: the UP5K core configuration, 1 x 16 lanes, 7 patches per
// cycle, 16-bit LFSRs, and a cosim of 100 images first) and checks the
// same report, so the golden column (eval --fixed with the board's lanes
// and LFSR width) equals the board's answers; the board row names the
// configuration and the cosim's cycles per sample. About 3 minutes at
// load 6 (the Verilator builds of a new shape): PTM_LONG_TESTS=1.
func TestDemoImagesQuickSim(t *testing.T) {
	testenv.SkipUnlessLong(t, "the quick demo on the Verilated board (about 3 minutes)")
	_, out, _, _ := quickDemo(t, "sim", "| board | the Verilated RTL board (`ptm board --model`, board_top KIND 1, UART bridged to a pseudo-terminal), core 1 clause x 16 literal lanes, 7 patches per cycle, LFSR width 16, range scan; the core's ")
	var cs struct {
		Mismatches      int     `json:"mismatches"`
		CyclesPerSample float64 `json:"cycles_per_sample"`
		Images          int     `json:"images"`
		ClauseLanes     int     `json:"clause_lanes"`
		LiteralLanes    int     `json:"literal_lanes"`
		PatchLanes      int     `json:"patch_lanes"`
		LFSRWidth       int     `json:"lfsr_width"`
	}
	readJSON(t, filepath.Join(out, "cosim.json"), &cs)
	if cs.Mismatches != 0 || cs.Images != 100 || cs.CyclesPerSample <= 0 || cs.ClauseLanes != 1 || cs.LiteralLanes != 16 || cs.PatchLanes != 7 || cs.LFSRWidth != 16 {
		t.Errorf("cosim.json: %+v; want 100 images on 1 x 16 lanes, 7 patches, W 16, 0 mismatches", cs)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("the core's %.1f cycles per sample (`ptm cosim` of the same configuration on the first 100 mnist test images, K=16, 0 mismatches)", cs.CyclesPerSample); !strings.Contains(string(md), want) {
		t.Errorf("report.md lacks %q", want)
	}
}

// TestDemoImagesQuick runs `make demo DATA=mnist QUICK=1`'s script
// (scripts/demo-images.sh: a 32-clause model trained on 3,000 MNIST
// images for one epoch, the software board, 30 test images and 20
// Fashion-MNIST images at K = 16) and checks its report: every answer
// verified against the golden model (0 mismatches, 0 lost), every figure
// the report computes from the board's answers equal to `ptm eval
// --fixed` on the same images (the script's golden-eval.json), and the
// five figures written as PNG images.
func TestDemoImagesQuick(t *testing.T) {
	ptm, out, bash, ctx := quickDemo(t, "soft", "| board | the software board (`ptm board --soft`")
	if t.Failed() {
		return
	}

	// The first run recorded the recipe it trained beside the model: `ptm
	// train --print-recipe`'s line, the quick recipe on MNIST.
	stampPath := filepath.Join(out, "mnist-quick.ptm.recipe")
	stamp, err := os.ReadFile(stampPath)
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Data   string `json:"data"`
		Recipe struct {
			Name     string
			Clauses  int
			T        int
			Epochs   int
			Adaptive *struct{ Block, C int }
		} `json:"recipe"`
		TrainRows int `json:"train_rows"`
		ValRows   int `json:"val_rows"`
	}
	if err := json.Unmarshal(stamp, &rec); err != nil {
		t.Fatalf("%s: %v\n%s", stampPath, err, stamp)
	}
	if r := rec.Recipe; rec.Data != "mnist" || r.Name != "mnist" || r.Clauses != 32 || r.T != 100 || r.Epochs != 1 || r.Adaptive == nil ||
		rec.TrainRows != 3000 || rec.ValRows != 300 {
		t.Errorf("%s: %s; want MNIST's recipe with the quick overrides (32 clauses, T 100, 1 epoch, 3000 training and 300 validation rows)", stampPath, stamp)
	}
	modelPath := filepath.Join(out, "mnist-quick.ptm")
	again := func(what string) (string, time.Time) {
		t.Helper()
		cmd := exec.CommandContext(ctx, bash, "demo-images.sh", ptm, out)
		cmd.Env = append(os.Environ(), append([]string{"QUICK=1", "DATA=mnist", "MODEL=", "N=5", "M=5", "K=", "BOARD=", "SYNTH=", "OOD="}, unsetSim...)...)
		logw := &progressLines{t: t}
		cmd.Stdout, cmd.Stderr = logw, logw
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, logw.buf.String())
		}
		fi, err := os.Stat(modelPath)
		if err != nil {
			t.Fatal(err)
		}
		return logw.buf.String(), fi.ModTime()
	}
	fi, err := os.Stat(modelPath)
	if err != nil {
		t.Fatal(err)
	}
	trained := fi.ModTime()

	// A second run reuses the model the first left (same recipe).
	log, mt := again("second run")
	if !strings.Contains(log, "reused from an earlier run with the same recipe") || !mt.Equal(trained) {
		t.Errorf("the second run did not reuse the model (modified %v, trained %v):\n%s", mt, trained, log)
	}

	// A model trained under another recipe (here the stamp of yesterday's
	// one-plane MNIST recipe, no adaptive plane) is not reused: the third
	// run trains again and records today's recipe.
	old := strings.Replace(string(stamp), `"Adaptive":{"block":11,"c":2}`, `"Adaptive":null`, 1)
	if old == string(stamp) {
		t.Fatalf("%s: no adaptive plane to remove: %s", stampPath, stamp)
	}
	if err := os.WriteFile(stampPath, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // a retrained model's time differs
	log, mt = again("third run")
	if strings.Contains(log, "reused from an earlier run") || !strings.Contains(log, "is not reused: it was trained with another recipe than today's") ||
		!strings.Contains(log, "its recipe: "+strings.TrimSpace(old)) || mt.Equal(trained) {
		t.Errorf("the third run reused a model of another recipe (modified %v, first trained %v):\n%s", mt, trained, log)
	}
	if now, err := os.ReadFile(stampPath); err != nil || string(now) != string(stamp) {
		t.Errorf("after retraining %s holds %q (%v), want today's recipe %q", stampPath, now, err, stamp)
	}
}
