// Package modelfile reads and writes PTM model files: the versioned, check-
// summed container that carries a trained model from training (golden) to
// generation (hw), co-simulation (sim) and streaming (host).
//
// # Format 2 (written since format 2 exists)
//
// All integers little-endian:
//
//	offset  size        field
//	0       8           magic "PTMMODEL"
//	8       4           format version (uint32, 2)
//	12      4           header length H (uint32, at most MaxHeader)
//	16      H           header: compact UTF-8 JSON (hyper-parameters, shape,
//	                    booleanizer, feature and class names, data split,
//	                    probability mapping, encoding, quant_bits, tas,
//	                    spv_values, spv_bits W, payload_bytes P)
//	16+H    P           SPV payload: the TA records in flat TA order
//	                    (see ptm.Model), DEFLATE-compressed (RFC 1951)
//	end-32  32          SHA-256 of every preceding byte
//
// The file's canonical content is every SPV as integers q[0..2N-1] >= 0
// summing to exactly 2^W (W = spv_bits, 4..16): the width of the
// fixed-point trainer's words (golden/fixedtrain, W = its B) or, for a
// float-trained model, 16 bits (Encode with SPVBits 0) or 14 (`ptm train`,
// FloatSPVBits). The float model is p = q / 2^W (exact in
// float64), and the bank is what quantizing it at quant_bits gives
// (fixed.Quantize; when quant_bits = W, q itself), thresholds included:
// neither is stored, so neither can disagree with the SPVs.
//
// A TA's record is its support lo..hi (the first and last states with
// q > 0) and its masses over lo..hi-1; q[hi] is 2^W minus their sum. Mass
// moves between neighbouring states in training, so trained SPVs are
// smooth bumps: the masses are stored as second differences, d2[k] =
// (q[k] - q[k-1]) - (q[k-1] - q[k-2]) with q before lo taken as 0. All
// are varints of encoding/binary (at most 3 bytes each, minimally
// encoded): lo and hi-lo unsigned, the second differences signed (zigzag).
// A TA wholly in one state, as converged automata are, takes 2 bytes. The
// records are then compressed with DEFLATE (compress/flate,
// BestCompression), which takes the small second differences below a byte
// and folds the many identical records of a trained model: Iris trained
// with 20 clauses per class (2,880 TAs of 200 states, --no-tune) is about
// 76 KB (96 KB with --fixed) against format 1's 6.9 MB; with the tuned
// defaults (60 clauses, 8,640 TAs) 159,517 bytes, `ptm train` storing a
// float-trained model's SPVs at FloatSPVBits = 14 (238,380 at 16). A reader accepts any valid DEFLATE
// stream holding canonical records and nothing after them; Encode's bytes
// (and so the model hash) are those of this Go release's compress/flate.
//
// The split's row lists are stored as maximal runs [first, last] of
// consecutive rows ("train": [[0, 59999]]), at most MaxSplitRows indices in
// all.
//
// Encode rounds a model whose SPVs are not exact at W (largest remainder,
// fixed.QuantizeSPV); File.Canonicalize does the same in memory, and
// pipeline.Train returns canonical models, so a model evaluates the same
// before and after a write and read. Rounding moves a float-trained
// model's state probabilities by less than 2^-16 and a P(include) by less
// than N * 2^-16: on Iris with the defaults, seeds 1-8, by at most 8.0e-5,
// and `ptm eval` gave the same accuracy, AUROC of entropy and of MI and
// calibrated temperature before and after, ECE and NLL within 1e-4.
//
// # Convolutional models (format 2, kind "conv")
//
// A convolutional PTM (golden/conv) is stored in the same container: magic,
// version 2, header length, JSON header, payload, SHA-256. Its header has
// "kind": "conv" (a tabular header has no kind, so tabular files and their
// hashes are unchanged) and holds the head (shape: image H x W, bit-planes,
// window WY x WX; structure, class names, clauses, T, every class's signed
// clause weights), the encoder (pixel_thresholds, adaptive_threshold
// when the encoder has the adaptive plane (block, c), jitter_sets,
// jitter_spread: conv.Jitter's sets), the trainer's parameters (s, N,
// spv_bits W, seed, epochs, and weight_clip and literal_budget when they
// are not 0 and boost_true_positive when true: convtrain.Config's,
// absent from files trained without them,
// so those files and their hashes are unchanged; every weight lies within
// +-weight_clip), bank_bits B, the default K, the mapping, the
// split (as runs), the data fingerprint, the calibration record (the
// validation rows carved from the training rows that fitted the mapping
// parameter) and the recipe record (the recipe and the fields flags
// overrode), the lanes record (optional, below), then tas, spv_values and
// payload_bytes.
//
// The payload is the tabular one's records: every TA's SPV, TA (c, i) =
// c*2F + i, as integer masses summing to 2^W (W = spv_bits <=
// trainer.bits <= 15, so a mass fits 16 bits), coded as support and
// second differences; then, as zigzag varints, every TA's include mass
// at trainer.bits less its stored SPV's include mass scaled to that width
// (0 when W = trainer.bits), then every TA's bank threshold at bank_bits
// less its include mass rounded to bank_bits (0 but for saturation); all
// DEFLATE-compressed together: the "deflate" coding of files whose header
// has no "spv_coding" (written before the range coder; they load, as
// SPVCodingDeflate, and re-encode to their own bytes). EncodeConv writes
// "spv_coding": "range" (SPVCodingRange, the default): the payload is
// the byte length S of a range-coded stream of the SPVs (an unsigned
// varint), the S bytes, then the same include and bank varints alone,
// DEFLATE-compressed. The stream (rangecoder.go; an adaptive binary
// range coder, integers only) holds per TA its support start lo and its
// masses from lo on, each as its residual from q1 + (q1 - q4 + 1)/3 (the
// masses before it, 0 before lo; at least 0), under contexts of the
// previous mass, the recent residuals, the slope, the mass left and the
// previous TA's mass at the same state; a record ends where its masses
// reach 2^W. The decoded SPVs are exactly those the "deflate" coding
// holds; the reader checks every mass as it does those (within what the
// SPV has left, the support starting on a non-zero mass, no bytes after
// the last record) and names the TA and the byte offset in the file of
// the corrupt record. On the default MNIST model at W = 8 the SPVs take
// about 40 % fewer bytes than DEFLATE-coded (docs/model-file-size.md).
// Inference reads the exact include masses
// (the float model's P(include) is include / 2^trainer.bits,
// convtrain.Trainer.Model exactly) and the exact bank
// (convtrain.Trainer.Bank(bank_bits) exactly), whatever W is. `ptm train`
// stores the SPVs at W = 8 (DefaultConvSPVBits; --spv-bits sets it)
// rounded from the trainer's 15 bits half by half: the include states
// hold the trainer's include mass rounded to the nearest 2^-W (halves
// up), the exclude states the rest, each half's remainders distributed by
// the largest remainder (ties to the lower state), so the stored SPV's
// P(include) is within 2^-(W+1) of the trainer's; files written before
// (whole SPVs rounded by fixed.QuantizeSPV) read as they are. Sizes by
// W are in docs/model-file-size.md. With the weights, the
// SPVs and the trainer's parameters the file holds what resumed training
// needs but the lanes' states, which the optional header field "lanes"
// holds: {"control": S, "clauses": [S0, S1, ...]}, the 64-bit states of
// the trainer's control lane (shuffles, negative classes) and of every
// clause's lane at the end of training (Lanes; one per clause, none
// 0), as JSON integers (20,873 bytes for the default recipe's 1,024
// clauses). `ptm train` writes it; files written before it
// have none and still load (Lanes nil). The trainer's state is then
// complete (the shuffle restarts from the identity every epoch, so it
// has no other counter): with SPVs stored exactly (spv_bits =
// trainer.bits = 15) a trainer resumed from the file
// (convtrain.Trainer.Resume, pipeline.ResumeConv, `ptm train --resume`)
// continues exactly, and E1 epochs then E2 resumed give the file of E1+E2
// epochs in one run, byte for byte (pipeline's TestResumeConvIdentity);
// at fewer bits it restarts from the rounded SPVs.
//
// The optional header field "fixed_mapping" (ConvFile.FixedMapping) is
// the mapping of the fixed-point core's class sums at bank_bits: the
// mapping's kind with its parameter fitted on the calibration rows'
// class sums from the bit-exact core (conv.Core at bank_bits, the LFSR
// width and lanes of "calibration": {"fixed": {"bits", "lfsr_width",
// "clause_lanes", "literal_lanes", "nll", "accuracy"}}, seed
// uint32(calibration.seed)), so that the hardware's probabilities are
// calibrated for its own class sums (docs/calibration.md). `ptm train`
// writes both for a convolutional model; `ptm eval --fixed` and `ptm
// stream` use fixed_mapping at bank_bits (ConvFile.MappingAt), the float
// model and other widths the mapping. Files written before the field have
// neither and load unchanged (the fixed-point core uses the mapping, as
// before; their hashes are unchanged); `ptm train --resume FILE --epochs
// 0` fits and adds them without training.
//
// Decode (and Read) refuse a convolutional file with an error wrapping
// ErrConv, so that commands that read tabular models only (synth, board
// without --soft, convert) name the problem; DecodeConv, ReadConv
// and ReadAny read it. DecodeConv checks every header field (the shape
// against conv's limits, weights against the clauses and classes, widths,
// sets, split, fingerprint, tas and spv_values against the shape) before
// allocating, and errors name the file, field and byte offset as for
// tabular files; a payload record is named by TA, clause and literal.
//
// # Format 1 (read, no longer written)
//
//	offset  size        field
//	0       8           magic "PTMMODEL"
//	8       4           format version (uint32, 1)
//	12      4           header length H (uint32)
//	16      H           header: indented UTF-8 JSON (as format 2 without
//	                    spv_bits and payload_bytes; the split's row lists
//	                    as index arrays)
//	16+H    8*S         float64 SPVs, S = TAs*2N, TA-major (see ptm.Model)
//	...     4*S         quantized SPVs (uint32), same order
//	...     4*TAs       include thresholds (uint32), one per TA
//	end-32  32          SHA-256 of every preceding byte
//
// Decode reads format 1 as it always did (the float SPVs as stored,
// File.Format = 1); `ptm convert --model OLD -o NEW` rewrites such a file
// in format 2 (File.Canonicalize, then Write) and reports how far the
// rounding moved the SPVs.
//
// # Checks
//
// Read refuses a file whose magic, version, length, checksum or contents are
// wrong, naming what is wrong and where (byte offset or field). The
// checksum alone does not make a file valid: the header must agree with the
// payload, SPVs must be probability vectors, and the quantized banks must be
// exactly what quantizing the float SPVs gives. A format-2 payload must be
// canonical: a support starting or ending on zero mass, a mass outside
// 0..2^W-1, masses reaching 2^W before the support's last state, a varint
// longer than 3 bytes or not minimal, bytes after the last record and a
// payload_bytes other than the payload's length are errors naming the TA
// (flat index, TM, clause, literal), the state and the byte offset.
//
// Every header field is checked against the format's limits (MaxFileSize,
// MaxClasses, MaxFeatures, MaxBoolFeatures, MaxClauses, MaxSPVValues,
// MaxRows, MaxSplitRows) and against the other fields before anything is
// allocated from it; class and feature names must be non-empty and unique,
// and the split's row indices strictly ascending, within its row count and
// disjoint. An error names the field (for instance "split.test[3]" or
// "params.clauses") and the byte offset of the header. Read checks the
// magic after 16 bytes and never reads more than MaxFileSize. Decoding
// allocates the file, the float model and the bank once each (12 bytes per
// SPV value, 16 per TA), plus one SPV of scratch. The optional
// data_fingerprint header field (File.DataFingerprint) records which data
// trained the model. Write creates its temporary file exclusively, with a
// random name, in the target's directory, syncs it and renames it over the
// target.
//
// # Resuming a tabular model (the fixed_training header field)
//
// A tabular model of the fixed-point trainer (`ptm train --fixed`, the
// control lane's shuffle) has its SPVs stored exactly (spv_bits =
// quant_bits = the trainer's B). The optional header field
// "fixed_training" (File.FixedTraining) holds the rest of the trainer's
// state and what `ptm train` was told that the other fields do not keep:
// "lanes" ({"control": S, "clauses": [S0, ...]}, the 64-bit states of the
// control lane and of every global clause's lane, TM-major, none 0, as
// JSON integers), "thresholds" (per feature), "encoding" (the input
// encoding's configuration, pipeline.Encoding's JSON), "calibrate" (the
// mapping parameter was fitted by cross-validation) and
// "temperature_floor". pipeline.Train writes it; a float-trained model,
// a host-shuffled or board-trained one (the host's shuffle lane is not
// kept) and files written before the field existed have none, and cannot
// be resumed. With it, `ptm train --resume` (pipeline.ResumeTabular)
// restores the trainer, moves the sampled encoding's per-epoch draws past
// the epochs done and continues: E1 epochs then E2 resumed give the file
// of E1+E2 epochs in one run, byte for byte (TestResumeTabularIdentity).
package modelfile
