-- tcc_try_lock_keys: each Try's Idempotency-Key try-locked for the rest of this transaction, never
-- waited for: true where this transaction holds it now, false where another transaction is
-- claiming that key right now (its Try is "in flight": IDEMPOTENCY_IN_PROGRESS). One entry per key,
-- in their order. The general judge (judge-trys.sql) calls it, and for the common shape's judge
-- (judge-one-line.sql) its callers do (try-batch.sql, probe.sql): always as a statement of its own,
-- so that the judgement, on a later snapshot, sees every order whose key holder committed before
-- the key was got.
--
-- Applied after the migrations, and again whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_try_lock_keys(p_keys text[]) RETURNS boolean[]
LANGUAGE sql
AS $fn$
  SELECT array_agg(pg_try_advisory_xact_lock(7701, hashtext(u.key)) ORDER BY u.ord) FROM unnest(p_keys) WITH ORDINALITY AS u(key, ord)
$fn$;
