# Plant Store. `make help` lists the targets.

GO        ?= go
BIN       := bin/plantstore
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X main.version=$(VERSION)
PKGS      := ./...

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: run
run: ## run the service on the embedded store in dev mode (prints a token, the API reference address and a curl line)
	$(GO) run ./cmd/plantstore serve --dev

# Go's default of 10 minutes a package is less than the slowest package
# (cmd/plantstore: the failover suites, by hand and under Patroni, and the
# browser test on both stores) takes on a busy 2-core machine; past it the
# test binary panics. A package gets 25 minutes: a bound on a hang, not on a
# slow machine.
TEST_TIMEOUT ?= 25m

.PHONY: test
test: ## run every test (PostgreSQL, Patroni and browser suites skip without their programs, except under CI=true)
	$(GO) vet $(PKGS)
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) $(PKGS)

.PHONY: screenshot
screenshot: ## retake docs/api-reference.png and the text it shows (docs/api-reference.txt, which the browser test holds the served page to) with the browser test (needs Chromium)
	CI=true PLANTSTORE_SCREENSHOT=$(CURDIR)/docs/api-reference.png \
		$(GO) test ./cmd/plantstore -run '^TestReferencePageInABrowser$$/^sqlite$$' -count=1

.PHONY: build
build: ## build a static binary into bin/
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/plantstore

.PHONY: lint
lint: ## vet, staticcheck and lint the OpenAPI document; vet, staticcheck and test the load tool (its own module)
	$(GO) vet $(PKGS)
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.7.0 $(PKGS)
	cd tools/benche2e && $(GO) vet ./... && $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.7.0 ./... && $(GO) test -count=1 ./...
	npx --yes @redocly/cli@2.77.0 lint docs/openapi.yaml

.PHONY: fuzz
fuzz: ## fuzz the request decoder for a minute
	$(GO) test ./adapters/httpapi -run '^$$' -fuzz FuzzDecodeNewPlant -fuzztime 60s

.PHONY: bench
bench: ## run the Go benchmarks (request path per algorithm, decoder, use case, stores)
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

.PHONY: bench-e2e
bench-e2e: ## load the service side by side with pgbench and a plain SQLite loop, and on PostgreSQL the peer and the floor of ../shared/tools/peer (tools/benche2e, a module of its own), and draw docs/performance.svg against the targets; flags in BENCH_E2E_FLAGS (-refs pgbench: without the peer and the floor; -pgbouncer: the PostgreSQL service cells once more through PgBouncer)
	@command -v pgbench >/dev/null 2>&1 || apt-get install -y postgresql-client >/dev/null 2>&1 || \
		{ echo "bench-e2e needs pgbench: install the PostgreSQL client (postgresql-client)"; exit 1; }
	@command -v wrk >/dev/null 2>&1 || apt-get install -y wrk >/dev/null 2>&1 || \
		{ echo "bench-e2e needs wrk for its closed loops: install it (apt-get install wrk)"; exit 1; }
	cd tools/benche2e && $(GO) run . $(BENCH_E2E_FLAGS)

.PHONY: tidy
tidy: ## tidy go.mod and go.sum, the service's and the load tool's
	$(GO) mod tidy
	cd tools/benche2e && $(GO) mod tidy
