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
//   - its retransmission timeout (RTO) expires. The RTO follows RFC 6298:
//     Opts.Timeout until the first round trip is measured, then the
//     smoothed RTT + 4 deviations, sampled from requests answered at their
//     first transmission (Karn's rule; a request refused busy before counts
//     from its last transmission; a request whose resent copies were all
//     refused busy counts from its first, since the answer is then that
//     transmission's; the answer to a resent request gives a lower bound,
//     taken only when it exceeds the estimate, so that a board that got
//     slower is followed). It is at least Opts.MinTimeout plus the line
//     time of everything in flight, at most Opts.MaxTimeout. Which
//     requests time out, and when, follows from the board answering in
//     arrival order, one request at a time:
//     the timers of the requests in flight restart (a full RTO from now,
//     RFC 6298 section 5.3) whenever a frame arrives, and while one is
//     arriving (bytes received, none dropped since: a long answer on a
//     line slower than its nominal rate, as a Verilated board's), so a
//     request's timeout covers its position in the board's queue: it
//     counts from the answer before it, not from its own transmission.
//     On a clean link only the head of the window (the request with the
//     earliest transmission whose answer may still come) times out; the
//     requests behind it cannot be answered before it and wait, so a
//     board that is slow or stalled gets one resent copy, not a copy of
//     its whole queue (which overflows its receive buffer). When the
//     head's resend is answered within about a lone round trip (twice the
//     shortest RTT sample plus 1 ms), that answer is the resend's, so the
//     requests sent before it were lost and are resent at once (go-back-N).
//     On a lossy link (a dropped frame, fast retransmit or drop hint in
//     the last 64 answers) every request due is resent: silence there is
//     loss. Answers already received are handled before any timer.
//     A timeout on a silent link (nothing at all received since the
//     transmission) doubles the RTO, for that request and, until the next
//     valid sample, for new ones (exponential back-off), but at most twice
//     unless the board has shown itself slower than the RTO: a spurious
//     timeout (an answer to a request after it was resent or handed back
//     on a timeout, or a busy refusal of a timeout's copy, which shows the
//     original still queued; Stats.SpuriousTimeouts) doubles it at once and
//     raises the cap by one (up to 16 doublings; one less per 8 RTT
//     samples): a board a hundred times slower than the RTO gets there
//     within seven late answers, one hiccup on a lossy link allows one
//     doubling more. Silence on a noisy link is mostly loss (a board that
//     does not rescan loses every request a
//     corrupt frame swallows), and once more than half the exchanges fail
//     an unbounded back-off waits seconds per request. A prompt answer to
//     a timed-out head's resend undoes the back-off. A timeout while the
//     board keeps sending is a loss, not slowness, and is resent at the
//     same RTO. On a clean link, resent copies the board may still hold
//     (until their late answer, or an answer to a request sent after
//     them) take window slots, so that they do not overflow its buffer;
//   - a response to a request sent later arrives first (the board answers
//     in arrival order, so the earlier request or its answer was lost):
//     "fast retransmit";
//   - the transport dropped a frame (bad CRC) whose header claimed its
//     sequence number ("drop hint");
//   - the board answered ERROR 8 (busy): after Opts.BusyBackoff (doubled
//     per busy answer of the request, up to the RTO), and the window is
//     halved (AIMD, probing slowly near the last busy window). A busy
//     answer to a copy resent on a timeout is not resent: the earlier
//     copy is still queued.
//
// Load resends itself (go-back-N from the board's next offset, in chunks
// sized for the measured loss rate): see Load.
//
// Fragmented INFER responses are reassembled by fragment index; fragments
// of different attempts of the same request are combined when they agree
// (a retry returns the same words), so a long response needs every
// fragment to arrive once, not all in one attempt.
//
// A long answer on a noisy line rarely arrives intact (a 300-byte answer
// at 1% flipped and 1% dropped bytes: about one time in 500). A K-sample
// query cannot be split into smaller queries with the same samples (every
// request re-seeds every lane from its seed, docs/fixed-point.md 3.3),
// but the same request always gets the same answer, so a version-6 board
// is asked for it in windows of its items (INFER_WINDOW, docs/protocol.md
// section 4 "Windows"). Stream starts with the whole answer (a plain
// INFER), estimates the line's loss per byte from every window's
// transmissions (a resend is a loss, an answer a success) and cuts the
// items still missing into windows of the length that carries the most
// items per line byte at that rate; a window whose resend is due while
// the line calls for windows half its length or shorter is given up
// (errSplit) and its items asked for again in shorter windows, any other
// is resent as it is. Windows grow back as the estimate forgets the
// losses. The answer is joined from its windows in item order: the INFER
// answer, bit for bit. Result.Windows and Result.Splits, Stats.Windows
// and Stats.Splits count them; Opts.NoWindows sends every request whole.
//
// A version-5 board has no windows. There, as a last resort, a caller
// that knows the correct answer (host/stream: the golden fixed-point
// model) passes it as Request.Expect: a garbled answer fragment whose
// header and CRC arrived intact is then taken when its CRC is the CRC of
// the expected fragment (frame.CRCMatches: the board sent exactly that),
// so only its 11 framing bytes have to get through. A board that answers
// anything else is seen as before: its CRC does not match, and only an
// intact answer completes the request (then compared by the caller).
// Result.CRCMatched and Stats.CRCMatched count the fragments so verified.
// Windowed requests do not use Expect (host/stream passes it only to a
// version-5 board).
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
