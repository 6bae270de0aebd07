import { Injectable } from '@nestjs/common';
import { AppError } from '../common/errors.js';
import { CURSOR_KEY_PURPOSE, isPgTimestamp, SignedCursor } from '../common/signed-cursor.js';
import { DeploymentKey } from '../database/deployment-key.js';
import { Db } from '../database/db.js';
import { isUuid } from '../common/uuid.js';
import { NAME_PATTERN } from '../http/schemas.js';
import { secretProblem } from './webhook-secret.js';
import { DELIVERY_STATUSES, DeliveriesQuery, DeliveryStatus, DeliveryView, PutWebhookBody, WebhookOverview, WebhookView } from './webhooks.schemas.js';
import { WEBHOOKS_SQL } from './webhooks.sql.js';

interface DeliveryRow {
  id: string;
  type: string;
  order_id: string | null;
  status: string;
  attempts: number;
  last_error: string | null;
  last_status: number | null;
  last_response: string | null;
  created_at: string;
  created_at_key: string;
}

/** Before every delivery: the keyset start of a first page. */
const FIRST: [string, string] = ['-infinity', '00000000-0000-0000-0000-000000000000'];
const PENDING: DeliveryStatus = 'pending';
const FAILED: DeliveryStatus = 'failed';
const DELIVERED: DeliveryStatus = 'delivered';

interface OverviewRow extends WebhookView {
  last_failure: WebhookOverview['lastFailure'];
  failed_now: number;
  delivered: number;
  failed: number;
}

function view(r: DeliveryRow): DeliveryView {
  return {
    id: r.id,
    type: r.type as DeliveryView['type'],
    orderId: r.order_id,
    status: r.status as DeliveryStatus,
    attempts: r.attempts,
    lastError: r.last_error,
    lastStatus: r.last_status,
    lastResponse: r.last_response,
    createdAt: r.created_at,
  };
}

/** Deliveries removed per transaction when an endpoint is deleted (see remove). */
const REMOVE_BATCH = 5000;

/** Bad URL: a validation error on `url` (never a 500, whatever `new URL` makes of it). */
function checkUrl(raw: string): void {
  let protocol: string;
  try {
    protocol = new URL(raw).protocol;
  } catch {
    protocol = '';
  }
  if (protocol !== 'http:' && protocol !== 'https:') throw AppError.validation([{ field: 'url', message: 'url must be an http or https URL of at most 2048 characters' }]);
}

/**
 * The operator's side of webhooks: endpoints (secrets go in, never out) and their deliveries.
 * Sending is webhook-delivery.ts; what to send is written by tcc_emit with each state change.
 */
@Injectable()
export class WebhooksService {
  private readonly cursor: SignedCursor;

  constructor(
    private readonly db: Db,
    deploymentKey: DeploymentKey,
  ) {
    this.cursor = new SignedCursor(deploymentKey.derive(CURSOR_KEY_PURPOSE), 'webhook-deliveries');
  }

  /** Create or replace. Pending deliveries go to the new URL, signed with the new secret. */
  async put(name: string, body: PutWebhookBody): Promise<WebhookView> {
    if (!NAME_PATTERN.test(name)) throw AppError.validation([{ field: 'name', message: 'name must be 1-64 characters of [A-Za-z0-9_.:-]' }]);
    checkUrl(body.url);
    const bad = secretProblem(body.secret);
    if (bad) throw AppError.validation([{ field: 'secret', message: bad }]);
    const row = await this.db.sql.one<WebhookView>(WEBHOOKS_SQL.upsert, [name, body.url, body.events, body.secret]);
    return row!;
  }

  /** Every endpoint with how its deliveries are going (never its secret). */
  async list(): Promise<WebhookOverview[]> {
    const rows = await this.db.read.rows<OverviewRow>(WEBHOOKS_SQL.overview, [FAILED, DELIVERED, PENDING]);
    return rows.map((r) => ({
      name: r.name,
      url: r.url,
      events: r.events,
      lastHour: { delivered: r.delivered, failed: r.failed },
      failedDeliveries: r.failed_now,
      lastFailure: r.last_failure,
    }));
  }

  /** "Resend failed": every failed delivery of the endpoint is sent again (same webhook-id), due now. */
  async retryFailed(name: string): Promise<{ resent: number }> {
    await this.mustExist(name);
    return { resent: await this.db.sql.exec(WEBHOOKS_SQL.retryFailed, [name, FAILED, PENDING]) };
  }

  /**
   * The endpoint and all its deliveries. Every change that emits an event the endpoint takes locks
   * its row (the delivery's foreign key) in the change's own transaction — a Try's batch, a Confirm's
   * move — and gives up after its 500 ms lock timeout. Deleted with the endpoint in one cascade, a
   * backlog of failed deliveries (kept 30 days) held that row for as long as the cascade took, or as
   * long as a delivery it had to wait for was being recorded, and checkout answered 503 meanwhile.
   * So the deliveries go first, a batch at a time, each batch its own short transaction that holds
   * no lock on the endpoint; the endpoint's own delete then takes only what arrived since.
   */
  async remove(name: string): Promise<void> {
    if (!NAME_PATTERN.test(name)) throw AppError.notFound(`webhook ${name}`);
    while ((await this.db.sql.exec(WEBHOOKS_SQL.removeDeliveries, [name, REMOVE_BATCH])) === REMOVE_BATCH);
    const gone = await this.db.sql.exec(WEBHOOKS_SQL.remove, [name]);
    if (!gone) throw AppError.notFound(`webhook ${name}`);
  }

  async deliveries(name: string, q: DeliveriesQuery): Promise<{ data: DeliveryView[]; nextCursor: string | null }> {
    await this.mustExist(name);
    const limit = q.limit ? Number(q.limit) : 100;
    const after = q.cursor ? this.cursor.decode(q.cursor, 2, ([at, id]) => isPgTimestamp(at) && isUuid(id)) : FIRST;
    const statuses = q.status ? [q.status] : [...DELIVERY_STATUSES];
    const rows = await this.db.read.rows<DeliveryRow>(WEBHOOKS_SQL.deliveries, [name, statuses, after[0], after[1], limit + 1]);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return { data: page.map(view), nextCursor: rows.length > limit && last ? this.cursor.encode([last.created_at_key, last.id]) : null };
  }

  /** Sends a delivery again, same webhook-id and body (see WEBHOOKS_SQL.retry for its attempts). */
  async retry(name: string, id: string): Promise<DeliveryView> {
    await this.mustExist(name);
    const row = isUuid(id) ? await this.db.sql.one<DeliveryRow>(WEBHOOKS_SQL.retry, [name, id, PENDING]) : undefined;
    if (!row) throw AppError.notFound(`delivery ${id} of webhook ${name}`);
    return view(row);
  }

  private async mustExist(name: string): Promise<void> {
    const found = NAME_PATTERN.test(name) ? await this.db.sql.one(WEBHOOKS_SQL.exists, [name]) : undefined;
    if (!found) throw AppError.notFound(`webhook ${name}`);
  }
}
