// Package metrics computes the PTM paper's uncertainty metrics from K
// sampled predictions per query, and the usual aggregate scores of a
// probabilistic classifier over a test set.
//
// Per query ([Query]), the input is K sampled probability vectors p_j
// (j = 1..K), one entry per class. Following the paper:
//
//   - predictive mean     p(y|x) = 1/K sum_j p_j(y|x)
//   - predictive entropy  H = -sum_y p(y|x) log2 p(y|x)   (total uncertainty)
//   - mutual information  I = H - 1/K sum_j H(p_j)          (epistemic)
//   - standard deviation  sigma_y = sqrt(1/K sum_j (p_j(y|x) - p(y|x))^2)
//
// Entropies are in bits (log base 2) with 0 log 0 = 0. The standard
// deviation is the population form (divide by K), per class.
//
// Over a test set ([Evaluate]): accuracy, top-label expected calibration
// error with M equal-width bins, negative log-likelihood, Brier score, the
// AUROC of predictive entropy as a detector of wrong predictions, and the
// mean entropy and mutual information of correct and incorrect predictions
// (the paper's Iris figure). [ReliabilityBins] gives the per-bin data of a
// reliability diagram.
//
// # Conventions
//
// ECE bins: with M bins, bin b (0-based) holds the confidences c with
// b/M < c <= (b+1)/M, except that bin 0 also holds c = 0, so every value in
// [0, 1] has exactly one bin and a confidence of exactly 1 falls in the last
// bin. The edges are the float64 values float64(b)/float64(M), and the
// comparison is made against them, so a confidence of exactly 0.7 lies in
// bin 6 of 10, (0.6, 0.7]. Confidences below 0 or above 1 are put in the
// first or last bin. This is the (lower, upper] convention of Guo et al.
// (2017). ECE = sum_b |B_b|/N |acc(B_b) - conf(B_b)|.
//
// NLL is the mean of -ln p(true class) in nats, with the probability
// clamped below at [NLLFloor] (1e-12) so a confident miss costs at most
// about 27.6 nats instead of +Inf.
//
// Undefined values are NaN, never an error: the AUROC when all predictions
// are right or all are wrong, a group mean over an empty group, and every
// aggregate of an empty test set.
package metrics
