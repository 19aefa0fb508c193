// Package experiments reproduces the experiments of the Probabilistic
// Tsetlin Machine paper (Abeyrathna et al. 2024, "Experiments and Results")
// and extends them, writing a report with figures and a machine-readable
// summary.
//
// Run executes four experiments and writes, to Options.Out:
//
//  1. Noisy XOR (paper Figs. 1-2): the learned state probability vector of
//     every automaton of a 4-clause PTM on the 2-feature XOR without noise
//     and with 30% label noise (T = 2, s = 3.9, N = 8, 200 epochs), as a
//     grid of bar charts per model.
//  2. 2-D synthetic data (paper Figs. 3-4): predictive mean, entropy and
//     standard deviation of the PTM, a GP, an MLP with MC dropout and a
//     random forest over a grid three times wider than the training
//     region, K samples per point, and the mean entropy inside the training
//     region (Chebyshev radius max(|x1|, |x2|) <= 2) against far outside it
//     (radius > 4) on the data set's 2000 test points. Besides the plain
//     thermometer PTM (whose bits saturate outside the training range) it
//     evaluates a PTM with two extra "range" bits per feature at the
//     training minimum and maximum.
//  3. Iris (paper Fig. 5 and ECE table): the paper's protocol (one 80/20
//     split, seed 1) and repeated stratified splits (20 in the full run)
//     with validation-only model selection for the PTM
//     (pipeline.RepeatedSplits with pipeline.DefaultMapping, whatever it
//     is at run time); the chosen models are also scored under the raw
//     vote and under a vote smoothing and a softmax temperature fitted by
//     cross-validation on the training rows (pipeline.Calibrate). Accuracy,
//     ECE, NLL, Brier score and AUROC of entropy for every model on the
//     same splits with the same K; box plots of entropy and mutual
//     information of right and wrong predictions; reliability diagrams.
//  4. Hardware path: the Iris PTMs of (3) quantized to B = 8, 10, 12 and 16
//     bits and run on the bit-exact fixed-point core (golden/fixed) with a
//     fixed lane layout; probabilities are the accumulated votes
//     Stats.Votes / (K * VoteUnit), smoothed like the primary mapping when
//     that is a vote mapping (FixedQueries).
//
// Every metric comes from golden/metrics, for the PTM and the baselines
// alike (entropies and mutual information in bits, top-label ECE with
// equal-width bins).
//
// # Summary keys
//
// summary.json is one flat JSON object. Numbers sit under dotted keys such
// as "iris.splits20.ptm.ece_mean", "iris.splits20.gp.accuracy_std",
// "iris.paper_split.rf.ece", "synthetic2d.ptm.entropy_outside",
// "quant.b8.agreement_mean" or "xor.noisy.include.c1.not_x2"; textual
// settings (mappings, chosen hyper-parameters, the run mode) under keys
// such as "iris.splits20.ptm.mapping"; "figures" lists the PNG files.
// Undefined numbers are null. The keys are the same in quick and full runs
// (except the full run's 2-D hyper-parameter sweep, "synthetic2d.sweep.*"):
// "iris.splits20" names the repeated-split protocol, and
// "iris.splits20.splits" records how many splits a run used (3 in a quick
// run). Statistics over splits have the suffixes _mean, _std (sample
// standard deviation), _min, _max and _n (splits where the value is
// defined).
//
// # Quick mode
//
// Options.Quick shrinks every experiment (K = 20, 3 Iris splits with a
// 2-point grid of 30-epoch PTMs, 20 epochs and a 31 x 31 grid on the 2-D
// data, a 200-row GP training subset) so that the whole run takes well
// under two minutes; its numbers check the machinery, not the science.
package experiments
