import { readSqlFunctions } from './sql-functions.js';
import { withoutComments } from './sql-graph.js';
import { SESSION_LOCKS, XACT_LOCK_SPACES } from './session-lock.js';

/** Every advisory lock a function takes: its file, the call, and the literal first key (undefined when not a literal). */
function advisoryLocks(functions: readonly { file: string; body: string }[]): { file: string; call: string; space: number | undefined }[] {
  return functions.flatMap((f) =>
    [...withoutComments(f.body).matchAll(/\bpg_(?:try_)?advisory_(?:xact_)?lock(?:_shared)?\s*\(\s*([^,)]*)(,?)/gi)].map((m) => ({
      file: f.file,
      call: m[0],
      space: /^\d+$/.test(m[1].trim()) && m[2] === ',' ? Number(m[1]) : undefined,
    })),
  );
}

describe('the SQL functions take the advisory locks XACT_LOCK_SPACES registers (session-lock.ts), and only those', () => {
  const locks = advisoryLocks(readSqlFunctions('src'));
  const registered = Object.values(XACT_LOCK_SPACES);

  it('each lock a .sql file takes is two-key, with a literal space registered for that file', () => {
    expect(locks.length).toBeGreaterThanOrEqual(registered.length);
    for (const lock of locks) {
      expect({ ...lock, registered: registered.some((r) => r.space === lock.space && r.file === lock.file) }).toEqual({ ...lock, registered: true });
    }
  });

  it('each registered space is taken by its file, and no two share a number', () => {
    for (const r of registered) expect({ ...r, taken: locks.some((l) => l.space === r.space && l.file === r.file) }).toEqual({ ...r, taken: true });
    expect(new Set(registered.map((r) => r.space)).size).toBe(registered.length);
    expect(new Set(Object.values(SESSION_LOCKS)).size).toBe(Object.values(SESSION_LOCKS).length);
  });

  it('reads a lock call however it is written, and marks a key that is not a literal space', () => {
    const body = `PERFORM pg_advisory_xact_lock(7703, hashtext(p_key)); SELECT pg_try_advisory_xact_lock( 7701 , 1); -- pg_advisory_lock(9, 1)
      PERFORM pg_advisory_xact_lock(hashtext(p_key)); PERFORM pg_advisory_lock(42);`;
    expect(advisoryLocks([{ file: 'x.sql', body }]).map((l) => l.space)).toEqual([7703, 7701, undefined, undefined]);
  });
});
