package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/pipeline"
)

// resumeFlags are the flags `ptm train --resume` takes besides --resume:
// every other flag would change the model's shape, encoding or trainer,
// which the model file fixes.
var resumeFlags = []string{"resume", "reseed-lanes", "data", "label", "o", "epochs", "workers", "spv-bits"}

// trainResume is `ptm train --resume MODEL`: more epochs of the model in
// the file, with its recipe and trainer parameters.
func trainResume(fs *flag.FlagSet, model, data, label, out string, epochs, workers, spvBits int, reseed bool, stdout, stderr io.Writer) error {
	var bad []string
	fs.Visit(func(f *flag.Flag) {
		if !slices.Contains(resumeFlags, f.Name) {
			bad = append(bad, "--"+f.Name)
		}
	})
	if len(bad) > 0 {
		return fmt.Errorf("%w: --resume keeps the model file's shape, encoding, trainer parameters and split; %s would change them (it takes --data, --label, -o, --epochs, --workers, --spv-bits, --reseed-lanes)", errUsage, strings.Join(bad, ", "))
	}
	switch {
	case data == "" || out == "":
		return fmt.Errorf("%w: --resume needs --data (the data the model was trained on) and -o", errUsage)
	case !isSet(fs, "epochs"):
		return fmt.Errorf("%w: --resume needs --epochs, the epochs to train on top of the file's", errUsage)
	case epochs < 0:
		return fmt.Errorf("%w: --epochs %d, want >= 1 (or 0: refit a convolutional model's fixed-point mapping only)", errUsage, epochs)
	case workers < 0:
		return fmt.Errorf("%w: --workers %d, want >= 0", errUsage, workers)
	case isSet(fs, "spv-bits") && (spvBits < modelfile.MinSPVBits || spvBits > modelfile.MaxConvSPVBits):
		return fmt.Errorf("%w: --spv-bits %d, want %d..%d", errUsage, spvBits, modelfile.MinSPVBits, modelfile.MaxConvSPVBits)
	}
	if err := checkFileOutput(pathFlag{"-o", out}, pathFlag{"--data", data}, pathFlag{"--resume", model}); err != nil {
		return err
	}
	tab, f, _, err := modelfile.ReadAny(model)
	if err != nil {
		return err
	}
	if tab != nil {
		if epochs == 0 {
			return fmt.Errorf("%w: --epochs 0 refits a convolutional model's fixed-point mapping; %s is a tabular model: give --epochs >= 1", errUsage, model)
		}
		return resumeTabular(fs, tab, model, data, label, out, epochs, workers, stdout, stderr)
	}
	if isSet(fs, "label") {
		return fmt.Errorf("%w: --label names a CSV column; %s is a convolutional model (image data)", errUsage, model)
	}
	if f.Lanes != nil && reseed {
		return fmt.Errorf("%w: %s records its lanes: --reseed-lanes is for files without them", errUsage, model)
	}
	if epochs == 0 {
		for _, n := range []string{"spv-bits", "reseed-lanes"} {
			if isSet(fs, n) {
				return fmt.Errorf("%w: --epochs 0 refits the fixed-point mapping and keeps the model as it is: --%s does not apply", errUsage, n)
			}
		}
	}
	d, err := pipeline.LoadDataProgress(data, "", newProgress(stderr, "loading "+data).bytes)
	if err != nil {
		return err
	}
	if epochs == 0 {
		return refitConv(d, f, model, out, workers, stdout, stderr)
	}
	start := time.Now()
	bar := newProgress(stderr, "training")
	bar.update(0, epochs)
	g, err := pipeline.ResumeConv(d, f, pipeline.ResumeConfig{Epochs: epochs, SPVBits: spvBits, ReseedLanes: reseed, Workers: workers,
		Progress: bar.update, RowProgress: bar.rows,
		CalibrationProgress:      lazyProgress(stderr, "calibrating (sampling the validation rows)"),
		FixedCalibrationProgress: lazyProgress(stderr, fmt.Sprintf("calibrating the %d-bit core (sampling the validation rows)", f.BankBits))})
	if err != nil {
		if errors.Is(err, pipeline.ErrNoLanes) {
			return fmt.Errorf("%w: %s: %w", errUsage, model, err)
		}
		return fmt.Errorf("%s: %w", model, err)
	}
	hash, err := modelfile.WriteConv(out, g)
	if err != nil {
		return err
	}
	size := int64(-1)
	if fi, err := os.Stat(out); err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
	}
	exact := "exactly (the model one run of all the epochs gives)"
	switch {
	case f.Lanes == nil:
		exact = "with reseeded lanes (not the model one run gives)"
	case f.SPVBits < f.Trainer.Bits:
		exact = fmt.Sprintf("from its SPVs rounded to %d bits (not the model one run gives; --spv-bits %d stores them exactly)", f.SPVBits, f.Trainer.Bits)
	}
	fmt.Fprintf(stdout, "resumed %s %s: %d + %d = %d epochs on %d training rows of %s; %.1fs, peak RSS %.0f MB\n",
		model, exact, f.Trainer.Epochs, epochs, g.Trainer.Epochs, len(g.Split.Train), d.Name, time.Since(start).Seconds(), float64(peakRSS())/1e6)
	fmt.Fprintf(stdout, "mapping %s, fitted on the validation rows at K %d: NLL %.4f, accuracy %.4f (before: NLL %.4f, accuracy %.4f)\n",
		describeMapping(g.Mapping), g.Calibration.K, g.Calibration.NLL, g.Calibration.Accuracy, f.Calibration.NLL, f.Calibration.Accuracy)
	printFixedMapping(stdout, g, "")
	fmt.Fprintf(stdout, "wrote %s (%d bytes, model hash %s)\n", out, size, hash[:16])
	return nil
}

// refitConv is `ptm train --resume MODEL --epochs 0` of a convolutional
// model: the file again with its fixed-point mapping fitted on the
// calibration rows (pipeline.RefitConvFixed), the model unchanged.
func refitConv(d *pipeline.Data, f *modelfile.ConvFile, model, out string, workers int, stdout, stderr io.Writer) error {
	start := time.Now()
	g, err := pipeline.RefitConvFixed(d, f, pipeline.ResumeConfig{Workers: workers,
		FixedCalibrationProgress: lazyProgress(stderr, fmt.Sprintf("calibrating the %d-bit core (sampling the validation rows)", f.BankBits))})
	if err != nil {
		return fmt.Errorf("%s: %w", model, err)
	}
	hash, err := modelfile.WriteConv(out, g)
	if err != nil {
		return err
	}
	before := "none: the fixed-point core used the mapping"
	if f.FixedMapping != nil {
		before = describeMapping(*f.FixedMapping)
	}
	fmt.Fprintf(stdout, "refitted the fixed-point mapping of %s (the model unchanged) on its %d validation rows at K %d; %.1fs\n",
		model, g.Calibration.Rows, g.Calibration.K, time.Since(start).Seconds())
	fmt.Fprintf(stdout, "mapping %s (float model, kept), fitted NLL %.4f, accuracy %.4f\n", describeMapping(g.Mapping), g.Calibration.NLL, g.Calibration.Accuracy)
	printFixedMapping(stdout, g, "")
	fmt.Fprintf(stdout, "before: fixed-point mapping %s\nwrote %s (model hash %s)\n", before, out, hash[:16])
	return nil
}

// resumeTabular is `ptm train --resume` of a tabular model.
func resumeTabular(fs *flag.FlagSet, f *modelfile.File, model, data, label, out string, epochs, workers int, stdout, stderr io.Writer) error {
	for _, n := range []string{"spv-bits", "reseed-lanes"} {
		if isSet(fs, n) {
			return fmt.Errorf("%w: --%s applies to convolutional models; %s is a tabular one", errUsage, n, model)
		}
	}
	if f.FixedTraining == nil {
		return fmt.Errorf("%w: %s cannot be resumed: it has no fixed-point training record, so it is float-trained (its SPVs are rounded to %d bits and the float trainer keeps no state to continue from) or was trained with --fixed --host-shuffle or --board; train it again with the total --epochs", errUsage, model, f.SPVBits)
	}
	d, err := pipeline.LoadDataProgress(data, label, newProgress(stderr, "loading "+data).bytes)
	if err != nil {
		return err
	}
	start := time.Now()
	bar := newProgress(stderr, "training")
	var cal *progress
	g, err := pipeline.ResumeTabular(d, f, pipeline.ResumeConfig{Epochs: epochs, Workers: workers, Progress: bar.update, RowProgress: bar.rows,
		CalibrationProgress: func(done, total int) {
			if cal == nil {
				cal = newProgress(stderr, "calibrating (4-fold cross-validation)")
			}
			cal.update(done, total)
		}})
	if err != nil {
		return fmt.Errorf("%s: %w", model, err)
	}
	hash, err := modelfile.Write(out, g)
	if err != nil {
		return err
	}
	tuned := ""
	if f.Tuning != nil {
		tuned = " (its tuning record is not kept: the file is --no-tune's with the tuned values)"
	}
	fmt.Fprintf(stdout, "resumed %s exactly (the model one run of all the epochs gives)%s: %d + %d = %d epochs on %d training rows of %s; %.1fs\n",
		model, tuned, f.Model.Epochs, epochs, g.Model.Epochs, len(g.Split.Train), d.Name, time.Since(start).Seconds())
	fmt.Fprintf(stdout, "mapping %s\nwrote %s (model hash %s)\n", describeMapping(g.Mapping), out, hash[:16])
	return nil
}
