-- The gateway's own calls of an order authorized at Try, straight at the simulator: an
-- authorization (POST /payments, capture: false), then the capture of it. Each connection captures
-- a payment as soon as one of this thread's authorizations has answered, else authorizes a new
-- one. A pair is a capture answered 200: the gateway's share of the ceiling of Try with
-- authorization + Confirm.
local run = os.getenv("BENCH_RUN") or "run"
local threads = {}
n, pairs_done, other = 0, 0, 0
pending = {}
tid = 0

function setup(thread)
  thread:set("tid", #threads + 1)
  table.insert(threads, thread)
end

function request()
  local id = table.remove(pending)
  if id then
    return wrk.format("POST", "/payments/" .. id .. "/capture", { ["Content-Type"] = "application/json", ["Idempotency-Key"] = "cap-" .. id }, '{"amountMinor":1000}')
  end
  n = n + 1
  local body = '{"amountMinor":1000,"currency":"USD","reference":"gw-' .. run .. '-' .. tid .. '-' .. n .. '","paymentToken":"tok_bench","capture":false}'
  return wrk.format("POST", "/payments", { ["Content-Type"] = "application/json", ["Idempotency-Key"] = run .. "-" .. tid .. "-" .. n }, body)
end

function response(status, headers, body)
  if status == 201 then
    local id = body:match('"id"%s*:%s*"([%w_]+)"')
    if id then table.insert(pending, id) end
  elseif status == 200 then
    pairs_done = pairs_done + 1
  else
    other = other + 1
  end
end

function done(summary, latency, requests)
  local p, x = 0, 0
  for _, th in ipairs(threads) do p = p + th:get("pairs_done"); x = x + th:get("other") end
  io.write(string.format('BENCH {"requests":%d,"durationUs":%d,"ok":%d,"conflict":%d,"other":%d,"socketErrors":%d,"p50":%f,"p99":%f}\n',
    summary.requests, summary.duration, p, 0, x,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000))
end
