package pipeline

import (
	"strings"
	"testing"

	"github.com/ptmhw/ptm/golden/ptm"
)

// TestCalibrationProgress: TrainAndCalibrate reports its calibration's
// progress through every fold's training and sampling (issue 31 item 4:
// ptm train printed nothing while calibrating, 66 s on 200 k rows).
func TestCalibrationProgress(t *testing.T) {
	d, err := LoadData(Iris, "")
	if err != nil {
		t.Fatal(err)
	}
	var calls, last, total int
	monotone := true
	cfg := TrainConfig{Params: ptm.Params{Clauses: 4, T: 4, S: 3, N: 8, Epochs: 2, Seed: 1, Feedback: ptm.ConsistentFeedback}, SplitSeed: 1,
		CalibrationProgress: func(done, tot int) {
			calls++
			if done < last {
				monotone = false
			}
			last, total = done, tot
		}}
	if _, err := TrainAndCalibrate(d, cfg, true); err != nil {
		t.Fatal(err)
	}
	// Four folds of two epochs (epochs and rows within them) and a
	// sampling step each.
	if calls < 4*3 || !monotone || last != total || total != 1000 {
		t.Errorf("%d progress calls, monotone %v, last %d of %d", calls, monotone, last, total)
	}
}

// TestCalibrationMemoryPlanned: the calibration's memory is planned with
// the training's, before anything is trained (issue 31 item 4: 4.6 GB for
// a 1,000,000-row CSV, 6.36 GB for Iris with 2000 clauses, over the 4 GiB
// limit, with no error).
func TestCalibrationMemoryPlanned(t *testing.T) {
	d, err := LoadData(Iris, "")
	if err != nil {
		t.Fatal(err)
	}
	p := ptm.Params{Clauses: 2000, T: 10, S: 3, N: 100, Epochs: 1, Seed: 1, Feedback: ptm.ConsistentFeedback}
	_, err = TrainAndCalibrate(d, TrainConfig{Params: p, SplitSeed: 1}, true)
	if err == nil || !strings.Contains(err.Error(), "training with calibration would need about 5.58 GiB") || !strings.Contains(err.Error(), "--calibrate=false") {
		t.Errorf("Iris, 2000 clauses, calibrated: %v", err)
	}
	// Without calibration the model alone is planned (3.87 GiB: it fits;
	// not trained here).
	if need := TrainBytes(3, 2000, 24, 100); need > DefaultMemoryLimit || need < 3.5*(1<<30) {
		t.Errorf("TrainBytes %.4g", need)
	}
	// A million training rows of Iris's shape: Calibrate keeps no samples,
	// so the rows cost only their fold lists (on main 4.62 GiB of samples
	// were planned, and kept).
	if cal := CalibrationBytes(3, 0, 800_000); cal > 64<<20 {
		t.Errorf("CalibrationBytes for 800,000 rows: %.4g, want under 64 MiB", cal)
	}
}

// TestTuneReportsFoldRows: Tune's RowProgress hears of the rows of every
// fold's training, and its Progress of every pass of the scoring over a
// candidate's out-of-fold samples (issue 31 item 4: ptm train's tuning on
// 200,000 rows was silent for 15 s while a fold trained, outOfFold
// dropping the hook, and for over 100 s while the samples were scored).
// Every candidate trains CalibrationFolds folds of epochs epochs, each
// reporting its last row, and scores in 2 + 33 passes over its rows (the
// softmax grid), each reporting its last row.
func TestTuneReportsFoldRows(t *testing.T) {
	d, err := LoadData(Iris, "")
	if err != nil {
		t.Fatal(err)
	}
	base := irisBase(1)
	var ends, passes int
	grid := tinyGrid()[:2]
	r, err := Tune(d, TuneConfig{Base: base, Grid: grid, Parallel: 1,
		Progress: func(e TuneEvent) {
			if e.Passes > 0 {
				n := e.Passes / 35
				if e.Passes != 35*n || e.Scored != (passes%35+1)*n {
					t.Errorf("scoring: %d rows of %d after %d passes", e.Scored, e.Passes, passes)
				}
				passes++
			}
		},
		RowProgress: func(row, rows int) {
			if row == rows && rows > 0 {
				ends++
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, c := range r.Candidates {
		if c.Score != nil {
			want += CalibrationFolds * c.Config.Params.Epochs
		}
	}
	if want == 0 || ends != want {
		t.Errorf("RowProgress reported %d finished epochs of fold training, want %d", ends, want)
	}
	if passes != 35*r.Scored {
		t.Errorf("%d scoring passes reported for %d candidates scored, want 35 each", passes, r.Scored)
	}
}

// TestTrainTunedReportsFit: TrainTuned's fit of the mapping on tuning's
// kept out-of-fold samples (a pass over them per candidate temperature)
// reports as calibration progress (rows done of passes x rows), ending at
// its total.
func TestTrainTunedReportsFit(t *testing.T) {
	d, err := LoadData(Iris, "")
	if err != nil {
		t.Fatal(err)
	}
	base := irisBase(1)
	r, err := Tune(d, TuneConfig{Base: base, Grid: tinyGrid()[:2], Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.OOF == nil {
		t.Fatal("tuning kept no out-of-fold samples")
	}
	var calls, last, total int
	cfg := base
	cfg.CalibrationProgress = func(done, tot int) { calls++; last, total = done, tot }
	if _, err := TrainTuned(d, r, cfg, true); err != nil {
		t.Fatal(err)
	}
	// Iris's 120 rows: one call per pass, at its last row.
	if n := r.OOF.Len(); calls == 0 || total != calls*n || last != total {
		t.Errorf("%d calibration progress calls, the last %d of %d (%d rows)", calls, last, total, n)
	}
	// Without kept samples (a budget that scored nothing) TrainTuned
	// calibrates anew, reporting its folds (on main: nothing, through 90 s
	// of a 1,000,000-row calibration).
	r.OOF = nil
	calls, last, total = 0, 0, 0
	if _, err := TrainTuned(d, r, cfg, true); err != nil {
		t.Fatal(err)
	}
	if calls < 4*3 || last != total || total != 1000 {
		t.Errorf("calibrating anew: %d progress calls, the last %d of %d", calls, last, total)
	}
}
