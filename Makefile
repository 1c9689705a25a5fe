# jobkit developer targets. Every tool is fetched through the Go module proxy
# at a pinned version, so a fresh machine with Go needs nothing else.

GO                  ?= go
STATICCHECK_VERSION ?= v0.8.2
XTOOLS_VERSION      ?= v0.52.0
RAPID_CHECKS        ?= 1000
BENCH_COUNT         ?= 6

.PHONY: all test race props bench bench-compare lint tidy demo ci

all: lint race

## test: the README's test command
test:
	$(GO) test ./...

## race: every test under the race detector
race:
	$(GO) test -race -count=1 ./...

## props: the property suite with RAPID_CHECKS checks per property
props:
	$(GO) test -race -count=1 ./props -rapid.checks=$(RAPID_CHECKS)

## bench: the in-package benchmarks, BENCH_COUNT runs each
bench:
	$(GO) test -run='^$$' -bench=. -benchmem -count=$(BENCH_COUNT) ./...

## bench-compare: side-by-side benchmarks against peers (bench/RESULTS.md)
bench-compare:
	cd bench && ./run.sh

## lint: go vet, extra analyzers (nilness) and staticcheck (the bench module's too)
lint:
	$(GO) vet ./...
	$(GO) run golang.org/x/tools/go/analysis/passes/nilness/cmd/nilness@$(XTOOLS_VERSION) ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...
	cd bench && $(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

## tidy: fail if go.mod/go.sum or formatting are not clean
tidy:
	$(GO) mod tidy -diff
	cd bench && $(GO) mod tidy -diff
	cd metrics/prometheus && $(GO) mod tidy -diff
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt needed"; exit 1; }

## demo: run the demo
demo:
	$(GO) run ./cmd/jobkit

## ci: what .ci/run runs
ci:
	./.ci/run
