// Package baseline defines the common interface of the uncertainty-aware
// baseline classifiers that the Probabilistic Tsetlin Machine (PTM) is
// compared against, together with input validation and the evaluation of
// sampled predictions.
//
// The classifiers live in sub-packages:
//
//   - gp:  Gaussian-process classifier with an RBF kernel and the Laplace
//     approximation (multiclass softmax Laplace or one-vs-rest).
//   - mlp: multilayer perceptron with Monte Carlo dropout.
//   - rf:  random forest of bagged CART trees.
//
// Every model satisfies [Classifier]. Proba returns the predictive mean
// class-probability vector; Samples returns K sampled class-probability
// vectors p_k(Y|x). The uncertainty metrics of the PTM paper (predictive
// entropy, mutual information, standard deviation, ECE, ...) are computed
// from those samples by golden/metrics, the project's one metric
// implementation, exactly as for the PTM: [Query] summarises one input,
// [Evaluate] a labelled test set.
//
// All randomness in the sub-packages comes from math/rand/v2 PCG generators
// seeded from an explicit Seed option, so the same seed and the same sequence
// of calls give bit-for-bit identical results.
package baseline
