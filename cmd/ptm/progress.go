package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// Progress timing: nothing is shown for work that ends within
// progressDelay; after it, a terminal gets a bar redrawn at most every
// progressTTYEvery and anything else a plain line at most every
// progressLineEvery. Variables so that tests can shorten them.
var (
	progressDelay     = time.Second
	progressTTYEvery  = 100 * time.Millisecond
	progressLineEvery = 5 * time.Second
)

// progress reports long work on w (stderr): a one-line bar on a terminal,
// an occasional plain line otherwise, and nothing for work that ends
// within progressDelay.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	label string
	on    bool
	start time.Time
	last  time.Time // last output
	open  bool      // a bar line is open (no newline yet)
	epoch string    // "epoch 3/100" while training, for row reports
}

func newProgress(w io.Writer, label string) *progress {
	on := false
	if f, ok := w.(*os.File); ok {
		on = term.IsTerminal(int(f.Fd()))
	}
	return &progress{w: w, label: label, on: on, start: time.Now()}
}

// show prints msg if it is time to; final forces it (once work started
// showing) and ends the line.
func (p *progress) show(msg string, final bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if p.last.IsZero() && now.Sub(p.start) < progressDelay {
		return // short work shows nothing
	}
	every := progressLineEvery
	if p.on {
		every = progressTTYEvery
	}
	if !final && !p.last.IsZero() && now.Sub(p.last) < every {
		return
	}
	p.last = now
	if p.on {
		fmt.Fprintf(p.w, "\r\033[K%s %s", p.label, msg)
		p.open = !final
		if final {
			fmt.Fprintln(p.w)
		}
		return
	}
	fmt.Fprintf(p.w, "%s %s\n", p.label, msg)
}

// end closes a bar left open (work that stopped short of its total, an
// interrupted stream), so that what is printed next starts on a line of
// its own.
func (p *progress) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.open {
		fmt.Fprintln(p.w)
		p.open = false
	}
}

// update shows done out of total (epochs, queries).
func (p *progress) update(done, total int) {
	if total <= 0 {
		return
	}
	const width = 30
	n := min(width, done*width/total)
	p.mu.Lock()
	p.epoch = fmt.Sprintf("epoch %d/%d", min(done+1, total), total)
	p.mu.Unlock()
	p.show(fmt.Sprintf("[%s%s] %d/%d", strings.Repeat("#", n), strings.Repeat(" ", width-n), done, total), done == total)
}

// rows shows progress within one epoch.
func (p *progress) rows(done, total int) {
	p.mu.Lock()
	ep := p.epoch
	p.mu.Unlock()
	if ep == "" {
		ep = "epoch 1"
	}
	p.show(fmt.Sprintf("%s: row %d/%d", ep, done, total), false)
}

// bytes shows bytes read out of total (-1: unknown).
func (p *progress) bytes(read, total int64) {
	mb := func(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/1e6) }
	if total <= 0 {
		p.show(mb(read), false)
		return
	}
	p.show(fmt.Sprintf("%s of %s (%.0f%%)", mb(read), mb(total), 100*float64(read)/float64(total)), read >= total)
}
