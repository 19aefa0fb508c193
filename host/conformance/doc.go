// Package conformance checks a board (any transport: the Verilated board's
// pty or TAP device, real hardware, the software board) against
// docs/protocol.md as host/softboard implements it: INFO sanity, the
// upload rules of protocol version 5 (LOAD_DATA acknowledged with next,
// resends and gaps answered ERROR 6 with next,
// words past the bank refused, commit mismatch, repeated commit), the
// INFER refusals the board makes, bit-exact results in all modes
// including multi-fragment responses, STATUS and RESET_STATUS, unknown
// commands, and recovery from garbage on the link.
//
// Check runs every check and reports each one; it never stops at the first
// failure. It leaves the board loaded with the given bank. Typical use in
// a test of another board:
//
//	rep, err := conformance.Check(ctx, tr, bank, conformance.Opts{})
//	if err != nil { t.Fatal(err) }
//	for _, c := range rep.Failed() { t.Errorf("%s: %s", c.Name, c.Detail) }
//
// CheckConv checks a convolutional board (protocol version 7) the same
// way for what differs: its INFO words, the upload of thresholds and
// weights, and bit-exact image queries against golden/conv.
//
// Where docs/protocol.md leaves a choice (see host/PROTOCOL-REVIEW.md),
// the checks accept any reasonable answer unless Opts.Strict is set, in
// which case they require softboard's choices.
package conformance
