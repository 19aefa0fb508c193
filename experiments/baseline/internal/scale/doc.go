// Package scale standardizes feature vectors to zero mean and unit variance
// with statistics fitted on training data only.
package scale
