package rtl

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
)

// FS holds the hand-written Verilog and the pin constraint files, paths
// relative to rtl/ (uart/uart_rx.v, boards/icebreaker/icebreaker.pcf, ...).
// The Verilated board (sim/board) and the synthesis flow (hw/synth) build
// from this copy, so a binary needs no checkout beside it.
//
//go:embed train/*.v trainboard/*.v uart/*.v eth/*.v lib/*.v lib/*.vh board/*.v boards/common/*.v boards/icebreaker/*.v boards/icebreaker/*.pcf boards/hx8k/*.v boards/hx8k/*.pcf
var FS embed.FS

// ErrSource is wrapped by the errors of this file: an unknown board or a
// source that cannot be written.
var ErrSource = errors.New("rtl: bad source request")

// Boards are the boards with a device top (rtl/boards/<board>/top.v and
// core_top.v, and a <board>.pcf).
var Boards = []string{"hx8k", "icebreaker"}

func glob(dirs ...string) []string {
	var out []string
	for _, d := range dirs {
		m, err := fs.Glob(FS, path.Join(d, "*.v"))
		if err != nil {
			panic(err) // the patterns are constant
		}
		sort.Strings(m)
		out = append(out, m...)
	}
	return out
}

// ShellSources are the sources of the board shell, top module board_top
// (rtl/board): the protocol engine and the UART, Ethernet and library
// blocks it instantiates. The Verilated board builds exactly these.
// It leaves out DualClockSources and ConvSources.
func ShellSources() []string {
	var out []string
	for _, n := range glob("board", "uart", "eth", "lib") {
		if !slices.Contains(DualClockSources(), n) && !slices.Contains(ConvSources(), n) {
			out = append(out, n)
		}
	}
	return out
}

// ConvSources are the sources board_top needs besides ShellSources for a
// convolutional board (KIND = 1, protocol version 7): the query path
// around the generated convolutional core. A tabular board does not read
// them, so that its synthesis stays what it was (see DualClockSources).
func ConvSources() []string { return []string{"board/conv_query.v"} }

// DualClockSources are the sources board_top needs besides ShellSources
// when its core runs on a clock of its own (CORE_CLK = 1): the clock
// crossing. The single-clock build does not read them, so that its
// synthesis stays what it was: yosys numbers its internal names across
// every file read, and with the unused module merely read, ABC mapped the
// protocol engine to 39 more LUT4 (TestShellBudget, SETS_MAX 8).
func DualClockSources() []string { return []string{"board/core_xing.v"} }

func checkBoard(board string) error {
	for _, b := range Boards {
		if b == board {
			return nil
		}
	}
	return fmt.Errorf("%w: unknown board %q (have %v)", ErrSource, board, Boards)
}

// TopSources are the sources of a device top, top module top: the top
// (boards/<board>/top.v), the shared board blocks (boards/common) and
// ShellSources. The synthesis flow builds exactly these.
func TopSources(board string) ([]string, error) {
	if err := checkBoard(board); err != nil {
		return nil, err
	}
	return append(append([]string{path.Join("boards", board, "top.v")}, glob("boards/common")...), ShellSources()...), nil
}

// CoreTopSources are the sources of a core-only device top, top module
// core_top: boards/<board>/core_top.v and the shared board blocks.
func CoreTopSources(board string) ([]string, error) {
	if err := checkBoard(board); err != nil {
		return nil, err
	}
	return append([]string{path.Join("boards", board, "core_top.v")}, glob("boards/common")...), nil
}

// TrainerSources are the hand-written sources of the on-chip trainer
// (rtl/train, top module train_engine; hw.GenerateTrainer wraps it in a
// generated top that sets its parameters).
func TrainerSources() []string { return glob("train") }

// TrainBoardSources are the sources of the training board, top module
// train_board_top (rtl/trainboard): its protocol engine, the UART and
// library blocks and the board shell's frame receiver and transmitter.
// The generated trainer (hw.GenerateTrainer) is compiled with them.
func TrainBoardSources() []string {
	return append(glob("trainboard", "uart", "lib"), "board/proto_rx.v", "board/proto_tx.v")
}

// TrainerTopSources are the sources of the trainer's out-of-context device
// top, top module trainer_top (boards/<board>/trainer_top.v and the
// power-on reset); only the iCEBreaker (UP5K, with SPRAM) has one.
func TrainerTopSources(board string) ([]string, error) {
	if board != "icebreaker" {
		return nil, fmt.Errorf("%w: no trainer top for board %q (the trainer needs the UP5K's SPRAM: icebreaker)", ErrSource, board)
	}
	return []string{"boards/icebreaker/trainer_top.v", "boards/common/brd_por.v"}, nil
}

// PCF is the pin constraint file of a board (boards/<board>/<board>.pcf).
func PCF(board string) ([]byte, error) {
	if err := checkBoard(board); err != nil {
		return nil, err
	}
	b, err := FS.ReadFile(path.Join("boards", board, board+".pcf"))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSource, err)
	}
	return b, nil
}

// Includes are the files the sources `include (lib/*.vh, paths of FS):
// one definition of what several modules need at elaboration, such as
// lib/lfsr_taps.vh. A source names one by its path relative to itself
// ("../lib/lfsr_taps.vh"), which yosys resolves; Verilator needs
// IncludeDir's -I. Write copies them beside every set of sources, and a
// build cache keyed by the sources must hash them too.
func Includes() []string {
	m, err := fs.Glob(FS, "lib/*.vh")
	if err != nil {
		panic(err) // the pattern is constant
	}
	sort.Strings(m)
	return m
}

// IncludeDir is the folder (relative to a Write destination, or to rtl/
// in a checkout) that Verilator's -I must name for the sources'
// includes.
const IncludeDir = "lib"

// Write copies the named sources (paths of FS) into dir, keeping their
// relative paths, and returns the written files' paths in the same order.
// The Includes are written too (not returned: they are not sources to
// compile).
func Write(dir string, names []string) ([]string, error) {
	for _, n := range Includes() {
		if _, err := writeOne(dir, n); err != nil {
			return nil, err
		}
	}
	out := make([]string, len(names))
	for i, n := range names {
		p, err := writeOne(dir, n)
		if err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}

func writeOne(dir, n string) (string, error) {
	data, err := FS.ReadFile(n)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrSource, err)
	}
	p := filepath.Join(dir, filepath.FromSlash(n))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", fmt.Errorf("rtl: %w", err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		return "", fmt.Errorf("rtl: %w", err)
	}
	return p, nil
}
