# syntax=docker/dockerfile:1
# One image for the reservation service (node dist/main.js, ROLE=api|worker|all)
# and the payment-gateway simulator (node dist/gateway-simulator/main.js).

# ---- build: full dependency tree, compile TypeScript (src + migrations) ----
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json tsconfig.migrations.json nest-cli.json ./
COPY src ./src
COPY migrations ./migrations
RUN npm run build

# ---- runtime: production dependencies + compiled output only ----
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY scripts ./scripts
USER node
# No image-level HEALTHCHECK: ROLE=worker serves no HTTP. docker-compose.yml defines
# per-service health checks (GET /health on the api and the simulator).
EXPOSE 3000 4000
CMD ["node", "dist/main.js"]
