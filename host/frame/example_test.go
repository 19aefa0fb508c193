package frame_test

import (
	"fmt"

	"github.com/ptmhw/ptm/host/frame"
)

// Build an INFER request in place and recover it from a noisy byte stream.
func Example() {
	req := frame.InferRequest{Mode: frame.ModeStats, K: 100, Seed: 42, Count: 1,
		Features: frame.PackFeatures(nil, []bool{true, false, true})}
	b := frame.Begin(nil, frame.TypeInfer, 0, 7)
	b = req.AppendTo(b)
	b, err := frame.Finish(b, 0)
	if err != nil {
		panic(err)
	}

	var p frame.Parser
	p.OnDrop = func(d frame.Drop) { fmt.Println(d.Reason) }
	noisy := append([]byte{0x00, frame.SOF, 0x01}, b...) // garbage, a false SOF, then the frame
	p.Feed(noisy, func(f frame.Frame) {
		var r frame.InferRequest
		if err := r.DecodeFromBytes(f.Payload); err != nil {
			panic(err)
		}
		fmt.Printf("%v: mode %v K %d seed %d features % x\n", f.String(), r.Mode, r.K, r.Seed, r.Features)
	})
	// Output:
	// CRC mismatch
	// INFER seq 7 len 11: mode stats K 100 seed 42 features 05
}
