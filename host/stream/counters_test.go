package stream

import (
	"testing"

	"github.com/ptmhw/ptm/host/frame"
)

// status builds a STATUS with the given counters set (index: value).
func status(kv map[int]uint32) frame.Status {
	var s frame.Status
	for k, v := range kv {
		s.Counters[k] = v
	}
	return s
}

// TestCounterDeltas plays back STATUS reads before and after a stream
// (issue 31 item 6: a RESET_STATUS mid-stream made the report subtract
// counters that went backwards: framing_errors 4294967224, utilization
// 10.00).
func TestCounterDeltas(t *testing.T) {
	const (
		ex, fr, sent = frame.CounterExecuted, frame.CounterFraming, frame.CounterSent
		by, bt       = frame.CounterUARTBytes, frame.CounterUARTBitTimes
	)
	for _, c := range []struct {
		name          string
		before, after map[int]uint32
		answered      uint64
		wallS         float64
		lineRate      int
		uart          bool
		reset         bool
		want          map[int]uint32 // the counters reported (the others 0)
	}{
		{"no reset", map[int]uint32{ex: 5, fr: 2, by: 100, bt: 1000}, map[int]uint32{ex: 45, fr: 3, by: 1500, bt: 20000}, 40, 1, 115200, true, false,
			map[int]uint32{ex: 40, fr: 1, by: 1400, bt: 19000}},
		// The figures: framing errors 72 before, 0 after the reset.
		{"reset late: counters below their values before", map[int]uint32{ex: 900, fr: 72, by: 50000, bt: 600000}, map[int]uint32{ex: 20, by: 700, bt: 7000}, 300, 20, 115200, true, true,
			map[int]uint32{ex: 20, by: 700, bt: 7000}},
		// A reset early in the stream: every counter ends above its value
		// before, but the board executed fewer frames than it answered.
		{"reset early: fewer frames than answers", map[int]uint32{ex: 3, by: 40, bt: 400}, map[int]uint32{ex: 90, by: 3300, bt: 33000}, 120, 2, 115200, true, true,
			map[int]uint32{ex: 90, by: 3300, bt: 33000}},
		// A board without counter 0 (STATUS_ALL = 0, the UP5K image): the
		// UART bytes received tell (120 answers need 1,320 bytes at least).
		{"reset early, no counter 0: fewer bytes than answers", map[int]uint32{by: 40, bt: 400}, map[int]uint32{by: 1000, bt: 33000}, 120, 2, 115200, true, true,
			map[int]uint32{by: 1000, bt: 33000}},
		// The same over Ethernet (INFO word 17 is 0 there, and the UART
		// counters do not count the stream): nothing tells; the
		// differences are reported.
		{"no counter 0, Ethernet", map[int]uint32{by: 40}, map[int]uint32{by: 1000}, 120, 2, 100e6, false, false,
			map[int]uint32{by: 960}},
		// Over 100 Mb/s Ethernet a reset late in a 10-minute stream is
		// still a reset (at one count per byte, the bound of a UART, a
		// wrap would take 4.8 minutes).
		{"Ethernet, reset late in a long stream", map[int]uint32{ex: 5000, sent: 5000}, map[int]uint32{ex: 30, sent: 29}, 9000, 600, 100e6, false, true,
			map[int]uint32{ex: 30, sent: 29}},
		// Counters wrap modulo 2^32; the bit-time counter may wrap during a
		// long stream (115,200 bit times a second).
		{"bit times wrapped", map[int]uint32{ex: 1, by: 10, bt: 1<<32 - 1000}, map[int]uint32{ex: 11, by: 400, bt: 5000}, 10, 1, 115200, true, false,
			map[int]uint32{ex: 10, by: 390, bt: 6000}},
		{"executed wrapped", map[int]uint32{ex: 1<<32 - 2, sent: 1<<32 - 3, by: 10, bt: 100}, map[int]uint32{ex: 8, sent: 7, by: 400, bt: 5000}, 10, 1, 115200, true, false,
			map[int]uint32{ex: 10, sent: 10, by: 390, bt: 4900}},
		// The bit times below their value before in a stream far too short
		// for them to wrap: a reset.
		{"bit times backwards, no wrap possible", map[int]uint32{ex: 1, by: 10, bt: 1 << 30}, map[int]uint32{ex: 11, by: 400, bt: 5000}, 10, 1, 115200, true, true,
			map[int]uint32{ex: 11, by: 400, bt: 5000}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, reset := counterDeltas(status(c.before), status(c.after), c.answered, c.wallS, c.lineRate, c.uart)
			if reset != c.reset {
				t.Errorf("reset %v, want %v", reset, c.reset)
			}
			if want := status(c.want); got != want {
				t.Errorf("counters %v, want %v", got.Counters, want.Counters)
			}
			for k, v := range got.Counters {
				if v > 1<<31 {
					t.Errorf("counter %s = %d: a difference across a reset", frame.CounterName(k), v)
				}
			}
		})
	}
}
