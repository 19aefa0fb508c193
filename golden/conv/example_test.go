package conv_test

import (
	"fmt"

	"github.com/ptmhw/ptm/golden/conv"
)

// The ConvCoTM geometry: a 28x28 image, one bit-plane, a 10x10 window.
func ExampleShape() {
	s := conv.Shape{H: 28, W: 28, Planes: 1, WY: 10, WX: 10}
	fmt.Println(s.Patches(), "patches,", s.Features(), "features,", s.Literals(), "literals,", s.Words(), "words per patch")
	// Output: 361 patches, 136 features, 272 literals, 5 words per patch
}

// A one-clause coalesced model that includes a single literal: "the
// window's top-left pixel is on". It fires on any image with an on pixel
// that a window can put at its top-left corner; its weights vote -1 for
// class 0 and +1 for class 1, so a firing clause gives class 1 all of the
// U = 2 vote units of each of the 4 samples, a silent one leaves a tie
// (one unit each).
func ExampleCore() {
	sh := conv.Shape{H: 4, W: 4, Planes: 1, WY: 2, WX: 2}
	h := conv.Head{Shape: sh, Structure: conv.Coalesced, Classes: 2, Clauses: 1, T: 1, Weights: []int32{-1, 1}}
	b := &conv.Bank{Head: h, Bits: 4, Thresh: make([]uint32, h.TAs())}
	b.Thresh[0] = 15 // literal 0 (window pixel (0, 0)) always included
	core, err := conv.NewCore(b, conv.HW{Bits: 4, LFSRWidth: 32, ClauseLanes: 1, LiteralLanes: 4})
	if err != nil {
		fmt.Println(err)
		return
	}
	enc := conv.Encoder{Thresholds: []int{127}}
	pt := conv.NewPatches(sh)
	for _, img := range [][]uint8{
		{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 200, 0, 0, 0, 0, 0}, // on pixel at (2, 2): a window reaches it
		{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 200}, // only at (3, 3): no window starts there
	} {
		if _, err := enc.Encode(img, pt, nil); err != nil {
			fmt.Println(err)
			return
		}
		_, st, err := core.Run(pt, 4, 1, nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("votes", st.Votes)
	}
	// Output:
	// votes [0 8]
	// votes [4 4]
}
