// Package conv is the convolutional Probabilistic Tsetlin Machine: images
// booleanized into bit-planes, clauses evaluated on every window position
// (patch) of an image with thermometer-coded position features, a clause
// firing when it fires on at least one patch (Granmo et al. 2019, "The
// Convolutional Tsetlin Machine"; ConvCoTM), and class sums formed with
// integer clause weights, so that per-class clauses (the tabular layout:
// weight +1 or -1 for the clause's own class, 0 elsewhere) and coalesced
// clauses (signed weights shared by all classes) are one model.
//
// Shape fixes the image, the bit-planes, the window and the literals of a
// patch; Encoder booleanizes 8-bit pixels with one threshold per plane
// (Jitter makes M threshold sets that an inference query draws its
// samples from in turn, RunSets: the image counterpart of the tabular
// sampled input encoding). Patches holds
// the literals of every patch of one image bit-packed in 64-bit words.
//
// Model is the float model (an include probability per TA, the weights, T)
// and Sampler its inference: one include/exclude draw per TA per sample,
// held for all patches of the sample. Bank is the B-bit quantized model and
// Core its bit-exact fixed-point inference, with the LFSR lanes, beats and
// seeds of golden/fixed (docs/fixed-point-conv.md is the specification the
// hardware implements). Package convtrain trains models.
package conv
