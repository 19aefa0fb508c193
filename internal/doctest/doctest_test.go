package doctest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ptmhw/ptm/internal/testenv"
)

// quickForm is how the doc-command test runs a command that is too long
// for `make test`. Exactly one field is set.
type quickForm struct {
	// run is run instead of the command. It must keep the command's
	// program, its subcommand and every flag name it gives (checked by
	// TestQuickForms); only values may change and flags be added (make
	// -n, a smaller --vectors).
	run string
	// noTools runs the command as written with the FPGA and simulator
	// tools (hiddenTools) off PATH: it must succeed (a cached result) or
	// stop with the message that names the first tool it needs, so its
	// flags, its input files and everything before the first tool run
	// are checked in a second instead of minutes of Verilator, yosys or
	// nextpnr. Those tools are exercised by hw/synth, sim/cosim and
	// sim/board.
	noTools bool
	// skip: not run, for a command that needs a device this machine
	// does not have (deviceRE). The reason is logged.
	skip string
}

// quick maps a documented command, as written but for its trailing
// comment and its spacing (Norm), to its quick form. An entry whose command no document
// holds any more fails TestQuickForms, so the table cannot drift from
// the documents; a documented command without an entry runs as written.
var quick = map[string]quickForm{
	// README.md
	"make demo": {run: "make -n demo"},
	"make test": {run: "make -n test"},
	"build/ptm cosim --model parts.ptm --bits 4 --lanes 12 --vectors 200 --k 20": {noTools: true},
	"build/ptm synth --model parts.ptm --device up5k --no-eth --json":            {noTools: true},

	// docs/howto-demo-images.md: scripts TestDemoImagesQuick runs the
	// script with QUICK=1.
	"make demo DATA=mnist QUICK=1":               {run: "make -n demo DATA=mnist QUICK=1"},
	"make demo DATA=mnist":                       {run: "make -n demo DATA=mnist"},
	"make demo DATA=mnist MODEL=mnist.ptm":       {run: "make -n demo DATA=mnist MODEL=mnist.ptm"},
	"make demo DATA=mnist MODEL=build/mnist.ptm": {run: "make -n demo DATA=mnist MODEL=build/mnist.ptm"},
	// The UP5K model on the Verilated board: minutes (scripts
	// TestDemoImagesQuickSim runs the script with QUICK=1 BOARD=sim under
	// PTM_LONG_TESTS=1), and every test image: 11 minutes.
	"make demo DATA=mnist RECIPE=mnist-up5k BOARD=sim": {run: "make -n demo DATA=mnist RECIPE=mnist-up5k BOARD=sim"},
	"MODEL=build/demo-mnist/mnist-up5k.ptm RECIPE=mnist-up5k BOARD=sim N=all M=500 bash scripts/demo-images.sh build/ptm build/demo-mnist-all": {run: "bash -n scripts/demo-images.sh build/ptm build/demo-mnist-all"},

	// docs/howto-image-data.md: the mnist-up5k recipe on 2,000 images
	// and its cosim on 3 (the full run: minutes).
	"build/ptm train --data mnist --recipe mnist-up5k -o mnist-up5k.ptm":                                                                                   {run: "build/ptm train --data mnist --recipe mnist-up5k -o mnist-up5k.ptm --epochs 1 --train-rows 2000 --val-rows 300"},
	"build/ptm cosim --model mnist-up5k.ptm --data mnist --vectors 1000 --k 16 --clause-lanes 1 --literal-lanes 16 --lfsr-width 16 --patch-lanes 7 --json": {run: "build/ptm cosim --model mnist-up5k.ptm --data mnist --vectors 3 --k 2 --clause-lanes 1 --literal-lanes 16 --lfsr-width 16 --patch-lanes 7 --json"},

	// docs/howto-run-tests.md
	"make test TESTFLAGS=-count=1": {run: "make -n test TESTFLAGS=-count=1"},
	"make test-long":               {run: "make -n test-long"},
	"PTM_LONG_TESTS=1 go test ./sim/cosim -run TestLong -v": {run: "go test ./sim/cosim -run TestLong -v"},

	// docs/howto-image-data.md
	"build/ptm train --data mnist -o mnist-conv.ptm":                                              {run: "build/ptm train --data mnist -o mnist-conv.ptm --clauses 16 --epochs 1 --val-rows 500"},
	"build/ptm eval --model mnist-conv.ptm --data mnist --split test --json":                      {run: "build/ptm eval --model mnist-conv.ptm --data mnist --split test --json --samples 2"},
	"build/ptm eval --model mnist-conv.ptm --data mnist --split test --fixed --ood fashion-mnist": {run: "build/ptm eval --model mnist-conv.ptm --data mnist --split test --fixed --ood fashion-mnist --samples 2"},
	"PTM_LONG_TESTS=1 go test ./golden/conv/convtrain -run TestMNIST -v -timeout 180m":            {run: "go test ./golden/conv/convtrain -run TestMNIST -v -timeout 180m"},

	// docs/howto-own-data.md
	"build/ptm train --data wine --seed 1 -o wine.ptm":                                                          {run: "build/ptm train --data wine --seed 1 --epochs 10 -o wine.ptm"},
	"build/ptm train --data wine --seed 1 --clauses 40 --T 15 --s 3 --epochs 50 --thresholds 8 -o wine-big.ptm": {run: "build/ptm train --data wine --seed 1 --clauses 40 --T 15 --s 3 --epochs 3 --thresholds 8 -o wine-big.ptm"},
	"build/ptm cosim --model wine.ptm --bits 4 --lanes 16 --vectors 1000 --k 20 --json":                         {noTools: true},
	"build/ptm experiments --sweep wine --splits 2":                                                             {run: "build/ptm experiments --sweep wine --splits 1 --grid 10/10/2/5/4"},

	// docs/howto-build-image.md
	"build/ptm synth --model iris.ptm --device up5k --no-eth --json":                                                                             {noTools: true},
	"build/ptm synth --model iris.ptm --device up5k --bits 4 --lfsr-width 16 --no-eth --core-clock-ratio 2 --lanes 60 --freq 54 --seed 1 --json": {noTools: true},
	"build/ptm synth --model iris.ptm --device hx8k --core-clock-ratio 2 --lanes 64 --freq 96 --json":                                            {noTools: true},
	"build/ptm synth --model iris.ptm --device up5k --core-only --lanes 60 --freq 54 --json":                                                     {noTools: true},
	"bash scripts/install-yowasp.sh": {run: "bash -n scripts/install-yowasp.sh"},
	"build/ptm synth --model iris.ptm --device up5k --core-only --lanes 60 --freq 54 --toolchain yowasp --json": {noTools: true},
	"make synth":     {run: "make -n synth"},
	"make synth-all": {run: "make -n synth-all"},

	// docs/howto-stream.md
	"build/ptm board --model iris.ptm --bits 4 --lanes 12 --preload --no-eth":                           {noTools: true},
	"build/ptm stream --uart /dev/pts/N --model iris.ptm --data iris --split test --samples 100 --json": {skip: "needs the pty a running `ptm board` prints (sim/board TestIrisStream streams the same way)"},
	"iceprog build/demo/synth/top.bin": {skip: "needs an iCEBreaker on USB"},
	"build/ptm stream --uart /dev/ttyUSB1@3000000 --model build/demo/iris.ptm --data iris --split test --samples 100":     {skip: "needs an iCEBreaker on USB"},
	"build/ptm stream --eth enp3s0 --model iris.ptm --data iris --split test --samples 100":                               {skip: "needs an HX8K board with an Ethernet PHY on a named interface"},
	"build/ptm board --model iris.ptm --bits 4 --lanes 12 --preload --flip 0.001 --drop 0.001":                            {noTools: true},
	"build/ptm stream --uart /dev/pts/N --uart /dev/pts/M --model iris.ptm --data iris --split test --samples 100 --json": {skip: "needs the ptys of two running `ptm board` (sim/board TestTwoBoards streams the same way)"},
	"PTM_LONG_TESTS=1 go test ./sim/board -run TestBoardsThroughput -v":                                                   {run: "go test ./sim/board -run TestBoardsThroughput -v"},

	// docs/howto-slurm.md: two cheap shards of 40 (baselines) and a
	// partial merge stand for the whole quick sweep, which
	// experiments TestShardMergeQuick shards and merges in full.
	"build/ptm experiments --quick --shard 1/2 --out shards/1":   {run: "build/ptm experiments --quick --shard 39/40 --out shards/1"},
	"build/ptm experiments --quick --shard 2/2 --out shards/2":   {run: "build/ptm experiments --quick --shard 40/40 --out shards/2"},
	"build/ptm experiments merge --out merged shards/1 shards/2": {run: "build/ptm experiments merge --partial --out merged shards/1 shards/2"},
	// The Slurm commands are only parsed (bash -n) here: scripts/slurm
	// TestSlurmQuickSweep (make test-long) runs them on a local cluster.
	`bash scripts/slurm/submit.sh -n 20 -c 2 -p build/ptm -a "-t 4:00:00" /shared/ptm-sweep`: {run: `bash -n scripts/slurm/submit.sh -n 20 -c 2 -p build/ptm -a "-t 4:00:00" /shared/ptm-sweep`},
	"bash scripts/slurm/local-cluster.sh start /tmp/ptm-slurm":                               {run: "bash -n scripts/slurm/local-cluster.sh start /tmp/ptm-slurm"},
	"bash scripts/slurm/submit.sh -n 4 -c 1 -p build/ptm /tmp/ptm-sweep -- --quick":          {run: "bash -n scripts/slurm/submit.sh -n 4 -c 1 -p build/ptm /tmp/ptm-sweep -- --quick"},
	"bash scripts/slurm/local-cluster.sh stop /tmp/ptm-slurm":                                {run: "bash -n scripts/slurm/local-cluster.sh stop /tmp/ptm-slurm"},

	// docs/howto-train-on-board.md
	"build/ptm board --trainer --random-shape classes=3,clauses=20,features=24,t=10":       {noTools: true},
	"build/ptm train --data iris --seed 1 --states 8 --board /dev/pts/N -o iris-board.ptm": {skip: "needs the pty a running `ptm board --trainer` prints (cmd/ptm TestTrainBoardCLI trains the same way)"},
	"build/ptm cosim --train --data iris --seed 1 --epochs 5 --json":                       {noTools: true},
	"build/ptm synth --trainer --device up5k --json":                                       {noTools: true},
}

// deviceRE matches the commands that may be skipped: they need a board
// or a pseudo-terminal that only a running simulator prints.
var deviceRE = regexp.MustCompile(`/dev/pts/N|/dev/ttyUSB|iceprog|--eth [a-z]`)

// hiddenTools are taken off PATH for the noTools forms.
var hiddenTools = []string{
	"verilator", "verilator_bin", "verilator_bin_dbg", "yosys", "yosys-abc", "yosys-config",
	"nextpnr-ice40", "icepack", "icepll", "iceprog", "iverilog", "vvp", "node",
}

// toolMissing is what a ptm command prints when it stops at a missing tool.
var toolMissing = regexp.MustCompile(`not (found )?on PATH`)

// root is the repository's top folder.
func root(t testing.TB) string {
	t.Helper()
	r, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// documents are the files whose commands are run: the README and every
// how-to guide (a new guide is covered by being named docs/howto-*.md).
func documents(t testing.TB) []string {
	t.Helper()
	r := root(t)
	docs, err := filepath.Glob(filepath.Join(r, "docs", "howto-*.md"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(docs)
	out := []string{"README.md"}
	for _, d := range docs {
		rel, _ := filepath.Rel(r, d)
		out = append(out, filepath.ToSlash(rel))
	}
	return out
}

func blocksOf(t testing.TB, doc string) []Block {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root(t), filepath.FromSlash(doc)))
	if err != nil {
		t.Fatal(err)
	}
	return Blocks(string(b))
}

// TestBlocks: the extraction on a document with every case it meets.
func TestBlocks(t *testing.T) {
	md := "text\n```sh\n# a comment\nmake demo   # with a comment's quote: it's fine\n\nbuild/ptm x \\\n  --y 1\nawk 'BEGIN {\n  print \"a\" }' > f\n```\n```go\nfmt.Println()\n```\n~~~bash\necho \"#not a comment\"\n~~~\n```\nplain\n```\n"
	got := Blocks(md)
	want := []Block{
		{Line: 2, Commands: []Command{
			{Line: 4, Text: "make demo   # with a comment's quote: it's fine"},
			{Line: 6, Text: "build/ptm x \\\n  --y 1"},
			{Line: 8, Text: "awk 'BEGIN {\n  print \"a\" }' > f"},
		}},
		{Line: 14, Commands: []Command{{Line: 15, Text: "echo \"#not a comment\""}}},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Blocks:\n got %+v\nwant %+v", got, want)
	}
	if w := Words("build/ptm x \\\n  --y 1 # note"); !slices.Equal(w, []string{"build/ptm", "x", "--y", "1"}) {
		t.Errorf("Words: %q", w)
	}
}

// TestQuickForms checks the table against the documents, without
// running anything: every entry names a documented command, every run
// form keeps its command's program, subcommand and flag names, only
// device commands are skipped, and every device command has an entry.
func TestQuickForms(t *testing.T) {
	seen := map[string]bool{}
	for _, doc := range documents(t) {
		b, err := os.ReadFile(filepath.Join(root(t), filepath.FromSlash(doc)))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range Unlabeled(string(b)) {
			t.Logf("%s:%d: a fence without an info string is not run: label commands sh (with a quick form if long), output text", doc, n)
		}
		for _, b := range blocksOf(t, doc) {
			for _, c := range b.Commands {
				seen[Norm(c.Text)] = true
				if _, ok := quick[Norm(c.Text)]; !ok && deviceRE.MatchString(c.Text) {
					t.Errorf("%s:%d: %q needs a device: give it a quick form or a skip in doctest_test.go", doc, c.Line, c.Text)
				}
			}
		}
	}
	for cmd, q := range quick {
		if Norm(cmd) != cmd {
			t.Errorf("quick form key %q: write it as Norm gives it, %q", cmd, Norm(cmd))
		}
		n := 0
		if q.run != "" {
			n++
		}
		if q.noTools {
			n++
		}
		if q.skip != "" {
			n++
		}
		if n != 1 {
			t.Errorf("quick form of %q: set exactly one of run, noTools, skip", cmd)
		}
		if !seen[cmd] {
			t.Errorf("quick form of %q: no document has this command any more (update or remove the entry)", cmd)
		}
		if q.skip != "" && !deviceRE.MatchString(cmd) {
			t.Errorf("%q is skipped, but it needs no device: give it a run or noTools form", cmd)
		}
		if q.run != "" {
			if missing := lost(cmd, q.run); len(missing) > 0 {
				t.Errorf("quick form %q of %q drops %q: a quick form keeps the program, the subcommand and every flag name", q.run, cmd, missing)
			}
		}
	}
}

// lost returns the words of cmd a quick form must keep and run lacks:
// the environment assignments aside, the program, its subcommand (the
// first word that is not a flag) and every flag name.
func lost(cmd, run string) []string {
	have := map[string]bool{}
	for _, w := range Words(run) {
		have[flagName(w)] = true
	}
	var out []string
	ws := Words(cmd)
	for len(ws) > 0 && strings.Contains(ws[0], "=") && !strings.HasPrefix(ws[0], "-") {
		ws = ws[1:]
	}
	for i, w := range ws {
		keep := i == 0 || (i == 1 && !strings.HasPrefix(w, "-")) || strings.HasPrefix(w, "-")
		if keep && !have[flagName(w)] {
			out = append(out, w)
		}
	}
	return out
}

func flagName(w string) string {
	if strings.HasPrefix(w, "-") {
		if i := strings.IndexByte(w, '='); i > 0 {
			return w[:i]
		}
	}
	return w
}

// TestDocCommands runs every shell command of README.md and
// docs/howto-*.md, each document's blocks in order in a folder of its
// own (the repository's files linked in, an empty build/), as `bash -e
// -o pipefail`, with the quick forms of the table. A command that fails
// fails the test with the document's line, the command and its output.
func TestDocCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the documents' commands (about a minute); not in -short mode")
	}
	for _, tool := range []string{"bash", "go", "make", "awk"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not on PATH: the documents' commands need it", tool)
		}
	}
	noTools := noToolsPath(t)
	for _, doc := range documents(t) {
		t.Run(strings.TrimSuffix(filepath.Base(doc), ".md"), func(t *testing.T) {
			t.Parallel()
			runDoc(t, doc, noTools)
		})
	}
}

func runDoc(t *testing.T, doc, noTools string) {
	blocks := blocksOf(t, doc)
	if len(blocks) == 0 {
		t.Skipf("%s has no shell block", doc)
	}
	work := farm(t)
	var s strings.Builder
	s.WriteString("set -eo pipefail\n")
	n := 0
	for _, b := range blocks {
		for _, c := range b.Commands {
			fmt.Fprintf(&s, "echo %s > \"$PTM_DOCTEST_AT\"\n", shellQuote(fmt.Sprintf("%s:%d", doc, c.Line)))
			q, ok := quick[Norm(c.Text)]
			switch {
			case !ok:
				s.WriteString(c.Text + "\n")
			case q.skip != "":
				t.Logf("%s:%d: not run (%s): %s", doc, c.Line, q.skip, c.Text)
				continue
			case q.run != "":
				s.WriteString(q.run + "\n")
			case q.noTools:
				fmt.Fprintf(&s, "if ( export PATH=%s\n%s\n) > \"$PTM_DOCTEST_OUT\" 2>&1; then cat \"$PTM_DOCTEST_OUT\"; else cat \"$PTM_DOCTEST_OUT\"; grep -qE %s \"$PTM_DOCTEST_OUT\" || { echo 'doctest: failed, and not for a missing tool' >&2; false; }; fi\n",
					shellQuote(noTools), c.Text, shellQuote(toolMissing.String()))
			}
			n++
		}
	}
	script := filepath.Join(t.TempDir(), "doc.sh")
	if err := os.WriteFile(script, []byte(s.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	at := filepath.Join(t.TempDir(), "at")
	cmd := exec.CommandContext(testenv.Context(t), "bash", script)
	cmd.Dir = work
	cmd.Env = append(goEnv(), "PTM_DOCTEST_AT="+at, "PTM_DOCTEST_OUT="+filepath.Join(t.TempDir(), "out"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		where, _ := os.ReadFile(at)
		loc := strings.TrimSpace(string(where))
		t.Fatalf("%s: the documented command failed (%v):\n%s\noutput (last lines):\n%s", loc, err, commandAt(t, loc), tail(out.String(), 40))
	}
	t.Logf("%s: %d commands ran", doc, n)
}

// commandAt returns the command text at doc:line.
func commandAt(t *testing.T, loc string) string {
	doc, line, ok := strings.Cut(loc, ":")
	if !ok {
		return "(unknown command)"
	}
	for _, b := range blocksOf(t, doc) {
		for _, c := range b.Commands {
			if fmt.Sprint(c.Line) == line {
				if q, ok := quick[Norm(c.Text)]; ok && q.run != "" {
					return "  " + c.Text + "\n(run as its quick form: " + q.run + ")"
				}
				return "  " + c.Text
			}
		}
	}
	return "(unknown command)"
}

// farm makes a working folder with the repository's top-level entries
// linked in (build/ and .git left out), so that the documents' commands
// read the checkout and write their outputs (build/ptm, model files)
// into a folder of their own.
func farm(t *testing.T) string {
	t.Helper()
	r := root(t)
	work := t.TempDir()
	ents, err := os.ReadDir(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() == "build" || e.Name() == ".git" {
			continue
		}
		if err := os.Symlink(filepath.Join(r, e.Name()), filepath.Join(work, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(work, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	// build/ptm for documents that use it before building it
	cmd := exec.CommandContext(testenv.Context(t), "go", "build", "-o", "build/ptm", "./cmd/ptm")
	cmd.Dir = work
	cmd.Env = goEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/ptm: %v\n%s", err, out)
	}
	return work
}

// goEnv is the environment of the documents' commands: GOFLAGS gets
// -trimpath, so that a `go build` or `go test` in a working folder shares
// the build cache with the checkout's and the other folders' instead of
// compiling every package again for its new path.
func goEnv() []string {
	env := os.Environ()
	flags := strings.TrimSpace(os.Getenv("GOFLAGS") + " -trimpath")
	return append(env, "GOFLAGS="+flags)
}

// noToolsPath is a PATH of one folder that links every program on PATH
// except hiddenTools.
func noToolsPath(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			name := e.Name()
			if slices.Contains(hiddenTools, name) {
				continue
			}
			if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
				continue // an earlier PATH entry wins, as for the shell
			}
			info, err := os.Stat(filepath.Join(d, name))
			if err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
				continue
			}
			if err := os.Symlink(filepath.Join(d, name), filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// pendingDocs are documents other work adds that the index already links
// (docs/README.md's how-to table). TestLinks accepts a link to one while
// it is missing and fails once it exists, so the entry is removed then.
var pendingDocs = map[string]bool{}

// TestLinks: every relative link of README.md, CHANGELOG.md and docs/*.md
// names a file or folder of the checkout (anchors are not checked).
func TestLinks(t *testing.T) {
	r := root(t)
	docs, err := filepath.Glob(filepath.Join(r, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, filepath.Join(r, "README.md"), filepath.Join(r, "CHANGELOG.md"))
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, d := range docs {
		b, err := os.ReadFile(d)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(r, d)
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			p := filepath.Clean(filepath.Join(filepath.Dir(d), filepath.FromSlash(target)))
			key, _ := filepath.Rel(r, p)
			_, err := os.Stat(p)
			switch {
			case pendingDocs[filepath.ToSlash(key)] && err == nil:
				t.Errorf("%s exists now: remove it from pendingDocs", key)
			case pendingDocs[filepath.ToSlash(key)]:
			case err != nil:
				t.Errorf("%s: link to %s: %v", rel, m[1], err)
			}
		}
	}
}
