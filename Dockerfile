# syntax=docker/dockerfile:1
# Keyhall container image: build stage (compiles TypeScript and the native SQLite binding), then
# a slim Node 24 runtime running as the unprivileged `node` user. Configuration is KEYHALL_*
# environment variables (docs/configuration.md); SQLite and master.key live in the /data volume.
# Not built in this repository's CI (images cannot be pulled there); hadolint checks this file.

ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# Toolchain for better-sqlite3 when no prebuilt binary matches.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY console ./console
# The build generates the console's API types from the server's own OpenAPI document first.
COPY scripts ./scripts
RUN npm run build && npm prune --omit=dev

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    KEYHALL_HOST=0.0.0.0 \
    KEYHALL_PORT=3000 \
    KEYHALL_DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY bin ./bin
RUN mkdir -p /data && chown node:node /data && chmod 0700 /data
USER node
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.KEYHALL_PORT}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# `node` as PID 1 gets SIGTERM from `docker stop` and drains (docs/metrics.md, Shutdown).
CMD ["node", "dist/main.js", "serve"]
