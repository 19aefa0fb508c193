// Package gp implements a Gaussian-process classifier with the RBF kernel
//
//	k(x, x') = sf2 · exp(-|x - x'|² / (2 l²))
//
// on standardized inputs and the Laplace approximation of the latent
// posterior (Rasmussen & Williams, "Gaussian Processes for Machine Learning",
// 2006, chapter 3).
//
// Two classes use one latent function with the logistic likelihood
// (Algorithms 3.1 and 3.2). More classes use, by default, the multiclass
// Laplace approximation with one latent function per class, a shared kernel
// and the softmax likelihood (Algorithms 3.3 and 3.4); the log determinant of
// the approximate marginal likelihood includes the log|Σ_c E_c| term, so it is
// exact for the Laplace approximation. Opts.Multiclass = OneVsRest instead fits
// an independent binary GP per class and normalizes σ(f_c) over classes.
//
// Each Newton step is followed by a backtracking line search on a = K⁻¹f, so
// the mode search never decreases its objective. Hyper-parameters
// (l, sf2) maximize the approximate log marginal likelihood: a log-spaced grid
// search, then a bounded Nelder-Mead refinement in log space, on at most
// Opts.OptSubset training points. The signal variance is capped (default 10,
// Opts.MaxSignalVar) because on separable data the evidence drifts towards
// very large sf2, where the Laplace approximation becomes badly
// under-confident. Cholesky factorizations use gonum's mat.Cholesky with
// diagonal jitter as a fallback.
//
// Far from the training data the latent mean returns to the zero prior mean
// and the latent variance to sf2, so the binary predictive probability tends
// to exactly 1/2 and multiclass probabilities tend to 1/C, with a large
// predictive entropy and a sample spread that reflects the prior.
//
// Fitting costs O(n³) per Newton step and hyper-parameter evaluation;
// prediction costs O(n²) per point and class.
package gp
