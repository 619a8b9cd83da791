# ideaflow — the two commands a new machine needs are `make run` and `make test`.
GO       ?= go
BIN      := bin/ideaflow
VERSION  := $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)
export GOFLAGS ?= -mod=readonly

.PHONY: all build run test bench vet lint deps clean browser latex

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

# Static analysis beyond go vet (fetches staticcheck through the module proxy).
lint:
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

test: vet
	$(GO) test -race -count=1 -timeout 45m ./...

# Headless Chromium for the report.html browser test (cmd/ideaflow
# browser_test.go): Debian's package, installed when absent. Needs root (or
# sudo); .ci/run runs it before `make test`. Without it the test skips on a
# developer machine and fails in CI.
browser:
	@if command -v chromium >/dev/null 2>&1; then chromium --version; else \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null && chromium --version; fi

# pdflatex for the LaTeX compile test of every shipped table
# (stages/report latex_compile_test.go): Debian's texlive-latex-base and
# texlive-latex-recommended (booktabs), installed when absent, like browser.
latex:
	@if command -v pdflatex >/dev/null 2>&1; then pdflatex --version | head -1; else \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq texlive-latex-base texlive-latex-recommended >/dev/null && pdflatex --version | head -1; fi

# Benchmarks; figures go into docs/BENCHMARKS.md (cmd/ideaflow/docs_test.go checks each is named there). Run on a quiet machine: they measure
# rates and ratios, and the 2-core machine shares its cores with everything.
bench: deps
	$(GO) test -run '^$$' -bench 'Get|Put' -benchmem ./cache/
	$(GO) test -run '^$$' -bench 'Parse|Synthesize' -benchmem ./stages/format/
	$(GO) test -run '^$$' -bench 'Prepare|Layout' -benchmem ./stages/ideabench/
	for b in plan run-bertscore run-rouge; do $(GO) test -run '^$$' -bench "Table1FullSize/$$b\$$" -benchtime 1x -timeout 60m ./stages/ideabench/ || exit 1; done
	$(GO) test -run '^$$' -bench 'RateLimited' -benchtime 1x -timeout 30m ./stages/llm/
	$(GO) test -run '^$$' -bench 'Overhead' -benchtime 5000x ./stages/llm/
	$(GO) test -run '^$$' -bench 'Throughput' -benchtime 20000x ./stages/llm/
	$(GO) test -run '^$$' -bench 'Throttled' -benchtime 1x -timeout 30m ./stages/llm/
	$(GO) test -run '^$$' -bench 'RoundTrip|TokensPerMinuteOverestimated' -benchtime 1x -timeout 30m ./stages/llm/
	$(GO) test -run '^$$' -bench 'CompactAtClose' -benchtime 1x -timeout 30m ./cache/
	$(GO) test -run '^$$' -bench 'ColdEqualWork' -benchtime 1x ./cmd/ideaflow/
	$(GO) test -run '^$$' -bench '^BenchmarkBuild$$' -benchtime 3x ./cmd/ideaflow/
	$(GO) test -run '^$$' -bench 'FirstRequest|WarmAfterUpgrade|PlanVsWarm' -benchtime 1x -timeout 60m ./cmd/ideaflow/
	$(GO) test -run '^$$' -bench 'RunWithReaders' -benchtime 3x ./cmd/ideaflow/
	$(GO) test -run '^$$' -bench '^BenchmarkScale$$' -benchtime 1x -timeout 60m ./cmd/ideaflow/
	$(GO) test -run '^$$' -bench 'ScaleMillion' -benchtime 1x -timeout 120m ./cmd/ideaflow/
	$(GO) test -run '^$$' -bench 'HTMLFullSize' -benchtime 3x ./stages/report/
	$(GO) test -run '^$$' -bench 'BrowserFullSize|HTMLPageCollect' -benchtime 3x ./cmd/ideaflow/
	$(GO) test -run '^$$' -bench 'LiveIdeaBench' -benchtime 1x -timeout 60m ./cmd/ideaflow/
	$(GO) test -run '^$$' -bench 'BM25' -benchtime 3x ./stages/literature/
	$(GO) test -run '^$$' -bench 'Values' -benchtime 5x ./stages/datasets/
	$(GO) test -run '^$$' -bench 'KeywordIntervals' -benchtime 3x ./stages/liveideabench/
	$(GO) test -run '^$$' -bench 'WarmGet' -benchtime 3x ./cache/remote/
	$(GO) test -run '^$$' -bench 'WarmRunRemote' -benchtime 3x ./cmd/ideaflow/
	$(GO) test -run '^$$' -bench 'WorkerProcesses' -benchtime 1x -timeout 30m ./cmd/ideaflow/

clean:
	rm -rf bin
