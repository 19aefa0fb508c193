// Package traincosim co-simulates the on-chip PTM trainer (rtl/train,
// generated top from hw.GenerateTrainer) in Verilator against the bit-exact
// golden trainer golden/fixedtrain, word for word.
//
// Start generates the trainer for a shape and training parameters, builds
// it with its C++ harness (harness.cpp.tmpl; cached like sim/cosim's builds
// by a hash of every source, the flags and the Verilator version, through
// sim/internal/simcache), starts one simulator process, loads the 64-bit
// lanes from the training seed (fixedtrain.ControlSeed, ClauseSeed) and
// initializes the SPVs. Session.Train then trains the simulated engine and
// a fixedtrain.Trainer (one worker) on the same example; Session.Compare
// reads back every SPV word, every include mass and every inference
// threshold min(I, 2^B - 1) (derived on chip) of the engine and compares
// them with the golden trainer's SPVs, include masses and Bank thresholds,
// reporting each mismatch with its TA (t, j, i), state n and the examples
// trained so far. RandomShapes and RunRandom are the random-shape mode of
// the tests and of `ptm cosim --train --shapes`.
//
// Epochs: the engine leaves the shuffle of docs/fixed-point-training.md
// 5.1 to the host. Session.Epoch shuffles the rows on the host with its
// own 64-bit lane (ShuffleSeed: lfsr.LaneSeed(Seed32, NT*m+1, 64), the
// lane after the clause lanes, so the control lane is advanced only by
// the negative-class draws of 5.2, as on the chip) and trains both models
// on the rows in that order.
package traincosim
