# brine — the two commands a newcomer needs:
#   go run ./cmd/brine demo     the quickstart, on the embedded store
#   make test                   the whole suite: lint, unit, fuzz seeds, and integration against a real
#                               HBase (in Docker where an engine answers; started and stopped here)
#                               and the local Tablestore server
GO            ?= go
# The gohbase go.mod pins comes from ../shared/goproxy where this machine's proxy refuses it
# (scripts/goproxy.sh); every go command below, and every script and test they start, inherits it.
export GOPROXY := $(shell bash scripts/goproxy.sh)
STATICCHECK   := honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME      ?= 30s
export BRINE_HBASE_ZK ?= 127.0.0.1:2181
# HBase in Docker wherever an engine answers, else bare JVMs from Maven jars (scripts/hbase/runtime.sh);
# BRINE_HBASE_RUNTIME=docker|jars chooses.
export BRINE_HBASE_RUNTIME ?= $(shell bash scripts/hbase/runtime.sh)

.PHONY: test unit lint integration fuzz bench soak demo

-include Makefile.hbase

test:
	bash scripts/test.sh

# The fast part: no server needed.
unit:
	$(GO) test -race -count=1 ./...

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo 'gofmt: files above need formatting'; exit 1; }
	$(GO) vet ./...
	$(GO) vet -tags integration ./...
	$(GO) run $(STATICCHECK) ./...
	$(GO) run $(STATICCHECK) -tags integration ./...

# Needs a running HBase (make hbase-up); CI=true turns a missing server into a failure.
integration:
	$(GO) test -race -count=1 -tags integration ./integration/... ./backends/...

# Every fuzz target for FUZZTIME each (go test -fuzz takes one target at a time).
fuzz:
	bash scripts/fuzz.sh $(FUZZTIME)

demo:
	$(GO) run ./cmd/brine demo

# brine vs raw gohbase on the HBase of make hbase-up: Markdown + JSON in bench-results/. Sizes are
# flags (go run ./cmd/brine bench -h); BENCH_FLAGS passes more, e.g. BENCH_FLAGS='--rows 200000 --repeat 5'.
# The server's pid lets the report show the server's CPU per row of the conditional bulk paths.
bench: hbase-up
	$(GO) run ./cmd/brine bench --store hbase://$$BRINE_HBASE_ZK --server-pid "$(SERVER_PID)" --out bench-results $(BENCH_FLAGS)

# The server JVMs' host pids: a container's PID 1 in Docker, the pid file on the jar path.
SERVER_PID = $(if $(filter docker,$(BRINE_HBASE_RUNTIME)),$$(bash scripts/docker/hbase.sh pids hbase),$$(cat $${HBASE_BASE:-.hbase}/run/hbase.pid))
CLUSTER_PIDS = $(if $(filter docker,$(BRINE_HBASE_RUNTIME)),$$(bash scripts/docker/hbase.sh pids rs1 rs2 rs3),$$(cat $${HBASE_CLUSTER_BASE:-.hbase/cluster}/run/rs*/rs*.pid | paste -sd, -))

# The long part of the reliability suite: concurrent writers and scanners through one client for
# BRINE_SOAK (default 10m), reporting peak heap and RSS.
soak:
	BRINE_SOAK=$${BRINE_SOAK:-10m} $(GO) test -run '^TestSoak$$' -count=1 -timeout 0 -v ./reliability/
