# Gatehouse: `make run` starts everything in one process; `make test` runs the whole suite against
# real Kafka, Redis (a server and a 3-master cluster), NATS, a Kinesis emulator, Jaeger and Zipkin
# (started by tools/deps.sh).
SHELL := /bin/bash
.DEFAULT_GOAL := help
ROOT := $(CURDIR)
# Node 24 and pnpm from .cache/ when the machine's own are too old (tools/toolchain.sh).
export PATH := $(shell $(ROOT)/tools/toolchain.sh):$(PATH)
STAMP := node_modules/.install-stamp
TESTS ?= packages/*/test/*.test.ts services/*/test/*.test.ts services/*/test/*/*.test.ts embedded/test/*.test.ts bench/test/*.test.ts tools/test/*.test.ts test-e2e/test/*.test.ts \
	test-deploy/test/run-command.test.ts
# Each test 3 minutes at most; each file TEST_FILE_TIMEOUT seconds (tools/run-tests.ts kills it then).
TEST_FLAGS ?= --test-timeout=180000
export TEST_FILE_TIMEOUT ?= 900

.PHONY: help install build run run-kafka-to-browser test check test-only typecheck lint format deps-up deps-down deps-status bench clean \
	fuzz-api chart-test compose-check compose-test helm-test test-deployment skipped-compose skipped-cluster

help:
	@echo "make run        start the gateway (all services, memory bus, example config)"
	@echo "make run-kafka-to-browser  the same with examples/kafka-to-browser: Kafka records → flow → browsers"
	@echo "make build      the JavaScript the image runs: services/<name>/dist/main.js (tools/build.ts)"
	@echo "make test       lint, typecheck and every test against real brokers"
	@echo "make check      lint, typecheck and the tests that need no broker, process or cluster (minutes)"
	@echo "make deps-up    start Kafka, Redis, a Redis Cluster, NATS, the Kinesis emulator, Jaeger, Zipkin and a schema registry (deps-down stops them)"
	@echo "make bench      side-by-side benchmarks (bench/README.md)"
	@echo "make compose-test  docker-compose.yml for real on podman, checked from outside (test-deploy/)"
	@echo "make helm-test  the chart installed into a local single-node Kubernetes, checked from outside"

$(STAMP): pnpm-lock.yaml package.json $(wildcard packages/*/package.json services/*/package.json)
	pnpm install --frozen-lockfile
	@touch $@

install: $(STAMP)

# What the image runs: each package's src/*.ts built into dist/*.js with source maps (tools/build.ts).
build: install
	node tools/build.ts

# The client demo page (http://localhost:4000/_gw/demo/) serves @gatehouse/client's browser bundle,
# built here first.
run: install
	node packages/client/scripts/browser-bundle.ts .cache/client-demo/gatehouse-client.js
	REST_CONFIG_FOLDER=examples/rest-app DEMO_CLIENT_BUNDLE=.cache/client-demo/gatehouse-client.js node --max-semi-space-size=8 embedded/src/main.ts

# examples/kafka-to-browser: `make run` with that application, whose Kafka flow adapter reads the
# orders topic from the Kafka at KAFKA_BROKERS (default the local one).
run-kafka-to-browser: install
	node packages/client/scripts/browser-bundle.ts .cache/client-demo/gatehouse-client.js
	REST_CONFIG_FOLDER=examples/kafka-to-browser KAFKA_BROKERS=$${KAFKA_BROKERS:-127.0.0.1:9092} DEMO_CLIENT_BUNDLE=.cache/client-demo/gatehouse-client.js node --max-semi-space-size=8 embedded/src/main.ts

# The reconnect storm runs 2,000 clients here, not its 5,000: beside the deployment stages the
# surviving replica gets about a third of a core, less than 5,000 clients need once they are back
# (test-e2e/test/reconnect-storm.test.ts says how that was measured); `make test-only` on a quiet
# machine runs the 5,000.
# Each stage says how long it took (tools/timed.sh). The deployment stages (compose stack, Helm
# release: mostly waiting on containers and a cluster) run beside the node tests at a lower CPU
# priority (tools/beside.sh); their output is printed after the test runner's summary.
# Every stage has a limit (seconds, tools/timed.sh --limit; the deployment as a whole BESIDE_LIMIT):
# several times what it takes on a fresh machine, so only a hang meets one, and the stage that hung
# fails, with the rest of the run's 90 minutes left to say why.
test:
	@tools/prebuild.sh start nats jaeger $(if $(SKIP_CLUSTER),,kubernetes)
	@tools/timed.sh --limit 900 install $(MAKE) -s install
	@tools/timed.sh --limit 300 lint $(MAKE) -s lint
	@tools/timed.sh --limit 600 typecheck $(MAKE) -s typecheck
	@tools/timed.sh --limit 1200 "chart checks" $(MAKE) -s chart-test
	@tools/timed.sh --limit 600 "compose check" $(MAKE) -s compose-check
	@tools/timed.sh --limit 1200 "API fuzzing (internal API, public edge)" $(MAKE) -s fuzz-api
	@tools/timed.sh --limit 1800 dependencies sh -c 'tools/prebuild.sh wait nats && tools/prebuild.sh wait jaeger && $(MAKE) -s deps-up'
	@BESIDE_LIMIT=3600 tools/beside.sh start deployment $(MAKE) -s test-deployment
	@STORM_CLIENTS=$${STORM_CLIENTS:-2000} TEST_RETRIES=$${TEST_RETRIES:-1} tools/timed.sh --limit 3000 "node tests" $(MAKE) -s test-only; status=$$?; tools/beside.sh wait deployment || status=1; exit $$status

# The stages that deploy what users deploy: docker-compose.yml on podman, the chart in a cluster.
test-deployment:
	@tools/timed.sh --limit 2100 "compose stack" $(MAKE) -s $(if $(SKIP_COMPOSE),skipped-compose,compose-test)
	@tools/timed.sh --limit 2400 "helm release in a local cluster" $(if $(SKIP_CLUSTER),$(MAKE) -s skipped-cluster,sh -c 'tools/prebuild.sh wait kubernetes && $(MAKE) -s helm-test')

# Several files at once by lane (tools/run-tests.ts --help); CI_REPORT_DIR gets this run's file times.
test-only:
	node tools/run-tests.ts $(TEST_FLAGS) $(if $(CI_REPORT_DIR),--report=$(CI_REPORT_DIR)/test-files.tsv) -- $(TESTS)

# The inner loop: lint, typecheck and the unit lane (no broker, no process, no cluster; their broker
# addresses point at a closed port), in a few minutes on two cores with nothing else started.
check: install
	@tools/timed.sh lint biome check .
	@tools/timed.sh typecheck tsc -p tsconfig.json
	@tools/timed.sh "unit tests" node tools/run-tests.ts $(TEST_FLAGS) --lane=unit -- $(TESTS)

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
	tools/bench-peers.sh install
	tools/mercury.sh install
	node bench/src/run-all.ts

clean:
	tools/deps.sh down
	rm -rf node_modules packages/*/node_modules services/*/node_modules .cache/deps

# schemathesis against the embedded runner's internal API (/swagger.json) and public edge
# (/_gw/v1/openapi.json), each from its own OpenAPI document (installed once into .cache/schemathesis).
# The public edge's property-based fuzzing over raw TCP is a node test (embedded/test/public-edge-fuzz.test.ts).
fuzz-api: install
	tools/fuzz-api.sh

# helm lint, helm-unittest and kubeconform on charts/gatehouse; the tools are built once into .cache/.
chart-test:
	tools/chart-test.sh charts/gatehouse

# docker-compose.yml against Debian's docker-compose (validation only: there is no Docker engine).
# The secrets and choices have no default in it (COMPOSE_REQUIRED): the check gives them, and makes
# sure the file refuses to start without each one (JWT_ISSUER and JWT_AUDIENCE may be empty, not unset).
# The optional profiles (COMPOSE_PROFILES_ALL) are validated on, with the services' settings that
# use them; their broker's password cannot be required by compose (it would be for the default stack
# too), so its start script is checked to refuse to start without it, or with a weak one.
COMPOSE_REQUIRED := TOKEN_SECRET INTERNAL_API_TOKEN SUBMISSION_CHECK SUBSCRIPTION_CHECK JWT_ISSUER JWT_AUDIENCE
COMPOSE_CHOSEN := TOKEN_SECRET=compose-check-token-secret INTERNAL_API_TOKEN=compose-check-internal-api-token \
	SUBMISSION_CHECK=jwt_validation SUBSCRIPTION_CHECK=jwt_validation JWT_ISSUER= JWT_AUDIENCE= COMPOSE_PROFILES=
COMPOSE_PROFILES_ALL := COMPOSE_PROFILES=kafka-tls,schema-registry KAFKA_TLS_PASSWORD=compose-check-kafka-tls-password \
	KAFKA_BROKERS=kafka-tls:9093 KAFKA_SASL=scram-sha-512:gatehouse:compose-check-kafka-tls-password \
	KAFKA_SSL_CA_CERTFILE=/etc/gatehouse/tls/ca.pem KAFKA_SCHEMA_REGISTRY_HOST=http://schema-registry:8080/apis/ccompat/v7
compose-check:
	tools/chart-tools.sh compose >/dev/null
	env $(COMPOSE_CHOSEN) docker-compose -f docker-compose.yml config -q
	env $(COMPOSE_CHOSEN) $(COMPOSE_PROFILES_ALL) docker-compose -f docker-compose.yml config -q
	@for password in '' short-password 'has spaces and "quotes" 0123456789'; do \
		if refusal=$$(KAFKA_TLS_PASSWORD="$$password" sh deploy/kafka-tls/broker.sh 2>&1); then \
			echo "compose-check: the kafka-tls broker must refuse to start with KAFKA_TLS_PASSWORD='$$password'"; exit 1; fi; \
		case "$$refusal" in *KAFKA_TLS_PASSWORD*) ;; *) \
			echo "compose-check: the kafka-tls broker's refusal must name KAFKA_TLS_PASSWORD: $$refusal"; exit 1 ;; esac; \
	done
	@for name in $(COMPOSE_REQUIRED); do \
		if env $(COMPOSE_CHOSEN) env -u $$name docker-compose -f docker-compose.yml config -q 2>/dev/null; then \
			echo "compose-check: docker-compose.yml must refuse to start without $$name"; exit 1; fi; \
		if env $(COMPOSE_CHOSEN) env -u $$name docker-compose -f docker-compose.yml config -q 2>&1 | grep -q "$$name"; then :; else \
			echo "compose-check: the refusal without $$name must name it"; exit 1; fi; \
	done
	@for name in TOKEN_SECRET INTERNAL_API_TOKEN SUBMISSION_CHECK SUBSCRIPTION_CHECK; do \
		if env $(COMPOSE_CHOSEN) $$name= docker-compose -f docker-compose.yml config -q 2>/dev/null; then \
			echo "compose-check: docker-compose.yml must refuse an empty $$name"; exit 1; fi; \
	done
	@echo "compose-check: docker-compose.yml is valid with and without its profiles and asks for $(COMPOSE_REQUIRED) (the kafka-tls broker for KAFKA_TLS_PASSWORD)"

# docker-compose.yml run for real on podman: stand-ins of the public images and the Gatehouse image
# built into .cache/podman (tools/containers.sh), `docker-compose up`, user-level checks from outside,
# scaling, Prometheus, `down -v`. The test stops everything it started.
compose-test: install
	tools/containers.sh up
	node --test $(TEST_FLAGS) test-deploy/test/compose-stack.test.ts

# A machine that cannot run podman or a local cluster skips those stages only when told to, and says so.
skipped-compose:
	@echo "SKIPPED: the docker-compose stack (SKIP_COMPOSE is set); the deployment is not tested"
skipped-cluster:
	@echo "SKIPPED: the Helm release in a local cluster (SKIP_CLUSTER is set); the chart is only checked statically"

# The Helm chart installed into a real single-node Kubernetes (tools/k8s-local.sh), started for the
# test and stopped after it, pass or fail.
helm-test: install
	tools/chart-tools.sh chart >/dev/null
	tools/k8s-local.sh up
	node --test $(TEST_FLAGS) test-deploy/test/helm-release.test.ts; status=$$?; tools/k8s-local.sh down; exit $$status
