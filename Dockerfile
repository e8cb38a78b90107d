# syntax=docker/dockerfile:1.7
# Multi-stage: build native deps and the Prisma clients on a full image, run on slim as non-root.
FROM node:24-bookworm AS build
WORKDIR /app
ENV DATABASE_URL=file:/tmp/build.db
COPY package.json package-lock.json .npmrc ./
COPY scripts ./scripts
COPY prisma ./prisma
COPY prisma.config.ts ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY bin ./bin
COPY skills ./skills
COPY deploy ./deploy
RUN npm prune --omit=dev

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    DATABASE_URL=file:/data/vigil.db \
    PORT=3000
WORKDIR /app
RUN groupadd --system vigil && useradd --system --gid vigil --home /app vigil \
 && mkdir -p /data && chown vigil:vigil /data
COPY --from=build --chown=vigil:vigil /app /app
USER vigil
EXPOSE 3000
VOLUME ["/data"]
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/livez').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"
CMD ["node", "--import", "tsx", "src/main.ts"]
