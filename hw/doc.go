// Package hw generates the Verilog of the Probabilistic Tsetlin Machine
// inference core for iCE40 FPGAs, bit-exact to the golden model
// golden/fixed (docs/fixed-point.md is the contract).
//
// A Config fixes precision (Bits, LFSRWidth) and parallelism (ClauseLanes x
// LiteralLanes lanes, each with its own leap-forward LFSR and threshold
// bank); Generate specializes the design for a model Shape and returns the
// Verilog modules and, when asked, the $readmemh bank images as named files
// of a Design. The emitted modules are:
//
//	<prefix>_lfsr_lane   leap-forward LFSR, one B-bit draw per beat (spec 3.1-3.2)
//	<prefix>_seeder      serial, pipelined per-request lane seeds (spec 3.3), shifted through the lanes
//	<prefix>_bank        one lane's threshold memory (iCE40 SB_RAM40_4K, registered read)
//	<prefix>_lane        LFSR + bank + include comparator of one lane (spec 5.1)
//	<prefix>_clause_lane AND/OR accumulation of one clause lane over a group's beats (spec 5.2)
//	<prefix>_class_sum   masked popcounts and per-TM accumulation of class sums (spec 5.3)
//	<prefix>_vote        clipping, maximum and tie-split vote units (spec 5.4-5.6)
//	<prefix>_stats       per-request votes / sum / sumsq accumulators (spec 6)
//	<prefix>_fifo        per-sample result FIFO of the samples mode
//	<prefix>_info        ROM of the shape, parameters and model hash
//	<prefix>_core        top level: request/result streams, bank write port, control
//
// Every module declares its sizes as documented UPPER_CASE parameters (set
// by the generator: the ROMs and tables in the text are made for them, so
// a change means regenerating, not overriding) and writes its replicated
// structure as generate loops over them: the core's lanes (g_lane) and
// clause lanes, the LFSR's draw bits, the class sum's slots and TMs, the
// vote's clipping, max tree and classes, the statistics accumulators and
// the core's stats words. The templates (verilog.go) are executed with an
// unexported view of the Params (blocks.go); tables (group ROM, clipping,
// squares, vote shares, info ROM) are ranges over rows it computes. Lane
// l's bank image, <prefix>_bank_lane<l>.hex, is named by a localparam of
// the genvar (docs/core-interface.md, "Generated Verilog").
//
// docs/core-interface.md describes the core's ports and result words;
// docs/cycles.md its cycle counts. Package sim/cosim co-simulates the
// generated core in Verilator against fixed.Core.
//
// GenerateTrainer derives the on-chip PTM trainer from the same
// configuration (the shape; Config.Bits as B and Config.LiteralLanes) plus
// TrainParams (N, s as the integer moves UP and DOWN, the rule, SPRAM): a
// generated top, <prefix>_trainer, that sets the parameters of the
// hand-written rtl/train engine (docs/fixed-point-training.md 11).
// Package sim/traincosim co-simulates it against golden/fixedtrain and
// hw/synth.RunTrainer synthesizes it for the UP5K.
//
// GenerateConv emits the convolutional inference core for a conv.Bank
// (docs/fixed-point-conv.md is the contract, docs/conv-core.md the
// design): the same LFSR lanes and seeder, dense threshold and weight
// memories (<prefix>_conv_mem, or <prefix>_conv_spram for a large
// threshold memory), the include decisions and registers
// (<prefix>_conv_sampler), the image in block RAM (<prefix>_conv_img) and
// the patch features formed from its rows (with the full scan also the
// position thermometers; <prefix>_conv_patch), the range scan's rectangle
// and the clause lanes' gates, patch in rectangle, which stand for the
// thermometer literals (<prefix>_conv_range), the clause AND over the
// features tested and OR over patches (<prefix>_conv_clause) and the top,
// <prefix>_conv_core, whose sampler, scan and weigh units work on
// consecutive clause groups at once.
// Package sim/convcosim co-simulates it against conv.Core.
package hw
