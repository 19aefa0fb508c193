// Package driver talks to a PTM board over any transport
// (host/transport): INFO, model upload, STATUS, and pipelined inference
// with retries, as docs/protocol.md specifies.
//
// # Engine
//
// One goroutine owns the window, the table of pending requests by
// sequence number, the timers and every send; a second one receives frames.
// Each command becomes a call: its frame is encoded once with a fresh
// 16-bit sequence number (numbers wrap around; one still pending is never
// reused) and resent byte for byte until its response is complete.
// Results are a pure function of the request, so resending is always
// safe, and a response that arrives for a request already answered (a
// late duplicate) is counted and dropped: nothing is delivered twice.
//
// A request is resent when
//
//   - its retransmission timeout (RTO) expires. The timers of the
//     requests in flight restart (a full RTO from now, RFC 6298 section
//     5.3) whenever an answer arrives, since the board answers in arrival
//     order and a deep window queues requests behind each other; answers
//     already received are handled before any timer. The RTO follows
//     RFC 6298:
//     Opts.Timeout until the first round trip is measured, then the
//     smoothed RTT + 4 deviations, sampled from requests answered at their
//     first transmission (Karn's rule; a request refused busy before counts
//     from its last transmission; the answer to a resent request gives a
//     lower bound, taken only when it exceeds the estimate, so that a
//     board that got slower is followed). It is at least Opts.MinTimeout
//     plus the line time of everything in flight, at most Opts.MaxTimeout.
//     A timeout on a silent link (nothing at all received since the
//     transmission) doubles it, for that request and, until the next valid
//     sample, for new ones (exponential back-off); a timeout while the board
//     keeps sending is a loss, not slowness, and is resent at the same
//     RTO;
//   - a response to a request sent later arrives first (the board answers
//     in arrival order, so the earlier request or its answer was lost):
//     "fast retransmit";
//   - the transport dropped a frame (bad CRC) whose header claimed its
//     sequence number ("drop hint");
//   - the board answered ERROR 8 (busy): after Opts.BusyBackoff (doubled
//     per busy answer of the request, up to the RTO), and the window is
//     halved (AIMD, probing slowly near the last busy window).
//
// Load resends itself (go-back-N from the board's next offset, in chunks
// sized for the measured loss rate): see Load.
//
// Fragmented INFER responses are reassembled by fragment index; fragments
// of different attempts of the same request are combined when they agree
// (a retry returns the same words), so a long response needs every
// fragment to arrive once, not all in one attempt.
//
// Resends are bounded by time, not by a count: a request without a
// complete response Opts.Deadline after its first transmission fails with
// a *DeadlineError (wrapping ErrTimeout) naming it, its sequence number,
// transmissions and last timeout; Stream then stops and returns one
// DeadlineError listing every request left unanswered. Opts.MaxRetries,
// if set, adds a count bound. A refusal wraps *frame.BoardError. Stream
// delivers exactly one Result per request.
//
// # Figures
//
// Stats counts resends by cause, busy answers, late duplicates and the
// transport's counters (host-side CRC and framing drops, bytes each way);
// transport.Stats.TxUtilization gives the UART link utilization.
package driver
