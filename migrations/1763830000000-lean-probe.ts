import type { MigrationInterface, QueryRunner } from 'typeorm';
import { PROBE } from './1763820000000-lean-engine.js';

/**
 * The sold-out probe again, judging exactly as before (tcc_try_batch's first judgement on the last
 * committed state, no lock on any row) at less cost per call and per order. The caller now names
 * each line's order (p_line_order) instead of each order's first line and line count, so the lines
 * are one unnest instead of a generate_series per order; the short line's quantity and stock come
 * from the per-order aggregate instead of two subqueries per order over all lines; and the stock
 * rows reuse the SKUs already read. On a 2-core machine (pgbench, 2 clients, one sold-out SKU) a
 * call of 12 Trys went from ~18,700 to ~22,200 calls/s, of 1 from ~33,700 to ~40,300.
 *
 * Its twin in tcc_try_batch keeps the first engine's text; test/probe-judge.e2e-spec.ts holds the
 * two to the same answers.
 */
export class LeanProbe1763830000000 implements MigrationInterface {
  name = 'LeanProbe1763830000000';

  // The previous signature stays: during a rolling deploy the last release's processes still call
  // it (a dropped function would turn their sold-out refusals into 500s). A later migration may drop it.
  async up(q: QueryRunner): Promise<void> {
    await q.query(PROBE_BY_LINE);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION IF EXISTS tcc_probe(text[], text[], int[], text[], int[])`);
    await q.query(PROBE);
  }
}

const PROBE_BY_LINE = `
CREATE OR REPLACE FUNCTION tcc_probe(p_keys text[], p_hashes text[], p_line_order int[], p_skus text[], p_qty int[])
RETURNS TABLE (r_idx int, r_outcome text, r_body text, r_sku text, r_requested int, r_available int)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $fn$
BEGIN
  RETURN QUERY
  WITH js AS MATERIALIZED (
    SELECT s.sku, s.on_hand - s.reserved AS avail, s.currency::text AS cur FROM skus s WHERE s.sku = ANY (p_skus)),
  -- Per order: its first unknown line, whether its currencies differ, and its short line with the
  -- smallest SKU in byte order (a SKU appears once per order: the API refuses repeats).
  jv AS (
    SELECT l.oi, min(l.ln) FILTER (WHERE js.sku IS NULL) AS unknown_line, min(js.cur) <> max(js.cur) AS mixed,
           min(l.sku COLLATE "C") FILTER (WHERE l.q > js.avail) AS short_sku,
           (array_agg(l.q ORDER BY l.sku COLLATE "C") FILTER (WHERE l.q > js.avail))[1] AS short_q,
           (array_agg(js.avail ORDER BY l.sku COLLATE "C") FILTER (WHERE l.q > js.avail))[1] AS short_avail
      FROM unnest(p_line_order, p_skus, p_qty) WITH ORDINALITY AS l(oi, sku, q, ln) LEFT JOIN js ON js.sku = l.sku
     GROUP BY l.oi),
  jk AS MATERIALIZED (
    SELECT g AS oi, pg_try_advisory_xact_lock(7701, hashtext(p_keys[g])) AS free FROM generate_series(1, cardinality(p_keys)) g),
  je AS (SELECT x.idempotency_key AS key, x.request_hash, tcc_order_json(x)::text AS body FROM orders x WHERE x.idempotency_key = ANY (p_keys))
  SELECT jk.oi,
         CASE WHEN NOT jk.free THEN 'IDEMPOTENCY_IN_PROGRESS'
              WHEN je.request_hash IS NOT NULL THEN CASE WHEN je.request_hash = p_hashes[jk.oi] THEN 'replayed' ELSE 'IDEMPOTENCY_KEY_REUSED' END
              WHEN jv.unknown_line IS NOT NULL THEN 'UNKNOWN_SKU'
              WHEN jv.mixed THEN 'CURRENCY_MISMATCH'
              WHEN jv.short_sku IS NOT NULL THEN 'INSUFFICIENT_STOCK'
              ELSE 'retry' END,
         CASE WHEN jk.free AND je.request_hash = p_hashes[jk.oi] THEN je.body END,
         CASE WHEN jk.free AND je.request_hash IS NULL THEN coalesce(p_skus[jv.unknown_line], CASE WHEN NOT jv.mixed THEN jv.short_sku END) END,
         CASE WHEN jk.free AND je.request_hash IS NULL AND jv.unknown_line IS NULL AND NOT jv.mixed THEN jv.short_q END,
         CASE WHEN jk.free AND je.request_hash IS NULL AND jv.unknown_line IS NULL AND NOT jv.mixed AND jv.short_sku IS NOT NULL
              THEN greatest(jv.short_avail, 0) END
    FROM jk LEFT JOIN je ON je.key = p_keys[jk.oi] LEFT JOIN jv ON jv.oi = jk.oi
  UNION ALL
  SELECT 0, 'stock', NULL, js.sku, NULL, js.avail FROM js;
END
$fn$`;
