// Package race reports whether the race detector is on, so that tests can
// skip timing assertions it would distort.
package race
