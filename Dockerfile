# One image for every Gatehouse service: the services run their TypeScript directly (Node 24 strips
# the types; there is no build step), so the image is the workspace with its production
# dependencies. Each service is a command on it:
#   docker run gatehouse services/publisher/src/main.ts     (push-hub, publisher, proxy, blacklist,
#   docker run gatehouse                                      rest-engine; no argument: everything
#                                                             in one process, memory bus)
# Settings are environment variables only (see each service's README and docs/deploy.md).

ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS dependencies
# Behind a TLS-intercepting proxy, npm and pnpm need its CA: a PEM file inside the build container
# (e.g. `podman build -v /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro
# --build-arg NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt`). It is only seen by this
# stage: the image below copies the installed workspace, not the setting.
ARG NODE_EXTRA_CA_CERTS
WORKDIR /app
COPY . .
# pnpm at the version package.json pins; production dependencies exactly as the lockfile says.
RUN npm install --global --no-fund --no-audit --loglevel=error \
      "pnpm@$(node -p "require('./package.json').packageManager.split('@')[1]")" \
 && pnpm install --frozen-lockfile --prod \
 && rm -rf /root/.cache /root/.local/share/pnpm

FROM ${NODE_IMAGE}
# A fixed numeric user, so Kubernetes can check runAsNonRoot; the files stay root's (read-only).
RUN groupadd --system --gid 10001 gatehouse \
 && useradd --system --uid 10001 --gid gatehouse --no-create-home --shell /usr/sbin/nologin gatehouse
WORKDIR /app
COPY --from=dependencies /app /app
ENV NODE_ENV=production \
    HOST=0.0.0.0
USER 10001:10001
# public edge (INBOUND_PORT), internal API (API_PORT), REST engine (rest.server.port)
EXPOSE 4000 4010 8085
ENTRYPOINT ["node"]
# The embedded runner holds the push connections too: see docs/deploy.md, "Sizing a push hub".
CMD ["--max-semi-space-size=8", "embedded/src/main.ts"]
