// Package convcosim co-simulates the generated convolutional PTM inference
// core (hw.GenerateConv) in Verilator against the bit-exact golden model
// conv.Core.
//
// Run generates the design, builds it with Verilator together with a C++
// harness (cached like sim/cosim's builds: by a hash of every source, the
// flags and the Verilator version), loads the threshold and weight
// memories (initial contents, or through the write ports), streams the
// requests (booleanized images, K, seed) through one simulator process
// over pipes and compares every per-sample class-sum word with
// conv.Core.Run.
//
// The harness protocol (stdin commands w/v/r, stdout lines o/e/done) is
// described in harness.cpp.tmpl.
package convcosim
