# One image for every Gatehouse service: the workspace with its production dependencies and each
# package's built JavaScript (tools/build.ts: esbuild, one .js and source map per .ts file, in a
# dist/ beside src/). Built JavaScript spares every process Node's type stripper, some 30 MiB
# resident and a slower start (bench/README.md, "Memory floor"). Each service is a command on it:
#   docker run gatehouse services/publisher/dist/main.js    (push-hub, publisher, proxy, blacklist,
#   docker run gatehouse                                      rest-engine; no argument: everything
#                                                             in one process, memory bus)
# The TypeScript sources stay in the image: stack traces name their lines (--enable-source-maps),
# and `services/<name>/src/main.ts` still starts a service, with type stripping's cost.
# Settings are environment variables only (see each service's README and docs/deploy.md).

ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS workspace
# Behind a TLS-intercepting proxy, npm and pnpm need its CA: a PEM file inside the build container
# (e.g. `podman build -v /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro
# --build-arg NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt`). It is only seen by the
# stages that install: the image below copies the installed workspace, not the setting.
ARG NODE_EXTRA_CA_CERTS
WORKDIR /app
COPY . .
# pnpm at the version package.json pins.
RUN npm install --global --no-fund --no-audit --loglevel=error \
      "pnpm@$(node -p "require('./package.json').packageManager.split('@')[1]")"

FROM workspace AS build
# Every dependency (the build tool is a development one), then the build; only dist/ leaves (the
# example REST app's too, its functions compiled: served only when REST_CONFIG_FOLDER names
# /app/examples/rest-app/dist; without it the REST engine serves no endpoints of its own).
ARG NODE_EXTRA_CA_CERTS
RUN pnpm install --frozen-lockfile \
 && node tools/build.ts \
 && mkdir /built \
 && cp -r --parents embedded/dist packages/*/dist services/*/dist examples/rest-app/dist /built/

FROM workspace AS dependencies
# Production dependencies exactly as the lockfile says.
ARG NODE_EXTRA_CA_CERTS
RUN pnpm install --frozen-lockfile --prod \
 && rm -rf /root/.cache /root/.local/share/pnpm

FROM ${NODE_IMAGE}
# What a registry and a scanner show (OCI annotations). The version is the release's: the same in
# every package.json, the chart's appVersion and CHANGELOG.md (tools/test/release-metadata.test.ts).
LABEL org.opencontainers.image.title="Gatehouse" \
      org.opencontainers.image.description="Event gateway (SSE, WebSocket, socket.io, long-polling; CloudEvents on Kafka, Kinesis, NATS) and declarative REST engine" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="0.1.0"
# A fixed numeric user, so Kubernetes can check runAsNonRoot; the files stay root's (read-only).
RUN groupadd --system --gid 10001 gatehouse \
 && useradd --system --uid 10001 --gid gatehouse --no-create-home --shell /usr/sbin/nologin gatehouse
WORKDIR /app
COPY --from=dependencies /app /app
COPY --from=build /built/ /app/
ENV NODE_ENV=production \
    HOST=0.0.0.0
USER 10001:10001
# public edge (INBOUND_PORT), internal API (API_PORT), REST engine (rest.server.port; the embedded
# runner binds it to 127.0.0.1 and routes /api/ to it through the edge, REST_SERVER_HOST opens it)
EXPOSE 4000 4010 8085
# Stack traces of the built files name the TypeScript lines. Each held connection is an open file:
# the soft open-files limit is raised to the hard one first (as Go's runtime does for its
# programs; containerd 2 starts containers at a soft 1,024), so MAX_CONNECTIONS, not EMFILE, is what
# caps a replica; Node cannot raise it itself. A hard limit still too low is named at start.
ENTRYPOINT ["/bin/sh", "-c", "ulimit -n \"$(ulimit -Hn)\" 2>/dev/null; exec node --enable-source-maps \"$@\"", "gatehouse"]
# The embedded runner holds the push connections too: see docs/deploy.md, "Sizing a push hub".
CMD ["--max-semi-space-size=8", "embedded/dist/main.js"]
