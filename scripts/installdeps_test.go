// Package scripts_test checks the shell scripts of this folder.
package scripts_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeApt builds a PATH with a fake sudo and id (not root) and an apt-get
// that reports a held lock for its first `locked` calls, and only the
// utilities the script needs: every tool looks missing.
func fakeApt(t *testing.T, locked int) (path, calls string) {
	t.Helper()
	bin := t.TempDir()
	calls = filepath.Join(t.TempDir(), "calls")
	for _, tool := range []string{"grep", "tee", "mktemp", "rm", "sleep", "cat"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skip(err)
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	scripts := map[string]string{
		"sudo": "#!/bin/bash\nexec \"$@\"\n",
		"id":   "#!/bin/bash\necho 1000\n",
		"apt-get": `#!/bin/bash
echo "$*" >> "` + calls + `"
n=$(cat "` + calls + `" | grep -c .)
if [ "$n" -le ` + itoa(locked) + ` ]; then
  echo "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (apt-get)" >&2
  echo "E: Unable to acquire the dpkg frontend lock (/var/lib/dpkg/lock-frontend), is another process using it?" >&2
  exit 100
fi
echo "apt-get $* done"
`,
	}
	for name, text := range scripts {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return bin, calls
}

func runInstall(t *testing.T, path string, env ...string) (string, error) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip(err)
	}
	cmd := exec.Command(bash, "install-deps.sh")
	cmd.Env = append([]string{"PATH=" + path, "APT_LOCK_POLL=0"}, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestInstallDepsWaitsForAptLock(t *testing.T) {
	path, calls := fakeApt(t, 2)
	out, err := runInstall(t, path)
	if err != nil {
		t.Fatalf("install-deps failed while another apt held the lock briefly: %v\n%s", err, out)
	}
	if !strings.Contains(out, "waiting") || !strings.Contains(out, "install -y -qq --no-install-recommends verilator") {
		t.Errorf("output:\n%s", out)
	}
	log, _ := os.ReadFile(calls)
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	if len(lines) != 4 || !strings.Contains(lines[2], "update") || !strings.Contains(lines[3], "install") || !strings.Contains(lines[3], "verilator") {
		t.Errorf("apt-get calls:\n%s", log)
	}
}

func TestInstallDepsGivesUpOnAStuckLock(t *testing.T) {
	path, _ := fakeApt(t, 1<<30)
	out, err := runInstall(t, path, "APT_LOCK_WAIT=1")
	if err == nil || !strings.Contains(out, "still locked by another process after 1s") {
		t.Errorf("stuck lock: %v\n%s", err, out)
	}
}

// TestInstallDepsFashionMNIST: the data package is installed when its
// files are missing, and not when they are there.
func TestInstallDepsFashionMNIST(t *testing.T) {
	path, calls := fakeApt(t, 0)
	out, err := runInstall(t, path, "PTM_FASHION_MNIST_DIR="+filepath.Join(t.TempDir(), "none"))
	if err != nil {
		t.Fatalf("install-deps: %v\n%s", err, out)
	}
	if log, _ := os.ReadFile(calls); !strings.Contains(string(log), "dataset-fashion-mnist") {
		t.Errorf("Fashion-MNIST missing, apt-get calls:\n%s", log)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "train-images-idx3-ubyte.gz"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	path, calls = fakeApt(t, 0)
	if out, err := runInstall(t, path, "PTM_FASHION_MNIST_DIR="+dir); err != nil {
		t.Fatalf("install-deps: %v\n%s", err, out)
	}
	if log, _ := os.ReadFile(calls); strings.Contains(string(log), "dataset-fashion-mnist") || !strings.Contains(string(log), "verilator") {
		t.Errorf("Fashion-MNIST present, apt-get calls:\n%s", log)
	}
}

func itoa(n int) string {
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	if s == "" {
		s = "0"
	}
	return s
}
