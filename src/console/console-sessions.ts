import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import type { SignedInOperator } from '../access/operators.js';
import { ROLE_SCOPES, type Role, type Scope } from '../access/scopes.js';
import { AppConfig } from '../config/app-config.js';
import { Db } from '../database/db.js';
import { DeploymentKey } from '../database/deployment-key.js';
import { SESSION_LOCKS } from '../database/session-lock.js';
import { ROOT, type Principal } from '../http/actor.js';
import type { SessionLookup } from '../http/auth.js';
import { PeriodicJobs } from '../database/periodic.js';
import { CONSOLE_SQL } from './console.sql.js';

export interface ConsoleSession {
  csrfToken: string;
  expiresAt: string;
  /**
   * The name recorded with every change made in the session: the signed-in operator's, or for the
   * root token the name given at sign-in ("Your name"), if any.
   */
  operator: string | null;
  /** The operator's role; null for the root token (every right). */
  role: Role | null;
  principal: Principal;
  scopes: readonly Scope[];
}

interface SessionRow {
  csrf_token: string;
  expires_at: string;
  operator: string | null;
  operator_id: string | null;
  operator_name: string | null;
  role: Role | null;
}

function sessionOf(row: SessionRow): ConsoleSession {
  if (row.operator_id === null) return { csrfToken: row.csrf_token, expiresAt: row.expires_at, operator: row.operator, role: null, principal: ROOT, scopes: ['admin'] };
  const role = row.role!;
  return {
    csrfToken: row.csrf_token,
    expiresAt: row.expires_at,
    operator: row.operator_name,
    role,
    principal: { type: 'operator', id: row.operator_id, name: row.operator_name },
    scopes: ROLE_SCOPES[role],
  };
}

/** The per-account sign-in throttle (console.module.ts): 10 wrong passwords per account within 15 minutes. */
export const ACCOUNT_THROTTLE = Symbol('account-throttle');

/** How often expired sessions are deleted (a lookup also deletes the expired one it meets). */
const PURGE_EVERY_MS = 10 * 60_000;

/** scrypt's cost for the token tag: 16 MiB and some 50 ms, once per process. */
const TAG_COST = { N: 2 ** 14, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

/**
 * Operator console sessions, in Postgres so every api process honours them and a sign-out ends
 * them everywhere: the root token's (every right), and operators' (their role's scopes, read with
 * the session on every request, so a disabled operator is refused at once). The row's key is the SHA-256 of the session id (32 random bytes: a fast hash
 * is enough), so a stolen copy of the table opens nothing. Each row also carries the token tag, a
 * slow salted hash (scrypt, salted with a key derived from the deployment key) of the admin token
 * it was opened with: a new ADMIN_TOKEN ends every session opened with the old one, and nothing
 * stored or handed out checks a guess of the token at the speed of a plain hash.
 */
@Injectable()
export class ConsoleSessions implements SessionLookup, OnApplicationBootstrap {
  /** The admin token's SHA-256, held in memory only: what a sign-in's token is compared with. */
  private readonly key: Buffer | undefined;
  private readonly token: string | undefined;
  private readonly ttlMs: number;
  private tag: Promise<Buffer> | undefined;

  constructor(
    private readonly db: Db,
    private readonly periodic: PeriodicJobs,
    config: AppConfig,
    private readonly deploymentKey: DeploymentKey,
  ) {
    const token = config.env.ADMIN_TOKEN;
    this.key = token ? createHash('sha256').update(token).digest() : undefined;
    this.ttlMs = config.env.CONSOLE_SESSION_TTL_MS;
    this.token = token;
  }

  onApplicationBootstrap(): void {
    this.periodic.register('console-sessions', PURGE_EVERY_MS, SESSION_LOCKS.consoleSessions, () => this.purgeExpired());
  }

  get ttlSeconds(): number {
    return Math.floor(this.ttlMs / 1000);
  }

  /**
   * A new session for the right admin token (compared as digests, in constant time), else
   * undefined. Its id goes into the cookie and nowhere else.
   */
  async signIn(token: string, operator: string | null = null): Promise<(ConsoleSession & { sessionId: string }) | undefined> {
    if (!this.key || !timingSafeEqual(createHash('sha256').update(token).digest(), this.key)) return undefined;
    return this.open(operator, await this.tokenTag(), null);
  }

  /**
   * A new session for an operator whose email and password were right (access/operators.ts), or
   * undefined when their password or role changed (or they were disabled) while it was checked.
   */
  signInOperator(who: SignedInOperator): Promise<(ConsoleSession & { sessionId: string }) | undefined> {
    return this.open(null, Buffer.alloc(0), who);
  }

  private async open(operator: string | null, tag: Buffer, who: SignedInOperator | null): Promise<(ConsoleSession & { sessionId: string }) | undefined> {
    const sessionId = randomBytes(32).toString('base64url');
    const csrfToken = randomBytes(32).toString('base64url');
    const args = [hashOf(sessionId), csrfToken, this.ttlMs, operator, tag, who?.id ?? null];
    const row = who
      ? await this.db.sql.one<{ csrf_token: string; expires_at: string }>(CONSOLE_SQL.openOperatorSession, [...args, who.passwordHash, who.role])
      : await this.db.sql.one<{ csrf_token: string; expires_at: string }>(CONSOLE_SQL.createSession, args);
    if (!row) return undefined;
    const session = sessionOf({ csrf_token: csrfToken, expires_at: row.expires_at, operator, operator_id: who?.id ?? null, operator_name: who?.name ?? null, role: who?.role ?? null });
    return { sessionId, ...session };
  }

  /** The live session, or undefined (unknown, ended, expired, opened under another admin token, or its operator disabled). */
  async find(sessionId: string): Promise<ConsoleSession | undefined> {
    const row = await this.db.sql.one<SessionRow>(CONSOLE_SQL.findSession, [hashOf(sessionId), this.key ? await this.tokenTag() : null]);
    return row ? sessionOf(row) : undefined;
  }

  credentialsOf(sessionId: string): Promise<ConsoleSession | undefined> {
    return this.find(sessionId);
  }

  async end(sessionId: string): Promise<void> {
    await this.db.sql.exec(CONSOLE_SQL.endSession, [hashOf(sessionId)]);
  }

  purgeExpired(): Promise<number> {
    return this.db.sql.exec(CONSOLE_SQL.purgeExpired);
  }

  /** The admin token's tag, computed once (scrypt is slow on purpose). */
  private tokenTag(): Promise<Buffer> {
    this.tag ??= new Promise((resolve, reject) =>
      scrypt(this.token!, this.deploymentKey.derive('console-session-token-tag'), 32, TAG_COST, (err, tag) => (err ? reject(err) : resolve(tag))),
    );
    return this.tag;
  }
}

function hashOf(sessionId: string): Buffer {
  return createHash('sha256').update(sessionId).digest();
}
