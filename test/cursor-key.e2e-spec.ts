import { createHash, createHmac, randomUUID, scryptSync } from 'node:crypto';
import { createTestDatabase, TestDatabase } from './support/database.js';
import { ADMIN_TOKEN } from './support/env.js';
import { useHarness } from './support/harness.js';
import { client, loopbackAddress } from './support/http.js';
import { expectValidation } from './support/problem.js';
import { ServiceProcess, startService } from './support/service.js';

/**
 * No value the service hands out or stores lets anyone check a guess of a secret (API.md,
 * "Errors"): paging cursors are signed with a key of the deployment's own — random, made once in
 * the database by whichever process starts first, shared by every process, kept across restarts —
 * never one derived from ADMIN_TOKEN; console sessions are stored by a hash of their id alone and a
 * slow salted hash of the token.
 */
const h = useHarness();

/** What the service signed cursors with before: a key derived from ADMIN_TOKEN and a purpose in its source. */
function tokenSigned(payload: string, purpose: string): string {
  const key = createHmac('sha256', `tcc-cursor:${purpose}`).update(ADMIN_TOKEN).digest();
  return createHmac('sha256', key).update(payload).digest('base64url');
}

async function deploymentKey(db: TestDatabase): Promise<Buffer[]> {
  return (await db.query<{ key: Buffer }>(`SELECT key FROM deployment_keys`)).map((r) => r.key);
}

const ordersPage = (api: ReturnType<typeof client>, cursor?: string) => api.get(`/admin/orders?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, true);

beforeAll(async () => {
  const sku = `CK-${randomUUID().slice(0, 8)}`;
  expect((await h.api.putSku(sku, 10)).status).toBe(200);
  expect((await h.api.putSku(`${sku}-2`, 10)).status).toBe(200);
  for (let i = 0; i < 3; i++) expect((await h.api.order(randomUUID(), { customerId: 'c-ck', items: [{ sku, quantity: 1 }] })).status).toBe(201);
});

describe('paging cursors', () => {
  it('are not signed under a key derived from the token, and one forged with such a key is refused', async () => {
    const cursor: string = (await ordersPage(h.api)).body.nextCursor;
    const [payload, sig] = cursor.split('.');
    expect(sig).not.toBe(tokenSigned(payload, 'admin-orders'));
    expectValidation(await ordersPage(h.api, `${payload}.${tokenSigned(payload, 'admin-orders')}`), /^cursor$/);
    const moves = await h.api.get(`/admin/inventory?limit=1`, true);
    const [p2, s2] = (moves.body.nextCursor as string).split('.');
    expect(s2).not.toBe(tokenSigned(p2, 'inventory-catalogue'));
    expectValidation(await h.api.get(`/admin/inventory?limit=1&cursor=${p2}.${tokenSigned(p2, 'inventory-catalogue')}`, true), /^cursor$/);
  });

  it("are signed with the deployment's own random key, kept in the database", async () => {
    const keys = await deploymentKey(h.db);
    expect(keys).toHaveLength(1);
    expect(keys[0].length).toBeGreaterThanOrEqual(32);
    const cursor: string = (await ordersPage(h.api)).body.nextCursor;
    const [payload, sig] = cursor.split('.');
    const cursorKey = createHmac('sha256', keys[0]).update('paging-cursors').digest();
    const key = createHmac('sha256', 'tcc-cursor:admin-orders').update(cursorKey).digest();
    expect(sig).toBe(createHmac('sha256', key).update(payload).digest('base64url'));
  });

  it('survive a restart', async () => {
    const cursor: string = (await ordersPage(h.api)).body.nextCursor;
    const next = await ordersPage(h.api, cursor);
    await h.restart();
    expect(await ordersPage(h.api, cursor)).toMatchObject({ status: 200, body: next.body });
  });

  it('processes started together on a new database make one key and take each other\'s cursors', async () => {
    const db = await createTestDatabase();
    const procs: ServiceProcess[] = [];
    try {
      const env = { DATABASE_URL: db.url, PAYMENT_GATEWAY_URL: h.sim.url, QUEUE_PREFIX: `${h.prefix}-ck`, ROLE: 'api' };
      procs.push(...(await Promise.all([0, 1].map(() => startService(env))))); // started at the same moment
      expect(await deploymentKey(db)).toHaveLength(1);
      const apis = procs.map((p) => client(p.url));
      expect((await apis[0].putSku('CK-1', 10)).status).toBe(200);
      for (let i = 0; i < 4; i++) expect((await apis[i % 2].order(randomUUID(), { customerId: 'c-ck', items: [{ sku: 'CK-1', quantity: 1 }] })).status).toBe(201);
      // Each page from another process.
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let i = 0; i < 4; i++) {
        const page = await ordersPage(apis[i % 2], cursor);
        expect(page.status).toBe(200);
        seen.push(page.body.data[0].id);
        cursor = page.body.nextCursor;
      }
      expect(new Set(seen).size).toBe(4);
      expect(cursor).toBeNull();
      // Another deployment (another database) has a key of its own: it refuses this one's cursors.
      const first: string = (await ordersPage(apis[0])).body.nextCursor;
      expectValidation(await ordersPage(h.api, first), /^cursor$/);
    } finally {
      await Promise.all(procs.map((p) => p.stop()));
      await db.drop();
    }
  });
});

describe('console sessions', () => {
  it('are stored by a hash of the session id alone and a slow hash of the token; a new token still ends them', async () => {
    const signIn = await h.api.send('POST', '/console/session', { body: { token: ADMIN_TOKEN } });
    expect(signIn.status).toBe(200);
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0];
    const id = cookie.split('=')[1];
    const [row] = await h.db.query<{ id_hash: Buffer; token_tag: Buffer }>(`SELECT id_hash, token_tag FROM console_sessions WHERE id_hash = $1`, [createHash('sha256').update(id).digest()]);
    expect(row).toBeDefined();
    // Not the fast hashes a guess could be checked against.
    const tokenHash = createHash('sha256').update(ADMIN_TOKEN).digest();
    expect(row.id_hash.equals(createHash('sha256').update(tokenHash).update(id).digest())).toBe(false);
    expect(row.token_tag.equals(tokenHash)).toBe(false);
    // The tag is scrypt under a salt derived from the deployment key.
    const [key] = await deploymentKey(h.db);
    const salt = createHmac('sha256', key).update('console-session-token-tag').digest();
    expect(row.token_tag.equals(scryptSync(ADMIN_TOKEN, salt, 32, { N: 2 ** 14, r: 8, p: 1, maxmem: 64 * 1024 * 1024 }))).toBe(true);

    // The same token after a restart keeps the session; another token ends it.
    await h.restart();
    expect((await h.api.send('GET', '/admin/stats', { headers: { cookie } })).status).toBe(200);
    await h.restart({ ADMIN_TOKEN: `${ADMIN_TOKEN}-rotated` });
    expect((await client(h.svc.url, { from: loopbackAddress() }).send('GET', '/admin/stats', { headers: { cookie } })).status).toBe(401);
    await h.restart();
    expect((await client(h.svc.url, { from: loopbackAddress() }).send('GET', '/admin/stats', { headers: { cookie } })).status).toBe(401);
  });
});
