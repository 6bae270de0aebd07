#!/usr/bin/env node
// Walks one order of each flow through the TCC happy path against a running service and prints
// each step: seed a SKU -> Try (POST /orders) -> idempotent replay -> Confirm (charged at the
// gateway) -> the order's timeline; then an order whose payment is held at Try: Try with its
// payment (authorized with the stock) -> Confirm (captured) -> its timeline.
//
//   DEMO_BASE_URL   the service (default http://127.0.0.1:3000)
//   ADMIN_TOKEN     bearer token for /admin routes (default demo-admin-token)
//   DEMO_SKU        SKU to seed (default DEMO-MUG)
//   DEMO_WAIT_MS    how long to wait for GET /health to answer 200 first (default 60000)
//
// Exits non-zero with a message naming the step when the service answers unexpectedly.
// Used by `npm run demo` (scripts/demo.sh) and by the `demo` service in docker-compose.yml.

const BASE = (process.env.DEMO_BASE_URL || 'http://127.0.0.1:3000').replace(/\/+$/, '');
const ADMIN_TOKEN = process.env.ADMIN_TOKEN || 'demo-admin-token';
const SKU = process.env.DEMO_SKU || 'DEMO-MUG';
const WAIT_MS = Number(process.env.DEMO_WAIT_MS || 60000);
const ON_HAND = 10;
const QUANTITY = 2;
const PRICE_MINOR = 1250;
const CURRENCY = 'USD';

const color = process.stdout.isTTY && !process.env.NO_COLOR;
const paint = (code, s) => (color ? `\x1b[${code}m${s}\x1b[0m` : s);
const bold = (s) => paint('1', s);
const dim = (s) => paint('2', s);
const green = (s) => paint('32', s);
const red = (s) => paint('31', s);

class StepError extends Error {}

let stepNo = 0;
function step(title) {
  stepNo += 1;
  console.log(`\n${bold(`[${stepNo}] ${title}`)}`);
}

const money = (minor, currency) => `${(minor / 100).toFixed(2)} ${currency}`;

/** One HTTP call, printed as "-> METHOD path [headers] body" and "<- status". */
async function call(method, path, { body, headers = {}, admin = false, expect } = {}) {
  const h = { accept: 'application/json', ...headers };
  if (admin) h.authorization = `Bearer ${ADMIN_TOKEN}`;
  if (body !== undefined) h['content-type'] = 'application/json';
  const shown = Object.entries(headers).map(([k, v]) => `${k}: ${v}`);
  if (admin) shown.push('Authorization: Bearer ***');
  console.log(`    ${dim('->')} ${method} ${path}${shown.length ? dim(`  [${shown.join(', ')}]`) : ''}`);
  if (body !== undefined) console.log(`       ${dim(JSON.stringify(body))}`);

  let res;
  try {
    res = await fetch(BASE + path, {
      method,
      headers: h,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(15000),
    });
  } catch (err) {
    throw new StepError(`${method} ${path} failed: ${err?.cause?.message || err.message} (is the service up at ${BASE}?)`);
  }
  const text = await res.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  const ok = expect.includes(res.status);
  console.log(`    ${dim('<-')} ${(ok ? green : red)(`${res.status} ${res.statusText}`)}`);
  if (!ok) {
    throw new StepError(
      `${method} ${path} answered ${res.status}, expected ${expect.join(' or ')}:\n       ${text.slice(0, 2000)}`,
    );
  }
  return { status: res.status, json };
}

function show(fields) {
  for (const [k, v] of Object.entries(fields)) console.log(`       ${k.padEnd(22)} ${v}`);
}

function check(cond, message) {
  if (!cond) throw new StepError(message);
}

function showInventory(inv) {
  show({
    sku: inv.sku,
    name: inv.name,
    price: money(inv.priceMinor, inv.currency),
    onHand: inv.onHand,
    reserved: inv.reserved,
    available: inv.available,
  });
}

function showOrder(o) {
  show({
    id: o.id,
    status: o.status,
    items: o.items.map((i) => `${i.quantity} x ${i.sku} @ ${money(i.unitPriceMinor, o.currency)}`).join(', '),
    amount: money(o.amountMinor, o.currency),
    reservationExpiresAt: o.reservationExpiresAt,
    confirmAttempts: o.confirmAttempts,
    paymentId: o.paymentId,
    ...(o.payment
      ? {
          payment: o.payment.status,
          authorized: o.payment.authorizedMinor === null ? '-' : money(o.payment.authorizedMinor, o.currency),
          authorizationExpiresAt: o.payment.authorizationExpiresAt ?? '-',
          captured: money(o.payment.capturedMinor, o.currency),
        }
      : {}),
  });
}

function showTimeline(list) {
  check(Array.isArray(list) && list.length > 0, 'expected a non-empty timeline');
  for (const e of list) {
    const data = e.data && Object.keys(e.data).length ? dim(JSON.stringify(e.data)) : '';
    console.log(`       ${e.at}  ${String(e.type).padEnd(24)} ${data}`);
  }
}

/**
 * The second flow (API.md "Payment held at Try"): the Try carries the payment, the gateway
 * authorizes the amount while the stock is reserved, Confirm captures what is held.
 */
async function heldWalk(skuPath, baseReserved, onHandBefore) {
  const body = { customerId: 'demo-customer', items: [{ sku: SKU, quantity: 1 }], payment: { paymentToken: 'tok_demo_visa' } };
  let order;
  try {
    step('Try with the payment: reserve the stock and authorize the amount (held on the card, not taken)');
    const tried = await call('POST', '/orders', { headers: { 'Idempotency-Key': `demo-held-${Date.now().toString(36)}` }, body, expect: [201] });
    order = tried.json;
    showOrder(order);
    check(order.status === 'TRY_SUCCESS' && order.payment?.status === 'authorized', `expected TRY_SUCCESS with the payment authorized, got ${order.status} / ${order.payment?.status}`);

    step('Confirm: capture the amount already held, then commit the stock');
    const confirmed = await call('POST', `/orders/${encodeURIComponent(order.id)}/confirm`, { expect: [200] });
    order = confirmed.json;
    showOrder(order);
    check(order.status === 'CONFIRM_SUCCESS' && order.payment?.status === 'captured', `expected CONFIRM_SUCCESS, captured; got ${order.status} / ${order.payment?.status}`);
    check(order.payment.capturedMinor === PRICE_MINOR, `expected ${PRICE_MINOR} captured, got ${order.payment.capturedMinor}`);
  } catch (err) {
    if (order && order.status !== 'CONFIRM_SUCCESS') {
      await fetch(`${BASE}/orders/${encodeURIComponent(order.id)}/cancel`, { method: 'POST' }).catch(() => {});
    }
    throw err;
  }
  const inv = await call('GET', `/inventory/${skuPath}`, { expect: [200] });
  showInventory(inv.json);
  check(inv.json.onHand === onHandBefore - 1, `expected onHand ${onHandBefore - 1}, got ${inv.json.onHand}`);
  check(inv.json.reserved === baseReserved, `expected reserved ${baseReserved}, got ${inv.json.reserved}`);

  step("The held order's timeline (admin): the authorization, the capture, the payment's states");
  const events = await call('GET', `/admin/orders/${encodeURIComponent(order.id)}/events`, { admin: true, expect: [200] });
  showTimeline(events.json?.data ?? []);
  return { order, inventory: inv.json };
}

async function waitForHealth() {
  const deadline = Date.now() + WAIT_MS;
  let last = 'no answer';
  for (;;) {
    try {
      const res = await fetch(`${BASE}/health`, { signal: AbortSignal.timeout(3000) });
      if (res.ok) return;
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = err?.cause?.code || err.message;
    }
    if (Date.now() > deadline) throw new StepError(`${BASE}/health did not answer 200 within ${WAIT_MS} ms (last: ${last})`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function main() {
  console.log(bold(`TCC inventory reservation demo against ${BASE}`));
  await waitForHealth();

  const skuPath = encodeURIComponent(SKU);
  const idempotencyKey = `demo-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
  const orderBody = { customerId: 'demo-customer', items: [{ sku: SKU, quantity: QUANTITY }] };
  let order;

  step(`Seed the catalogue: ${SKU}, ${ON_HAND} on hand, ${money(PRICE_MINOR, CURRENCY)} each (admin)`);
  const seeded = await call('PUT', `/admin/inventory/${skuPath}`, {
    admin: true,
    body: { name: 'Demo mug', priceMinor: PRICE_MINOR, currency: CURRENCY, onHand: ON_HAND },
    expect: [200],
  });
  showInventory(seeded.json);
  check(seeded.json.onHand === ON_HAND, `expected onHand ${ON_HAND}, got ${seeded.json.onHand}`);
  // Other orders (say, from an interrupted earlier run) may still hold some of this SKU.
  const baseReserved = seeded.json.reserved;

  step('Read the stock (public)');
  const inv0 = await call('GET', `/inventory/${skuPath}`, { expect: [200] });
  showInventory(inv0.json);
  check(inv0.json.available === ON_HAND - baseReserved, `expected available ${ON_HAND - baseReserved}, got ${inv0.json.available}`);

  try {
    step(`Try: place an order for ${QUANTITY} mugs (reserves stock)`);
    const tried = await call('POST', '/orders', {
      headers: { 'Idempotency-Key': idempotencyKey },
      body: orderBody,
      expect: [201],
    });
    order = tried.json;
    showOrder(order);
    check(order.status === 'TRY_SUCCESS', `expected status TRY_SUCCESS, got ${order.status}`);
    check(order.amountMinor === QUANTITY * PRICE_MINOR, `expected amountMinor ${QUANTITY * PRICE_MINOR}, got ${order.amountMinor}`);

    step('Replay the same request with the same Idempotency-Key (a client retry)');
    const replay = await call('POST', '/orders', {
      headers: { 'Idempotency-Key': idempotencyKey },
      body: orderBody,
      expect: [200, 201],
    });
    show({ id: replay.json.id, status: replay.json.status, 'same order': replay.json.id === order.id ? 'yes' : 'NO' });
    check(replay.json.id === order.id, `replay returned another order (${replay.json.id}, first was ${order.id})`);

    step('Read the stock: the order holds its mugs, the replay reserved nothing more');
    const inv1 = await call('GET', `/inventory/${skuPath}`, { expect: [200] });
    showInventory(inv1.json);
    check(inv1.json.reserved === baseReserved + QUANTITY, `expected reserved ${baseReserved + QUANTITY}, got ${inv1.json.reserved}`);
    check(inv1.json.onHand === ON_HAND, `expected onHand ${ON_HAND}, got ${inv1.json.onHand}`);

    step('Confirm: charge the payment at the gateway, then commit the stock');
    const confirmed = await call('POST', `/orders/${encodeURIComponent(order.id)}/confirm`, {
      body: { paymentToken: 'tok_demo_visa' },
      expect: [200],
    });
    order = confirmed.json;
    showOrder(order);
    check(order.status === 'CONFIRM_SUCCESS', `expected status CONFIRM_SUCCESS, got ${order.status}`);
  } catch (err) {
    // Leave nothing held behind: release the reservation of a half-walked order.
    if (order && order.status !== 'CONFIRM_SUCCESS') {
      await fetch(`${BASE}/orders/${encodeURIComponent(order.id)}/cancel`, { method: 'POST' }).catch(() => {});
    }
    throw err;
  }

  step('Read the stock: the sale left the shelf');
  const inv2 = await call('GET', `/inventory/${skuPath}`, { expect: [200] });
  showInventory(inv2.json);
  check(inv2.json.onHand === ON_HAND - QUANTITY, `expected onHand ${ON_HAND - QUANTITY}, got ${inv2.json.onHand}`);
  check(inv2.json.reserved === baseReserved, `expected reserved ${baseReserved}, got ${inv2.json.reserved}`);

  step("The order's timeline (admin)");
  const events = await call('GET', `/admin/orders/${encodeURIComponent(order.id)}/events`, { admin: true, expect: [200] });
  showTimeline(events.json?.data ?? []);

  const held = await heldWalk(skuPath, baseReserved, inv2.json.onHand);

  console.log(`\n${green(bold('Demo finished: orders'))} ${order.id} ${green(bold('(charged at Confirm) and'))} ${held.order.id} ` +
    `${green(bold('(held at Try, captured at Confirm) are CONFIRM_SUCCESS'))}, ${SKU} onHand ${held.inventory.onHand}, reserved ${held.inventory.reserved}.`);
}

main().catch((err) => {
  const msg = err instanceof StepError ? err.message : err?.stack || String(err);
  console.error(`\n${red(bold('DEMO FAILED'))}${stepNo ? ` at step ${stepNo}` : ''}: ${msg}`);
  process.exit(1);
});
