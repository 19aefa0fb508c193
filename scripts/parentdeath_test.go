package scripts_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBoardDiesWithScript: a process a demo starts as its board
// ("${with_parent[@]}" from lib/steps.sh) is gone soon after the demo
// script is killed with SIGKILL, which runs no trap (before, `make demo
// DATA=mnist` killed that way left `ptm board --soft` running).
func TestBoardDiesWithScript(t *testing.T) {
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("setpriv (util-linux) is not installed: the demos then rely on their EXIT trap alone")
	}
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "board.pid")
	script := `. scripts/lib/steps.sh
[ ${#with_parent[@]} -gt 0 ] || { echo "with_parent is empty" >&2; exit 3; }
"${with_parent[@]}" sleep 600 &
board_pid=$!
echo "$board_pid" > "$1.tmp" && mv "$1.tmp" "$1"
wait "$board_pid"
`
	cmd := exec.Command("bash", "-c", script, "demo", pidFile)
	cmd.Dir = ".."
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err = strconv.Atoi(strings.TrimSpace(string(b))); err != nil {
				t.Fatalf("%s: %v", pidFile, err)
			}
			break
		}
		if cmd.ProcessState != nil || time.Since(start) > 2*time.Minute {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the script did not start its board: %s", stderr.String())
		}
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the board (pid %d) is not running before the kill: %v", pid, err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	// The kernel sends SIGTERM as the parent exits; the board is then
	// reaped by init (or the nearest subreaper), so its pid disappears.
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		if err := syscall.Kill(pid, 0); err != nil {
			t.Logf("the board (pid %d) was gone %v after the script's SIGKILL", pid, time.Since(start).Round(time.Millisecond))
			return
		}
		if b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); strings.Contains(string(b), ") Z ") {
			t.Logf("the board (pid %d) exited %v after the script's SIGKILL (a zombie until reaped)", pid, time.Since(start).Round(time.Millisecond))
			return
		}
		if time.Since(start) > time.Minute {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the board (pid %d) still runs a minute after its script was killed", pid)
		}
	}
}
