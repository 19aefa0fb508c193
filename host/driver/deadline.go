package driver

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// DeadlineError reports requests that got no complete response within
// Opts.Deadline. It wraps ErrTimeout, so errors.Is(err, ErrTimeout)
// holds for it.
//
// A request whose own deadline passed fails with a DeadlineError naming
// it alone. Stream then stops: the requests still in flight are abandoned
// (their results wrap ErrTimeout and name the request that expired) and
// Stream returns one DeadlineError listing every request left without an
// answer, the expired and the abandoned ones. Load returns one naming the
// words the board has not acknowledged.
type DeadlineError struct {
	// Deadline is Opts.Deadline.
	Deadline time.Duration
	// Unanswered lists the requests given up, in the order of Index.
	Unanswered []Unanswered
}

// Unanswered describes one request given up.
type Unanswered struct {
	// Label names the request ("request 17", "LOAD_DATA words 510..575").
	Label string `json:"label"`
	// Index is the request's Request.Index for INFER requests, the first
	// unacknowledged word offset for an upload, -1 for other commands.
	Index int `json:"index"`
	// Seq is the sequence number of its last transmission.
	Seq uint16 `json:"seq"`
	// Attempts is the number of transmissions (0: never sent).
	Attempts int `json:"attempts"`
	// Waited is the time since its first transmission (for an upload,
	// since the board last acknowledged new words).
	Waited time.Duration `json:"waited_ns"`
	// Expired is true for the request whose deadline passed, false for
	// one abandoned because another one expired.
	Expired bool `json:"expired"`
	// LastTimeout is the retransmission timeout in effect at the end.
	LastTimeout time.Duration `json:"last_timeout_ns"`
}

func (u Unanswered) String() string {
	s := fmt.Sprintf("%s (seq %d): %d transmissions over %v", u.Label, u.Seq, u.Attempts, u.Waited.Round(time.Millisecond))
	if u.LastTimeout > 0 {
		s += fmt.Sprintf(", last timeout %v", u.LastTimeout.Round(time.Millisecond))
	}
	if !u.Expired {
		s += ", abandoned"
	}
	return s
}

// Error lists the unanswered requests (the first few when there are many).
func (e *DeadlineError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "driver: %d request(s) got no complete response within the deadline of %v: ", len(e.Unanswered), e.Deadline)
	const show = 8
	for i, u := range e.Unanswered {
		if i == show {
			fmt.Fprintf(&b, "; and %d more", len(e.Unanswered)-show)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(u.String())
	}
	return b.String()
}

// Unwrap returns ErrTimeout.
func (e *DeadlineError) Unwrap() error { return ErrTimeout }

// Indices returns the Index of every unanswered request, ascending.
func (e *DeadlineError) Indices() []int {
	out := make([]int, len(e.Unanswered))
	for i, u := range e.Unanswered {
		out[i] = u.Index
	}
	return out
}

func (e *DeadlineError) sort() {
	slices.SortStableFunc(e.Unanswered, func(a, b Unanswered) int { return a.Index - b.Index })
}

// unanswered describes c, given up at now.
func (c *call) unanswered(now time.Time, expired bool) Unanswered {
	u := Unanswered{Label: c.label, Index: c.index, Seq: c.seq, Attempts: c.attempts, Expired: expired, LastTimeout: c.lastRTO}
	if !c.sentAt.IsZero() {
		u.Waited = now.Sub(c.sentAt)
	}
	return u
}
