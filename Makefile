# Gatehouse: `make run` starts everything in one process; `make test` runs the whole suite against
# real Kafka, Redis, NATS, a Kinesis emulator and Jaeger (started by tools/deps.sh).
SHELL := /bin/bash
.DEFAULT_GOAL := help
ROOT := $(CURDIR)
# Node 24 and pnpm from .cache/ when the machine's own are too old (tools/toolchain.sh).
export PATH := $(shell $(ROOT)/tools/toolchain.sh):$(PATH)
STAMP := node_modules/.install-stamp
TESTS ?= packages/*/test/*.test.ts services/*/test/*.test.ts embedded/test/*.test.ts test-e2e/test/*.test.ts
TEST_FLAGS ?= --test-concurrency=1 --test-timeout=180000

.PHONY: help install run test test-only typecheck lint format deps-up deps-down deps-status bench clean \
	chart-test compose-check

help:
	@echo "make run        start the gateway (all services, memory bus, example config)"
	@echo "make test       lint, typecheck and every test against real brokers"
	@echo "make deps-up    start Kafka, Redis, NATS, the Kinesis emulator and Jaeger (deps-down stops them)"
	@echo "make bench      side-by-side benchmarks (bench/README.md)"

$(STAMP): pnpm-lock.yaml package.json $(wildcard packages/*/package.json services/*/package.json)
	pnpm install --frozen-lockfile
	@touch $@

install: $(STAMP)

run: install
	node embedded/src/main.ts

# The chart and compose checks run before the node tests, so the test runner's summary ends the output.
test: install lint typecheck chart-test compose-check deps-up test-only

test-only:
	node --test $(TEST_FLAGS) $(TESTS)

typecheck: install
	tsc -p tsconfig.json

lint: install
	biome check .

format: install
	biome check --write .

deps-up: install
	tools/deps.sh tools
	tools/deps.sh up

deps-down:
	tools/deps.sh down

deps-status:
	tools/deps.sh status

bench: install deps-up
	node bench/src/run-all.ts

clean:
	tools/deps.sh down
	rm -rf node_modules packages/*/node_modules services/*/node_modules .cache/deps

# helm lint, helm-unittest and kubeconform on charts/gatehouse; the tools are built once into .cache/.
chart-test:
	tools/chart-test.sh charts/gatehouse

# docker-compose.yml against Debian's docker-compose (validation only: there is no Docker engine).
compose-check:
	tools/chart-tools.sh compose >/dev/null
	docker-compose -f docker-compose.yml config -q
	@echo "compose-check: docker-compose.yml is valid"
