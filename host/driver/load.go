package driver

import (
	"context"
	"fmt"

	"github.com/ptmhw/ptm/host/frame"
)

// Load uploads a model: LOAD_BEGIN(W), the words in LOAD_DATA chunks of
// Opts.ChunkWords (up to Opts.Window chunks in flight, in increasing
// offset order), then LOAD_COMMIT(W, CRC-32 of the words). W = len(words);
// word w = addr*L + lane (softboard.BankWords builds them from a bank).
//
// A chunk lost on the way makes the board answer the chunks behind it
// with a gap error naming its next offset; the driver then resends from
// that offset (the chunk at next, then the refused ones) without waiting
// for a timeout. A chunk whose acknowledgement was lost is resent after
// its timeout and acknowledged again. When the board's INFO is known, W
// is checked against L*D before anything is sent.
func (d *Driver) Load(ctx context.Context, words []uint16) error {
	w := len(words)
	if in := d.BoardInfo(); in != nil && w != in.BankWords() {
		return fmt.Errorf("driver: load: %d words, the board's bank holds L*D = %d*%d = %d", w, in.Lanes(), in.D, in.BankWords())
	}
	if w == 0 {
		return fmt.Errorf("driver: load: no words")
	}
	begin := frame.LoadBegin{Words: uint32(w)}
	c, err := d.exec(ctx, &call{typ: frame.TypeLoadBegin, payload: begin.AppendTo(nil), label: "LOAD_BEGIN", loadOffset: -1, respBytes: 15})
	if err != nil {
		return fmt.Errorf("driver: load: %w", err)
	}
	var ack frame.LoadBegin
	if err := ack.DecodeFromBytes(c.resp); err != nil || ack.Words != uint32(w) {
		return fmt.Errorf("driver: load: LOAD_BEGIN(%d) acknowledged with % x: %w", w, c.resp, ErrProtocol)
	}

	chunk := d.opts.ChunkWords
	nchunks := (w + chunk - 1) / chunk
	window := d.opts.Window
	done := make(chan *call, window)
	var outstanding []*call
	fail := func(err error) error {
		if len(outstanding) > 0 {
			d.cancelCalls(outstanding, err)
			for range outstanding {
				<-done
			}
		}
		return err
	}
	acked := 0
	for k := 0; acked < nchunks; {
		if k < nchunks && len(outstanding) < window {
			off := k * chunk
			n := min(chunk, w-off)
			c := &call{typ: frame.TypeLoadData, payload: frame.AppendLoadData(nil, uint32(off), words[off:off+n]),
				label: fmt.Sprintf("LOAD_DATA at offset %d (%d words)", off, n), loadOffset: int64(off), respBytes: 19, notify: done, index: n}
			if err := d.submitCall(ctx, c); err != nil {
				return fail(fmt.Errorf("driver: load: %w", err))
			}
			outstanding = append(outstanding, c)
			k++
			continue
		}
		var c *call
		select {
		case c = <-done:
		case <-ctx.Done():
			return fail(fmt.Errorf("driver: load: %w", ctx.Err()))
		}
		for i, o := range outstanding {
			if o == c {
				outstanding = append(outstanding[:i], outstanding[i+1:]...)
				break
			}
		}
		if c.err != nil {
			return fail(fmt.Errorf("driver: load: %w", c.err))
		}
		var a frame.LoadDataAck
		if err := a.DecodeFromBytes(c.resp); err != nil || int64(a.Offset) != c.loadOffset || int(a.N) != c.index {
			return fail(fmt.Errorf("driver: load: %s (seq %d) acknowledged as offset %d, %d words (% x): %w",
				c.label, c.seq, a.Offset, a.N, c.resp, ErrProtocol))
		}
		acked++
	}

	commit := frame.LoadCommit{Words: uint32(w), CRC: frame.WordsCRC(words)}
	c, err = d.exec(ctx, &call{typ: frame.TypeLoadCommit, payload: commit.AppendTo(nil), label: "LOAD_COMMIT", loadOffset: -1, respBytes: 19})
	if err != nil {
		return fmt.Errorf("driver: load: commit of %d words with CRC 0x%08x: %w", w, commit.CRC, err)
	}
	var cack frame.LoadCommit
	if err := cack.DecodeFromBytes(c.resp); err != nil || cack != commit {
		return fmt.Errorf("driver: load: LOAD_COMMIT(%d, 0x%08x) acknowledged with % x: %w", w, commit.CRC, c.resp, ErrProtocol)
	}
	return nil
}
