#!/usr/bin/env bash
# `npm run demo`: build, start the payment-gateway simulator and the service against a local
# Postgres and Redis, walk one order of each flow through Try and Confirm — charged at Confirm, and
# held at Try (authorized, then captured) — (scripts/demo.mjs), then stop both.
#
#   DEMO_PORT            service port (default 3000)
#   DEMO_GATEWAY_PORT    simulator port (default 4000)
#   DEMO_DATABASE_URL    default postgres://postgres@127.0.0.1:5432/tcc_demo (created if absent)
#   DEMO_REDIS_URL       default redis://127.0.0.1:6379
#   DEMO_KEEP_RUNNING=1  leave the service and the simulator running afterwards
#   DEMO_BASE_URL        walk against an already running service; start nothing
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

export ADMIN_TOKEN="${ADMIN_TOKEN:-demo-admin-token}"

if [[ -n "${DEMO_BASE_URL:-}" ]]; then
  exec node scripts/demo.mjs
fi

PORT_API="${DEMO_PORT:-3000}"
PORT_GW="${DEMO_GATEWAY_PORT:-4000}"
DB_URL="${DEMO_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/tcc_demo}"
REDIS="${DEMO_REDIS_URL:-redis://127.0.0.1:6379}"
KEEP="${DEMO_KEEP_RUNNING:-0}"

if [[ -t 1 && -z "${NO_COLOR:-}" ]]; then B=$'\033[1m' R=$'\033[31m' N=$'\033[0m'; else B='' R='' N=''; fi
say() { printf '%s==> %s%s\n' "$B" "$*" "$N"; }
die() { printf '%sdemo: %s%s\n' "$R" "$*" "$N" >&2; exit 1; }

command -v node >/dev/null || die "node >= 22.12 is required (Node 24 LTS recommended)"
node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 12) ? 0 : 1)' \
  || die "node >= 22.12 is required (found $(node --version)); install Node 24 LTS"

# Is something already listening on 127.0.0.1:$1?
port_in_use() {
  node -e '
    const s = require("net").connect(Number(process.argv[1]), "127.0.0.1");
    s.on("connect", () => { s.destroy(); process.exit(0); });
    s.on("error", () => process.exit(1));
  ' "$1"
}
port_in_use "$PORT_API" && die "port $PORT_API is taken; set DEMO_PORT to a free port"
port_in_use "$PORT_GW" && die "port $PORT_GW is taken; set DEMO_GATEWAY_PORT to a free port"

if [[ ! -d node_modules ]]; then
  say "Installing dependencies (npm ci)"
  npm ci --no-audit --no-fund
fi

say "Building (npm run build)"
npm run build --silent

say "Preparing database ${DB_URL%%\?*}"
# Create the database if absent, via the service's own pg driver (no psql needed).
node --input-type=module - "$DB_URL" <<'EOF'
import pg from 'pg';
const target = new URL(process.argv[2]);
const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
if (!name) { console.error('DEMO_DATABASE_URL names no database'); process.exit(1); }
const admin = new URL(target);
admin.pathname = '/postgres';
const client = new pg.Client({ connectionString: admin.toString() });
try {
  await client.connect();
} catch (err) {
  console.error(`cannot reach Postgres at ${admin.host} (${err.message}); is it running?`);
  process.exit(1);
}
const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
if (found.rowCount === 0) {
  await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
  console.log(`    created database ${name}`);
} else {
  console.log(`    database ${name} exists`);
}
await client.end();
EOF

LOG_DIR="$(mktemp -d "${TMPDIR:-/tmp}/tcc-demo.XXXXXX")"
GW_PID=""
API_PID=""

stop() {
  local pid
  for pid in "$API_PID" "$GW_PID"; do
    [[ -n "$pid" ]] && kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "$API_PID" "$GW_PID"; do
    [[ -z "$pid" ]] && continue
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null || true
  done
}

on_exit() {
  local rc=$?
  if [[ "$KEEP" == "1" && $rc -eq 0 ]]; then
    return
  fi
  if [[ -n "$API_PID$GW_PID" ]]; then
    say "Stopping the service and the simulator"
    stop
    wait 2>/dev/null || true
  fi
  if [[ $rc -ne 0 ]]; then
    printf '\nLogs kept in %s\n' "$LOG_DIR" >&2
  else
    rm -rf "$LOG_DIR"
  fi
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

show_logs() {
  local f
  for f in "$LOG_DIR"/gateway.log "$LOG_DIR"/service.log; do
    [[ -s "$f" ]] || continue
    printf '\n--- last lines of %s ---\n' "$f" >&2
    tail -n 30 "$f" >&2
  done
}

# wait_healthy NAME URL PID: poll URL until 200; fail if the process dies or after 60 s.
wait_healthy() {
  local name=$1 url=$2 pid=$3
  for _ in $(seq 1 120); do
    if ! kill -0 "$pid" 2>/dev/null; then
      show_logs
      die "$name exited during start-up"
    fi
    if node -e "fetch(process.argv[1]).then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))" "$url"; then
      return 0
    fi
    sleep 0.5
  done
  show_logs
  die "$name did not become healthy at $url within 60 s"
}

say "Starting the payment-gateway simulator on :$PORT_GW"
env -u PORT GATEWAY_PORT="$PORT_GW" \
  node dist/gateway-simulator/main.js >"$LOG_DIR/gateway.log" 2>&1 &
GW_PID=$!
wait_healthy "the gateway simulator" "http://127.0.0.1:$PORT_GW/health" "$GW_PID"

say "Starting the service on :$PORT_API (ROLE=all, migrations run at start-up)"
PORT="$PORT_API" \
DATABASE_URL="$DB_URL" \
REDIS_URL="$REDIS" \
QUEUE_PREFIX="${DEMO_QUEUE_PREFIX:-tcc-demo}" \
ROLE=all \
PAYMENT_GATEWAY_URL="http://127.0.0.1:$PORT_GW" \
  node dist/main.js >"$LOG_DIR/service.log" 2>&1 &
API_PID=$!
wait_healthy "the service" "http://127.0.0.1:$PORT_API/health" "$API_PID"

if ! DEMO_BASE_URL="http://127.0.0.1:$PORT_API" node scripts/demo.mjs; then
  show_logs
  exit 1
fi

if [[ "$KEEP" == "1" ]]; then
  echo
  say "Still running (DEMO_KEEP_RUNNING=1)"
  echo "    API docs   http://127.0.0.1:$PORT_API/docs"
  echo "    metrics    http://127.0.0.1:$PORT_API/metrics"
  echo "    health     http://127.0.0.1:$PORT_API/health"
  echo "    gateway    http://127.0.0.1:$PORT_GW/health"
  echo "    admin      Authorization: Bearer $ADMIN_TOKEN"
  echo "    logs       $LOG_DIR/service.log, $LOG_DIR/gateway.log"
  echo "    stop with  kill $API_PID $GW_PID"
fi
