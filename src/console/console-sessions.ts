import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { AppConfig } from '../config/app-config.js';
import { Db } from '../database/db.js';
import { SESSION_LOCKS } from '../database/session-lock.js';
import type { SessionLookup } from '../http/auth.js';
import { PeriodicJobs } from '../database/periodic.js';
import { CONSOLE_SQL } from './console.sql.js';

export interface ConsoleSession {
  csrfToken: string;
  expiresAt: string;
  /** The name its operator gave at sign-in ("Your name"), recorded with every change they make. */
  operator: string | null;
}

/** How often expired sessions are deleted (a lookup also deletes the expired one it meets). */
const PURGE_EVERY_MS = 10 * 60_000;

/**
 * Operator console sessions, in Postgres so every api process honours them and a sign-out ends
 * them everywhere. The row's key is SHA-256(SHA-256(ADMIN_TOKEN) ‖ session id): a stolen copy of
 * the table opens nothing, and a new ADMIN_TOKEN ends every session opened with the old one.
 */
@Injectable()
export class ConsoleSessions implements SessionLookup, OnApplicationBootstrap {
  private readonly key: Buffer | undefined;
  private readonly ttlMs: number;

  constructor(
    private readonly db: Db,
    private readonly periodic: PeriodicJobs,
    config: AppConfig,
  ) {
    const token = config.env.ADMIN_TOKEN;
    this.key = token ? createHash('sha256').update(token).digest() : undefined;
    this.ttlMs = config.env.CONSOLE_SESSION_TTL_MS;
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
    const sessionId = randomBytes(32).toString('base64url');
    const csrfToken = randomBytes(32).toString('base64url');
    const row = await this.db.sql.one<{ csrf_token: string; expires_at: string }>(CONSOLE_SQL.createSession, [this.hash(sessionId), csrfToken, this.ttlMs, operator]);
    return { sessionId, csrfToken, expiresAt: row!.expires_at, operator };
  }

  /** The live session, or undefined (unknown, ended, expired, or opened under another admin token). */
  async find(sessionId: string): Promise<ConsoleSession | undefined> {
    if (!this.key) return undefined;
    const row = await this.db.sql.one<{ csrf_token: string; expires_at: string; operator: string | null }>(CONSOLE_SQL.findSession, [this.hash(sessionId)]);
    return row ? { csrfToken: row.csrf_token, expiresAt: row.expires_at, operator: row.operator } : undefined;
  }

  credentialsOf(sessionId: string): Promise<ConsoleSession | undefined> {
    return this.find(sessionId);
  }

  async end(sessionId: string): Promise<void> {
    if (this.key) await this.db.sql.exec(CONSOLE_SQL.endSession, [this.hash(sessionId)]);
  }

  purgeExpired(): Promise<number> {
    return this.db.sql.exec(CONSOLE_SQL.purgeExpired);
  }

  private hash(sessionId: string): Buffer {
    return createHash('sha256').update(this.key!).update(sessionId).digest();
  }
}
