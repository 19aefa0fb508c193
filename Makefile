# Probabilistic Tsetlin Machine: golden model -> generator -> RTL -> sim/synth -> host.
#
#   make demo   train on Iris and run the main job (see README)
#   make test   everything CI checks
#
GO       ?= go
BUILD    ?= build
PTM      := $(BUILD)/ptm
GOFLAGS  ?=
TESTTIME ?= 60m

.PHONY: all deps build test vet fmt-check gotest demo cosim-long clean

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

gotest:
	$(GO) test -timeout $(TESTTIME) ./...

test: deps fmt-check vet gotest

demo: deps build
	@bash scripts/demo.sh $(PTM) $(BUILD)/demo

# A million samples of the Iris model through the Verilated core (README).
cosim-long: build
	@mkdir -p $(BUILD)/long
	$(PTM) train --data iris --seed 1 -o $(BUILD)/long/iris.ptm
	$(PTM) cosim --model $(BUILD)/long/iris.ptm --bits 8 --lanes 32 --vectors 10000 --k 100 --json

clean:
	rm -rf $(BUILD)

# iCE40 synthesis (docs/synthesis.md, scripts/synth). synth: one bitstream,
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
	$(GO) test -count=1 -run 'TestLintTop' -v ./scripts/synth/
