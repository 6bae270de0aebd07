import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Operators } from '../../src/access/operators.js';
import { AppConfig } from '../../src/config/app-config.js';
import { parseEnv } from '../../src/config/env.schema.js';
import { Db } from '../../src/database/db.js';
import { DeploymentKey } from '../../src/database/deployment-key.js';
import { createTestDatabase, TestDatabase } from '../support/database.js';
import { FAST_ENV } from '../support/service.js';

/**
 * A change to an operator that waits for the row while another change commits is judged against
 * the row as that change left it. Admin → viewer commits (and a sign-in as the viewer opens a
 * session) while a change back to admin waits for the row: that is a role change, viewer → admin,
 * so the session ends. Judged against the row as the waiting change's statement first saw it
 * (admin → admin, "no change"), the viewer's session would have lived on with the admin's rights.
 */
let db: TestDatabase;
let service: Db;
let operators: Operators;
let other: pg.Client;

beforeAll(async () => {
  db = await createTestDatabase();
  service = new Db({ url: db.url, poolSize: 2 });
  operators = new Operators(service, await DeploymentKey.load(service), new AppConfig(parseEnv({ PASSWORD_HASH_COST: FAST_ENV.PASSWORD_HASH_COST })));
  other = new pg.Client({ connectionString: db.url });
  await other.connect();
});

afterAll(async () => {
  await other?.end();
  await service?.close();
  await db?.drop();
});

async function someoneWaitsForALock(): Promise<void> {
  for (const end = Date.now() + 10_000; Date.now() < end; await new Promise((r) => setTimeout(r, 10))) {
    const rows = await db.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
    if (rows.length > 0) return;
  }
  throw new Error('the change never waited for the row');
}

it('a role change that waited for the row ends the sessions opened under the role another change gave meanwhile', async () => {
  const op = await operators.create({ email: `race-${randomBytes(3).toString('hex')}@example.com`, name: 'Race', role: 'admin', password: 'correct horse battery' });
  await other.query('BEGIN');
  await other.query(`UPDATE operators SET role = 'viewer', updated_at = now() WHERE id = $1`, [op.id]);
  const back = operators.patch(op.id, { role: 'admin' });
  await someoneWaitsForALock();
  // A sign-in as the viewer, committed with the demotion.
  await other.query(
    `INSERT INTO console_sessions (id_hash, csrf_token, expires_at, token_tag, operator_id) VALUES ($1, 'csrf', now() + interval '1 hour', $2, $3)`,
    [randomBytes(32), randomBytes(16), op.id],
  );
  await other.query('COMMIT');
  expect((await back).role).toBe('admin');
  expect(await db.query(`SELECT 1 FROM console_sessions WHERE operator_id = $1`, [op.id])).toEqual([]);
});

it('a change that leaves role, password and disabled as the last change left them ends no session', async () => {
  const op = await operators.create({ email: `calm-${randomBytes(3).toString('hex')}@example.com`, name: 'Calm', role: 'viewer', password: 'correct horse battery' });
  await db.query(`INSERT INTO console_sessions (id_hash, csrf_token, expires_at, token_tag, operator_id) VALUES ($1, 'csrf', now() + interval '1 hour', $2, $3)`, [randomBytes(32), randomBytes(16), op.id]);
  await other.query('BEGIN');
  await other.query(`UPDATE operators SET name = 'Calmer', updated_at = now() WHERE id = $1`, [op.id]);
  const same = operators.patch(op.id, { role: 'viewer', name: 'Calmest' });
  await someoneWaitsForALock();
  await other.query('COMMIT');
  expect(await same).toMatchObject({ role: 'viewer', name: 'Calmest' });
  expect(await db.query(`SELECT 1 FROM console_sessions WHERE operator_id = $1`, [op.id])).toHaveLength(1);
});
