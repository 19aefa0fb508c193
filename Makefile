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

.PHONY: all deps build test vet fmt-check gotest demo clean

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

clean:
	rm -rf $(BUILD)
