package board

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is a running board simulator.
type Process struct {
	// UART is the pseudo-terminal slave path ("" without Options.UART).
	UART string
	// TAP is the TAP device name ("" without Options.TAP).
	TAP string
	// Build is the simulator (its Design is the generated core).
	Build *Build
	// Options are the resolved options it was started with.
	Options Options

	cmd     *exec.Cmd
	stdin   io.WriteCloser
	done    chan struct{}
	waitErr error

	mu      sync.Mutex
	stats   Stats
	stopped bool
}

// Stats are the simulator's counters, reported when it exits.
type Stats struct {
	Cycles          uint64  // simulated board clocks
	WallSeconds     float64 // time since the board came out of reset
	ActiveSeconds   float64 // wall time spent clocking the model
	CyclesPerSecond float64 // Cycles / ActiveSeconds
	// Raw holds every key=value of the simulator's STATS line (link byte
	// and frame counts, bad FCS, injected faults).
	Raw map[string]string
}

// Start builds (or reuses) the simulator for opts and starts it. It
// returns when the board is out of reset and its links are open, or with
// an error. Cancelling ctx stops the simulator.
func Start(ctx context.Context, opts Options) (*Process, error) {
	o, m, err := opts.resolved()
	if err != nil {
		return nil, err
	}
	b, err := build(ctx, o, m)
	if err != nil {
		return nil, err
	}
	return startSim(ctx, o, b)
}

// startSim runs the built simulator b with the resolved options o.
func startSim(ctx context.Context, o Options, b *Build) (*Process, error) {
	args := []string{"--seed", strconv.FormatUint(o.Seed, 10), "--watch-stdin"}
	if o.UART {
		args = append(args, "--uart")
	}
	if o.TAP != "" {
		args = append(args, "--tap", o.TAP)
	}
	f := o.Faults
	for _, x := range []struct {
		name string
		v    float64
	}{
		{"--uart-rx-flip", f.UARTRx.Flip}, {"--uart-rx-drop", f.UARTRx.Drop},
		{"--uart-tx-flip", f.UARTTx.Flip}, {"--uart-tx-drop", f.UARTTx.Drop},
		{"--eth-rx-flip", f.EthRx.Flip}, {"--eth-rx-drop", f.EthRx.Drop},
		{"--eth-tx-flip", f.EthTx.Flip}, {"--eth-tx-drop", f.EthTx.Drop},
	} {
		if x.v > 0 {
			args = append(args, x.name, strconv.FormatFloat(x.v, 'g', -1, 64))
		}
	}
	if f.ResponseDelay > 0 {
		args = append(args, "--delay-ms", strconv.FormatFloat(f.ResponseDelay.Seconds()*1000, 'f', 3, 64))
	}
	name := b.Binary
	if o.NetNS != "" {
		args = append([]string{"netns", "exec", o.NetNS, b.Binary}, args...)
		name = "ip"
	}
	cmd := exec.Command(name, args...)
	dieWithParent(cmd)
	cmd.Dir = b.Dir // bank images are read from the working directory
	if o.Log != nil {
		cmd.Stderr = o.Log
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("board: %w", err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("board: %w", err)
	}
	// The kernel's parent-death signal (dieWithParent) follows the OS
	// thread that forked the simulator, not the process: were that thread
	// to exit (a goroutine that locks its thread and ends, as entering a
	// network namespace does, makes the runtime destroy it), the simulator
	// would be killed mid-run. So the simulator is started and waited for
	// from one goroutine locked to its thread for the simulator's life.
	p := &Process{Build: b, Options: o, cmd: cmd, stdin: stdin, done: make(chan struct{})}
	startErr := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			startErr <- err
			return
		}
		startErr <- nil
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	if err := <-startErr; err != nil {
		return nil, fmt.Errorf("board: starting %s: %w", b.Binary, err)
	}
	ready := make(chan error, 1)
	go p.readStdout(stdout, ready)
	timer := time.NewTimer(o.StartTimeout)
	defer timer.Stop()
	select {
	case err = <-ready:
	case <-ctx.Done():
		err = ctx.Err()
	case <-timer.C:
		err = fmt.Errorf("board: simulator not ready after %v", o.StartTimeout)
	}
	if err != nil {
		p.Stop()
		return nil, err
	}
	go func() {
		select {
		case <-ctx.Done():
			p.Stop()
		case <-p.done:
		}
	}()
	return p, nil
}

// readStdout parses the simulator's stdout: link lines, READY, STATS.
func (p *Process) readStdout(r io.Reader, ready chan<- error) {
	sc := bufio.NewScanner(r)
	sent := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "UART: "):
			p.mu.Lock()
			p.UART = strings.TrimPrefix(line, "UART: ")
			p.mu.Unlock()
		case strings.HasPrefix(line, "TAP: "):
			p.mu.Lock()
			p.TAP = strings.TrimPrefix(line, "TAP: ")
			p.mu.Unlock()
		case strings.HasPrefix(line, "READY"):
			if !sent {
				ready <- nil
				sent = true
			}
		case strings.HasPrefix(line, "STATS "):
			p.mu.Lock()
			p.stats = parseStats(line)
			p.mu.Unlock()
		}
	}
	if !sent {
		ready <- errors.New("board: simulator exited before it was ready (see Options.Log for its stderr)")
	}
}

func parseStats(line string) Stats {
	s := Stats{Raw: map[string]string{}}
	for _, f := range strings.Fields(strings.TrimPrefix(line, "STATS ")) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		s.Raw[k] = v
		switch k {
		case "cycles":
			s.Cycles, _ = strconv.ParseUint(v, 10, 64)
		case "wall_s":
			s.WallSeconds, _ = strconv.ParseFloat(v, 64)
		case "active_s":
			s.ActiveSeconds, _ = strconv.ParseFloat(v, 64)
		case "cycles_per_s":
			s.CyclesPerSecond, _ = strconv.ParseFloat(v, 64)
		}
	}
	return s
}

// Stop ends the simulator (SIGTERM, then SIGKILL after 5 s) and waits for
// it. It is safe to call more than once.
func (p *Process) Stop() error {
	p.mu.Lock()
	first := !p.stopped
	p.stopped = true
	p.mu.Unlock()
	if first {
		p.stdin.Close()
		if p.cmd.Process != nil {
			p.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		if p.cmd.Process != nil {
			p.cmd.Process.Kill()
		}
		<-p.done
	}
	return p.exitErr()
}

// exitErr is the simulator's exit status, nil after a normal stop.
func (p *Process) exitErr() error {
	if p.waitErr == nil {
		return nil
	}
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) && ee.ProcessState != nil {
		if ws, ok := ee.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() &&
			(ws.Signal() == syscall.SIGTERM || ws.Signal() == syscall.SIGKILL) && p.stopped {
			return nil
		}
	}
	return fmt.Errorf("board: simulator: %w", p.waitErr)
}

// Wait waits for the simulator to exit (after Stop, or on its own) and
// returns its exit status.
func (p *Process) Wait() error {
	<-p.done
	return p.exitErr()
}

// Done is closed when the simulator has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Stats returns the simulator's counters; they are reported when it exits
// (call after Stop or Wait).
func (p *Process) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

// Run starts the board, calls ready (when not nil) with the running
// process, and blocks until ctx is cancelled or the simulator exits; it
// then stops the simulator and returns nil after a cancellation, or the
// simulator's error.
func Run(ctx context.Context, opts Options, ready func(*Process)) error {
	p, err := Start(ctx, opts)
	if err != nil {
		return err
	}
	return serve(ctx, p, ready)
}

// serve calls ready (when not nil) with the running process p and blocks
// until ctx is cancelled (then stops p and returns nil or p's error on
// stopping) or the simulator exits (its error, or a plain one).
func serve(ctx context.Context, p *Process, ready func(*Process)) error {
	if ready != nil {
		ready(p)
	}
	select {
	case <-ctx.Done():
		return p.Stop()
	case <-p.done:
		if err := p.exitErr(); err != nil {
			return err
		}
		return errors.New("board: simulator exited")
	}
}
