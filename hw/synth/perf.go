package synth

import (
	"math/bits"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/hw"
)

// QueryK is the number of samples per query used for the queries/s figures.
const QueryK = 100

// UARTBaud is the UART bit rate the board runs at (CLK_HZ/CLKS_PER_BIT is
// chosen as close to it as the clock allows).
const UARTBaud = 3_000_000

// clog2 is the number of bits that index n items, at least 1 (the
// generator's rule).
func clog2(n int) int {
	if n <= 2 {
		return 1
	}
	return bits.Len(uint(n - 1))
}

// RequestCycles returns the cycles from the transfer of a request of k
// samples to its last result word when res_ready stays high, by the
// formula of docs/cycles.md, which reproduces every row measured there:
//
//	samples mode: L + 12 + NT + k*max(D, NT) (+1 with a two-stage popcount)
//	stats mode:   L + 15 + k*D (+1 with a two-stage popcount)
//	              + clog2(NC) + NC + 2*NT
//
// (L + 4 seeding cycles, the pipeline, the vote pipeline of 3 + clog2(NC)
// cycles and one cycle per result word.)
func RequestCycles(p *hw.Params, k int, stats bool) int {
	pop2 := 0
	if p.LC > 8 { // hw: popcount chunks of 8 clause bits, two stages beyond
		pop2 = 1
	}
	if stats {
		return p.L + 15 + k*p.D + pop2 + clog2(p.NC) + p.NC + 2*p.NT
	}
	return p.L + 12 + p.NT + k*max(p.D, p.NT) + pop2
}

// RequestPeriod is the cycles one stats-mode request of k samples occupies
// when requests follow each other back to back: RequestCycles plus the
// cycle in which the core takes the next request (req_ready rises in the
// cycle after the last word is loaded).
func RequestPeriod(p *hw.Params, k int) int { return RequestCycles(p, k, true) + 1 }

// Link describes the bound a host link puts on stats-mode queries (one
// feature vector, K samples, NC + 2*NT result words).
type Link struct {
	Name string `json:"name"`
	// BitRate is the line rate in bit/s.
	BitRate float64 `json:"bit_rate"`
	// RequestBytes and ResponseBytes are the bytes on the wire of one
	// INFER request with one vector and its response, framing included
	// (UART: 10 bits per byte; Ethernet: preamble, header, padding, FCS
	// and inter-frame gap).
	RequestBytes  int `json:"request_bytes"`
	ResponseBytes int `json:"response_bytes"`
	// QueriesPerS is the bound with one vector per INFER (full duplex,
	// requests pipelined): rate / max(request, response).
	QueriesPerS float64 `json:"queries_per_s"`
	// BatchedQueriesPerS is the bound when one INFER carries many vectors
	// (response words and fragment headers only).
	BatchedQueriesPerS float64 `json:"batched_queries_per_s"`
	// VotesResponseBytes and VotesQueriesPerS are the response size and
	// the bound in votes mode (INFER mode 2: the NC vote totals alone, u16
	// each when K = QueryK allows), one vector per INFER.
	VotesResponseBytes int     `json:"votes_response_bytes"`
	VotesQueriesPerS   float64 `json:"votes_queries_per_s"`
}

// votesPayload is the votes-mode payload of one vector at K = QueryK.
func votesPayload(p *hw.Params) int {
	ib := 4
	if u := fixed.VoteUnit(p.NC); u <= 0xffff && QueryK*u <= 0xffff {
		ib = 2
	}
	return ib * p.NC
}

// frame is docs/protocol.md's frame: 7 header bytes, payload, 4 CRC bytes.
func frame(payload int) int { return 11 + payload }

// UARTLink is the UART bound for a core of shape p at baud bit/s.
func UARTLink(p *hw.Params, baud float64) Link {
	fb := (p.O + 7) / 8
	words := 4 * (p.NC + 2*p.NT)
	l := Link{Name: "uart", BitRate: baud, RequestBytes: frame(10 + fb), ResponseBytes: frame(words)}
	byteRate := baud / 10 // 8N1
	l.QueriesPerS = byteRate / float64(max(l.RequestBytes, l.ResponseBytes))
	// Batched: fragments of 1024 payload bytes, 11 bytes of framing each.
	l.BatchedQueriesPerS = byteRate / (float64(words) * (1 + 11.0/1024))
	l.VotesResponseBytes = frame(votesPayload(p))
	l.VotesQueriesPerS = byteRate / float64(max(l.RequestBytes, l.VotesResponseBytes))
	return l
}

// EthernetLink is the 100 Mb/s MII bound for a core of shape p.
func EthernetLink(p *hw.Params) Link {
	fb := (p.O + 7) / 8
	words := 4 * (p.NC + 2*p.NT)
	wire := func(payload int) int { return 8 + 14 + max(46, payload) + 4 + 12 }
	l := Link{Name: "ethernet-100", BitRate: 100e6,
		RequestBytes: wire(frame(10 + fb)), ResponseBytes: wire(frame(words))}
	byteRate := l.BitRate / 8
	l.QueriesPerS = byteRate / float64(max(l.RequestBytes, l.ResponseBytes))
	// Batched: response fragments of 1024 payload bytes.
	l.BatchedQueriesPerS = byteRate * (1024 / float64(words)) / float64(wire(frame(1024)))
	l.VotesResponseBytes = wire(frame(votesPayload(p)))
	l.VotesQueriesPerS = byteRate / float64(max(l.RequestBytes, l.VotesResponseBytes))
	return l
}
