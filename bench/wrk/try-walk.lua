-- POST /orders with a new Idempotency-Key each time, one line of BENCH_QUANTITY, the SKUs walked in
-- turn instead of picked at random: thread t of BENCH_THREADS takes BENCH_SKU_START + t, then every
-- BENCH_THREADS-th after it (BENCH_SKU_PREFIX + 1 + index mod BENCH_SKUS). So each Try meets its
-- SKU's stock as it was seeded (the spread3 workload: a seeded share of the lines splits across
-- locations). done() prints the next unused index as "next".
local prefix = os.getenv("BENCH_SKU_PREFIX") or "SPREAD3-"
local skus = tonumber(os.getenv("BENCH_SKUS") or "1")
local start = tonumber(os.getenv("BENCH_SKU_START") or "0")
local nthreads = tonumber(os.getenv("BENCH_THREADS") or "2")
local quantity = os.getenv("BENCH_QUANTITY") or "1"
local run = os.getenv("BENCH_RUN") or "run"
local threads = {}
n, ok, conflict, other = 0, 0, 0, 0
tid = 0

function setup(thread)
  thread:set("tid", #threads + 1)
  table.insert(threads, thread)
end

function request()
  n = n + 1
  local sku = prefix .. (1 + (start + (n - 1) * nthreads + tid - 1) % skus)
  local body = '{"customerId":"c' .. (n % 997) .. '","items":[{"sku":"' .. sku .. '","quantity":' .. quantity .. '}]}'
  return wrk.format("POST", "/orders", { ["Content-Type"] = "application/json", ["Idempotency-Key"] = run .. "-" .. tid .. "-" .. n }, body)
end

function response(status, headers, body)
  if status == 201 or status == 200 then ok = ok + 1 elseif status == 409 then conflict = conflict + 1 else other = other + 1 end
end

function done(summary, latency, requests)
  local o, c, x, most = 0, 0, 0, 0
  for _, t in ipairs(threads) do
    o = o + t:get("ok"); c = c + t:get("conflict"); x = x + t:get("other")
    if t:get("n") > most then most = t:get("n") end
  end
  io.write(string.format('BENCH {"requests":%d,"durationUs":%d,"ok":%d,"conflict":%d,"other":%d,"socketErrors":%d,"p50":%f,"p99":%f,"next":%d}\n',
    summary.requests, summary.duration, o, c, x,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, start + most * nthreads))
end
