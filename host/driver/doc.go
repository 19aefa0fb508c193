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
//   - its timeout expires: max(Opts.Timeout + line time of everything in
//     flight, smoothed RTT + 4 deviations), doubled per timeout up to 8x;
//   - a response to a request sent later arrives first (the board answers
//     in arrival order, so the earlier request or its answer was lost):
//     "fast retransmit";
//   - the transport dropped a frame (bad CRC) whose header claimed its
//     sequence number ("drop hint");
//   - the board answered ERROR 8 (busy): after Opts.BusyBackoff, and the
//     window is halved (AIMD, probing slowly near the last busy window);
//   - for LOAD_DATA, the board answered ERROR 6 (gap) naming its next
//     offset: the chunk at that offset is resent, then the refused one.
//
// Fragmented INFER responses are reassembled by fragment index; fragments
// of different attempts of the same request are combined when they agree
// (a retry returns the same words), so a long response needs every
// fragment to arrive once, not all in one attempt.
//
// After Opts.MaxRetries resends a request fails with an error wrapping
// ErrTimeout that names the request and its sequence number; a refusal
// wraps *frame.BoardError. Stream delivers exactly one Result per
// request.
//
// # Figures
//
// Stats counts resends by cause, busy answers, late duplicates and the
// transport's counters (host-side CRC and framing drops, bytes each way);
// transport.Stats.TxUtilization gives the UART link utilization.
package driver
