package trainboard

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/ptmhw/ptm/golden/fixedtrain"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/golden/ptm"
	"github.com/ptmhw/ptm/host/driver"
)

// TestSoftIris: training Iris through the driver on the software training
// board (calibrated: 5 trainings) gives the golden host-shuffled
// trainer's model file byte for byte, and a board of another shape is
// refused naming both.
func TestSoftIris(t *testing.T) {
	p := ptm.Params{Clauses: 5, T: 8, S: 2.5, N: 6, Epochs: 2, Seed: 11, Feedback: ptm.ConsistentFeedback}
	data, err := pipeline.LoadData("iris", "")
	if err != nil {
		t.Fatal(err)
	}
	cfg := pipeline.TrainConfig{Params: p, Fixed: true, HostShuffle: true}
	golden, err := pipeline.TrainAndCalibrate(data, cfg, true)
	if err != nil {
		t.Fatal(err)
	}
	soft, err := NewSoft(fixedtrain.Config{Params: p}, 3, 24, false, 3)
	if err != nil {
		t.Fatal(err)
	}
	d := driver.New(soft, driver.Opts{Window: 1, Timeout: time.Second})
	defer d.Close()
	n := 0
	b := &Board{D: d, Ctx: context.Background(), Stats: func(*driver.TrainInfo) { n++ }}
	cfg.NewRowTrainer = b.NewRowTrainer
	board, err := pipeline.TrainAndCalibrate(data, cfg, true)
	if err != nil {
		t.Fatal(err)
	}
	gb, _ := modelfile.Encode(golden)
	bb, _ := modelfile.Encode(board)
	if !bytes.Equal(gb, bb) || n != 5 {
		t.Fatalf("model files equal %v (%d and %d bytes), %d trainings (want 5)", bytes.Equal(gb, bb), len(gb), len(bb), n)
	}
	cfg.Params.Clauses = 6
	if _, err := pipeline.Train(data, cfg); err == nil {
		t.Fatal("a board of 5 clauses trained a 6-clause model")
	}
}
