-- Try, then Confirm the order it made: each connection confirms an order as soon as one of this
-- thread's Trys has answered, else starts a new Try. A pair is a Confirm answered 200. With
-- BENCH_HOLD=1 every Try holds its payment (authorized at Try, captured at Confirm), and Confirm
-- sends no token.
local prefix = os.getenv("BENCH_SKU_PREFIX") or "SPREAD-"
local skus = tonumber(os.getenv("BENCH_SKUS") or "1")
local run = os.getenv("BENCH_RUN") or "run"
local hold = os.getenv("BENCH_HOLD") == "1"
local payment = hold and ',"payment":{"paymentToken":"tok_bench"}' or ""
local confirmBody = hold and '{}' or '{"paymentToken":"tok_bench"}'
local threads = {}
n, tries, pairs_done, other = 0, 0, 0, 0
pending = {}
tid = 0

function setup(thread)
  thread:set("tid", #threads + 1)
  table.insert(threads, thread)
end

function request()
  local id = table.remove(pending)
  if id then
    return wrk.format("POST", "/orders/" .. id .. "/confirm", { ["Content-Type"] = "application/json" }, confirmBody)
  end
  n = n + 1
  local body = '{"customerId":"c' .. (n % 997) .. '","items":[{"sku":"' .. prefix .. math.random(1, skus) .. '","quantity":1}]' .. payment .. '}'
  return wrk.format("POST", "/orders", { ["Content-Type"] = "application/json", ["Idempotency-Key"] = run .. "-" .. tid .. "-" .. n }, body)
end

function response(status, headers, body)
  if status == 201 then
    tries = tries + 1
    local id = body:match('"id"%s*:%s*"([%x%-]+)"')
    if id then table.insert(pending, id) end
  elseif status == 200 then
    pairs_done = pairs_done + 1
  else
    other = other + 1
  end
end

function done(summary, latency, requests)
  local t, p, x = 0, 0, 0
  for _, th in ipairs(threads) do t = t + th:get("tries"); p = p + th:get("pairs_done"); x = x + th:get("other") end
  io.write(string.format('BENCH {"requests":%d,"durationUs":%d,"ok":%d,"conflict":%d,"other":%d,"socketErrors":%d,"p50":%f,"p99":%f,"tries":%d}\n',
    summary.requests, summary.duration, p, 0, x,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, t))
end
