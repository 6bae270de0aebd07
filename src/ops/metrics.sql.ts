import { ORDER_FIGURES } from '../orders/state/orders.sql.js';

/**
 * What /metrics reads from Postgres: every query bounded by an index or a small table, none a
 * count over every order (order_counts plus the deltas triggers append on every status change). Sent unnamed:
 * planned with the actual state lists, so Postgres can use the partial indexes on them.
 */
export const METRICS_SQL = {
  scrape: `SELECT ${ORDER_FIGURES},
                  (SELECT extract(epoch FROM now() - min(created_at)) FROM orders WHERE status = ANY ($1::text[])) AS oldest_holding,
                  (SELECT greatest(0, extract(epoch FROM now() - min(least(reservation_expires_at, next_action_at)))) FROM orders WHERE status = ANY ($1::text[])) AS holding_overdue,
                  (SELECT count(*) FROM orders WHERE refund_status = $2) AS refunds_pending,
                  (SELECT (state->>'lastSuccessMs')::float8 / 1000 FROM job_state WHERE name = 'reconciliation') AS reconciled_at,
                  (SELECT extract(epoch FROM now() - min(created_at)) FROM participant_branches WHERE status = $3) AS oldest_branch,
                  (SELECT count(*) FROM skus WHERE low_stock) AS low_stock_skus,
                  (SELECT (state->>'mismatches')::int FROM job_state WHERE name = 'inventory-consistency') AS inventory_mismatches`,
} as const;
