//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/softboard"
	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/internal/outfile"
	"golang.org/x/sys/unix"
)

// Issue 31's regressions at the command level.

// TestOutputToDevices: an output naming a character device or a FIFO is
// written in place, never replaced by a regular file (issue 31 item 1:
// `-o /dev/null` as root replaced /dev/null); /dev/full fails with its
// own error. The devices are made in a temporary folder with /dev/null's
// and /dev/full's numbers, so the real ones are never at stake.
func TestOutputToDevices(t *testing.T) {
	dir := t.TempDir()
	null, full := filepath.Join(dir, "null"), filepath.Join(dir, "full")
	if err := unix.Mknod(null, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		t.Skipf("mknod: %v (needs root)", err)
	}
	if err := unix.Mknod(full, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 7))); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	isChar := func(p string) {
		t.Helper()
		if fi, err := os.Lstat(p); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
			t.Fatalf("%s is no longer a character device: %v %v", p, fi.Mode(), err)
		}
	}
	train := []string{"train", "--data", "iris", "--clauses", "4", "--states", "8", "--epochs", "1", "-o"}
	code, _, errs := runCLI(append(train, null)...)
	if code != 0 {
		t.Errorf("-o null device: exit %d %s", code, errs)
	}
	isChar(null)
	code, _, errs = runCLI(append(train, full)...)
	if code == 0 || !strings.Contains(errs, "no space left on device") || !strings.Contains(errs, full) {
		t.Errorf("-o full device: exit %d %q, want no space left naming it", code, errs)
	}
	isChar(full)
	// A FIFO gets the model, in place.
	got := make(chan []byte, 1)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- b
	}()
	code, _, errs = runCLI(append(train, fifo)...)
	if code != 0 {
		t.Errorf("-o fifo: exit %d %s", code, errs)
	}
	if b := <-got; len(b) < 100 {
		t.Errorf("the FIFO's reader got %d bytes", len(b))
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", fi.Mode(), err)
	}
	// eval --per-query and report --md to the null device.
	model := filepath.Join(dir, "m.ptm")
	if code, _, errs := runCLI(append(train, model)...); code != 0 {
		t.Fatalf("train: %s", errs)
	}
	code, _, errs = runCLI("eval", "--model", model, "--data", "iris", "--samples", "5", "--per-query", null)
	if code != 0 {
		t.Errorf("eval --per-query null device: exit %d %s", code, errs)
	}
	isChar(null)
	code, _, errs = runCLI("eval", "--model", model, "--data", "iris", "--samples", "5", "--per-query", full)
	if code == 0 || !strings.Contains(errs, "no space left on device") {
		t.Errorf("eval --per-query full device: exit %d %q", code, errs)
	}
	isChar(full)
	code, evJSON, _ := runCLI("eval", "--model", model, "--data", "iris", "--samples", "5", "--json")
	ev := filepath.Join(t.TempDir(), "ev.json")
	if err := os.WriteFile(ev, []byte(evJSON), 0o644); code != 0 || err != nil {
		t.Fatalf("eval --json: %d %v", code, err)
	}
	code, _, errs = runCLI("report", "--eval", ev, "--md", null)
	if code != 0 {
		t.Errorf("report --md null device: exit %d %s", code, errs)
	}
	isChar(null)
	if ents, _ := os.ReadDir(dir); len(ents) != 4 {
		t.Errorf("left behind: %v", ents)
	}
}

// TestRandomShapeBounded: every size of --random-shape is bounded before
// anything is allocated (issue 31 item 2: clauses=99999999,
// features=9999999 grew to 23.4 GB until the OOM killer), and the design's
// planned memory with the lanes asked for is checked too.
func TestRandomShapeBounded(t *testing.T) {
	dir := t.TempDir()
	huge := "classes=3,clauses=99999999,features=9999999,t=10"
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"gen", "--random-shape", huge, "--out", "g"}, 2, "clauses=99999999, the limit is 1048576"},
		{[]string{"board", "--random-shape", huge, "--no-eth"}, 2, "clauses=99999999, the limit is 1048576"},
		{[]string{"synth", "--random-shape", huge}, 2, "clauses=99999999, the limit is 1048576"},
		{[]string{"cosim", "--random-shape", huge}, 2, "clauses=99999999, the limit is 1048576"},
		{[]string{"gen", "--random-shape", "classes=3,clauses=1000,features=9999999,t=10", "--out", "g"}, 2, "features=9999999, the limit is 1048576"},
		{[]string{"gen", "--random-shape", "classes=3,clauses=100000,features=1000,t=10", "--out", "g"}, 2, "TAs, the limit is 44739242"},
		{[]string{"board", "--random-shape", "classes=3,clauses=10,features=10,t=9999999999", "--no-eth"}, 2, "t=9999999999, the limit is 65535"},
		{[]string{"gen", "--random-shape", "classes=99,clauses=10,features=10", "--out", "g"}, 2, "99 classes, want 2..16"},
		{[]string{"gen", "--random-shape", "classes=3,clauses=700000,features=10,t=10", "--lanes", "2", "--out", "g"}, 1, "GiB of memory to generate (bank depth D = 21000000"},
	}
	for _, c := range cases {
		r := runProcess(t, dir, 10*time.Minute, c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.msg) {
			t.Errorf("ptm %v: exit %d %q; want exit %d with %q", c.args, r.code, r.stderr, c.code, c.msg)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "g")); err == nil {
		t.Error("gen wrote its output folder for a refused shape")
	}
}

// TestBoardStopsOnSIGTERM: `ptm board` stops when signalled while it
// generates the core (issue 31 item 2: SIGTERM was caught but the
// generation step never looked at it, and the Verilator build after it
// neither). The shape takes tens of seconds to generate; the signal
// comes as soon as the build starts, and the command must end with the
// generation's cancellation. SIGINT (Ctrl-C) the same.
func TestBoardStopsOnSIGTERM(t *testing.T) {
	if _, err := exec.LookPath("verilator"); err != nil {
		t.Skip("no verilator")
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) { boardStopsOn(t, sig) })
	}
}

func boardStopsOn(t *testing.T, sig syscall.Signal) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // a hang guard only
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "board", "--random-shape", "classes=3,clauses=300000,features=10,t=10", "--lanes", "20", "--no-eth")
	cmd.Env = append(os.Environ(), asCLI+"=1", "PTM_BOARD_CACHE="+t.TempDir())
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var log []string
	for sc.Scan() {
		log = append(log, sc.Text())
		if strings.Contains(sc.Text(), "building the Verilated board") {
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
		}
	}
	err = cmd.Wait()
	all := strings.Join(log, "\n")
	if ctx.Err() != nil {
		t.Fatalf("ptm board ran on after %v until the test's guard killed it:\n%s", sig, all)
	}
	if err == nil || !strings.Contains(all, "generating the core: context canceled") {
		t.Errorf("ptm board after %v: %v\n%s", sig, err, all)
	}
}

// softboardPTY serves a software board for the model at path on a new
// pseudo-terminal and returns the slave's path and the board.
func softboardPTY(t *testing.T, path string) (string, *softboard.Board) {
	t.Helper()
	f, _, err := modelfile.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	hw := fixed.HW{Bits: f.Bank.Bits, LFSRWidth: 32, ClauseLanes: 1, LiteralLanes: 2}
	b, err := softboard.New(softboard.ConfigFor(f.Bank, hw, 255))
	if err != nil {
		t.Fatal(err)
	}
	return servePTY(t, b), b
}

// servePTY serves board b on a new pseudo-terminal until the test ends
// and returns the slave's path.
func servePTY(t *testing.T, b *softboard.Board) string {
	t.Helper()
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Skip(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Skip(err)
	}
	master := os.NewFile(uintptr(fd), "ptmx")
	slave := "/dev/pts/" + strconv.Itoa(n)
	// Raw mode on the slave side is set by the host's transport; keep a
	// descriptor open so that the master sees no hang-up between runs.
	hold, err := os.OpenFile(slave, os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if tio, err := unix.IoctlGetTermios(int(hold.Fd()), unix.TCGETS); err == nil {
		tio.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
		tio.Oflag &^= unix.OPOST
		tio.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
		tio.Cflag &^= unix.CSIZE | unix.PARENB
		tio.Cflag |= unix.CS8
		_ = unix.IoctlSetTermios(int(hold.Fd()), unix.TCSETS, tio)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = b.Serve(ctx, master, softboard.StreamOpts{})
	}()
	t.Cleanup(func() {
		cancel()
		master.Close()
		hold.Close()
		<-done
	})
	return slave
}

// TestStreamOutDevicesAndInterrupt: `stream --out` to /dev/null works and
// to /dev/full fails before anything is streamed (issue 31 item 7: both
// failed only after the whole stream, "truncate /dev/null: invalid
// argument", losing the summary); an interrupted stream prints its
// summary, counts the rows it did not run as not run (not lost) and
// saves the partial result (item 9).
func TestStreamOutDevicesAndInterrupt(t *testing.T) {
	dir := t.TempDir()
	null, full := filepath.Join(dir, "null"), filepath.Join(dir, "full")
	if err := unix.Mknod(null, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		t.Skipf("mknod: %v (needs root)", err)
	}
	if err := unix.Mknod(full, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 7))); err != nil {
		t.Fatal(err)
	}
	model := tinyIrisModel(t, dir)
	port, b := softboardPTY(t, model)
	inferred := func() uint32 { return b.Status().Counters[frame.CounterInferred] }
	code, _, errs := runCLI("stream", "--uart", port, "--model", model, "--data", "iris", "--samples", "5", "--out", full)
	if code == 0 || !strings.Contains(errs, "no space left on device") || inferred() != 0 {
		t.Errorf("--out full device: exit %d %q, %d queries run; want a failure before streaming", code, errs, inferred())
	}
	code, out, errs := runCLI("stream", "--uart", port, "--model", model, "--data", "iris", "--samples", "5", "--out", null)
	if code != 0 || !strings.Contains(out, "verified") {
		t.Errorf("--out null device: exit %d\n%s\n%s", code, out, errs)
	}
	if fi, err := os.Lstat(null); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Errorf("the null device was replaced: %v %v", fi.Mode(), err)
	}

	// SIGINT in the middle of a slowed-down stream of 150 rows.
	b.SetExecTime(20 * time.Millisecond)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	res := filepath.Join(dir, "res.json")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // a hang guard only
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "stream", "--uart", port, "--model", model, "--data", "iris", "--split", "all", "--samples", "5", "--out", res)
	cmd.Env = append(os.Environ(), asCLI+"=1")
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	before := inferred()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for inferred() < before+10 && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if err == nil || !strings.Contains(so.String(), "not run (the stream was interrupted)") || !strings.Contains(se.String(), "interrupted") {
		t.Errorf("interrupted stream: %v\nstdout:\n%s\nstderr:\n%s", err, so.String(), se.String())
	}
	data, rerr := os.ReadFile(res)
	if rerr != nil || !strings.Contains(string(data), `"status": "not_run"`) || strings.Contains(string(data), `"status": "lost"`) {
		t.Errorf("the partial result %s: %v\n%.400s", res, rerr, data)
	}
}

// TestEvalBinsBounded: --bins is bounded before anything is allocated
// (issue 31 item 3: --bins 2000000000 crashed the Go runtime out of
// memory, --bins 100000000 took 3.9 GB).
func TestEvalBinsBounded(t *testing.T) {
	dir := t.TempDir()
	if r := runProcess(t, dir, 10*time.Minute, "train", "--data", "iris", "--clauses", "4", "--states", "8", "--epochs", "1", "-o", "m.ptm"); r.code != 0 {
		t.Fatalf("train: %s", r.stderr)
	}
	for _, bins := range []string{"2000000000", "100000000", "0"} {
		r := runProcess(t, dir, 10*time.Minute, "eval", "--model", "m.ptm", "--data", "iris", "--samples", "5", "--bins", bins)
		if r.code != 2 || !strings.Contains(r.stderr, "--bins "+bins+", want 1..1048576") {
			t.Errorf("--bins %s: exit %d %.300q", bins, r.code, r.stderr)
		}
	}
	if r := runProcess(t, dir, 10*time.Minute, "eval", "--model", "m.ptm", "--data", "iris", "--samples", "5", "--bins", "1048576"); r.code != 0 {
		t.Errorf("--bins 1048576: exit %d %.300q", r.code, r.stderr)
	}
}

// TestModelNamesControlCharacters: class and feature names with control
// or bidirectional-control characters are refused when a model is read
// for use, so they never reach the terminal (issue 31 item 8: inspect and
// eval's errors printed ESC, CR, BEL and U+202E raw); inspect shows such a
// file (written before the rule) with the names escaped.
func TestModelNamesControlCharacters(t *testing.T) {
	dir := t.TempDir()
	model := tinyIrisModel(t, dir)
	for i, name := range []string{"\x1b[31mred", "a\rb", "bell\a", "\u202eevil", "nel\u0085"} {
		for _, field := range []string{"classes", "features"} {
			p := filepath.Join(dir, fmt.Sprintf("%s-%d.ptm", field, i))
			resealModel(t, model, p, func(h map[string]any) {
				l := h[field].([]any)
				l[1] = name
				h[field] = l
			})
			for _, args := range [][]string{{"eval", "--model", p, "--data", "iris", "--samples", "2"}, {"gen", "--model", p, "--out", filepath.Join(dir, "core")}} {
				code, out, errs := runCLI(args...)
				if code != 1 || !strings.Contains(errs, field+"[1]: name") {
					t.Errorf("%v with %s[1] = %q: exit %d %q", args, field, name, code, errs)
				}
				if strings.ContainsAny(out+errs, "\x1b\r\a\u202e\u0085") {
					t.Errorf("%v: raw control character printed: %q %q", args, out, errs)
				}
			}
			code, out, errs := runCLI("inspect", "--model", p, "--all")
			if code != 0 || !strings.Contains(errs, field+"[1] hold control characters, shown escaped") || !strings.Contains(out, strconv.QuoteToASCII(name)) {
				t.Errorf("inspect with %s[1] = %q: exit %d, want the name escaped (%s)\n%.600s\n%s", field, name, code, strconv.QuoteToASCII(name), out, errs)
			}
			if strings.ContainsAny(out+errs, "\x1b\r\a\u202e\u0085") {
				t.Errorf("inspect: raw control character printed: %q %q", out, errs)
			}
		}
	}
}

// TestModelHeaderTrailingData: bytes after the header's JSON value are
// refused, naming their byte offset (issue 31 item 9: they were accepted;
// a trailing '}' or ']', which json.Decoder.More does not see, too).
func TestModelHeaderTrailingData(t *testing.T) {
	dir := t.TempDir()
	model := tinyIrisModel(t, dir)
	data, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	hl := int(binary.LittleEndian.Uint32(data[12:]))
	for name, extra := range map[string]string{"second-value": ` {"x":1}`, "garbage": "\x00junk", "white-space": " \n\t", "close-brace": "}", "close-bracket": "\n]"} {
		hj := append(append([]byte(nil), data[16:16+hl]...), extra...)
		out := append([]byte(nil), data[:12]...)
		out = binary.LittleEndian.AppendUint32(out, uint32(len(hj)))
		out = append(out, hj...)
		out = append(out, data[16+hl:len(data)-32]...)
		sum := sha256.Sum256(out)
		p := filepath.Join(dir, name+".ptm")
		if err := os.WriteFile(p, append(out, sum[:]...), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errs := runCLI("inspect", "--model", p)
		if name == "white-space" {
			if code != 0 {
				t.Errorf("%s: exit %d %q", name, code, errs)
			}
			continue
		}
		// The offset of the first byte that is not white space.
		n := hl + len(extra) - len(strings.TrimLeft(extra, " \n\t"))
		at := fmt.Sprintf("byte %d: header: data after the header's JSON object, %d bytes into the header", 16+n, n)
		if code != 1 || !strings.Contains(errs, at) {
			t.Errorf("%s: exit %d %q, want %q", name, code, errs, at)
		}
	}
}

// TestFlagsRefused: flags that were accepted silently (issue 31 item 9):
// a T the hardware cannot take, --label with a built-in data set,
// --workers without --fixed, a flag given twice.
func TestFlagsRefused(t *testing.T) {
	model := tinyIrisModel(t, t.TempDir())
	cases := []struct {
		args []string
		msg  string
	}{
		{[]string{"train", "--data", "iris", "-o", "x", "-T", "9223372036854775807"}, "-T 9223372036854775807, want 1..4104"},
		{[]string{"train", "--data", "iris", "-o", "x", "-T", "65536"}, "-T 65536, want 1..4104"},
		// gen, eval --fixed and the tabular boards take K up to 255: K*T^2
		// must fit 32 bits (hw.CheckT, their rule).
		{[]string{"train", "--data", "iris", "-o", "x", "-T", "4105"}, "-T 4105, want 1..4104: hw: bad configuration: MaxK*T^2 = 255*16851025 overflows"},
		{[]string{"train", "--data", "iris", "-o", "x", "-T", "0"}, "-T 0, want 1..4104"},
		// The training core's rule (hw.CheckTrainerParams), before the
		// link is opened (/dev/null is no board).
		{[]string{"train", "--data", "iris", "-o", "x", "--board", "/dev/null", "--states", "2000"}, "--board: hw: bad configuration: trainer N = 2000, want 1..1024"},
		{[]string{"train", "--data", "iris", "-o", "x", "--board", "/dev/null", "-s", "1e300"}, "--board: hw: bad configuration: s = 1e+300, want 1..65536"},
		{[]string{"cosim", "--train", "--shapes", "1", "--examples", "9999999999"}, "--examples 9999999999, want 1..1000000"},
		{[]string{"cosim", "--train", "--data", "iris", "--epochs", "99999"}, "--epochs 99999, want 1..10000"},
		// The fixed-point trainer's move probability 1/s is a 16-bit
		// fraction (fixedtrain.MovesOf).
		{[]string{"train", "--data", "iris", "-o", "x", "--fixed", "-s", "70000"}, "-s 70000 with --fixed: the fixed-point trainer's move probability 1/s is a 16-bit fraction, want s 1..65536"},
		// A convolutional board lowers its K, down to 1 (hw.CheckConvT).
		{[]string{"train", "--data", "mnist", "-o", "x", "-T", "65536"}, "-T 65536, want 1..65535"},
		{[]string{"train", "--data", "iris", "-o", "x", "--label", "species"}, `--label names a column of a CSV file; "iris" is a built-in data set`},
		{[]string{"eval", "--model", model, "--data", "iris", "--label", "y"}, `"iris" is a built-in data set`},
		{[]string{"train", "--data", "iris", "-o", "x", "--workers", "2"}, "--workers applies to --fixed"},
		{[]string{"train", "--data", "iris", "--data", "wine", "-o", "x"}, "--data given twice"},
		{[]string{"train", "--data=iris", "-o", "x", "--fixed", "--fixed=false"}, "--fixed given twice"},
		{[]string{"eval", "--model", "a", "--model", "b", "--data", "iris"}, "--model given twice"},
	}
	for _, c := range cases {
		code, _, errs := runCLI(c.args...)
		if code != 2 || !strings.Contains(errs, c.msg) {
			t.Errorf("ptm %v: exit %d %q; want exit 2 with %q", c.args, code, errs, c.msg)
		}
	}
}

// TestCSVCROnlyLineEndings: a CSV file with CR-only line endings is named
// as such (issue 31 item 9: "duplicate column name").
func TestCSVCROnlyLineEndings(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "cr.csv")
	if err := os.WriteFile(p, []byte("a,b,y\r1,2,x\r3,4,z\r1,2,x\r3,4,z\r"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI("train", "--data", p, "-o", filepath.Join(dir, "m.ptm"))
	if code != 1 || !strings.Contains(errs, "cr.csv:1: the header holds a carriage return") || !strings.Contains(errs, "CR-only line endings") {
		t.Errorf("CR-only CSV: exit %d %q", code, errs)
	}
}

// TestOutputsCheckedFirst: every output a command writes after its work
// is checked before the work, with what writing it would do (issue 31
// item 7: `train -o /dev/full` trained and then failed; gen --out naming
// a file generated and then failed). Each case also names an input that
// does not exist, read before the output is written: the output's error
// comes first only if the output is checked first.
func TestOutputsCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	full := filepath.Join(dir, "full")
	if err := unix.Mknod(full, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 7))); err != nil {
		t.Skipf("mknod: %v (needs root)", err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.csv")
	missingModel := filepath.Join(dir, "missing.ptm")
	cases := []struct {
		args []string
		msg  string
	}{
		{[]string{"train", "--data", missing, "-o", full}, "-o: output " + full + ": write " + full + ": no space left on device"},
		{[]string{"eval", "--model", missingModel, "--data", "iris", "--per-query", full}, "--per-query: output " + full + ": write " + full + ": no space left on device"},
		{[]string{"gen", "--model", missingModel, "--out", file}, "--out: output directory " + file + ": not a file to write: it is a regular file"},
		{[]string{"gen", "--model", missingModel, "--out", filepath.Join(full, "sub")}, full + " is a character device"},
		{[]string{"synth", "--model", missingModel, "--device", "up5k", "--out", file}, "it is a regular file"},
		{[]string{"experiments", "--out", file, "--shard", "3/2"}, "--out: output directory " + file + ": not a file to write: it is a regular file"},
		{[]string{"experiments", "--out", filepath.Join(dir, "r"), "--selection", "iris", "--partial", full}, "--partial: output " + full + ": write " + full + ": no space left on device"},
		{[]string{"experiments", "merge", "--out", file, filepath.Join(dir, "no-shard")}, "it is a regular file"},
		// The simulator writes an FST waveform with seeks: a device is refused.
		{[]string{"cosim", "--model", missingModel, "--trace", full}, "--trace: output " + full + ": not a file to write: it is a character device"},
		{[]string{"cosim", "--model", missingModel, "--trace", dir}, "--trace: output " + dir + ": not a file to write: it is a directory"},
	}
	for _, c := range cases {
		code, _, errs := runCLI(c.args...)
		if code == 0 || !strings.Contains(errs, c.msg) {
			t.Errorf("ptm %v: exit %d %q; want a failure naming the output first: %q", c.args, code, errs, c.msg)
		}
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "keep" {
		t.Errorf("the regular file was changed: %q %v", b, err)
	}
	if fi, err := os.Lstat(full); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Errorf("the full device was replaced: %v %v", fi.Mode(), err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("left behind: %v", ents)
	}
}

// TestOutputToRealDevNull writes a model to the machine's /dev/null, only
// once the writer says it would write it in place (tests run as root: a
// writer that renamed over /dev/null would break the machine), and checks
// it is still a character device afterwards.
func TestOutputToRealDevNull(t *testing.T) {
	const null = "/dev/null"
	if fi, err := os.Stat(null); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Skipf("%s is not a character device here", null)
	}
	o, err := outfile.Create(null)
	if err != nil {
		t.Fatal(err)
	}
	inPlace := o.InPlace()
	o.Abort()
	if !inPlace {
		t.Fatalf("internal/outfile would replace %s: not running the command", null)
	}
	code, out, errs := runCLI("train", "--data", "iris", "--clauses", "4", "--states", "8", "--epochs", "1", "-o", null)
	if code != 0 || !strings.Contains(out, "wrote "+null) {
		t.Errorf("-o %s: exit %d %q %q", null, code, out, errs)
	}
	if fi, err := os.Stat(null); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("%s is no longer a character device: %v %v", null, fi.Mode(), err)
	}
}

// TestTrainTAtTheHardwareEdge: the largest T train takes is one that
// gen and eval --fixed take too (issue 31 item 9: train -T accepted
// values up to 65536 that both refuse at their K = 255).
func TestTrainTAtTheHardwareEdge(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "m.ptm")
	edge := strconv.Itoa(hw.MaxTFor(hw.DefaultMaxK))
	if code, _, errs := runCLI("train", "--data", "iris", "--clauses", "4", "--states", "8", "--epochs", "1", "-T", edge, "-o", model); code != 0 {
		t.Fatalf("train -T %s: exit %d %q", edge, code, errs)
	}
	if code, _, errs := runCLI("eval", "--model", model, "--data", "iris", "--samples", "3", "--fixed"); code != 0 {
		t.Errorf("eval --fixed of a -T %s model: exit %d %q", edge, code, errs)
	}
	if code, _, errs := runCLI("gen", "--model", model, "--out", filepath.Join(dir, "core")); code != 0 {
		t.Errorf("gen of a -T %s model: exit %d %q", edge, code, errs)
	}
}

// TestCSVNamesControlCharacters: a CSV file whose column names or labels
// hold a character a model file's names may not (U+202E, a C1 control, a
// tab: bytes the CSV reader lets through) is refused at load with the
// model reader's rule (internal/names), instead of training a model that
// no command can read back (issue 31 item 8).
func TestCSVNamesControlCharacters(t *testing.T) {
	dir := t.TempDir()
	rows := "1,2,x\n3,4,z\n1,2,x\n3,4,z\n1,2,x\n3,4,z\n"
	for name, c := range map[string]struct{ csv, msg string }{
		"bidi-feature": {"a\u202eb,b,y\n" + rows, "bidi-feature.csv:1: header: column 1: name \"a\\u202eb\""},
		"tab-feature":  {"a,\"b\tc\",y\n" + rows, "tab-feature.csv:1: header: column 2: name \"b\\tc\""},
		"c1-class":     {"a,b,y\n3,4,z\n1,2,x\u009b\n" + rows, "c1-class.csv:3: column \"y\": label \"x\\u009b\" (class 1)"},
	} {
		p := filepath.Join(dir, name+".csv")
		if err := os.WriteFile(p, []byte(c.csv), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, name+".ptm")
		code, so, errs := runCLI("train", "--data", p, "--clauses", "4", "--states", "8", "--epochs", "1", "--no-tune", "-o", out)
		if code != 1 || !strings.Contains(errs, c.msg) || !strings.Contains(errs, "control character") {
			t.Errorf("%s: exit %d %q, want a refusal naming %q", name, code, errs, c.msg)
		}
		if strings.ContainsAny(so+errs, "\u202e\t\u009b") {
			t.Errorf("%s: raw control character printed: %q", name, errs)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: a model was written", name)
		}
	}
}
