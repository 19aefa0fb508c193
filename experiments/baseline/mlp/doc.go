// Package mlp implements a multilayer perceptron with Monte Carlo dropout
// (Gal & Ghahramani, "Dropout as a Bayesian Approximation", ICML 2016).
//
// The network has fully connected ReLU hidden layers (default 2 × 64) and a
// softmax output, and is trained with the mean cross-entropy loss plus an L2
// weight-decay penalty on the weights, with Adam on shuffled mini-batches.
// Inputs are standardized with the training mean and standard deviation.
//
// Dropout (inverted: kept units are scaled by 1/(1-p)) is applied to the
// output of every hidden layer, during training and at inference. Samples
// runs K stochastic forward passes with fresh dropout masks, each giving one
// class-probability vector p_k(Y|x); Proba returns the mean over a fixed set
// of Opts.MCSamples masks drawn once at Fit, which makes Proba a
// deterministic, concurrency-safe function of x. With dropout disabled both
// reduce to the single deterministic network.
package mlp
