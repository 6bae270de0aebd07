import { Injectable, Logger } from '@nestjs/common';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { AppError } from '../common/errors.js';
import { isIsoTime } from '../common/iso-time.js';
import { CURSOR_KEY_PURPOSE, isPgTimestamp, SignedCursor } from '../common/signed-cursor.js';
import { isUuid } from '../common/uuid.js';
import { DeploymentKey } from '../database/deployment-key.js';
import { Db } from '../database/db.js';
import type { Principal } from '../http/actor.js';
import type { Credentials, KeyLookup } from '../http/auth.js';
import { ACCESS_SQL } from './access.sql.js';
import type { Scope } from './scopes.js';

export interface ApiKeyView {
  id: string;
  name: string;
  scopes: Scope[];
  prefix: string;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

interface KeyRow {
  id: string;
  name: string;
  scopes: Scope[];
  prefix: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
  created_at_key: string;
}

/** What a key's lookup keeps for a moment: its row as judged then (undefined: no such key). */
interface Cached {
  key?: { id: string; name: string; scopes: string[]; hash: Buffer; expiresAt: number | null; revoked: boolean };
  until: number;
}

/** How long a lookup is trusted: a revoked key is refused by every process within this (the contract's 5 s with room). */
export const KEY_CACHE_MS = 2000;
/** How often one process writes a key's last use. */
export const LAST_USED_EVERY_MS = 60_000;
const CACHE_MAX = 10_000;

function view(r: KeyRow): ApiKeyView {
  return { id: r.id, name: r.name, scopes: r.scopes, prefix: r.prefix, createdAt: r.created_at, expiresAt: r.expires_at, lastUsedAt: r.last_used_at, revokedAt: r.revoked_at };
}

function hashOf(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

/**
 * API keys: `tcc_` and 32 random bytes (base64url), handed out once; the service keeps their SHA-256
 * (a key is random and long, so a fast hash is right) and finds a key by it. Lookups are cached per
 * process for KEY_CACHE_MS, so a revocation or an expiry applies everywhere within that; a key's
 * last use is written at most once a minute per process, off the request's path.
 */
@Injectable()
export class ApiKeys implements KeyLookup {
  private readonly logger = new Logger(ApiKeys.name);
  private readonly cache = new Map<string, Cached>();
  private readonly lastWritten = new Map<string, number>();
  private readonly cursor: SignedCursor;

  constructor(
    private readonly db: Db,
    deploymentKey: DeploymentKey,
  ) {
    this.cursor = new SignedCursor(deploymentKey.derive(CURSOR_KEY_PURPOSE), 'api-keys');
  }

  async create(body: { name: string; scopes: Scope[]; expiresAt?: string }, by: Principal): Promise<ApiKeyView & { key: string }> {
    // A real moment (not 2030-02-30, which Postgres refuses), and a future one.
    if (body.expiresAt !== undefined && !(isIsoTime(body.expiresAt) && Date.parse(body.expiresAt) > Date.now())) {
      throw AppError.validation([{ field: 'expiresAt', message: 'expiresAt must be an ISO time in the future' }]);
    }
    const key = `tcc_${randomBytes(32).toString('base64url')}`;
    const row = await this.db.sql.one<KeyRow>(ACCESS_SQL.createKey, [body.name, body.scopes, key.slice(0, 12), hashOf(key), body.expiresAt ?? null, by.type, by.id, by.name]);
    return { ...view(row!), key };
  }

  async get(id: string): Promise<ApiKeyView> {
    const row = isUuid(id) ? await this.db.sql.one<KeyRow>(ACCESS_SQL.getKey, [id]) : undefined;
    if (!row) throw AppError.notFound(`API key ${id}`);
    return view(row);
  }

  async list(q: { limit?: string; cursor?: string }): Promise<{ data: ApiKeyView[]; nextCursor: string | null }> {
    const limit = q.limit ? Number(q.limit) : 100;
    const after = q.cursor ? this.cursor.decode(q.cursor, 2, (v) => isPgTimestamp(v[0]) && isUuid(v[1])) : [null, null];
    const rows = await this.db.sql.rows<KeyRow>(ACCESS_SQL.listKeys, [after[0], after[1], limit + 1]);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return { data: page.map(view), nextCursor: rows.length > limit ? this.cursor.encode([last.created_at_key, last.id]) : null };
  }

  /** Revokes the key (again: the same answer); this process forgets it at once, the others within KEY_CACHE_MS. */
  async revoke(id: string): Promise<ApiKeyView> {
    const row = isUuid(id) ? await this.db.sql.one<KeyRow>(ACCESS_SQL.revokeKey, [id]) : undefined;
    if (!row) throw AppError.notFound(`API key ${id}`);
    for (const [hash, cached] of this.cache) if (cached.key?.id === id) this.cache.delete(hash);
    return view(row);
  }

  /** The credentials of a live key; undefined for an unknown, revoked or expired one. */
  async credentialsOf(key: string): Promise<Credentials | undefined> {
    const hash = hashOf(key);
    const found = await this.lookup(hash);
    if (!found || found.revoked || (found.expiresAt !== null && found.expiresAt <= Date.now())) return undefined;
    if (!timingSafeEqual(found.hash, hash)) return undefined;
    this.touch(found.id);
    return { principal: { type: 'api_key', id: found.id, name: found.name }, scopes: found.scopes, operator: null };
  }

  private async lookup(hash: Buffer): Promise<Cached['key']> {
    const id = hash.toString('base64url');
    const now = Date.now();
    const cached = this.cache.get(id);
    if (cached && cached.until > now) return cached.key;
    const row = await this.db.sql.one<{ id: string; name: string; scopes: string[]; key_hash: Buffer; expires_at: Date | null; revoked: boolean }>(ACCESS_SQL.keyByHash, [hash]);
    const key = row && { id: row.id, name: row.name, scopes: row.scopes, hash: row.key_hash, expiresAt: row.expires_at ? new Date(row.expires_at).getTime() : null, revoked: row.revoked };
    if (this.cache.size >= CACHE_MAX) this.prune(now);
    this.cache.set(id, { key, until: now + KEY_CACHE_MS });
    return key;
  }

  private prune(now: number): void {
    for (const [id, c] of this.cache) if (c.until <= now) this.cache.delete(id);
    for (const id of this.cache.keys()) {
      if (this.cache.size < CACHE_MAX) break;
      this.cache.delete(id);
    }
  }

  /** Records the key's use, at most once a LAST_USED_EVERY_MS per process; never waited for. */
  private touch(id: string): void {
    const now = Date.now();
    if ((this.lastWritten.get(id) ?? 0) > now - LAST_USED_EVERY_MS) return;
    this.lastWritten.set(id, now);
    if (this.lastWritten.size > CACHE_MAX) this.lastWritten.clear();
    this.db.sql.exec(ACCESS_SQL.touchKey, [id, new Date(now)]).catch((err: unknown) => this.logger.warn({ keyId: id, err: (err as Error).message }, 'a key\'s last use could not be written'));
  }
}
