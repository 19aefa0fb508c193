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

// TestImageRecipes pins each recipe's encoding and size on a 28 x 28, 10
// class image (docs/fixed-point-conv.md section 9): the bit-planes and
// the literals they make, and a dense bank at the recipe's bank bits that
// fits the UP5K's 1 Mbit SPRAM; an unknown name and a window too large
// for the image are refused.
func TestImageRecipes(t *testing.T) {
	cases := []struct {
		name       string
		thresholds []int
		adaptive   *conv.AdaptiveThreshold
		window     int
		clauses    int
		literals   int
		bankBits   int // clauses x literals x BankBits
	}{
		{convtrain.RecipeMNIST, []int{75}, &conv.AdaptiveThreshold{Block: 11, C: 2}, 10, 512, 472, 966656},
		{convtrain.RecipeFashionMNIST, nil, &conv.AdaptiveThreshold{Block: 11, C: 2}, 7, 1024, 182, 745472},
		{convtrain.RecipeGeneric, []int{75}, nil, 10, 512, 272, 557056},
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
