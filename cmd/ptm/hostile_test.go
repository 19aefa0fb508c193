//go:build linux

package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The hostile-input replay: every case of issue 14's "Files and paths"
// and "Inputs" lists runs the real CLI (this test binary re-executed as
// ptm, see TestMain) in its own process, under a memory cap and a timeout
// that adapts to the machine's speed, and must end with the expected exit
// status and a message naming what is wrong and where, never a panic or a
// hang, and touch no file but its declared output.

// asCLI is the environment variable that turns the test binary into ptm.
const asCLI = "PTM_HOSTILE_AS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(asCLI) == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// cliResult is one run of the CLI process.
type cliResult struct {
	code           int
	stdout, stderr string
	elapsed        time.Duration
	timedOut       bool
}

// runProcess runs the CLI in dir with a virtual-memory cap of 8 GiB (a
// regression then fails with an allocation error instead of exhausting
// the shared machine) and kills it after timeout.
func runProcess(t *testing.T, dir string, timeout time.Duration, args ...string) cliResult {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	sh := append([]string{"-c", `ulimit -v 8388608 2>/dev/null; exec "$@"`, "ptm", exe}, args...)
	cmd := exec.CommandContext(ctx, "/bin/sh", sh...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), asCLI+"=1", "PTM_MAX_MEMORY=")
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	start := time.Now()
	err = cmd.Run()
	r := cliResult{stdout: o.String(), stderr: e.String(), elapsed: time.Since(start), timedOut: ctx.Err() != nil}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatalf("running ptm %v: %v", args, err)
	}
	return r
}

// snapshot records every file under dir (size, mode, modification time
// and content hash) to tell which files a case touched.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		sum := ""
		if fi.IsDir() { // entries are listed on their own
			rel, _ := filepath.Rel(dir, p)
			m[rel] = "dir " + fi.Mode().String()
			return nil
		}
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h := sha256.Sum256(b)
			sum = fmt.Sprintf("%x", h[:8])
		}
		rel, _ := filepath.Rel(dir, p)
		m[rel] = fmt.Sprintf("%v %d %d %s", fi.Mode(), fi.Size(), fi.ModTime().UnixNano(), sum)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// resealModel edits the JSON header of a model file and re-seals it with
// a valid SHA-256: "a valid checksum but edited fields".
func resealModel(t *testing.T, src, dst string, edit func(h map[string]any)) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	hl := int(binary.LittleEndian.Uint32(data[12:]))
	var h map[string]any
	dec := json.NewDecoder(bytes.NewReader(data[16 : 16+hl]))
	dec.UseNumber()
	if err := dec.Decode(&h); err != nil {
		t.Fatal(err)
	}
	edit(h)
	hj, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	out := append([]byte(nil), data[:12]...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(hj)))
	out = append(out, hj...)
	out = append(out, data[16+hl:len(data)-32]...)
	sum := sha256.Sum256(out)
	if err := os.WriteFile(dst, append(out, sum[:]...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// openSilentPTY returns a pseudo-terminal's slave path with nobody
// answering on its master (kept open until the test ends).
func openSilentPTY(t *testing.T) string {
	t.Helper()
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Skip(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Skip(err)
	}
	return "/dev/pts/" + strconv.Itoa(n)
}

func TestHostileInputs(t *testing.T) {
	dir := t.TempDir()
	w := func(name, text string) string {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return name
	}
	// The reference: a quick training run. Every case's timeout is a
	// multiple of it (at least a minute), so a slow or loaded machine
	// gets more time; only a hang hits it.
	ref := runProcess(t, dir, 10*time.Minute, "train", "--data", "iris", "--epochs", "3", "--clauses", "4", "--states", "8", "-o", "model.ptm")
	if ref.code != 0 {
		t.Fatalf("reference training: exit %d\n%s", ref.code, ref.stderr)
	}
	timeout := max(time.Minute, 50*ref.elapsed)
	if dl, ok := t.Deadline(); ok {
		timeout = min(timeout, time.Until(dl)/4)
	}
	model := filepath.Join(dir, "model.ptm")

	// Model files with a valid checksum and edited fields.
	edits := map[string]func(h map[string]any){
		"split-range.ptm": func(h map[string]any) { h["split"].(map[string]any)["test"] = [][2]int{{3, 3}, {4000, 4000}} },
		"bool-1e12.ptm":   func(h map[string]any) { h["bool_features"] = 1e12 },
		"clauses-1e9.ptm": func(h map[string]any) { h["params"].(map[string]any)["clauses"] = 1e9 },
		"dup-class.ptm":   func(h map[string]any) { h["classes"] = []string{"setosa", "setosa", "virginica"} },
		"empty-feat.ptm":  func(h map[string]any) { f := h["features"].([]any); f[1] = ""; h["features"] = f },
	}
	for name, edit := range edits {
		resealModel(t, model, filepath.Join(dir, name), edit)
	}
	// CSV files.
	var wide strings.Builder
	for i := 0; i <= 100_000; i++ {
		fmt.Fprintf(&wide, "c%d,", i)
	}
	w("wide.csv", strings.TrimSuffix(wide.String(), ",")+"\n")
	w("label-first.csv", "species,a,b\nsetosa,1,2\nvirginica,3,4\n")
	// Same features, classes and row count as Iris, other values.
	var other strings.Builder
	other.WriteString("sepal_length,sepal_width,petal_length,petal_width,species\n")
	for i := 0; i < 150; i++ {
		fmt.Fprintf(&other, "%d.5,%d.25,%d.75,%d.1,%s\n", 4+i%3, 2+i%2, 1+i%6, i%3, []string{"setosa", "versicolor", "virginica"}[i/50])
	}
	w("other.csv", other.String())
	w("data.csv", "a,b,y\n1,2,x\n3,4,y\n1.5,2.5,x\n3.5,4.5,y\n")
	if err := os.Mkdir(filepath.Join(dir, "outdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	w("victim.txt", "precious\n")
	if err := os.Symlink("victim.txt", filepath.Join(dir, "out.ptm.tmp")); err != nil {
		t.Fatal(err)
	}
	pty := openSilentPTY(t)

	type tc struct {
		name    string
		args    []string
		code    int      // wanted exit status
		msg     []string // in stderr
		outputs []string // files the case may create or change
		stdout  []string // in stdout
	}
	bad := func(name string, code int, msg []string, args ...string) tc {
		return tc{name: name, args: args, code: code, msg: msg}
	}
	cases := []tc{
		// Files and paths.
		{name: "planted-tmp-symlink", args: []string{"train", "--data", "iris", "--epochs", "1", "--clauses", "2", "--states", "4", "-o", "out.ptm"}, outputs: []string{"out.ptm"}},
		bad("output-is-directory", 1, []string{"outdir", "is a directory"}, "train", "--data", "iris", "--epochs", "1", "-o", "outdir"),
		bad("train-output-is-data", 2, []string{"-o data.csv is also the input --data", "refusing"}, "train", "--data", "data.csv", "-o", "data.csv"),
		bad("train-output-is-data-via-path", 2, []string{"refusing"}, "train", "--data", "data.csv", "-o", "./outdir/../data.csv"),
		bad("per-query-is-model", 2, []string{"--per-query model.ptm is also the input --model"}, "eval", "--model", "model.ptm", "--data", "iris", "--per-query", "model.ptm"),
		bad("synth-out-newline", 2, []string{"build folder (--out)", `'\n'`}, "synth", "--model", "model.ptm", "--out", "x\n!touch pwned"),
		bad("synth-out-quote", 2, []string{"build folder (--out)", `'"'`}, "synth", "--model", "model.ptm", "--out", `x"y`),
		// Inputs: edited model files.
		bad("model-split-range", 1, []string{"split-range.ptm: byte 16: split", "split.test[1]: run 4000..4000 is not within the 150 rows"}, "eval", "--model", "split-range.ptm", "--data", "iris"),
		bad("model-split-range-stream", 1, []string{"split-range.ptm: byte 16: split"}, "stream", "--uart", pty, "--model", "split-range.ptm", "--data", "iris"),
		bad("model-bool-features", 1, []string{"bool-1e12.ptm: byte 16: bool_features: 1000000000000 Boolean features"}, "eval", "--model", "bool-1e12.ptm", "--data", "iris"),
		bad("model-clauses", 1, []string{"clauses-1e9.ptm: byte 16: params.clauses: 1000000000 clauses, limit"}, "inspect", "--model", "clauses-1e9.ptm"),
		bad("model-dup-class", 1, []string{"dup-class.ptm: byte 16: classes: classes[1]: duplicate name"}, "gen", "--model", "dup-class.ptm", "--out", "gen"),
		bad("model-empty-feature", 1, []string{"empty-feat.ptm: byte 16: features: features[1]: empty name"}, "eval", "--model", "empty-feat.ptm", "--data", "iris"),
		bad("model-dev-zero", 1, []string{"/dev/zero: byte 0: magic"}, "eval", "--model", "/dev/zero", "--data", "iris"),
		bad("model-dev-urandom", 1, []string{"/dev/urandom: byte 0: magic"}, "inspect", "--model", "/dev/urandom"),
		bad("model-is-directory", 1, []string{"outdir", "is a directory"}, "inspect", "--model", "outdir"),
		// Inputs: data.
		bad("data-dev-zero", 1, []string{"/dev/zero:1: binary data (a NUL byte at byte offset 0)"}, "train", "--data", "/dev/zero", "-o", "z.ptm"),
		bad("data-dev-urandom", 1, []string{"/dev/urandom:", "binary data"}, "train", "--data", "/dev/urandom", "-o", "z.ptm"),
		bad("data-dev-zero-eval", 1, []string{"/dev/zero:1: binary data"}, "eval", "--model", "model.ptm", "--data", "/dev/zero"),
		bad("csv-100k-columns", 1, []string{"wide.csv:1: header has 100001 columns, the limit is 65536"}, "train", "--data", "wide.csv", "-o", "w.ptm"),
		bad("clauses-1e8", 1, []string{"--clauses", "limit (PTM_MAX_MEMORY)"}, "train", "--data", "iris", "--clauses", "100000000", "-o", "c.ptm"),
		bad("states-huge", 1, []string{"--states", "limit"}, "train", "--data", "iris", "--clauses", "100000", "--states", "30000", "-o", "c.ptm"),
		bad("samples-1e9", 2, []string{"--samples 1000000000", "limit (PTM_MAX_MEMORY)"}, "eval", "--model", "model.ptm", "--data", "iris", "--samples", "1000000000"),
		bad("split-test-other-data", 1, []string{"trained on \"iris\"", "differs", "--test-data"}, "eval", "--model", "model.ptm", "--data", "other.csv", "--split", "test"),
		bad("test-data-with-split", 2, []string{"--test-data replaces --data and --split"}, "eval", "--model", "model.ptm", "--test-data", "other.csv", "--split", "test"),
		// Inputs: silent flags.
		bad("temperature-without-mapping-eval", 2, []string{"--temperature applies to --mapping softmax"}, "eval", "--model", "model.ptm", "--data", "iris", "--mapping", "vote", "--temperature", "3"),
		{name: "temperature-implies-softmax", args: []string{"train", "--data", "iris", "--epochs", "1", "--clauses", "2", "--states", "4", "--temperature", "3", "-o", "t.ptm"},
			outputs: []string{"t.ptm"}, stdout: []string{"mapping softmax (temperature 3)"}},
		{name: "smoothing-used-in-eval", args: []string{"eval", "--model", "model.ptm", "--data", "iris", "--samples", "5", "--smoothing", "0.2"},
			stdout: []string{"mapping vote (smoothing 0.2)"}},
		bad("temperature-and-smoothing", 2, []string{"give one, or --mapping"}, "eval", "--model", "model.ptm", "--data", "iris", "--temperature", "3", "--smoothing", "0.1"),
		bad("smoothing-with-softmax", 2, []string{"--smoothing applies to --mapping vote"}, "train", "--data", "iris", "--mapping", "softmax", "--smoothing", "0.1", "-o", "t.ptm"),
		bad("bits-0", 2, []string{"--bits 0"}, "train", "--data", "iris", "--bits", "0", "-o", "b.ptm"),
		bad("thresholds-0", 2, []string{"--thresholds 0, want 1..1024"}, "train", "--data", "iris", "--thresholds", "0", "-o", "b.ptm"),
		bad("test-fraction-1", 2, []string{"--test-fraction 1"}, "train", "--data", "iris", "--test-fraction", "1", "-o", "b.ptm"),
		bad("inspect-tm-99", 2, []string{"--tm 99: the model has 3 TMs"}, "inspect", "--model", "model.ptm", "--tm", "99"),
		bad("inspect-clause-99", 2, []string{"--clause 99: the model has 4 clauses"}, "inspect", "--model", "model.ptm", "--clause", "99"),
		bad("data-iriss", 1, []string{`unknown data set "iriss"`, "iris, wine, breast-cancer, xor, xor-noisy, xor-classic"}, "train", "--data", "iriss", "-o", "i.ptm"),
		bad("label-first-column", 1, []string{`label-first.csv:2: column "species": invalid number "setosa"`, "--label species"}, "train", "--data", "label-first.csv", "-o", "l.ptm"),
		bad("stream-silent-pty", 1, []string{"no board seems to be running", pty}, "stream", "--uart", pty, "--model", "model.ptm", "--data", "iris"),
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := snapshot(t, dir)
			r := runProcess(t, dir, timeout, c.args...)
			if r.timedOut {
				t.Fatalf("ptm %q hung: killed after %v\nstderr: %s", c.args, timeout, r.stderr)
			}
			for _, crash := range []string{"panic:", "fatal error:", "goroutine ", "runtime error"} {
				if strings.Contains(r.stderr, crash) {
					t.Fatalf("ptm %q crashed:\n%s", c.args, r.stderr)
				}
			}
			if r.code != c.code {
				t.Errorf("ptm %q: exit %d, want %d\nstderr: %s", c.args, r.code, c.code, r.stderr)
			}
			for _, m := range c.stdout {
				if !strings.Contains(r.stdout, m) {
					t.Errorf("ptm %q: stdout lacks %q:\n%s", c.args, m, r.stdout)
				}
			}
			for _, m := range c.msg {
				if !strings.Contains(r.stderr, m) {
					t.Errorf("ptm %q: stderr lacks %q:\n%s", c.args, m, r.stderr)
				}
			}
			after := snapshot(t, dir)
			allowed := map[string]bool{}
			for _, o := range c.outputs {
				allowed[o] = true
			}
			for p, v := range after {
				if before[p] != v && !allowed[p] {
					t.Errorf("ptm %q touched %s (%q -> %q)", c.args, p, before[p], v)
				}
			}
			for p := range before {
				if _, ok := after[p]; !ok {
					t.Errorf("ptm %q removed %s", c.args, p)
				}
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "victim.txt")); string(b) != "precious\n" {
		t.Errorf("the file behind the planted out.ptm.tmp symlink was overwritten: %q", b)
	}
}
