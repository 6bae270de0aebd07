import { Injectable, Logger } from '@nestjs/common';
import { CURSOR_KEY_PURPOSE, SignedCursor } from '../common/signed-cursor.js';
import { storableJson, storableText } from '../common/storable-text.js';
import { DeploymentKey } from '../database/deployment-key.js';
import { Db } from '../database/db.js';
import type { Principal } from '../http/actor.js';
import { ACCESS_SQL } from './access.sql.js';

/** One line of the audit log (API.md, "Audit"). */
export interface AuditEntry {
  principal: Principal | null;
  /** `sign_in`, `sign_out`, `api_key.created`, …, or a state-changing admin route (`POST /admin/orders/{id}/force-cancel`). */
  action: string;
  /** What it was done to: an id, an email tried at sign-in. Never a secret. */
  target: string | null;
  /** The HTTP status the request was answered with. */
  outcome: number;
  requestId: string | null;
  address: string | null;
  /** More about it, never a secret (no key, password, token or cookie). */
  detail?: Record<string, unknown>;
}

export interface AuditView {
  id: string;
  at: string;
  principal: Principal | null;
  action: string;
  target: string | null;
  outcome: number;
  requestId: string | null;
  address: string | null;
}

interface AuditRow {
  id: string;
  at: string;
  principal_type: Principal['type'] | null;
  principal_id: string | null;
  principal_name: string | null;
  action: string;
  target: string | null;
  outcome: number;
  request_id: string | null;
  address: string | null;
}

/** A Fastify route template as the audit names it: `/admin/orders/:id/force-cancel` → `/admin/orders/{id}/force-cancel`. */
export function auditRoute(method: string, route: string): string {
  return `${method} ${route.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`;
}

/**
 * Who did what, and how it ended: sign-ins (failed ones with the email tried), keys and operators
 * made, changed and revoked, and every state-changing admin call. Written off the request's path
 * (a failure to write is logged, never answered), read newest first.
 */
@Injectable()
export class AuditLog {
  private readonly logger = new Logger(AuditLog.name);
  private readonly cursor: SignedCursor;

  constructor(
    private readonly db: Db,
    deploymentKey: DeploymentKey,
  ) {
    this.cursor = new SignedCursor(deploymentKey.derive(CURSOR_KEY_PURPOSE), 'audit');
  }

  /** Writes the entry; resolves once written or failed (a failure is logged, never thrown). */
  async record(e: AuditEntry): Promise<void> {
    try {
      await this.db.sql.exec(ACCESS_SQL.audit, [
        e.principal?.type ?? null,
        e.principal?.id ?? null,
        e.principal?.name ?? null,
        e.action,
        // What the call named, as it came: a path parameter may hold U+0000 or a lone surrogate
        // (answered 404), which Postgres cannot store — the entry must be written all the same.
        e.target === null ? null : storableText(e.target),
        e.outcome,
        e.requestId,
        e.address,
        storableJson(e.detail ?? {}),
      ]);
    } catch (err) {
      this.logger.error({ action: e.action, outcome: e.outcome, requestId: e.requestId, err: (err as Error).message }, 'an audit entry could not be written');
    }
  }

  async list(q: { principalId?: string; action?: string; limit?: string; cursor?: string }): Promise<{ data: AuditView[]; nextCursor: string | null }> {
    const limit = q.limit ? Number(q.limit) : 100;
    const before = q.cursor ? this.cursor.decode(q.cursor, 1, (v) => /^[1-9]\d{0,18}$/.test(v[0]))[0] : null;
    const rows = await this.db.sql.rows<AuditRow>(ACCESS_SQL.listAudit, [q.principalId ?? null, q.action ?? null, before, limit + 1]);
    const page = rows.slice(0, limit);
    const data = page.map((r) => ({
      id: r.id,
      at: r.at,
      principal: r.principal_type ? { type: r.principal_type, id: r.principal_id, name: r.principal_name } : null,
      action: r.action,
      target: r.target,
      outcome: r.outcome,
      requestId: r.request_id,
      address: r.address,
    }));
    return { data, nextCursor: rows.length > limit ? this.cursor.encode([page[page.length - 1].id]) : null };
  }
}
