// Package experiments reproduces the experiments of the Probabilistic
// Tsetlin Machine paper (Abeyrathna et al. 2024, "Experiments and Results")
// and extends them, writing a report with figures and a machine-readable
// summary.
//
// Run executes seven experiments and writes, to Options.Out:
//
//  1. Noisy XOR (paper Figs. 1-2): the learned state probability vector of
//     every automaton of a 4-clause PTM on the 2-feature XOR without noise
//     and with 30% label noise (T = 2, s = 3.9, N = 8, 200 epochs), as a
//     grid of bar charts per model.
//  2. 2-D synthetic data (paper Figs. 3-4): predictive mean, entropy and
//     standard deviation of the PTM (pipeline.DefaultEncoding, the sampled
//     input encoding), the plain PTM (one thermometer), a GP, an MLP with
//     MC dropout and a random forest over a grid three times wider than
//     the training region, K samples per point, and the mean entropy and
//     mutual information inside the training region (Chebyshev radius
//     max(|x1|, |x2|) <= 2) against far outside it (radius > 4) on the data
//     set's 2000 test points. Besides, a plain PTM with two extra "range"
//     bits per feature at the training minimum and maximum.
//  3. Iris (paper Fig. 5 and ECE table): the paper's protocol (one 80/20
//     split, seed 1) and repeated stratified splits (20 in the full run);
//     the chosen primary PTMs are also scored under the raw vote and under
//     a vote smoothing and a softmax temperature fitted by cross-validation
//     on the training rows (pipeline.Calibrate). Box plots of entropy and
//     mutual information of right and wrong predictions; reliability
//     diagrams.
//  4. Hardware path: the primary Iris PTMs of (3) quantized to B = 8, 10,
//     12 and 16 bits and run on the bit-exact fixed-point core (golden/fixed,
//     Core.RunSets for the sampled encoding) with a fixed lane layout;
//     probabilities are the accumulated votes Stats.Votes / (K * VoteUnit),
//     smoothed like the primary mapping when that is a vote mapping
//     (FixedQueries).
//  5. Wine and breast cancer: the comparison of (3) on two more UCI data
//     sets, with a reliability / uncertainty figure per data set.
//  6. Out of distribution: on Iris and wine, every class held out in turn
//     (WithoutClass: its rows never used in training or model selection),
//     the models trained on the remaining binary problem, and the AUROC of
//     entropy and of mutual information for ranking the held-out class's
//     rows above the in-distribution test rows (OODAUROC).
//  7. Images (issue 28): MNIST and Fashion-MNIST, standard splits
//     (60,000 / 10,000). Five models: "ptm", the convolutional PTM of
//     data set's convtrain.ImageRecipe trained by pipeline.TrainConv (the
//     train-and-fit step of `ptm train`: the fixed-point trainer on the
//     training images less 5,000 carved stratified, seeded, its mapping's
//     parameter fitted by NLL on the carve), sampled K = the recipe's K
//     times from the float model through every threshold set
//     (pipeline.SampleConv); "ptm_plain", the same
//     trained model through its base thresholds alone with the raw vote
//     smoothed by 0.05 and nothing fitted; "mlp" (MC dropout), "mlp_ens"
//     (5 MLPs without dropout, each its own seed; its samples are its
//     members' predictions; every MLP 64-64, Adam step 0.001, weight
//     decay 1e-4, 5 epochs) and "rf" (100 trees on a stratified 20,000-
//     image subset of the training images), on the pixels scaled to
//     0..1. The models trained on MNIST are also queried with
//     Fashion-MNIST's test images (out of distribution: AUROC of entropy
//     and of MI ranking them above MNIST's test images). Figures:
//     reliability, entropy of right and wrong predictions, entropy
//     histograms of the out-of-distribution images, the least and the
//     most certain MNIST test digits.
//
// Options.Only runs a part: "images" (section 7 alone; `ptm experiments
// --only images`) or "tables" (sections 1-6).
//
// Sections 3, 5 and 6 compare five models on the same splits: "ptm", the
// PTM as golden/pipeline's defaults make it at run time
// (pipeline.DefaultEncoding, pipeline.DefaultMapping and, when
// pipeline.DefaultCalibrate is set, the mapping's parameter fitted by
// cross-validation on the training rows); "ptm_plain", the paper's PTM
// (pipeline.Plain, the vote smoothed by 0.05, no calibration); and the
// "gp", "mlp" and "rf" baselines (experiments/baseline, package defaults).
// Both PTMs choose their hyper-parameters per split from a small grid on
// validation rows carved from the training rows (pipeline.RepeatedSplits);
// the test rows play no part in any choice. All splits of all data sets
// run as independent jobs on GOMAXPROCS workers.
//
// Every metric comes from golden/metrics, for the PTM and the baselines
// alike (entropies and mutual information in bits, top-label ECE with
// equal-width bins).
//
// # Summary keys
//
// summary.json is one flat JSON object. Numbers sit under dotted keys such
// as "iris.splits20.ptm.ece_mean", "iris.splits20.gp.accuracy_std",
// "wine.pooled.ptm.auroc_mi" (one score over the test rows of every split
// together), "breast_cancer.splits20.rf.nll_sd", "wine.ood.ptm.auroc_mi"
// (mean over held-out classes; per class under
// "wine.ood.ptm.class_<name>."),
// "iris.paper_split.rf.ece", "synthetic2d.ptm.entropy_outside",
// "quant.b8.agreement_mean", "xor.noisy.include.c1.not_x2",
// "mnist.test.ptm.auroc_entropy" (one score over the standard test
// images; "fashion_mnist.test.MODEL.{accuracy,ece,nll,auroc_entropy,
// auroc_mi}" likewise), "mnist.ood_fashion.mlp_ens.auroc_mi" (models
// trained on MNIST, Fashion-MNIST's test images out of distribution;
// "fashion_mnist.ood_mnist.MODEL.auroc_{entropy,mi}" the reverse) or
// "mnist.ptm.model_bytes" (the size of the model file `ptm train` would
// write, modelfile.EncodeConv; also "mnist.ptm.train_s" and
// "mnist.ptm.peak_rss_mb", the process's peak RSS after training); textual
// settings (mappings, chosen hyper-parameters, the run mode) under keys
// such as "iris.splits20.ptm.mapping"; "figures" lists the PNG files.
// Undefined numbers are null. The keys are the same in quick and full runs
// (except the full run's 2-D hyper-parameter sweep, "synthetic2d.sweep.*"):
// "iris.splits20" names the repeated-split protocol, and
// "iris.splits20.splits" records how many splits a run used (3 in a quick
// run; "wine.splits20.splits" 2). Statistics over splits have the
// suffixes _mean, _std (sample standard deviation), _min, _max and _n
// (splits where the value is defined); accuracy, ECE and NLL also have
// _sd, the same as _std.
//
// # Shards and merge
//
// The computation is a list of units, each one independent piece with its
// own seeds (a data set x split x model, a held-out class's split and
// model, one XOR data set, one model of the 2-D experiment, one point of
// the 2-D sweep, an image data set x model: "images.mnist.ptm" trains the
// PTM and scores it and the plain PTM, on MNIST's test images and on
// Fashion-MNIST's; 54 units in the quick sweep, 289 in the full one;
// ShardUnits lists them). Run executes every unit, then
// writes the report from their results. With Options.Shard = I/N it
// executes only the I-th of N disjoint parts of the units (a greedy
// balance of their estimated costs, the same in every process for one
// configuration) and writes each unit's results to Out/units/<unit>.gob,
// with the settings that change the numbers (quick, wide grids, selection
// rule, carve or cv). Merge reads the unit files of the shards'
// directories, refuses missing units (unless MergeOptions.Partial: the
// sections whose units are all there are written, and
// "meta.missing_units" names the rest), units found twice and units of
// other settings, and writes report.md, summary.json and the figures from
// them: the same numbers as an unsharded run, figures byte for byte; only
// "meta.seconds", the images section's training times and peak RSS
// ("*.train_s", "*.peak_rss_mb") and the run time in the report differ. A shard that
// failed is re-run alone into its directory. A section declares its units
// in its plan function (see sections in experiments.go); its report reads
// only their results.
//
// # Quick mode
//
// Options.Quick shrinks every experiment (K = 20, 3 Iris splits with a
// 2-point grid of 30-epoch PTMs, 2 wine and breast-cancer splits with one
// small grid point, one split per held-out class, 20 epochs and a 31 x 31
// grid on the 2-D data, a 200-row GP training subset; for the images
// 1,000 training and 500 test images per data set, a PTM of 64 clauses,
// T 500 and 4 epochs, 4-epoch MLPs, a 50-tree forest) so that the tables
// take one to two minutes on two cores and the images under 20 s of CPU;
// its numbers check the machinery, not the science.
package experiments
