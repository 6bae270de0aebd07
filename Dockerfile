# syntax=docker/dockerfile:1
# One image for the reservation service (node dist/main.js, ROLE=api|worker|all), its migrations
# and SQL functions (node dist/database/migrate-cli.js) and the payment-gateway simulator
# (node dist/gateway-simulator/main.js). The benchmark (bench/) is not part of it.

# ---- build: full dependency tree, compile TypeScript (src + migrations) ----
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json tsconfig.migrations.json nest-cli.json ./
COPY src ./src
COPY migrations ./migrations
COPY scripts ./scripts
RUN npm run build

# ---- runtime: production dependencies + compiled output only ----
FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY scripts ./scripts
# Files stay root-owned: the service only reads them.
USER node
# No image-level HEALTHCHECK: the port depends on the role (an api answers on PORT, a worker only
# on OPS_PORT), so docker-compose.yml defines one per service (GET /health/ready; /health on the
# simulator).
EXPOSE 3000 4000
CMD ["node", "dist/main.js"]
