package driver_test

import (
	"context"
	"fmt"

	"github.com/ptmhw/ptm/host/driver"
	"github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/internal/testmodel"
	"github.com/ptmhw/ptm/host/softboard"
	"github.com/ptmhw/ptm/host/transport"
)

// Upload a model to a software board over an in-memory link and run two
// inferences.
func Example() {
	ctx := context.Background()
	board, _ := softboard.New(softboard.Config{Shape: testmodel.Binary, HW: testmodel.HW})
	link, _, stop := board.Pipe(ctx, transport.StreamOpts{}, softboard.StreamOpts{}, nil)
	defer link.Close()
	defer stop()

	d := driver.New(link, driver.Opts{})
	defer d.Close()
	info, err := d.Info(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Printf("board: %d class(es) x %d clauses, o = %d, %d lanes, depth %d\n", info.NC, info.M, info.O, info.Lanes(), info.D)

	bank := testmodel.Bank(testmodel.Binary, int(info.B), 1)
	if err := d.Load(ctx, frame.BankWords(bank, info.HW())); err != nil {
		panic(err)
	}
	x := frame.PackFeatures(nil, []bool{true, false, true, true, false, false})
	res, err := d.InferAll(ctx, []driver.Request{
		{Index: 0, Features: x, K: 100, Seed: 1, Mode: frame.ModeStats},
		{Index: 1, Features: x, K: 3, Seed: 1, Mode: frame.ModeSamples},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("stats words:", len(res[0].Words), "(votes of 2 classes, sum, sum of squares)")
	fmt.Println("samples words:", len(res[1].Words), "(one class sum per sample)")
	// Output:
	// board: 2 class(es) x 8 clauses, o = 6, 20 lanes, depth 6
	// stats words: 4 (votes of 2 classes, sum, sum of squares)
	// samples words: 3 (one class sum per sample)
}
