import { statement } from '../../database/db.js';

/** The compensation's statements. Refund states are parameters ($n::text[] of REFUND_OPEN, …). */
export const REFUND_SQL = {
  /**
   * Takes a due refund round for a lease: a duplicate delivery finds nothing due. `lease` (the
   * lease's end, as text to keep its microseconds) is the round's own: its end is a compare-and-set
   * on it, so a round that outlived its lease changes nothing once another has taken the order.
   */
  claimRound: statement(
    'refund_claim_round',
    `UPDATE orders SET refund_next_at = now() + make_interval(secs => $2::float8 / 1000)
      WHERE id = $1 AND refund_status = ANY ($3::text[]) AND refund_next_at <= now()
      RETURNING refund_next_at::text AS lease, refund_failures, refund_status,
                extract(epoch FROM now() - coalesce(refund_owed_at, now())) * 1000 AS owed_for_ms,
                payment_status, payment_id, coalesce(refund_check_until <= now(), true) AS watch_over`,
  ),

  /**
   * A refund the gateway accepted: on the timeline and in the outbox, once per refund id
   * (order_events_refund_once), and only by the round that holds the order ($3, its lease, read
   * under the order's lock): a round that outlived its lease records nothing, as the round that
   * took over records the same money itself — found by its lookup, or by replaying the refund's key.
   */
  refunded: statement(
    'refund_refunded',
    `WITH o AS (SELECT id FROM orders WHERE id = $1 AND refund_next_at = $3::timestamptz FOR UPDATE),
     e AS (INSERT INTO order_events (order_id, type, data) SELECT o.id, 'refund.succeeded', $2::jsonb FROM o
           ON CONFLICT (order_id, (data->>'refundId')) WHERE type = 'refund.succeeded' DO NOTHING RETURNING order_id)
     SELECT tcc_emit('refund.succeeded', ARRAY(SELECT order_id FROM e))`,
  ),

  /** What the order's timeline records as refunded of one gateway payment. */
  recordedRefunds: statement(
    'refund_recorded',
    `SELECT coalesce(sum((data->>'amountMinor')::bigint), 0)::text AS recorded
       FROM order_events WHERE order_id = $1 AND type = 'refund.succeeded' AND data->>'paymentId' = $2`,
  ),

  /**
   * Nothing left to refund this round: done when the round says so ($6: the watch was over when it
   * began, or the order's hold ended without taking anything), else look again soon. A round whose
   * watch ran out while it was at the gateway does not end it: it leaves a last round due now, which
   * begins past the watch and so settles what only the watch's end decides (an authorization that
   * never turned up).
   */
  roundDone: statement(
    'refund_round_done',
    `UPDATE orders SET refund_failures = 0,
            refund_status = CASE WHEN $6::boolean THEN $3 ELSE refund_status END,
            refund_next_at = CASE WHEN $6::boolean THEN NULL
                                  ELSE least(refund_check_until, now() + make_interval(secs => $2::float8 / 1000)) END
      WHERE id = $1 AND refund_status = ANY ($4::text[]) AND refund_next_at = $5::timestamptz`,
  ),

  roundFailed: statement(
    'refund_round_failed',
    `WITH u AS (
       UPDATE orders SET refund_failures = $2, refund_next_at = now() + make_interval(secs => $3::float8 / 1000)
        WHERE id = $1 AND refund_status = ANY ($5::text[]) AND refund_next_at = $6::timestamptz RETURNING id)
     INSERT INTO order_events (order_id, type, data) SELECT id, 'refund.failed', $4::jsonb FROM u`,
  ),

  /** Still failing past REFUND_ALERT_AFTER_MS: NEEDS_ATTENTION (and still retried), flagged for $5 (refund_failing, void_failing). */
  needsAttention: statement(
    'refund_needs_attention',
    `WITH u AS (UPDATE orders SET refund_status = $2 WHERE id = $1 AND refund_status = $3 RETURNING id)
     SELECT tcc_flag_attention(id, $5, $4::jsonb) AS flagged FROM u`,
  ),

  /** Reconciliation found money on a released order: (re)open the refund watch. */
  owe: statement(
    'refund_owe',
    `WITH u AS (
       UPDATE orders SET refund_status = CASE WHEN refund_status = $4 THEN refund_status ELSE $3 END,
              refund_next_at = now(),
              refund_owed_at = CASE WHEN refund_status = ANY ($5::text[]) THEN coalesce(refund_owed_at, now()) ELSE now() END,
              refund_check_until = greatest(coalesce(refund_check_until, now()), now() + make_interval(secs => $2::float8 / 1000)),
              updated_at = tcc_order_stamp(updated_at)
        WHERE id = $1 RETURNING id)
     INSERT INTO order_events (order_id, type, data) SELECT id, 'refund.owed', $6::jsonb FROM u`,
  ),
} as const;
