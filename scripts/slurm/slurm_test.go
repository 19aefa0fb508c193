// Package slurm holds the test of the Slurm batch scripts beside it
// (submit.sh, experiments.sbatch, merge.sbatch, local-cluster.sh;
// docs/howto-slurm.md). It has no code of its own.
package slurm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ptmhw/ptm/internal/testenv"
)

var scripts = []string{"submit.sh", "experiments.sbatch", "merge.sbatch", "local-cluster.sh"}

// TestScriptsParse checks the scripts' shell syntax and their usage
// errors, without Slurm.
func TestScriptsParse(t *testing.T) {
	for _, s := range scripts {
		if out, err := exec.Command("bash", "-n", s).CombinedOutput(); err != nil {
			t.Errorf("bash -n %s: %v\n%s", s, err, out)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"experiments.sbatch", "out"}, "usage: sbatch --array=1-N"},
		{[]string{"experiments.sbatch", "out", "4"}, "not an array task"},
		{[]string{"merge.sbatch"}, "usage: sbatch merge.sbatch OUT"},
		{[]string{"submit.sh", "-n", "x", "out"}, "-n x: want a number of shards"},
		{[]string{"submit.sh", "-n", "0", "out"}, "must be at least 1"},
		{[]string{"local-cluster.sh", "begin", "d"}, "usage:"},
	} {
		cmd := exec.Command("bash", c.args...)
		cmd.Env = append(os.Environ(), "SLURM_ARRAY_TASK_ID=")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("%v: %v, output %q; want a failure saying %q", c.args, err, out, c.want)
		}
	}
}

// slurmTools are the programs the Slurm test needs (Debian: slurm-wlm,
// munge; scripts/install-deps.sh).
var slurmTools = []string{"munged", "mungekey", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "sinfo"}

// TestSlurmQuickSweep starts a single-node Slurm of its own
// (local-cluster.sh, its configuration and state in a temporary
// directory), submits the quick sweep as a 4-task array job and a
// dependent merge job (submit.sh), waits for them, and compares the merged
// summary.json and figures with an unsharded `ptm experiments --quick`:
// equal but for times and memory (summary). It stops the daemons it
// started, also when it fails.
func TestSlurmQuickSweep(t *testing.T) {
	if !testenv.Long() {
		var missing []string
		for _, tool := range slurmTools {
			if _, err := lookTool(tool); err != nil {
				missing = append(missing, tool)
			}
		}
		if len(missing) > 0 {
			t.Skipf("Slurm is not installed (%s missing; Debian: apt-get install slurm-wlm munge, or bash scripts/install-deps.sh); the test runs under make test-long", strings.Join(missing, ", "))
		}
	}
	testenv.SkipUnlessLong(t, "a Slurm cluster running the quick sweep as 4 shards and the unsharded quick sweep (4m52s measured at load 10-15 on 2 cores)")
	for _, tool := range slurmTools {
		if _, err := lookTool(tool); err != nil {
			t.Fatalf("%s: Slurm is not installed (Debian: bash scripts/install-deps.sh installs slurm-wlm and munge)", tool)
		}
	}
	start := time.Now()
	beat := testenv.Heartbeat(t, 30*time.Second)
	ctx := testenv.Context(t)
	tmp := t.TempDir()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	ptm := filepath.Join(tmp, "ptm")
	build := exec.CommandContext(ctx, "go", "build", "-o", ptm, "./cmd/ptm")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/ptm: %v\n%s", err, out)
	}

	cluster := filepath.Join(tmp, "cluster")
	env := append(os.Environ(), "PATH="+os.Getenv("PATH")+":/usr/sbin:/sbin",
		fmt.Sprintf("LOCAL_CLUSTER_WAIT=%d", int(60*testenv.Slowness())), "SLURM_CONF="+filepath.Join(cluster, "slurm.conf"))
	// run returns a command's stdout (its stderr is logged).
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Env = env
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out.String(), errOut.String())
		}
		if errOut.Len() > 0 {
			t.Logf("%s: %s", name, strings.TrimSpace(errOut.String()))
		}
		return out.String()
	}
	t.Cleanup(func() {
		// Stop the daemons whatever happened (local-cluster.sh stop kills
		// the pids it recorded and waits for them).
		cmd := exec.Command("bash", "local-cluster.sh", "stop", cluster)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		t.Logf("%s", strings.TrimSpace(string(out)))
		if err != nil {
			t.Errorf("stopping the cluster: %v", err)
		}
		for _, d := range []string{"munged", "slurmctld", "slurmd"} {
			if b, err := os.ReadFile(filepath.Join(cluster, d+".pid")); err == nil {
				t.Errorf("%s (pid %s) still recorded as running", d, strings.TrimSpace(string(b)))
			}
		}
	})
	t.Logf("%s", strings.TrimSpace(run("bash", "local-cluster.sh", "start", cluster)))
	t.Logf("%s", strings.TrimSpace(run("sinfo")))
	t.Logf("cluster up after %s", time.Since(start).Round(time.Second))

	out := filepath.Join(tmp, "sweep")
	sub := run("bash", "submit.sh", "-n", "4", "-c", "1", "-p", ptm, out, "--", "--quick")
	t.Logf("%s", strings.TrimSpace(sub))
	first, _, _ := strings.Cut(sub, "\n")
	ids := strings.Fields(first)
	if len(ids) != 4 || ids[0] != "array" || ids[2] != "merge" {
		t.Fatalf("submit.sh printed %q, want \"array ID merge ID\"", ids)
	}
	array, merge := ids[1], ids[3]
	t.Logf("array job %s, merge job %s", array, merge)
	submitted := time.Now()

	// The unsharded reference, while Slurm works (both share the CPUs;
	// only the numbers are compared).
	whole := filepath.Join(tmp, "whole")
	refDone := make(chan error, 1)
	go func() {
		cmd := exec.CommandContext(ctx, ptm, "experiments", "--quick", "--out", whole)
		b, err := cmd.CombinedOutput()
		if err != nil {
			err = fmt.Errorf("%w\n%s", err, b)
		}
		refDone <- err
	}()

	// Wait for the merge job to leave the queue.
	for {
		q := run("squeue", "-h", "-o", "%i %T", "-j", array+","+merge)
		if strings.TrimSpace(q) == "" {
			break
		}
		beat("queue after %s: %s", time.Since(submitted).Round(time.Second), strings.Join(strings.Fields(q), " "))
		select {
		case <-ctx.Done():
			t.Fatalf("jobs still queued at the test's deadline: %s", q)
		case <-time.After(2 * time.Second):
		}
	}
	slurmTime := time.Since(submitted)
	state := run("scontrol", "show", "job", merge)
	if !strings.Contains(state, "JobState=COMPLETED") {
		logs, _ := filepath.Glob(filepath.Join(out, "logs", "*.out"))
		var b strings.Builder
		for _, l := range logs {
			data, _ := os.ReadFile(l)
			fmt.Fprintf(&b, "== %s\n%s\n", l, tail(string(data), 15))
		}
		t.Fatalf("merge job %s did not complete:\n%s\n%s", merge, state, b.String())
	}
	if err := <-refDone; err != nil {
		t.Fatalf("unsharded ptm experiments --quick: %v", err)
	}
	t.Logf("Slurm: 4 shards + merge in %s; whole test so far %s", slurmTime.Round(time.Second), time.Since(start).Round(time.Second))

	a, b := summary(t, whole), summary(t, filepath.Join(out, "merged"))
	if !reflect.DeepEqual(a, b) {
		for k, v := range a {
			if w, ok := b[k]; !ok || !reflect.DeepEqual(v, w) {
				t.Errorf("%s: unsharded %v, merged on Slurm %v (present %v)", k, v, w, ok)
			}
		}
		for k := range b {
			if _, ok := a[k]; !ok {
				t.Errorf("merged on Slurm has extra key %s", k)
			}
		}
	}
	figs, _ := a["figures"].([]any)
	for _, f := range figs {
		fa, err1 := os.ReadFile(filepath.Join(whole, f.(string)))
		fb, err2 := os.ReadFile(filepath.Join(out, "merged", f.(string)))
		if err1 != nil || err2 != nil || !bytes.Equal(fa, fb) {
			t.Errorf("figure %s differs (%v, %v)", f, err1, err2)
		}
	}
	t.Logf("summary.json: %d keys equal, %d figures equal; test time %s", len(a), len(figs), time.Since(start).Round(time.Second))
}

// summary reads dir/summary.json without its measurements of time and
// memory: meta.seconds and the images section's training times and peak
// RSS ("mnist.test.rf.train_s", "mnist.ptm.peak_rss_mb").
func summary(t *testing.T, dir string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var js map[string]any
	if err := json.Unmarshal(raw, &js); err != nil {
		t.Fatalf("%s/summary.json: %v", dir, err)
	}
	delete(js, "meta.seconds")
	for k := range js {
		if strings.HasSuffix(k, ".train_s") || strings.HasSuffix(k, ".peak_rss_mb") {
			delete(js, k)
		}
	}
	return js
}

// lookTool finds a program on PATH or in the sbin directories (where
// Debian puts the daemons).
func lookTool(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, d := range []string{"/usr/sbin", "/sbin"} {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found", name)
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
