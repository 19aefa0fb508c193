// Package lfsr implements the leap-forward linear-feedback shift registers
// that drive the PTM's state sampling, exactly as docs/fixed-point.md
// (section 3) specifies them for the hardware.
//
// Each lane owns one W-bit LFSR producing the m-sequence of a primitive
// characteristic polynomial x^W + sum_{e in E} x^e. A draw advances the
// sequence by B steps at once and returns the B new bits, so consecutive
// draws never share bits; every new bit is the XOR of |E| state bits, which
// is what makes the leap cheap in hardware. Lanes are re-seeded for every
// inference request from a 32-bit seed through a non-linear mix, so a
// request's random stream depends only on that seed.
package lfsr
