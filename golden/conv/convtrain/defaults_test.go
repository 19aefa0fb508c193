package convtrain_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/conv/convtrain"
)

// up5kSPRAMBits is the iCE40 UP5K's single-port RAM: 4 blocks of 256 kbit.
const up5kSPRAMBits = 4 * 256 * 1024

// up5kBRAMBits is the iCE40 UP5K's block RAM: 30 blocks of 4 kbit.
const up5kBRAMBits = 30 * 4096

// weightBits is the width of one class weight in the board's memory
// budget (conv.MaxWeight fits 16 signed bits).
const weightBits = 16

// TestImageRecipes pins each recipe's encoding, size and trainer settings
// on a 28 x 28, 10 class image (docs/fixed-point-conv.md section 9): the
// bit-planes and the literals they make, T, s and the epochs, a dense
// bank at the recipe's bank bits that fits the UP5K's 1 Mbit SPRAM, and
// the bank with the class weights at 16 bits within the SPRAM and block
// RAM together; an unknown name and a window too large for the image
// are refused.
func TestImageRecipes(t *testing.T) {
	cases := []struct {
		name       string
		thresholds []int
		adaptive   *conv.AdaptiveThreshold
		window     int
		clauses    int
		literals   int
		bankBits   int // clauses x literals x BankBits
		T, epochs  int
		s          float64
	}{
		{convtrain.RecipeMNIST, []int{75}, &conv.AdaptiveThreshold{Block: 11, C: 2}, 10, 512, 472, 966656, 2000, 5, 3},
		{convtrain.RecipeFashionMNIST, []int{0}, &conv.AdaptiveThreshold{Block: 11, C: 2}, 7, 896, 280, 1003520, 7168, 12, 3},
		{convtrain.RecipeGeneric, []int{75}, nil, 10, 512, 272, 557056, 2000, 7, 3},
		{convtrain.RecipeMNISTUP5K, []int{75}, nil, 10, 128, 272, 139264, 1000, 15, 3},
	}
	for _, c := range cases {
		r, err := convtrain.ImageRecipe(c.name, 28, 28, 10)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		sh := r.Shape(28, 28)
		if !slices.Equal(r.Thresholds, c.thresholds) || (r.Adaptive == nil) != (c.adaptive == nil) || (r.Adaptive != nil && *r.Adaptive != *c.adaptive) {
			t.Errorf("%s: thresholds %v, adaptive %v, want %v, %v", c.name, r.Thresholds, r.Adaptive, c.thresholds, c.adaptive)
		}
		if r.WY != c.window || r.WX != c.window || r.Clauses != c.clauses || sh.Literals() != c.literals {
			t.Errorf("%s: %d x %d window, %d clauses x %d literals, want %d x %d, %d x %d", c.name, r.WY, r.WX, r.Clauses, sh.Literals(), c.window, c.window, c.clauses, c.literals)
		}
		if b := r.Clauses * sh.Literals() * r.BankBits; b != c.bankBits || b > up5kSPRAMBits {
			t.Errorf("%s: dense %d-bit bank of %d bits, want %d (at most the UP5K's %d)", c.name, r.BankBits, b, c.bankBits, up5kSPRAMBits)
		}
		if all := r.Clauses*sh.Literals()*r.BankBits + r.Clauses*10*weightBits; all > up5kSPRAMBits+up5kBRAMBits {
			t.Errorf("%s: bank and weights %d bits, more than the UP5K's SPRAM and block RAM (%d)", c.name, all, up5kSPRAMBits+up5kBRAMBits)
		}
		if r.T != c.T || r.S != c.s || r.Epochs != c.epochs {
			t.Errorf("%s: T %d, s %g, %d epochs, want T %d, s %g, %d epochs", c.name, r.T, r.S, r.Epochs, c.T, c.s, c.epochs)
		}
		// mnist-up5k clips the class weights at 8 signed bits (the
		// board's weight memory); the others keep conv.MaxWeight.
		wantClip := 0
		if c.name == convtrain.RecipeMNISTUP5K {
			wantClip = 127
		}
		if r.WeightClip != wantClip || r.LiteralBudget != 0 || r.Trainer(28, 28, 10, 1).WeightClip != wantClip {
			t.Errorf("%s: weight clip %d, literal budget %d, want %d and 0", c.name, r.WeightClip, r.LiteralBudget, wantClip)
		}
		if err := r.Trainer(28, 28, 10, 1).Validate(); err != nil {
			t.Errorf("%s: trainer configuration: %v", c.name, err)
		}
	}
	if _, err := convtrain.ImageRecipe("digits", 28, 28, 10); err == nil || !strings.Contains(err.Error(), `"digits"`) {
		t.Errorf("unknown recipe: error %v, want one naming it", err)
	}
	// A 6 x 6 image shrinks the 10 x 10 window to the image, which leaves
	// no position literals but is a valid shape.
	if r, err := convtrain.ImageRecipe(convtrain.RecipeMNIST, 6, 6, 10); err != nil || r.WY != 6 || r.WX != 6 {
		t.Errorf("MNIST recipe on a 6 x 6 image: window %d x %d, error %v, want 6 x 6", r.WY, r.WX, err)
	}
}

// TestUP5KRecipeBudget: the mnist-up5k recipe's sampler fits the UP5K
// core's budget (convtrain.UP5KAutomata: every automaton is sampled each
// sample, 16 per cycle), and the other MNIST recipes do not (so the
// budget separates what the core can run fast enough from what it
// cannot); the recipe is listed for --recipe.
func TestUP5KRecipeBudget(t *testing.T) {
	if !slices.Contains(convtrain.RecipeNames, convtrain.RecipeMNISTUP5K) {
		t.Errorf("RecipeNames %v lacks %q", convtrain.RecipeNames, convtrain.RecipeMNISTUP5K)
	}
	automata := func(name string) int {
		r, err := convtrain.ImageRecipe(name, 28, 28, 10)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return r.Clauses * r.Shape(28, 28).Literals()
	}
	if a := automata(convtrain.RecipeMNISTUP5K); a != 34816 || a > convtrain.UP5KAutomata {
		t.Errorf("%s: %d automata, want 128 x 272 = 34816 (at most %d)", convtrain.RecipeMNISTUP5K, a, convtrain.UP5KAutomata)
	}
	for _, name := range []string{convtrain.RecipeMNIST, convtrain.RecipeGeneric} {
		if a := automata(name); a <= convtrain.UP5KAutomata {
			t.Errorf("%s: %d automata, within the UP5K budget %d; the budget no longer separates the recipes", name, a, convtrain.UP5KAutomata)
		}
	}
}
