import { statement } from '../database/db.js';

const DELIVERY_COLUMNS = `d.id, d.type, d.order_id, d.status, d.attempts, d.last_error, d.last_status, d.last_response,
  tcc_iso(d.created_at) AS created_at, d.created_at::text AS created_at_key`;

/**
 * The webhook registry and its outbox (webhook_deliveries, written by tcc_emit in the transaction
 * of the change it reports). Delivery states are parameters ($n::text) like every state here.
 */
export const WEBHOOKS_SQL = {
  upsert: statement(
    'webhooks_upsert',
    `INSERT INTO webhooks (name, url, events, secret) VALUES ($1, $2, $3::text[], $4)
     ON CONFLICT (name) DO UPDATE SET url = EXCLUDED.url, events = EXCLUDED.events, secret = EXCLUDED.secret, updated_at = now()
     RETURNING name, url, events`,
  ),
  /** Never the secret. */
  list: statement('webhooks_list', `SELECT name, url, events FROM webhooks ORDER BY name COLLATE "C"`),

  /**
   * Each endpoint at a glance ($1 failed, $2 delivered, $3 pending): its deliveries whose latest
   * attempt was in the last hour (webhook_deliveries_recent) — delivered, or failed — each by its
   * latest attempt (a pending one is one sent again after its 2xx, or waiting for its next attempt
   * after a failed one), how many are failed now (what "Resend failed" sends again), and its most
   * recent failure as recorded by attemptFailed.
   */
  overview: statement(
    'webhooks_overview',
    `SELECT w.name, w.url, w.events, w.last_failure,
            (SELECT count(*) FROM webhook_deliveries d WHERE d.webhook_name = w.name AND d.status = $1)::int AS failed_now,
            h.delivered, h.failed
       FROM webhooks w
       CROSS JOIN LATERAL (
         SELECT count(*) FILTER (WHERE d.status = $2 OR (d.status = $3 AND d.last_attempt_ok))::int AS delivered,
                count(*) FILTER (WHERE d.status = $1 OR (d.status = $3 AND NOT d.last_attempt_ok))::int AS failed
           FROM webhook_deliveries d
          WHERE d.webhook_name = w.name AND d.updated_at > now() - interval '1 hour') h
      ORDER BY w.name COLLATE "C"`,
  ),

  /** "Resend failed": every failed delivery ($2) of an endpoint starts a fresh round, due now ($3 pending), no attempt made in it yet. */
  retryFailed: statement(
    'webhooks_retry_failed',
    `UPDATE webhook_deliveries SET attempts = 0, attempt_limit = NULL, last_attempt_ok = NULL, status = $3, next_attempt_at = now(), updated_at = now()
      WHERE webhook_name = $1 AND status = $2`,
  ),
  exists: statement('webhooks_exists', `SELECT 1 AS found FROM webhooks WHERE name = $1`),
  /**
   * Up to $2 of an endpoint's deliveries, gone in a transaction of their own: removing an endpoint
   * takes its deliveries first, a batch at a time, holding no lock on the endpoint meanwhile.
   */
  removeDeliveries: statement(
    'webhooks_remove_deliveries',
    `DELETE FROM webhook_deliveries WHERE ctid = ANY (ARRAY(SELECT ctid FROM webhook_deliveries WHERE webhook_name = $1 LIMIT $2))`,
  ),
  /** Then the endpoint; the deliveries written since the last batch go with it (ON DELETE CASCADE). */
  remove: statement('webhooks_remove', `DELETE FROM webhooks WHERE name = $1`),

  /**
   * One endpoint's deliveries in the states $2, oldest first, keyset-paginated on (created_at, id)
   * after ($3, $4). One ordered range scan of webhook_deliveries_by_status per state, merged: a
   * page costs its own rows, however many came before it.
   */
  deliveries: statement(
    'webhooks_deliveries',
    `SELECT x.* FROM unnest($2::text[]) AS s(status)
      CROSS JOIN LATERAL (
        SELECT ${DELIVERY_COLUMNS}, d.created_at AS sort_at
          FROM webhook_deliveries d
         WHERE d.webhook_name = $1 AND d.status = s.status
           AND (d.created_at, d.id) > ($3::timestamptz, $4::uuid)
         ORDER BY d.created_at, d.id
         LIMIT $5) x
      ORDER BY x.sort_at, x.id
      LIMIT $5`,
  ),

  /**
   * Sends a delivery again with its webhook-id and body, due now (API.md: "one more attempt"). A
   * failed or delivered one gets exactly one ($3 pending, its count kept, the attempt after it its
   * last); a pending one keeps its count and its limit and only stops waiting out its backoff.
   */
  retry: statement(
    'webhooks_retry',
    `UPDATE webhook_deliveries d
        SET attempt_limit = CASE WHEN d.status = $3 THEN d.attempt_limit ELSE d.attempts + 1 END,
            status = $3, next_attempt_at = now(), updated_at = now()
      WHERE d.webhook_name = $1 AND d.id = $2
      RETURNING ${DELIVERY_COLUMNS}`,
  ),

  /**
   * Takes up to $2 due deliveries ($3 pending) and pushes each one's next_attempt_at out by a lease
   * ($1 ms): a process that dies holding them only delays them. Rows another claimer holds are
   * skipped, never waited for. Unnamed, so each run is planned with its state and the partial index
   * webhook_deliveries_due serves it.
   */
  claimDue: `WITH due AS (
       SELECT webhook_name, id FROM webhook_deliveries
        WHERE status = $3 AND next_attempt_at <= now()
        ORDER BY next_attempt_at
        LIMIT $2
        FOR UPDATE SKIP LOCKED)
     UPDATE webhook_deliveries d SET next_attempt_at = now() + make_interval(secs => $1::float8 / 1000)
       FROM due WHERE d.webhook_name = due.webhook_name AND d.id = due.id
     RETURNING d.webhook_name, d.id, d.attempts`,

  /** What one attempt sends, if that attempt is still the delivery's next one ($3 attempts, $4 pending). */
  attempt: statement(
    'webhooks_attempt',
    `SELECT d.payload, w.url, w.secret
       FROM webhook_deliveries d JOIN webhooks w ON w.name = d.webhook_name
      WHERE d.webhook_name = $1 AND d.id = $2 AND d.attempts = $3 AND d.status = $4`,
  ),

  /** A 2xx: delivered ($4), if this attempt ($3 made before it, $5 pending) is still the one that counts. */
  delivered: statement(
    'webhooks_delivered',
    `UPDATE webhook_deliveries SET status = $4, attempts = attempts + 1, last_attempt_ok = true, next_attempt_at = NULL, updated_at = now()
      WHERE webhook_name = $1 AND id = $2 AND attempts = $3 AND status = $5`,
  ),

  /**
   * A failed attempt: due again in $5 ms, or — when it was the last one allowed ($4 attempts in all)
   * — failed ($7) for an operator to see; $6 pending. It keeps what the receiver answered ($9 HTTP
   * status, $10 the start of the body) on the delivery and, as the endpoint's last failure, on it.
   */
  attemptFailed: statement(
    'webhooks_attempt_failed',
    `WITH d AS (
       UPDATE webhook_deliveries
          SET attempts = attempts + 1, last_attempt_ok = false, last_error = $8, last_status = $9, last_response = $10, updated_at = now(),
              status = CASE WHEN attempts + 1 >= coalesce(attempt_limit, $4) THEN $7 ELSE status END,
              next_attempt_at = CASE WHEN attempts + 1 >= coalesce(attempt_limit, $4) THEN NULL ELSE now() + make_interval(secs => $5::float8 / 1000) END
        WHERE webhook_name = $1 AND id = $2 AND attempts = $3 AND status = $6
        RETURNING webhook_name, id, status),
     w AS (
       UPDATE webhooks SET last_failure = jsonb_build_object('at', tcc_iso(now()), 'deliveryId', d.id, 'error', $8::text, 'httpStatus', $9::int, 'body', $10::text)
         FROM d WHERE webhooks.name = d.webhook_name)
     SELECT status FROM d`,
  ),
} as const;
