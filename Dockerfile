# svc responder image (docs/deploy.md, "Containers").
# `npm start` runs the TypeScript sources through tsx, a runtime dependency: the image holds the
# production dependencies and the sources, no build step and no dev dependencies.

FROM node:20-slim AS deps
WORKDIR /app
# better-sqlite3 downloads a prebuilt binary and compiles only when none fits the platform;
# sodium-native and usearch ship theirs in the package. The toolchain stays in this stage.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:20-slim
ENV NODE_ENV=production \
    PORT=8080 \
    SVC_HOST=0.0.0.0 \
    SVC_DATA=/var/lib/svc
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json tsconfig.json ./
COPY bin ./bin
COPY src ./src
RUN mkdir -p /var/lib/svc && chown node:node /var/lib/svc
USER node
VOLUME ["/var/lib/svc"]
EXPOSE 8080
# SIGTERM drains: in-flight requests finish, then the store closes (up to SVC_TIMEOUT_SECS + 2 s).
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "--import", "tsx", "src/cli.ts", "serve"]
