// Package modelfile reads and writes PTM model files: the versioned, check-
// summed container that carries a trained model from training (golden) to
// generation (hw), co-simulation (sim) and streaming (host).
//
// Layout (all integers little-endian):
//
//	offset  size        field
//	0       8           magic "PTMMODEL"
//	8       4           format version (uint32, currently 1)
//	12      4           header length H (uint32)
//	16      H           header: UTF-8 JSON (hyper-parameters, shape,
//	                    booleanizer, feature and class names, data split,
//	                    probability mapping, quantization width, counts)
//	16+H    8*S         float64 SPVs, S = TAs*2N, TA-major (see ptm.Model)
//	...     4*S         quantized SPVs (uint32), same order
//	...     4*TAs       include thresholds (uint32), one per TA
//	end-32  32          SHA-256 of every preceding byte
//
// Read refuses a file whose magic, version, length, checksum or contents are
// wrong, naming what is wrong and where (byte offset or field). The
// checksum alone does not make a file valid: the header must agree with the
// payload, SPVs must be probability vectors, and the quantized banks must be
// exactly what quantizing the float SPVs gives.
//
// Every header field is checked against the format's limits (MaxFileSize,
// MaxClasses, MaxFeatures, MaxBoolFeatures, MaxClauses, MaxSPVValues,
// MaxRows) and against the other fields before anything is allocated from
// it; class and feature names must be non-empty and unique, and the split's
// row indices strictly ascending, within its row count and disjoint. An
// error names the field (for instance "split.test[3]" or "params.clauses")
// and the byte offset of the header. Read checks the magic after 16 bytes
// and never reads more than MaxFileSize. The optional data_fingerprint
// header field (File.DataFingerprint) records which data trained the model.
// Write creates its temporary file exclusively, with a random name, in the
// target's directory, syncs it and renames it over the target.
package modelfile
