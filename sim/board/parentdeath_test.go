//go:build linux

package board

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptmhw/ptm/internal/testenv"
)

// childEnv turns TestSimulatorDiesWithParent's own process into the
// parent of a board (the role of a `ptm board` wrapper).
const childEnv = "PTM_BOARD_PARENT_DEATH_CHILD"

// TestSimulatorDiesWithParent: the simulator dies with the process that
// started it, even when that process is SIGKILLed and cannot stop it
// (issue 31 item 9: SIGKILL of the `ptm board` wrapper left its simulator
// child serving the pseudo-terminal). A child test process starts the
// preloaded Iris board (the build of TestIrisStreamSlowBoard, cached),
// prints the simulator's pid and waits; the test keeps the board busy on
// its pseudo-terminal, SIGKILLs the child and waits for the simulator to
// go.
func TestSimulatorDiesWithParent(t *testing.T) {
	if os.Getenv(childEnv) == "1" {
		iris := loadIris(t)
		o := irisOptions(iris.m, 8, true)
		o.StartTimeout = testenv.Scale(10 * time.Minute)
		p, err := Start(context.Background(), o)
		if err != nil {
			fmt.Println("ERROR", err)
			os.Exit(1)
		}
		fmt.Println("SIMPID", p.cmd.Process.Pid, p.UART)
		time.Sleep(time.Hour)
		return
	}
	if testing.Short() {
		t.Skip("end-to-end simulation skipped in -short mode")
	}
	needVerilator(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute) // a hang guard only
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-test.run=^TestSimulatorDiesWithParent$", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sim, uart := 0, ""
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "SIMPID "); ok {
			pid, path, _ := strings.Cut(v, " ")
			sim, _ = strconv.Atoi(pid)
			uart = path
			break
		}
		if strings.HasPrefix(sc.Text(), "ERROR") {
			t.Fatal(sc.Text())
		}
	}
	if sim == 0 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("the child printed no simulator pid")
	}
	go func() {
		for sc.Scan() {
		}
	}()
	// Keep the board busy, as a host streaming to it does: a busy
	// simulator never looks at its standard input (--watch-stdin), so
	// only the kernel's parent-death signal can stop it.
	pty, err := os.OpenFile(uart, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer pty.Close()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		buf := make([]byte, 256)
		for {
			if _, err := pty.Read(buf); err != nil {
				return
			}
		}
	}()
	go func() {
		junk := []byte{0xA5, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0xde, 0xad, 0xbe, 0xef}
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := pty.Write(junk); err != nil {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	time.Sleep(200 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	for ctx.Err() == nil {
		if err := syscall.Kill(sim, 0); errors.Is(err, syscall.ESRCH) {
			t.Logf("simulator %d gone after its parent was killed", sim)
			return
		}
		// A zombie (not reaped by anyone yet) counts as gone.
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", sim)); err == nil && strings.Contains(string(b), ") Z ") {
			t.Logf("simulator %d gone (a zombie) after its parent was killed", sim)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	syscall.Kill(sim, syscall.SIGKILL)
	t.Fatalf("simulator %d still running after its parent was SIGKILLed", sim)
}
