// Package rf implements a random forest classifier (Breiman 2001): bagged
// CART trees grown with the Gini criterion, each split choosing among a
// random subset of the features.
//
// Every tree is grown on a bootstrap sample of the training set (optional)
// with its own PCG stream derived from Opts.Seed and the tree index, so
// forests are reproducible bit for bit whatever the number of worker
// goroutines. A leaf stores the class distribution of the (bootstrap)
// training rows that reach it; Proba is the mean of the trees' leaf
// distributions and Samples returns the individual trees' distributions,
// whose spread measures the disagreement of the ensemble.
//
// Splits follow the scikit-learn convention: at every node the features are
// visited in random order until Opts.MaxFeatures features that are not
// constant in the node have been evaluated, the split minimizing the weighted
// Gini impurity of the children is taken (thresholds at midpoints between
// consecutive distinct values, x <= threshold goes left), and a node becomes
// a leaf when it is pure, too small, at the maximum depth, or has no valid
// split. Inputs are not standardized: trees are invariant to monotone
// feature scaling.
package rf
