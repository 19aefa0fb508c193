package board

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/fixedtrain"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/golden/ptm"
	"github.com/ptmhw/ptm/host/driver"
	hframe "github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/trainboard"
	"github.com/ptmhw/ptm/host/transport"
	"github.com/ptmhw/ptm/internal/testenv"
)

// startTrainer starts the training board for an Iris shape with m clauses
// and returns a driver on its pty.
func startTrainer(t *testing.T, m int, tp ptm.Params, faults ...Fault) (*Process, *driver.Driver) {
	t.Helper()
	needVerilator(t)
	o := TrainerOptions{Shape: fixed.Shape{Classes: 3, TMs: 3, Clauses: m, Features: 24, T: tp.T},
		Bits: 15, LiteralLanes: 4, Log: testWriter{t}, StartTimeout: testenv.Scale(10 * time.Minute)}
	if len(faults) > 0 {
		o.Faults.UARTRx, o.Faults.UARTTx, o.Seed = faults[0], faults[0], 9
	}
	o.Train.N, o.Train.S, o.Train.Feedback = tp.N, tp.S, tp.Feedback
	t0 := time.Now()
	p, err := StartTrainer(context.Background(), o)
	if err != nil {
		t.Fatalf("StartTrainer: %v", err)
	}
	t.Logf("training board started in %v (cached build: %v) uart=%q", time.Since(t0).Round(time.Millisecond), p.Build.Cached, p.UART)
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
		s := p.Stats()
		t.Logf("simulator: %d cycles in %.2f s active: %.2f M cycles/s", s.Cycles, s.ActiveSeconds, s.CyclesPerSecond/1e6)
	})
	tr, err := transport.OpenUART(p.UART, transport.UARTOpts{Baud: DefaultReportedBaud})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() }) // after the driver's (cleanups run last first)
	d := driver.New(tr, driver.Opts{Window: 1, Timeout: testenv.Scale(5 * time.Second)})
	t.Cleanup(func() { d.Close() })
	return p, d
}

// TestTrainBoardIris trains Iris on the Verilated training board over the
// pty (m = 6, 2 epochs, the temperature calibrated by 4-fold
// cross-validation, every fold trained on the board too) and requires the
// model file to equal, byte for byte, the golden fixed-point trainer's
// with the host's shuffle (ptm train --fixed --host-shuffle).
func TestTrainBoardIris(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end simulation skipped in -short mode")
	}
	p := ptm.Params{Clauses: 6, T: 10, S: 2, N: 8, Epochs: 2, Seed: 3, Feedback: ptm.ConsistentFeedback}
	_, d := startTrainer(t, p.Clauses, p)
	data, err := pipeline.LoadData("iris", "")
	if err != nil {
		t.Fatal(err)
	}
	cfg := pipeline.TrainConfig{Params: p, Fixed: true, HostShuffle: true}
	golden, err := pipeline.TrainAndCalibrate(data, cfg, true)
	if err != nil {
		t.Fatal(err)
	}
	var stats []*driver.TrainInfo
	b := &trainboard.Board{D: d, Ctx: testenv.Context(t), Stats: func(in *driver.TrainInfo) { stats = append(stats, in) }}
	cfg.NewRowTrainer = b.NewRowTrainer
	board, err := pipeline.TrainAndCalibrate(data, cfg, true)
	if err != nil {
		t.Fatal(err)
	}
	gb, err := modelfile.Encode(golden)
	if err != nil {
		t.Fatal(err)
	}
	bb, err := modelfile.Encode(board)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gb, bb) {
		t.Fatalf("the board's model file (%d bytes, sha256 %s) differs from the golden trainer's (%d bytes, sha256 %s)",
			len(bb), modelfile.Hash(bb)[:16], len(gb), modelfile.Hash(gb)[:16])
	}
	if len(stats) != 5 {
		t.Fatalf("%d models trained on the board, want 5 (the model and 4 folds)", len(stats))
	}
	rows := uint32(len(board.Split.Train) * p.Epochs)
	if s := stats[0]; s.Trained != rows || s.Errors != 0 || s.CRCErrors != 0 {
		t.Errorf("after the model: %d examples trained (want %d), %d errors, %d CRC errors", s.Trained, rows, s.Errors, s.CRCErrors)
	}
	t.Logf("model files equal: %d bytes, sha256 %s; %d examples, %.0f trainer clocks per example",
		len(bb), modelfile.Hash(bb)[:16], stats[0].Trained, float64(stats[0].TrainCycles)/float64(stats[0].Trained))
}

// TestTrainBoardFaults: with bytes flipped and dropped on the UART in
// both directions, frames are lost and resent (the TRAIN commands are
// idempotent: a resent TRAIN_ROWS is acknowledged, not trained again) and
// the model is still the golden trainer's byte for byte.
func TestTrainBoardFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end simulation skipped in -short mode")
	}
	p := ptm.Params{Clauses: 6, T: 10, S: 2, N: 8, Epochs: 2, Seed: 4, Feedback: ptm.ConsistentFeedback}
	proc, d := startTrainer(t, p.Clauses, p, Fault{Flip: 2e-4, Drop: 1e-4})
	data, err := pipeline.LoadData("iris", "")
	if err != nil {
		t.Fatal(err)
	}
	cfg := pipeline.TrainConfig{Params: p, Fixed: true, HostShuffle: true}
	golden, err := pipeline.Train(data, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var stats *driver.TrainInfo
	b := &trainboard.Board{D: d, Ctx: testenv.Context(t), Stats: func(in *driver.TrainInfo) { stats = in }}
	cfg.NewRowTrainer = b.NewRowTrainer
	board, err := pipeline.Train(data, cfg)
	if err != nil {
		t.Fatal(err)
	}
	gb, _ := modelfile.Encode(golden)
	bb, _ := modelfile.Encode(board)
	if !bytes.Equal(gb, bb) {
		t.Fatalf("with UART faults the board's model file differs from the golden trainer's")
	}
	ds := d.Stats()
	if stats == nil || stats.Trained != uint32(2*len(board.Split.Train)) {
		t.Fatalf("TRAIN_INFO after training: %+v", stats)
	}
	if ds.Retries == 0 {
		t.Errorf("no request was resent: the faults did not bite (%+v)", ds)
	}
	s := proc.Stats()
	t.Logf("model files equal; driver: %+v; board: %d CRC errors, %d framing errors, %d frames; link: %v", ds, stats.CRCErrors, stats.FramingErrors, stats.Frames, s.Raw)
}

// TestTrainBoardErrors: every bad TRAIN command is answered with an
// ERROR naming what is wrong.
func TestTrainBoardErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end simulation skipped in -short mode")
	}
	p := ptm.Params{Clauses: 6, T: 10, S: 2, N: 8, Epochs: 1, Seed: 3, Feedback: ptm.ConsistentFeedback}
	_, d := startTrainer(t, p.Clauses, p)
	ctx := testenv.Context(t)
	in, err := d.TrainInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if in.NT != 3 || in.M != 6 || in.O != 24 || in.N != 8 || in.B != 15 || in.LL != 4 || in.Initialised {
		t.Fatalf("TRAIN_INFO %+v", in)
	}
	row := func(first uint32, count uint16, label byte) []byte {
		b := binary.LittleEndian.AppendUint32(nil, first)
		b = binary.LittleEndian.AppendUint16(b, count)
		for i := 0; i < int(count); i++ {
			b = append(b, label, 1, 2, 3)
		}
		return b
	}
	read := func(what, lane byte, off, n uint32) []byte {
		b := []byte{what, lane, 0, 0}
		b = binary.LittleEndian.AppendUint32(b, off)
		return binary.LittleEndian.AppendUint32(b, n)
	}
	// the software training board must answer every command alike
	soft, err := trainboard.NewSoft(fixedtrain.Config{Params: p, Bits: 15}, 3, 24, false, 4)
	if err != nil {
		t.Fatal(err)
	}
	sd := driver.New(soft, driver.Opts{Window: 1})
	defer sd.Close()
	check := func(name string, typ hframe.Type, payload []byte, code hframe.ErrorCode, detail uint32) {
		t.Helper()
		_, _, err := d.Exec(ctx, typ, payload)
		var be *hframe.BoardError
		if !errors.As(err, &be) || be.Code != code || be.Detail != detail || be.Cmd != typ {
			t.Errorf("%s: %v, want ERROR code %d detail %d for %v", name, err, code, detail, typ)
		}
		_, _, serr := sd.Exec(ctx, typ, payload)
		var se *hframe.BoardError
		if !errors.As(serr, &se) || be == nil || *se != *be {
			t.Errorf("%s: the software board answered %v, the RTL %v", name, serr, err)
		}
	}
	check("rows before init", hframe.TypeTrainRows, row(0, 1, 0), hframe.CodeNotInit, 0)
	check("info with a payload", hframe.TypeTrainInfo, []byte{1}, hframe.CodeBadLength, 0)
	check("init with a payload", hframe.TypeTrainInit, []byte{1}, hframe.CodeBadLength, 0)
	check("unknown command", hframe.Type(0x3F), nil, hframe.CodeUnknownCommand, 0)
	seeds := []uint64{fixedtrain.ControlSeed(p.Seed)}
	for c := 0; c < 3*p.Clauses; c++ {
		seeds = append(seeds, fixedtrain.ClauseSeed(p.Seed, c))
	}
	for _, dd := range []*driver.Driver{d, sd} {
		if err := dd.TrainInit(ctx); err != nil {
			t.Fatal(err)
		}
		if err := dd.TrainSeed(ctx, 0, seeds); err != nil {
			t.Fatal(err)
		}
	}
	check("seed short", hframe.TypeTrainSeed, make([]byte, 11), hframe.CodeBadLength, 12)
	check("seed odd length", hframe.TypeTrainSeed, make([]byte, 13), hframe.CodeBadLength, 12)
	check("seed past the last lane", hframe.TypeTrainSeed, append([]byte{18, 0, 0, 0}, make([]byte, 16)...), hframe.CodeRange, 19)
	check("rows short", hframe.TypeTrainRows, []byte{0, 0, 0}, hframe.CodeBadLength, 10)
	check("rows count 0", hframe.TypeTrainRows, row(0, 0, 0), hframe.CodeBadLength, 10)
	check("rows length", hframe.TypeTrainRows, append(row(0, 2, 0), 9), hframe.CodeBadLength, 14)
	bad := row(0, 3, 1)
	bad[6+2*4] = 3
	check("label out of range", hframe.TypeTrainRows, bad, hframe.CodeBadLabel, 2)
	check("rows gap", hframe.TypeTrainRows, row(5, 1, 0), hframe.CodeLoadGap, 0)
	x := [][]bool{make([]bool, 24), make([]bool, 24)}
	x[1][3], x[1][17] = true, true
	for _, dd := range []*driver.Driver{d, sd} {
		if n, err := dd.TrainRows(ctx, 0, x, []int{0, 2}); err != nil || n != 2 {
			t.Fatalf("TrainRows: %d, %v", n, err)
		}
	}
	// the same words on both after two rows
	for what := 0; what < 3; what++ {
		n := in.IncDepth
		if what == 0 {
			n = in.SPVDepth
		}
		for lane := 0; lane < in.LL; lane++ {
			a, err := d.TrainRead(ctx, what, lane, 0, n)
			if err != nil {
				t.Fatal(err)
			}
			b, err := sd.TrainRead(ctx, what, lane, 0, n)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Fatalf("TRAIN_READ what %d lane %d: the RTL and the software board differ", what, lane)
			}
		}
	}
	// a retransmission is acknowledged, not trained again
	if _, r, err := d.Exec(ctx, hframe.TypeTrainRows, row(1, 1, 0)); err != nil || binary.LittleEndian.Uint32(r) != 2 {
		t.Fatalf("retransmitted rows: % x, %v", r, err)
	}
	check("rows overlap", hframe.TypeTrainRows, row(1, 2, 0), hframe.CodeLoadGap, 2)
	check("read length", hframe.TypeTrainRead, read(0, 0, 0, 1)[:11], hframe.CodeBadLength, 12)
	check("read lane", hframe.TypeTrainRead, read(0, 4, 0, 1), hframe.CodeBadLength, 0)
	check("read what", hframe.TypeTrainRead, read(3, 0, 0, 1), hframe.CodeBadLength, 0)
	check("read count 0", hframe.TypeTrainRead, read(0, 0, 0, 0), hframe.CodeBadLength, 65536)
	check("read past SPVs", hframe.TypeTrainRead, read(0, 0, uint32(in.SPVDepth)-1, 2), hframe.CodeRange, uint32(in.SPVDepth))
	check("read past include masses", hframe.TypeTrainRead, read(1, 3, uint32(in.IncDepth), 1), hframe.CodeRange, uint32(in.IncDepth))
	in2, err := d.TrainInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// 19 bad commands were sent. A request resent after a timeout on a
	// busy machine is executed again and answers its ERROR again, so the
	// board may count up to one more per resend, never fewer.
	resent := d.Stats().Retries
	if in2.Trained != 2 || !in2.Initialised || in2.Errors < 19 || uint64(in2.Errors) > 19+resent {
		t.Errorf("after the errors: %d trained, initialised %v, %d errors answered (want 2, true, 19 plus at most the %d resends)", in2.Trained, in2.Initialised, in2.Errors, resent)
	}
}
