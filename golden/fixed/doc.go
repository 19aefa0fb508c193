// Package fixed is the bit-exact fixed-point PTM that the generated
// hardware implements: quantized state probability vectors, LFSR-driven
// sampling lane by lane and beat by beat, clause evaluation, class sums,
// clipping, tie-splitting votes and K-sample accumulation, all exactly as
// docs/fixed-point.md specifies. The RTL must equal Core bit for bit; the
// co-simulation in sim/ checks that it does.
//
// Quantize turns a trained float model into a Bank (full B-bit SPVs with
// mass conserved exactly, and the per-TA include thresholds the hardware
// stores). HW fixes the hardware parameters that shape the random stream
// (bits, LFSR width, clause and literal lanes). Core runs requests.
package fixed
