// Package convtrain is the fixed-point trainer of the convolutional PTM
// (package conv), bit-exact for any number of workers.
//
// The automata are golden/fixedtrain's: integer SPVs of 2N states summing
// to 2^B, the four TPMs as integer transfers with LFSR-drawn rounding, the
// consistent feedback rule, one 64-bit LFSR lane per clause
// (fixedtrain.Clauses). One training step on an image of label y:
//
//  1. Every clause draws the action of each of its TAs (one 16-bit draw
//     per literal from its lane) and is evaluated over the patches, OR over
//     patches of AND over the included literals (a clause with no included
//     literal fires, as in training of the tabular TM), stopping at the
//     first patch that fires.
//  2. The control lane draws a negative class o != y. The class sums
//     v_k = sum_c w[k][c] out_c of y and o are clipped to [-T, T].
//  3. Each clause concerned (per-class: the clauses of y and of o;
//     coalesced: every clause, for y then for o) is selected with one draw
//     (d*2T < (T - v_y)*2^16 for y, (T + v_o)*2^16 for o). A selected clause
//     chooses its patch once per step with one 32-bit draw: uniformly among
//     the patches where it fires, or among all patches when it fires
//     nowhere. Feedback uses that patch's literals: Type I when the
//     clause's weight for the class has the class's sign (w >= 0 for y,
//     w < 0 for o), Type II otherwise; a coalesced clause that fired moves
//     its weight by +1 for y and -1 for o, saturating at +-WeightClip
//     (Config.WeightClip; conv.MaxWeight by default).
//
// The literal budget (Config.LiteralBudget, tmu's max_included_literals
// carried over to sampled actions): Type I feedback to a clause that
// fired is Type Ia (TPM1 on the patch's 1-literals, TPM3 on its
// 0-literals) only while the clause's sampled action of the step
// includes fewer than LiteralBudget literals; at LiteralBudget or more it
// is Type Ib, as if the clause had not fired (TPM3 on every literal), so
// no literal is pushed towards include and every one drifts towards
// exclude at rate 1/s. The weight update still counts the clause as
// fired. The rule adds no draw (TypeI makes one rounding draw per literal
// either way) and depends only on the clause's own sample, so it keeps
// the trainer bit-exact for any number of workers. The defaults
// (WeightClip 0, LiteralBudget 0) are the rule before the two knobs, word
// for word (TestGoldenHash).
//
// Boosted true-positive feedback (Config.BoostTruePositive, tmu's
// boost_true_positive_feedback) gives Type Ia's TPM1 move probability 1
// instead of (s-1)/s: the SPV of a 1-literal of a firing clause's patch
// shifts up one state (fixedtrain.Clauses.TypeIBoost), with the same
// draws. Off (the default) it is the rule before the knob, word for word.
//
// Steps 1 and 3 run clause-parallel on a persistent worker pool: each
// clause uses only its own lane, so the result does not depend on the
// number of workers (TestWorkersBitExact). The control lane is separate
// from the clause lanes, so the trainer draws o before step 1; per-class,
// only the clauses of y and o are then sampled and evaluated (no other
// clause counts in v_y, v_o or gets feedback), and every other clause's
// lane jumps past the draws step 1 would have made
// (fixedtrain.Clauses.SkipSample): the words are those of sampling every
// clause (TestGoldenHash).
package convtrain
