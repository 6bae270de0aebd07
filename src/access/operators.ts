import { Injectable } from '@nestjs/common';
import { AppError } from '../common/errors.js';
import { CURSOR_KEY_PURPOSE, isPgTimestamp, SignedCursor } from '../common/signed-cursor.js';
import { isUuid } from '../common/uuid.js';
import { DeploymentKey } from '../database/deployment-key.js';
import { AppConfig } from '../config/app-config.js';
import { Db } from '../database/db.js';
import { ACCESS_SQL } from './access.sql.js';
import { decoyHash, hashPassword, verifyPassword } from './passwords.js';
import type { Role } from './scopes.js';

export interface OperatorView {
  id: string;
  email: string;
  name: string;
  role: Role;
  createdAt: string;
  disabledAt: string | null;
  lastSignInAt: string | null;
}

interface OperatorRow {
  id: string;
  email: string;
  name: string;
  role: Role;
  created_at: string;
  disabled_at: string | null;
  last_sign_in_at: string | null;
  created_at_key: string;
}

function view(r: OperatorRow): OperatorView {
  return { id: r.id, email: r.email, name: r.name, role: r.role, createdAt: r.created_at, disabledAt: r.disabled_at, lastSignInAt: r.last_sign_in_at };
}

/** An operator as sign-in finds it by email. */
export interface SignInAccount {
  id: string;
  name: string;
  role: Role;
  password_hash: string;
  disabled: boolean;
}

/** An operator whose password a sign-in checked, for the session it opens. */
export interface SignedInOperator {
  id: string;
  name: string;
  role: Role;
  /**
   * The password hash the password was checked against: the session opens only while it is still
   * the operator's (console-sessions.ts), so a password changed during the check ends the sign-in.
   */
  passwordHash: string;
}

/**
 * Operators: people, with a role and a password the service keeps only as a slow salted hash
 * (passwords.ts). An email is theirs whatever its case; two creations of one email at the same
 * moment make one operator and answer the other OPERATOR_EXISTS (ON CONFLICT, never a unique
 * violation). Disabling an operator, or changing their role or password, ends their console
 * sessions in the same statement.
 */
@Injectable()
export class Operators {
  private readonly cursor: SignedCursor;
  /** scrypt's cost (log2 N) for the hashes made here: PASSWORD_HASH_COST. */
  private readonly hashCost: number;

  constructor(
    private readonly db: Db,
    deploymentKey: DeploymentKey,
    config: AppConfig,
  ) {
    this.cursor = new SignedCursor(deploymentKey.derive(CURSOR_KEY_PURPOSE), 'operators');
    this.hashCost = config.env.PASSWORD_HASH_COST;
  }

  async create(body: { email: string; name: string; role: Role; password: string }): Promise<OperatorView> {
    const hash = await hashPassword(body.password, this.hashCost);
    const row = await this.db.sql.one<OperatorRow>(ACCESS_SQL.createOperator, [body.email, body.name, body.role, hash]);
    if (!row) throw new AppError('OPERATOR_EXISTS', 'an operator with that email already exists');
    return view(row);
  }

  async get(id: string): Promise<OperatorView> {
    const row = isUuid(id) ? await this.db.sql.one<OperatorRow>(ACCESS_SQL.getOperator, [id]) : undefined;
    if (!row) throw AppError.notFound(`operator ${id}`);
    return view(row);
  }

  async list(q: { limit?: string; cursor?: string }): Promise<{ data: OperatorView[]; nextCursor: string | null }> {
    const limit = q.limit ? Number(q.limit) : 100;
    const after = q.cursor ? this.cursor.decode(q.cursor, 2, (v) => isPgTimestamp(v[0]) && isUuid(v[1])) : [null, null];
    const rows = await this.db.sql.rows<OperatorRow>(ACCESS_SQL.listOperators, [after[0], after[1], limit + 1]);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return { data: page.map(view), nextCursor: rows.length > limit ? this.cursor.encode([last.created_at_key, last.id]) : null };
  }

  async patch(id: string, body: { name?: string; role?: Role; password?: string; disabled?: boolean }): Promise<OperatorView> {
    if (!isUuid(id)) throw AppError.notFound(`operator ${id}`);
    const hash = body.password === undefined ? null : await hashPassword(body.password, this.hashCost);
    // The row locked (and read as the last change left it), the change, then (a later statement,
    // so it sees a session opened while the lock was awaited) the end of the operator's sessions
    // when the change ends them.
    const row = await this.db.tx(async (sql) => {
      const before = await sql.one<{ role: Role; disabled: boolean }>(ACCESS_SQL.lockOperator, [id]);
      if (!before) return undefined;
      const changed = await sql.one<OperatorRow & { ends_sessions: boolean }>(ACCESS_SQL.patchOperator, [id, body.name ?? null, body.role ?? null, hash, body.disabled ?? null, before.role, before.disabled]);
      if (changed?.ends_sessions) await sql.exec(ACCESS_SQL.endSessions, [id]);
      return changed;
    });
    if (!row) throw AppError.notFound(`operator ${id}`);
    return view(row);
  }

  /**
   * The account an email names at sign-in, if any: found by Postgres's lower() on both sides, so
   * every spelling it folds together is the one account (the account's throttle goes by it).
   */
  account(email: string): Promise<SignInAccount | undefined> {
    return this.db.sql.one<SignInAccount>(ACCESS_SQL.operatorByEmail, [email]);
  }

  /**
   * The operator, if this is the account's password and it may sign in (not disabled); else
   * undefined. Its last sign-in is recorded with the session it opens. No account (an unknown
   * email) costs a password check all the same, so the time taken does not tell which accounts
   * exist.
   */
  async signIn(row: SignInAccount | undefined, password: string): Promise<SignedInOperator | undefined> {
    const right = await verifyPassword(password, row?.password_hash ?? (await decoyHash(this.hashCost)));
    if (!row || !right || row.disabled) return undefined;
    return { id: row.id, name: row.name, role: row.role, passwordHash: row.password_hash };
  }
}
