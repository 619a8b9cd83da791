# ideaflow — the two commands a new machine needs are `make run` and `make test`.
GO       ?= go
BIN      := bin/ideaflow
VERSION  := $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)
export GOFLAGS ?= -mod=readonly

.PHONY: all build run test bench vet deps clean

all: build

deps:
	$(GO) mod download

build: deps
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/ideaflow

# The quickstart: the mock provider, offline, a few seconds. A second run makes no model calls.
run: build
	./$(BIN) run experiments/quickstart --log-format console

vet: deps
	$(GO) vet ./...

test: vet
	$(GO) test -race -count=1 ./...

# Benchmarks; figures go into README.md.
bench: deps
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 1x ./engine/...
	$(GO) test -run '^$$' -bench . -benchmem ./cache/...
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 1x ./stages/llm/...

clean:
	rm -rf bin
