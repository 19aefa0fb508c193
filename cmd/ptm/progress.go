package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// progress draws a one-line progress bar on w when w is a terminal and
// stays silent otherwise.
type progress struct {
	w     io.Writer
	label string
	on    bool
}

func newProgress(w io.Writer, label string) *progress {
	on := false
	if f, ok := w.(*os.File); ok {
		on = term.IsTerminal(int(f.Fd()))
	}
	return &progress{w: w, label: label, on: on}
}

// update shows done out of total.
func (p *progress) update(done, total int) {
	if !p.on || total <= 0 {
		return
	}
	const width = 30
	n := done * width / total
	fmt.Fprintf(p.w, "\r%s [%s%s] %d/%d", p.label, strings.Repeat("#", n), strings.Repeat(" ", width-n), done, total)
	if done == total {
		fmt.Fprintln(p.w)
	}
}
