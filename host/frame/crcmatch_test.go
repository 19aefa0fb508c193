package frame

import (
	"bytes"
	"testing"
)

func TestCRCMatches(t *testing.T) {
	p := bytes.Repeat([]byte{1, 2, 3, 0xfe, 0xA5}, 60)
	good, err := Append(nil, TypeInfer.Response(), 0, 77, p)
	if err != nil {
		t.Fatal(err)
	}
	flip := append([]byte(nil), good...)
	flip[HeaderLen+10] ^= 0x10
	flip[HeaderLen+200] ^= 0x01
	// Two payload bytes lost: the receiver read two bytes past the CRC
	// (the next frame's).
	drop := append(append(append([]byte(nil), good[:HeaderLen+5]...), good[HeaderLen+6:HeaderLen+100]...), good[HeaderLen+101:]...)
	drop = append(drop, SOF, 0x90)
	// Cut by an idle line: the two lost bytes never came.
	cut := drop[:len(drop)-2]
	other := append([]byte(nil), p...)
	other[3]++
	badHeader := append([]byte(nil), flip...)
	badHeader[3] ^= 1 // seq
	badCRC := append([]byte(nil), flip...)
	badCRC[len(badCRC)-1] ^= 1
	for _, c := range []struct {
		name string
		b, p []byte
		want bool
	}{
		{"intact", good, p, true},
		{"payload bits flipped", flip, p, true},
		{"payload bytes lost", drop, p, true},
		{"payload bytes lost, cut", cut, p, true},
		{"another payload", flip, other, false},
		{"another length", flip, p[:len(p)-1], false},
		{"header garbled", badHeader, p, false},
		{"CRC garbled", badCRC, p, false},
		{"too short", good[:HeaderLen+3], p, false},
	} {
		if got := CRCMatches(c.b, c.p); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// The parser hands the garbled frame's bytes to OnDrop.
	var ps Parser
	var seen []byte
	ps.OnDrop = func(d Drop) {
		if d.Reason == ReasonCRC && d.Seq == 77 && seen == nil {
			seen = append([]byte(nil), d.Bytes...)
		}
	}
	ps.Feed(flip, func(Frame) {})
	if !CRCMatches(seen, p) {
		t.Errorf("Drop.Bytes %d bytes do not verify", len(seen))
	}
}
