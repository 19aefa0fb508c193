// Package cosim co-simulates the generated PTM inference core (package hw)
// in Verilator against the bit-exact golden model fixed.Core.
//
// Run generates the design, builds it with
// `verilator --cc --exe --build -j 2` together with a C++ harness (cached
// by a hash of every source, the flags and the Verilator version, so a
// repeated run reuses the simulator), loads the bank through the core's
// write port, streams thousands of requests through one simulator process
// over pipes and compares every result word with fixed.Core.Run.
//
// The harness protocol (stdin commands w/r/i, stdout lines o/e/i/done) is
// described in harness.cpp.tmpl. Options.Trace writes an FST waveform.
package cosim
