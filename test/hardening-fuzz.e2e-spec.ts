import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { ADMIN_TOKEN } from './support/env.js';
import { useHarness } from './support/harness.js';
import { fetchFromAddress } from './support/http.js';
import { uniqueSku } from './support/orders.js';
import { CONTRACT_CODES, fingerprint } from './support/problem.js';
import { rawRequest } from './support/raw-http.js';

/**
 * Property-based fuzzing of every route of the contract (API.md): random malformed bodies,
 * headers, queries and path segments, with and without the bearer token. Every request carries at
 * least one defect the route must refuse (read-only routes may also answer 2xx), so the properties
 * are: never a 5xx; every 4xx is problem+json with a contract code; X-Request-Id is honoured or
 * replaced; and the database is exactly as it was after each request.
 *
 * Seeded and bounded so `npm test` stays short; FUZZ_SEED and FUZZ_RUNS run it longer or elsewhere.
 */
const h = useHarness({ RESERVATION_TTL_MS: '600000' });
const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const RUNS = Number(process.env.FUZZ_RUNS ?? 400);

const fixture = { sku: '', held: '', branch: '', confirmed: '' };

beforeAll(async () => {
  fixture.sku = uniqueSku('FZ');
  expect((await h.api.putSku(fixture.sku, 100, 700)).status).toBe(200);
  const held = await h.api.order(randomUUID(), { customerId: 'c-fuzz', items: [{ sku: fixture.sku, quantity: 3 }] });
  const paid = await h.api.order(randomUUID(), { customerId: 'c-fuzz', items: [{ sku: fixture.sku, quantity: 1 }] });
  expect([held.status, paid.status]).toEqual([201, 201]);
  expect((await h.api.post(`/orders/${paid.body.id}/confirm`, {})).status).toBe(200);
  fixture.held = held.body.id;
  fixture.confirmed = paid.body.id;
  fixture.branch = `fz-${randomUUID()}`;
  expect((await h.api.admin('POST', '/tcc/inventory/try', { transactionId: fixture.branch, items: [{ sku: fixture.sku, quantity: 2 }] })).status).toBe(200);
});

// ---- what a well-shaped body of each route looks like (before a defect is put in) -------------

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
const text = fc.string({ minLength: 1, maxLength: 20, unit: 'grapheme-ascii' });
const skuText = fc.stringMatching(/^[A-Za-z0-9_.:-]{1,12}$/);
const lines = fc.array(fc.record({ sku: fc.oneof(skuText, fc.constant('SKU')), quantity: fc.integer({ min: 1, max: 5 }) }), { minLength: 1, maxLength: 3 });
const lines$ = lines.map((ls) => ls.map((l) => ({ ...l, sku: l.sku === 'SKU' ? fixture.sku : l.sku })));
const txId = fc.oneof(fc.constant('BRANCH'), fc.stringMatching(/^[A-Za-z0-9_.:-]{1,20}$/));
const tx$ = txId.map((t) => (t === 'BRANCH' ? fixture.branch : t));

const BODIES = {
  order: fc.record({ customerId: text, items: lines$ }),
  confirm: fc.record({ paymentToken: text }, { requiredKeys: [] }),
  reason: fc.record({ reason: text }),
  extend: fc.record({ extendByMs: fc.integer({ min: 1000, max: 3_600_000 }) }),
  upsert: fc.record({ name: text, priceMinor: fc.integer({ min: 0, max: 10_000 }), currency: fc.constantFrom('USD', 'EUR'), onHand: fc.integer({ min: 0, max: 500 }) }, { requiredKeys: ['priceMinor', 'currency', 'onHand'] }),
  tccTry: fc.record({ transactionId: tx$, items: lines$, timeoutMs: fc.integer({ min: 1000, max: 60_000 }) }, { requiredKeys: ['transactionId', 'items'] }),
  tccPhase: fc.record({ transactionId: tx$ }),
  bulk: fc.record({
    filter: fc.record({ status: fc.constantFrom('TRY_SUCCESS', 'CONFIRM_PENDING'), customerId: fc.constantFrom('c-fuzz', 'other'), sku: fc.constantFrom('SKU') }, { requiredKeys: [] }),
    reason: text,
    dryRun: fc.boolean(),
  }),
  reconcile: fc.record({ sinceMinutes: fc.integer({ min: 1, max: 43_200 }) }, { requiredKeys: [] }),
  webhook: fc.record({ url: fc.constantFrom('http://127.0.0.1:9/hook', 'https://example.test/h'), events: fc.constant(['order.reserved']), secret: fc.constant(`whsec_${Buffer.alloc(32, 7).toString('base64')}`) }),
} satisfies Record<string, fc.Arbitrary<Record<string, unknown>>>;
type BodyKind = keyof typeof BODIES;

/** Fields a schema requires: removing one is a defect. */
const REQUIRED: Partial<Record<BodyKind, string[]>> = {
  order: ['customerId', 'items'],
  reason: ['reason'],
  extend: ['extendByMs'],
  upsert: ['priceMinor', 'currency', 'onHand'],
  tccTry: ['transactionId', 'items'],
  tccPhase: ['transactionId'],
  bulk: ['filter', 'reason', 'dryRun'],
  webhook: ['url', 'events', 'secret'],
};

// ---- the routes ---------------------------------------------------------------------------

type Param = 'order' | 'sku' | 'name';
interface Route {
  method: string;
  path: (segment: string) => string;
  param?: Param;
  admin: boolean;
  /** Answers 2xx to a request without a defect and changes nothing doing so. */
  readOnly: boolean;
  body?: BodyKind;
  /** PUT create-or-replace: any well-formed name in the path is a target, so it needs a body defect. */
  upsert?: boolean;
  query?: boolean;
}

const R = (method: string, path: (s: string) => string, o: Partial<Route> = {}): Route => ({ method, path, admin: false, readOnly: method === 'GET', ...o });
const ROUTES: Route[] = [
  R('POST', () => '/orders', { body: 'order' }),
  R('GET', (s) => `/orders/${s}`, { param: 'order' }),
  R('POST', (s) => `/orders/${s}/confirm`, { param: 'order', body: 'confirm' }),
  R('POST', (s) => `/orders/${s}/cancel`, { param: 'order' }),
  R('POST', (s) => `/orders/${s}/extend`, { param: 'order', body: 'extend' }),
  R('GET', (s) => `/inventory/${s}`, { param: 'sku' }),
  R('PUT', (s) => `/admin/inventory/${s}`, { param: 'sku', admin: true, body: 'upsert', upsert: true }),
  R('GET', () => '/admin/orders', { admin: true, query: true }),
  R('GET', (s) => `/admin/orders/${s}`, { param: 'order', admin: true }),
  R('GET', (s) => `/admin/orders/${s}/events`, { param: 'order', admin: true }),
  R('POST', (s) => `/admin/orders/${s}/force-confirm`, { param: 'order', admin: true, body: 'reason' }),
  R('POST', (s) => `/admin/orders/${s}/force-cancel`, { param: 'order', admin: true, body: 'reason' }),
  R('POST', (s) => `/admin/orders/${s}/retry-now`, { param: 'order', admin: true }),
  R('POST', (s) => `/admin/orders/${s}/acknowledge`, { param: 'order', admin: true, body: 'reason' }),
  R('POST', () => '/admin/orders/bulk-cancel', { admin: true, body: 'bulk' }),
  R('GET', () => '/admin/reconciliation', { admin: true, query: true }),
  R('POST', () => '/admin/reconciliation', { admin: true, body: 'reconcile' }),
  R('GET', () => '/admin/participant/transactions', { admin: true, query: true }),
  R('PUT', (s) => `/admin/webhooks/${s}`, { param: 'name', admin: true, body: 'webhook', upsert: true }),
  R('GET', () => '/admin/webhooks', { admin: true }),
  R('DELETE', (s) => `/admin/webhooks/${s}`, { param: 'name', admin: true }),
  R('GET', (s) => `/admin/webhooks/${s}/deliveries`, { param: 'name', admin: true, query: true }),
  R('POST', (s) => `/admin/webhooks/${s}/deliveries/${randomUUID()}/retry`, { param: 'name', admin: true }),
  R('POST', () => '/tcc/inventory/try', { admin: true, body: 'tccTry' }),
  R('POST', () => '/tcc/inventory/confirm', { admin: true, body: 'tccPhase' }),
  R('POST', () => '/tcc/inventory/cancel', { admin: true, body: 'tccPhase' }),
  R('GET', () => '/admin/queues', { admin: true }),
  R('GET', () => '/admin/queues/api/queues', { admin: true, query: true }),
  R('GET', () => '/console'),
  R('GET', (s) => `/console/orders/${s}`, { param: 'order' }),
  R('GET', () => '/console/inventory', { query: true }),
  R('GET', () => '/docs'),
  R('GET', () => '/health'),
  R('GET', () => '/health/live'),
  R('GET', () => '/health/ready'),
  R('GET', () => '/metrics'),
  R('GET', () => '/docs-json'),
];

// ---- defects ------------------------------------------------------------------------------

/** A segment that cannot name anything: bad percent-encoding, a wrong shape, or a traversal. */
const badSegment = fc.oneof(
  fc.constantFrom('%ff', '%00%ff', '%c0%af', '%', '%zz', '%e2%82', '..%2F..%2Fetc', '%2e%2e', 'a%00b', 'x'.repeat(600)),
  fc.string({ minLength: 1, maxLength: 12, unit: 'grapheme' }).map((s) => encodeURIComponent(`!${s}`)),
  fc.uint8Array({ minLength: 1, maxLength: 6 }).map((b) => [...b].map((x) => `%${x.toString(16).padStart(2, '0')}`).join('') + '%ff'),
);
/** A well-formed segment that names nothing that exists. */
const absentSegment: Record<Param, fc.Arbitrary<string>> = {
  order: fc.uuid(),
  sku: skuText.map((s) => `FZ-NONE-${s}`),
  name: skuText.map((s) => `fz-none-${s}`),
};

type Defect =
  | { kind: 'unknownKey'; key: string; deep: boolean }
  | { kind: 'wrongType'; value: Json }
  | { kind: 'missing'; which: number }
  | { kind: 'arrayLine' }
  | { kind: 'notAnObject'; value: Json }
  | { kind: 'unstorable'; value: string; inKey: boolean }
  | { kind: 'tooDeep'; depth: number; arrays: boolean }
  | { kind: 'notJson'; text: string }
  | { kind: 'tooLarge'; bytes: number };

const schemaDefect: fc.Arbitrary<Defect> = fc.oneof(
  fc.record({ kind: fc.constant('unknownKey' as const), key: fc.oneof(fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'isAdmin'), fc.stringMatching(/^[a-z]{1,8}$/).map((k) => `x_${k}`)), deep: fc.boolean() }),
  fc.record({ kind: fc.constant('wrongType' as const), value: fc.constantFrom<Json>(null, true, [], {}, 1.5, -1, 1e21, '1', '', 'x'.repeat(600)) }),
  fc.record({ kind: fc.constant('missing' as const), which: fc.nat() }),
  fc.constant({ kind: 'arrayLine' as const }),
  fc.record({ kind: fc.constant('notAnObject' as const), value: fc.constantFrom<Json>([], [{}], 'body', 42, true, null) }),
);
const parserDefect: fc.Arbitrary<Defect> = fc.oneof(
  fc.record({ kind: fc.constant('unstorable' as const), value: fc.constantFrom('\u0000', 'a\u0000', '\ud800', 'x\udfff', '\udc00\ud800'), inKey: fc.boolean() }),
  fc.record({ kind: fc.constant('tooDeep' as const), depth: fc.integer({ min: 33, max: 5000 }), arrays: fc.boolean() }),
  fc.record({ kind: fc.constant('notJson' as const), text: fc.oneof(fc.constantFrom('{', '{"a":', '[1,]', "{'a':1}", 'NaN', 'undefined', '{"a":1}}', '\u0000'), fc.string({ minLength: 1, maxLength: 40 })) }),
  fc.record({ kind: fc.constant('tooLarge' as const), bytes: fc.integer({ min: 64 * 1024 + 1, max: 200 * 1024 }) }),
);

const typeOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/** The body as JSON text with `member` (raw `"key":value` text) added as the last member of `target`. */
function mark(body: Record<string, Json>, member: string, target: Record<string, Json> = body): string {
  target['\u0001MARK'] = 1;
  const text = JSON.stringify(body).replace('"\\u0001MARK":1', member);
  delete target['\u0001MARK'];
  return text;
}

/** Puts one defect into a well-shaped body; returns the raw text to send. */
function withDefect(kind: BodyKind | undefined, body: Record<string, Json>, d: Defect): string {
  const copy = JSON.parse(JSON.stringify(body)) as Record<string, Json>;
  const keys = Object.keys(copy);
  const nested = (): Record<string, Json> => {
    const line = Array.isArray(copy.items) && copy.items.length ? copy.items[0] : copy.filter;
    return line && typeof line === 'object' && !Array.isArray(line) ? (line as Record<string, Json>) : copy;
  };
  switch (d.kind) {
    case 'unknownKey':
      // Assigning "__proto__" would set the prototype, not a key: the member is written as text.
      return mark(copy, `${JSON.stringify(d.key)}:{"polluted":true}`, d.deep ? nested() : copy);
    case 'wrongType': {
      // Every field of every schema has one JSON type: a value of another type is always a defect.
      const key = keys[0];
      if (!key) return JSON.stringify({ paymentToken: 42, sinceMinutes: 'x' });
      copy[key] = typeOf(d.value) === typeOf(copy[key]) ? (typeOf(copy[key]) === 'string' ? 7 : 'x') : d.value;
      return JSON.stringify(copy);
    }
    case 'missing': {
      const required = (kind && REQUIRED[kind]) ?? [];
      if (!required.length) return JSON.stringify({ ...copy, [`x_missing`]: 1 });
      delete copy[required[d.which % required.length]];
      return JSON.stringify(copy);
    }
    case 'arrayLine':
      if (Array.isArray(copy.items)) copy.items = [[], ...copy.items];
      else copy[keys[0] ?? 'x_line'] = [[]];
      return JSON.stringify(copy);
    case 'notAnObject':
      return JSON.stringify(d.value);
    case 'unstorable': {
      // A repeated key: the last one wins, so the first field of the body carries the bad string.
      const where = d.inKey ? `{${JSON.stringify(d.value)}:1}` : JSON.stringify(d.value);
      return mark(copy, `${JSON.stringify(keys[0] ?? 'x_bad')}:${where}`);
    }
    case 'tooDeep': {
      const open = d.arrays ? '['.repeat(d.depth) : '{"a":'.repeat(d.depth);
      const close = d.arrays ? ']'.repeat(d.depth) : '1' + '}'.repeat(d.depth);
      return mark(copy, `${JSON.stringify(keys[0] ?? 'x_deep')}:${open}${close}`);
    }
    case 'notJson': {
      if (d.text.trim() === '') return `{${d.text}`; // blank is "no body", which some routes accept
      try {
        JSON.parse(d.text);
        return `{${d.text}`;
      } catch {
        return d.text;
      }
    }
    case 'tooLarge':
      return JSON.stringify({ ...copy, [keys[0] ?? 'x_big']: 'x'.repeat(d.bytes) });
  }
}

// ---- one fuzzed request -------------------------------------------------------------------

interface Plan {
  route: Route;
  /** How the request is broken: in the path, the body, the token, the Idempotency-Key, or the method. */
  how: 'path' | 'schema' | 'parser' | 'auth' | 'key' | 'method' | 'none';
  segment: string;
  bodyText?: string;
  query: string;
  headers: Record<string, string>;
}

const asciiHeader = fc.string({ maxLength: 140, unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) });
const queryPart = fc.array(
  fc.tuple(
    fc.constantFrom('status', 'limit', 'cursor', 'needsAttention', 'olderThanMinutes', 'customerId', 'sku', 'sinceMinutes', '__proto__', 'constructor', 'x', 'status[]'),
    fc.oneof(fc.constantFrom('', '0', '1', '-1', '1001', 'NOPE', 'TRY_SUCCESS', 'true', 'maybe', '1e3', '%00', '%ff', 'a.b.c', '43201', '%E2%80%AE'), fc.string({ maxLength: 12 }).map(encodeURIComponent)),
  ),
  { maxLength: 4 },
).map((pairs) => (pairs.length ? `?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${v}`).join('&')}` : ''));

const planArb: fc.Arbitrary<Plan> = fc
  .record({
    route: fc.constantFrom(...ROUTES),
    how: fc.constantFrom('path', 'schema', 'parser', 'auth', 'key', 'method', 'none'),
    bad: badSegment,
    absent: fc.record(absentSegment),
    existing: fc.boolean(),
    schema: schemaDefect,
    parser: parserDefect,
    bodies: fc.record(BODIES),
    query: queryPart,
    requestId: fc.option(asciiHeader, { nil: undefined }),
    contentType: fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', ''),
    token: fc.constantFrom<'right' | 'none' | 'wrong' | 'basic' | 'empty'>('right', 'none', 'wrong', 'basic', 'empty'),
    key: fc.oneof(fc.constantFrom('', 'bad key', 'k/1', 'x'.repeat(256), 'k%00'), asciiHeader.filter((k) => !/^[A-Za-z0-9_.:-]{1,255}$/.test(k))),
  })
  .map((g): Plan => {
    const r = g.route;
    const applicable: Plan['how'][] = [];
    if (r.param) applicable.push('path');
    if (r.body) applicable.push('schema');
    if (r.method !== 'GET') applicable.push('parser');
    if (r.admin) applicable.push('auth');
    if (r.method === 'POST' && r.path('') === '/orders') applicable.push('key');
    applicable.push('method');
    if (r.readOnly) applicable.push('none');
    const how = applicable.includes(g.how) ? g.how : applicable[(ROUTES.indexOf(r) + g.how.length) % applicable.length];

    // Existing targets only where the defect is one the route checks before touching them.
    const existingOk = how === 'auth' || how === 'method' || (how === 'schema' && !!r.body) || how === 'parser' || r.readOnly;
    const existing = r.param === 'order' ? fixture.held : r.param === 'sku' ? fixture.sku : undefined;
    let segment = how === 'path' ? g.bad : g.existing && existingOk && existing ? existing : r.param ? g.absent[r.param] : '';
    if (r.upsert && !['path', 'schema', 'parser', 'auth', 'method'].includes(how)) segment = g.bad;

    const body = r.body ? (g.bodies[r.body] as Record<string, Json>) : {};
    let bodyText: string | undefined;
    if (how === 'schema') bodyText = withDefect(r.body, body, g.schema);
    else if (how === 'parser') bodyText = withDefect(r.body, body, g.parser);
    else if (r.method !== 'GET' && r.body) bodyText = JSON.stringify(body);

    const headers: Record<string, string> = {};
    if (g.contentType && bodyText !== undefined) headers['content-type'] = g.contentType;
    if (g.requestId !== undefined) headers['x-request-id'] = g.requestId;
    const token = how === 'auth' ? (g.token === 'right' ? 'wrong' : g.token) : r.admin ? 'right' : g.token;
    if (token === 'right') headers.authorization = `Bearer ${ADMIN_TOKEN}`;
    if (token === 'wrong') headers.authorization = `Bearer ${ADMIN_TOKEN}x`;
    if (token === 'basic') headers.authorization = `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}`;
    if (token === 'empty') headers.authorization = 'Bearer ';
    if (r.path('') === '/orders' && r.method === 'POST') headers['idempotency-key'] = how === 'key' ? g.key : randomUUID();
    if (headers['idempotency-key'] === '') delete headers['idempotency-key'];
    return { route: r, how, segment, bodyText, query: r.query || how === 'none' ? g.query : '', headers };
  });

const KNOWN_METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE']);

function describePlan(p: Plan, method: string, url: string): string {
  return `${method} ${url} (${p.how}) headers=${JSON.stringify(p.headers)} body=${JSON.stringify((p.bodyText ?? '').slice(0, 300))}`;
}

it(`${RUNS} malformed requests over every route: never a 5xx, always a contract answer, nothing changed`, async () => {
  const before = await fingerprint(h.db);
  const seen = new Map<string, number>();
  await fc.assert(
    fc.asyncProperty(planArb, async (p) => {
      const method = p.how === 'method' ? (p.route.method === 'GET' ? 'PATCH' : 'PATCH') : p.route.method;
      const url = `${p.route.path(p.segment)}${p.query}`;
      // A wrong credential comes from an address of its own, so the credential throttle (5 wrong ones
      // per address) never turns the other plans' answers into 429.
      const init = { method, headers: p.headers, body: method === 'GET' ? undefined : p.bodyText };
      const wrongCredential = p.headers.authorization !== undefined && p.headers.authorization !== `Bearer ${ADMIN_TOKEN}`;
      const res = wrongCredential ? await fetchFromAddress(`${h.svc.url}${url}`, init) : await fetch(`${h.svc.url}${url}`, init);
      const text = await res.text();
      const what = describePlan(p, method, url);
      const contentType = res.headers.get('content-type') ?? '';
      seen.set(`${p.how} ${res.status}`, (seen.get(`${p.how} ${res.status}`) ?? 0) + 1);

      expect([what, res.status < 500]).toEqual([what, true]);
      if (res.status >= 400) {
        expect([what, contentType]).toEqual([what, expect.stringMatching(/^application\/problem\+json/)]);
        const body = JSON.parse(text);
        expect([what, body.status, CONTRACT_CODES.includes(body.code)]).toEqual([what, res.status, true]);
      } else {
        // Only a read-only route, asked without a defect it checks, may answer 2xx.
        expect([what, p.route.readOnly && KNOWN_METHODS.has(method) && p.how !== 'auth' && p.how !== 'path']).toEqual([what, true]);
      }
      const sent = p.headers['x-request-id']?.trim(); // leading and trailing blanks are not part of a header value
      const echoed = res.headers.get('x-request-id');
      if (sent !== undefined && /^[A-Za-z0-9._:-]{1,128}$/.test(sent)) expect([what, echoed]).toEqual([what, sent]);
      else expect([what, echoed]).toEqual([what, expect.stringMatching(/^[0-9a-f-]{36}$/)]);
      expect(await fingerprint(h.db)).toEqual(before);
    }),
    { seed: SEED, numRuns: RUNS, endOnFailure: true },
  );
  // The generator reached every kind of defect and answers of several kinds.
  const kinds = new Set([...seen.keys()].map((k) => k.split(' ')[0]));
  expect([...kinds].sort()).toEqual(['auth', 'key', 'method', 'none', 'parser', 'path', 'schema']);
  const statuses = new Set([...seen.keys()].map((k) => Number(k.split(' ')[1])));
  for (const s of [400, 401, 404, 413]) expect([...statuses]).toContain(s);
});

it('raw requests with broken framing or raw bytes in the path: a problem+json answer, nothing changed', async () => {
  const before = await fingerprint(h.db);
  const rawPath = fc.uint8Array({ minLength: 1, maxLength: 8 }).map((b) => Buffer.from(b).toString('latin1'));
  const arb = fc.record({
    path: fc.constantFrom('/orders/', '/inventory/', '/admin/orders/', '/admin/inventory/', '/tcc/inventory/'),
    segment: fc.oneof(rawPath, badSegment),
    // Over the limit, not a number, or exactly the body's length (a shorter body would leave the server waiting).
    length: fc.constantFrom('1000000000', '65537', '99999999999999999999', '-1', 'abc', '1e9', '0x10', 'EXACT'),
    body: fc.string({ maxLength: 30 }),
    admin: fc.boolean(),
  });
  await fc.assert(
    fc.asyncProperty(arb, async (g) => {
      const head =
        `POST ${g.path}${g.segment} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n` +
        `${g.admin ? `Authorization: Bearer ${ADMIN_TOKEN}\r\n` : ''}Content-Length: ${g.length === 'EXACT' ? Buffer.byteLength(g.body) : g.length}\r\nConnection: close\r\n\r\n`;
      const answer = await rawRequest(h.svc.url, Buffer.concat([Buffer.from(head, 'latin1'), Buffer.from(g.body)]), { timeoutMs: 4000, closeWaitMs: 50 });
      const what = JSON.stringify(head);
      expect([what, answer.status >= 400 && answer.status < 500]).toEqual([what, true]);
      expect([what, answer.headers['content-type']]).toEqual([what, expect.stringMatching(/^application\/problem\+json/)]);
      expect([what, CONTRACT_CODES.includes(answer.body?.code)]).toEqual([what, true]);
      expect(await fingerprint(h.db)).toEqual(before);
    }),
    { seed: SEED + 1, numRuns: Math.ceil(RUNS / 4), endOnFailure: true },
  );
});

it('the fixture is as it was: the held order holds, the paid one is paid, the branch is reserved', async () => {
  expect((await h.api.get(`/orders/${fixture.held}`)).body.status).toBe('TRY_SUCCESS');
  expect((await h.api.get(`/orders/${fixture.confirmed}`)).body.status).toBe('CONFIRM_SUCCESS');
  expect((await h.api.get(`/inventory/${fixture.sku}`)).body).toMatchObject({ onHand: 99, reserved: 5, available: 94 });
});
