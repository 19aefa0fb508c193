# Probabilistic Tsetlin Machine: golden model -> generator -> RTL -> sim/synth -> host.
#
#   make demo   train on Iris and run the main job (see README)
#   make demo DATA=mnist   the image demo (scripts/demo-images.sh; QUICK=1,
#                    MODEL=, N=, M=, BOARD=soft|sim: docs/howto-demo-images.md)
#   make test        everything CI checks, at reduced sizes (under 15 minutes
#                    on an idle 2-core machine)
#   make test-long   the same checks at full size (PTM_LONG_TESTS=1: 10,000-query
#                    fault runs, full design sweeps, a million co-simulated samples)
#
GO       ?= go
BUILD    ?= build
PTM      := $(BUILD)/ptm
GOFLAGS  ?=
TESTTIME ?= 60m
LONGTIME ?= 8h
# extra go test flags, e.g. TESTFLAGS='-count=1' or TESTFLAGS='-run TestBench'
TESTFLAGS ?=
PROGRESS := $(BUILD)/testprogress
SHELL    := /bin/bash

.PHONY: all deps build test test-long vet fmt-check gotest gotest-long progress demo cosim-long clean

all: build

deps:
	@bash scripts/install-deps.sh
	@$(GO) mod download

build:
	@mkdir -p $(BUILD)
	$(GO) build $(GOFLAGS) -o $(PTM) ./cmd/ptm

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# go test -json through internal/testprogress: one line per package, the
# slow and the skipped tests, every [progress] line, the full output of
# failures, and the running tests whenever 30 s pass without output.
progress:
	@mkdir -p $(BUILD)
	@$(GO) build -o $(PROGRESS) ./internal/testprogress

gotest: progress
	@echo "go test ./... (reduced sizes; make test-long for the full ones)"
	@set -o pipefail; $(GO) test -json -timeout $(TESTTIME) $(TESTFLAGS) ./... 2>&1 | $(PROGRESS)

gotest-long: progress
	@echo "go test ./... with PTM_LONG_TESTS=1 (full sizes)"
	@set -o pipefail; PTM_LONG_TESTS=1 $(GO) test -json -timeout $(LONGTIME) $(TESTFLAGS) ./... 2>&1 | $(PROGRESS)

test: deps fmt-check vet gotest

test-long: deps fmt-check vet gotest-long

# DATA=iris (the default) runs the tabular main job; DATA=mnist or
# DATA=fashion-mnist the image demo, in $(BUILD)/demo-$(DATA).
DATA     ?= iris

demo: deps build
	@if [ "$(DATA)" = iris ]; then bash scripts/demo.sh $(PTM) $(BUILD)/demo; \
	else DATA=$(DATA) bash scripts/demo-images.sh $(PTM) $(BUILD)/demo-$(DATA); fi

# A million samples of the Iris model through the Verilated core (README).
cosim-long: build
	@mkdir -p $(BUILD)/long
	$(PTM) train --data iris --seed 1 -o $(BUILD)/long/iris.ptm
	$(PTM) cosim --model $(BUILD)/long/iris.ptm --bits 8 --lanes 32 --vectors 10000 --k 100 --json

clean:
	rm -rf $(BUILD)

# iCE40 synthesis (docs/synthesis.md, hw/synth). synth: one bitstream,
# the Iris model's best UP5K configuration (override with MODEL, DEVICE,
# LANES, BITS, W, FREQ, SEED, CORE_ONLY; see scripts/synth.sh). synth-all:
# the design-space sweep (about an hour). lint-top: Verilator -Wall on the
# device tops with yosys's iCE40 cell models.
.PHONY: synth synth-all lint-top

synth: build
	@bash scripts/synth.sh $(PTM)

synth-all: build
	@bash scripts/synth-all.sh $(PTM) $(BUILD)/synth

lint-top:
	$(GO) test -count=1 -run 'TestLintTop' -v ./hw/synth/
