// Package fixedtrain is the bit-exact fixed-point PTM trainer: the
// specification of on-chip learning (docs/fixed-point-training.md) and the
// fast trainer of this project.
//
// Every SPV holds 2N unsigned integers summing to exactly 2^B (B = 8..15, a
// 16-bit word per state). The four TPMs are integer transfers between
// neighbouring states, each rounded with an offset drawn from a 64-bit
// leap-forward LFSR, so mass is conserved exactly and every transfer equals
// the float TPM's in expectation. Every global clause has its own lane,
// which makes the clauses of one TM independent once the class sum is known,
// and the two TM updates of a multiclass example independent of each other.
// On a large model (parallelTAs) the trainer runs an example on a
// persistent pool of worker goroutines (pool.go, sched.go): phase A samples
// the clauses of both TMs at once, phase B cuts each clause's Type I
// feedback into one range of literals per worker, each starting from the
// clause lane advanced by a precomputed jump matrix, so every TA receives
// the draw it would receive serially and the result is the same bit for
// bit for any number of workers. There is no floating point in training;
// s enters once, as the 16-bit move probabilities of MovesOf.
//
// On amd64 with AVX-512 the hot paths run in assembly (kernel_amd64.s):
// TPM1/TPM2/TPM3 on aligned chunks of 32 states with per-state probability
// tables (up32, down32, applyChunked), the whole Type I feedback of a
// clause in one call (typeI32: its draws, TPMs, include masses and
// supports), and phase A sampling of 8 clauses at once (sample8). Without
// AVX-512 the AVX2 loops of applyTPM run; without amd64 assembly (other
// architectures, the purego build tag) the Go loops. Every path computes
// the same words (TestChunkedMatchesApplyTPM, TestTypeI32EqualsGo,
// TestKernelPaths, TestGoldenHash).
//
// Model and Bank turn the trained SPVs into an ordinary model file's float
// model and quantized bank (the thresholds of golden/fixed), so a model
// trained here is evaluated, generated and served like any other.
package fixedtrain
