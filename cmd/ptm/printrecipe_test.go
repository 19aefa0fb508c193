package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ptmhw/ptm/golden/conv/convtrain"
)

// TestTrainPrintRecipe: `ptm train --print-recipe` prints one line of
// JSON holding convtrain.ImageRecipe with the flags' overrides, the
// seeds and the rows, writes no model, prints the same line whatever the
// flags' order, and a different line when anything the model depends on
// differs (scripts/demo-images.sh decides on it whether to reuse a model).
func TestTrainPrintRecipe(t *testing.T) {
	dir := mnistSubset(t, 200, 20)
	model := filepath.Join(t.TempDir(), "m.ptm")
	plan := func(args ...string) (convPlan, string) {
		t.Helper()
		code, out, errs := runCLI(append([]string{"train", "--data", dir, "-o", model, "--print-recipe"}, args...)...)
		if code != 0 {
			t.Fatalf("train --print-recipe %v: exit %d: %s", args, code, errs)
		}
		if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
			t.Errorf("train --print-recipe %v: %q, want one line", args, out)
		}
		var p convPlan
		dec := json.NewDecoder(strings.NewReader(out))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("train --print-recipe %v: %v\n%s", args, err, out)
		}
		if _, err := os.Stat(model); !os.IsNotExist(err) {
			t.Fatalf("train --print-recipe %v wrote -o %s (stat: %v)", args, model, err)
		}
		return p, out
	}

	p, base := plan()
	want, err := convtrain.ImageRecipe(convtrain.RecipeGeneric, 28, 28, 10)
	if err != nil {
		t.Fatal(err)
	}
	if p.Data != dir || !reflect.DeepEqual(p.Recipe, want) || len(p.Overridden) != 0 || p.Seed != 1 || p.SplitSeed != 1 ||
		p.TestFraction != 0.2 || p.ValRows != 5000 || p.TrainRows != 0 || p.SPVBits != 0 {
		t.Errorf("default plan %+v; want data %s, recipe %+v, nothing overridden, seeds 1, test fraction 0.2, 5000 validation rows, all training rows, default SPV bits", p, dir, want)
	}

	p, line := plan("--recipe", "mnist", "--epochs", "2", "--seed", "7", "--train-rows", "150")
	want, err = convtrain.ImageRecipe(convtrain.RecipeMNIST, 28, 28, 10)
	if err != nil {
		t.Fatal(err)
	}
	want.Epochs = 2
	if !reflect.DeepEqual(p.Recipe, want) || !slices.Equal(p.Overridden, []string{"epochs"}) || p.Seed != 7 || p.SplitSeed != 7 || p.TrainRows != 150 {
		t.Errorf("--recipe mnist --epochs 2 --seed 7 --train-rows 150: %+v; want recipe %+v, epochs overridden, seeds 7, 150 training rows", p, want)
	}
	if _, again := plan("--train-rows", "150", "--seed", "7", "--epochs", "2", "--recipe", "mnist"); again != line {
		t.Errorf("the same flags in another order print\n%s, want\n%s", again, line)
	}

	// The UP5K recipe is the one --print-recipe shows for it.
	p, _ = plan("--recipe", "mnist-up5k")
	want, err = convtrain.ImageRecipe(convtrain.RecipeMNISTUP5K, 28, 28, 10)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.Recipe, want) || len(p.Overridden) != 0 || p.Recipe.Clauses != 128 {
		t.Errorf("--recipe mnist-up5k: %+v; want recipe %+v (128 clauses), nothing overridden", p, want)
	}

	// Each of these changes the model, so each must change the line.
	seen := map[string][]string{base: nil}
	for _, args := range [][]string{
		{"--epochs", "3"}, {"--clauses", "64"}, {"-T", "100"}, {"-s", "4"}, {"--adaptive", "11,2"}, {"--pixel-thresholds", "60"},
		{"--window", "7"}, {"--recipe", "fashion-mnist"}, {"--recipe", "mnist-up5k"}, {"--seed", "2"}, {"--split-seed", "3"}, {"--test-fraction", "0.1"},
		{"--val-rows", "100"}, {"--train-rows", "100"}, {"--spv-bits", "15"}, {"--bits", "5"}, {"--mapping", "vote"},
	} {
		_, l := plan(args...)
		if prev, dup := seen[l]; dup {
			t.Errorf("train --print-recipe %v prints the same line as %v: %s", args, prev, l)
		}
		seen[l] = args
	}
	// --workers does not change the model, nor the line.
	if _, l := plan("--workers", "1"); l != base {
		t.Errorf("--workers 1 changed the line:\n%s\nwant\n%s", l, base)
	}

	// Bad values are refused as in training; tabular data refuses the flag.
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"train", "--data", dir, "-o", model, "--print-recipe", "--clauses", "0"}, "--clauses 0"},
		{[]string{"train", "--data", "iris", "-o", model, "--print-recipe"}, "--print-recipe apply to convolutional models"},
	} {
		if code, _, errs := runCLI(c.args...); code != 2 || !strings.Contains(errs, c.msg) {
			t.Errorf("ptm %v: exit %d: %s; want exit 2 naming %q", c.args, code, errs, c.msg)
		}
	}
}
