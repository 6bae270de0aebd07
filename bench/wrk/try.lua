-- POST /orders with a new Idempotency-Key each time. BENCH_SKU_PREFIX + a number from 1 to
-- BENCH_SKUS picks the SKU (BENCH_SKUS=1: one hot SKU). Statuses are tallied per thread and
-- printed as one JSON line by done().
local prefix = os.getenv("BENCH_SKU_PREFIX") or "SPREAD-"
local skus = tonumber(os.getenv("BENCH_SKUS") or "1")
local run = os.getenv("BENCH_RUN") or "run"
local threads = {}
n, ok, conflict, other = 0, 0, 0, 0
tid = 0

function setup(thread)
  thread:set("tid", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  math.randomseed(os.time() * 1000 + tid)
end

function request()
  n = n + 1
  local sku = prefix .. math.random(1, skus)
  local body = '{"customerId":"c' .. (n % 997) .. '","items":[{"sku":"' .. sku .. '","quantity":1}]}'
  return wrk.format("POST", "/orders", { ["Content-Type"] = "application/json", ["Idempotency-Key"] = run .. "-" .. tid .. "-" .. n }, body)
end

function response(status, headers, body)
  if status == 201 or status == 200 then ok = ok + 1 elseif status == 409 then conflict = conflict + 1 else other = other + 1 end
end

function done(summary, latency, requests)
  local o, c, x = 0, 0, 0
  for _, t in ipairs(threads) do o = o + t:get("ok"); c = c + t:get("conflict"); x = x + t:get("other") end
  io.write(string.format('BENCH {"requests":%d,"durationUs":%d,"ok":%d,"conflict":%d,"other":%d,"socketErrors":%d,"p50":%f,"p99":%f}\n',
    summary.requests, summary.duration, o, c, x,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000))
end
