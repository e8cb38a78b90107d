# syntax=docker/dockerfile:1.7
# Multi-stage: install (native better-sqlite3, both Prisma clients) and compile the TypeScript once on
# the full image; run plain JavaScript (`node dist/main.js`, no tsx) on slim as a non-root user.
#
# Base images: the official Node 24 (LTS) Debian bookworm images, by tag. To pin them by digest, resolve
# the tag where a registry is reachable (`docker buildx imagetools inspect node:24-bookworm-slim`) and
# append it: `FROM node:24-bookworm-slim@sha256:<index digest>` (test/deploy/dockerfile.test.ts accepts
# either form, never `latest`).
#
# What the image ships: the bot (`node dist/main.js`) and the operator CLI `vigil` (start, migrate,
# audit verify|head, export, queue, doctor: `docker run … vigil doctor`). `npm run demo`, `eval` and
# `bench` are development tools that import test/ and harness/, which the image does not contain.
FROM node:24-bookworm AS build
WORKDIR /app
# `prisma generate` (postinstall) needs a URL of the provider even though it never connects.
ENV DATABASE_URL=file:/tmp/build.db \
    CHECKPOINT_DISABLE=1
COPY package.json package-lock.json .npmrc ./
COPY scripts ./scripts
COPY prisma ./prisma
COPY prisma.config.ts ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# Compile src/ to dist/ (tsconfig.build.json), then drop the dev dependencies (typescript, tsx, vitest…):
# the runtime stage gets node_modules with production dependencies only. npm leaves node_modules/.prisma
# (the generated clients) in place.
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    DATABASE_URL=file:/data/vigil.db \
    PORT=3000
WORKDIR /app
# uid/gid 10001 match deploy/deployment.yaml's runAsUser/runAsGroup. The application files stay owned by
# root (world-readable): the process can write only /data (and /tmp).
RUN groupadd --system --gid 10001 vigil \
 && useradd --system --uid 10001 --gid vigil --home-dir /app --no-create-home --shell /usr/sbin/nologin vigil \
 && mkdir -p /data \
 && chown vigil:vigil /data \
 && ln -s /app/bin/vigil.mjs /usr/local/bin/vigil
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# Read at run time from the package root: migrations applied at start (src/store/migrate.ts), the
# default skills directory (VIGIL_SKILLS_DIR=skills), the example policy `vigil doctor` compares with,
# the `vigil` bin, and the Prisma CLI config for operators' `npx prisma migrate status`.
COPY prisma ./prisma
COPY prisma.config.ts ./
COPY skills ./skills
COPY deploy ./deploy
COPY bin ./bin
USER vigil
EXPOSE 3000
VOLUME ["/data"]
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/livez').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"]
# Node is PID 1 (exec form, no shell): SIGTERM reaches src/main.ts, which marks /readyz stopping, drains
# the running investigations, closes the servers and the database, and exits 0.
STOPSIGNAL SIGTERM
CMD ["node", "dist/main.js"]
