import { randomUUID } from 'node:crypto';
import { ADMIN_TOKEN } from './support/env.js';
import { useHarness } from './support/harness.js';
import { Answer, client, loopbackAddress } from './support/http.js';
import { uniqueSku } from './support/orders.js';
import { expectValidation, fingerprint } from './support/problem.js';

/**
 * A name of a person (the console's "Your name") and every `reason` refuse control characters
 * (U+0000-U+001F, U+007F-U+009F), line and paragraph separators, bidirectional controls
 * (U+202A-U+202E, U+2066-U+2069) and zero-width characters (U+200B-U+200F, U+FEFF) with
 * VALIDATION_FAILED, changing nothing (API.md, "Errors"); names and reasons in any script, with
 * accents or emoji, are recorded as written.
 */
const h = useHarness();
const sku = uniqueSku('HIDDEN');

const HIDDEN: [string, string][] = [
  ['CR/LF', 'Ana\r\nOps'],
  ['a tab', 'Ana\tOps'],
  ['a terminal escape', '\u001b[31mAna'],
  ['DEL', 'Ana\u007f'],
  ['a C1 control (NEL)', 'Ana\u0085Ops'],
  ['the line separator', 'Ana\u2028Ops'],
  ['the paragraph separator', 'Ana\u2029Ops'],
  ['a right-to-left override', 'Ana\u202eOps'],
  ['a left-to-right embedding', '\u202aAna'],
  ['a first-strong isolate', 'Ana\u2068Ops\u2069'],
  ['a zero-width space', 'Ad\u200bmin'],
  ['a zero-width joiner', 'Ad\u200dmin'],
  ['a right-to-left mark', 'Ana\u200f'],
  ['a byte order mark', '\ufeffAna'],
];

let held: string;
beforeAll(async () => {
  expect((await h.api.putSku(sku, 100)).status).toBe(200);
  const res = await h.api.order(randomUUID(), { customerId: 'c-hidden', items: [{ sku, quantity: 1 }] });
  expect(res.status).toBe(201);
  held = res.body.id;
});

/** Every place a name or a reason is taken, with the text put in it. */
const FIELDS: [string, RegExp, (text: string) => Promise<Answer>][] = [
  // Each sign-in from an address of its own (the token is right: the throttle is not what is tested).
  ['console sign-in "Your name"', /^name$/, (text) => client(h.svc.url, { from: loopbackAddress() }).send('POST', '/console/session', { body: { token: ADMIN_TOKEN, name: text } })],
  ['force-confirm reason', /^reason$/, (text) => h.api.admin('POST', `/admin/orders/${held}/force-confirm`, { reason: text })],
  ['force-cancel reason', /^reason$/, (text) => h.api.admin('POST', `/admin/orders/${held}/force-cancel`, { reason: text })],
  ['acknowledge reason', /^reason$/, (text) => h.api.admin('POST', `/admin/orders/${held}/acknowledge`, { reason: text })],
  ['bulk-cancel reason', /^reason$/, (text) => h.api.admin('POST', '/admin/orders/bulk-cancel', { filter: { customerId: 'c-hidden' }, reason: text, dryRun: false })],
  ['consistency repair reason', /^reason$/, (text) => h.api.admin('POST', '/admin/inventory/consistency/repair', { reason: text })],
];

describe.each(FIELDS)('%s', (_what, field, send) => {
  it.each(HIDDEN)('with %s: VALIDATION_FAILED, nothing changed', async (_label, text) => {
    const before = { db: await fingerprint(h.db), sessions: await h.db.query('SELECT count(*)::int AS n FROM console_sessions') };
    expectValidation(await send(text), field);
    expect({ db: await fingerprint(h.db), sessions: await h.db.query('SELECT count(*)::int AS n FROM console_sessions') }).toEqual(before);
  });
});

it('a name or reason in any script, with accents and emoji, is taken as written', async () => {
  const name = 'Zoë Ōkubo 大久保 🙂';
  const signIn = await h.api.send('POST', '/console/session', { body: { token: ADMIN_TOKEN, name } });
  expect(signIn.status).toBe(200);
  expect(signIn.body.operator).toBe(name);
  const ack = await h.api.admin('POST', `/admin/orders/${held}/acknowledge`, { reason: 'vérifié — «ok» ✓' });
  expect(ack.status).toBe(200);
  const cancel = await h.api.admin('POST', `/admin/orders/${held}/force-cancel`, { reason: 'client a annulé par téléphone' });
  expect(cancel.body).toMatchObject({ status: 'CANCELED' });
});
