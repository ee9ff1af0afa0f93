# syntax=docker/dockerfile:1
# The dispatch server as a container (docs/deploy.md). Two stages: the first compiles the native
# modules (better-sqlite3 builds from source) with the toolchain and compiles the TypeScript to
# JavaScript (`npm run build`: a start then loads no compiler); the second carries only the
# production dependencies and the compiled dist/, runs as the unprivileged `node` user and keeps
# its database on the /data volume.
#
#   docker build -t dispatch .
#   docker run -d --name dispatch -p 8080:8080 -v dispatch-data:/data \
#     -e SITE_URL=https://dispatch.example.com -e TRUST_PROXY=1 dispatch
#
# Debian (glibc), not Alpine: the uWebSockets.js build ships glibc binaries only (DEPENDENCIES.md).
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only (tsx is one, and brings esbuild, which the build below uses).
RUN npm ci --omit=dev --no-audit --no-fund \
 && npm cache clean --force
COPY tsconfig.json ./
COPY tools/build.mjs ./tools/build.mjs
COPY src ./src
RUN node tools/build.mjs

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DB_PATH=/data/dispatch.db
WORKDIR /app
COPY --from=build --chown=root:root /app/node_modules ./node_modules
COPY --chown=root:root package.json package-lock.json ./
COPY --chown=root:root bin ./bin
# The compiled server and CLI (bin/dispatch.js runs dist/ when there are no sources beside it).
COPY --from=build --chown=root:root /app/dist ./dist
COPY --chown=root:root docs ./docs
COPY --chown=root:root README.md ./README.md
COPY --chown=root:root deploy/healthcheck.mjs ./deploy/healthcheck.mjs
# The code belongs to root and is read-only for the server; only /data is its own.
RUN mkdir -p /data && chown node:node /data \
 && ln -s /app/bin/dispatch.js /usr/local/bin/dispatch
VOLUME ["/data"]
USER node
EXPOSE 8080
# Ready means: the database answers, migrations are applied and the server is not draining
# (docs/operations.md "Health and readiness"). Plain node: the slim image has no curl.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "/app/deploy/healthcheck.mjs"]
# SIGTERM drains in-flight requests and sockets, then exits (SHUTDOWN_TIMEOUT_MS, default 10 s):
# give `docker stop -t` more than that.
STOPSIGNAL SIGTERM
# Exec form: node is PID 1 and receives the signals itself (no shell in between).
CMD ["node", "dist/src/main.js"]
