// Package ptm is the float64 reference Probabilistic Tsetlin Machine of
// Abeyrathna et al. (2024): Algorithms 1-4 of the paper, with every Tsetlin
// automaton (TA) holding a state probability vector (SPV) over its 2N states
// instead of a single state.
//
// Training samples every TA's action from its SPV, computes clause outputs
// and class sums, selects clauses for feedback with the clipped class-sum
// probabilities, and multiplies SPVs by one of four transition probability
// matrices (TPMs) built from the Type I / Type II feedback tables. The TPMs
// are banded (mass moves at most one state), so ApplyTPM costs O(2N); the
// tests check it against an explicit gonum matrix product of the matrices
// built from the tables (see TPMDense). Training updates only the support
// of each SPV, and on amd64 its inner loops are AVX assembly whose results
// are bit for bit those of the portable Go loops (the build tag purego
// selects the latter).
//
// A binary model is one TM whose even (0-based) clauses vote for class 1
// and odd clauses against it; a multiclass model is one TM per class, and
// each training sample updates the target class's TM as a positive example
// and one uniformly chosen other class's TM as a negative example.
//
// Inference samples the TAs again for each of K samples and returns every
// sample's class sums; Mapping turns a sample's class sums into the
// per-sample probability p_j(Y|X) from which package metrics computes the
// predictive mean, entropy, mutual information, standard deviation and ECE.
//
// Conventions the paper leaves open, fixed here: states are 0-based
// (state n >= N is an include state); an empty clause outputs 1 during
// training and 0 at inference; literals 0..o-1 are the features and o..2o-1
// their negations; the training order is reshuffled every epoch. The same
// Params and data give the same model bit for bit.
package ptm
