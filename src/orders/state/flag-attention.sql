-- tcc_flag_attention: flags an order for a human (a refund still failing, a reconciliation
-- mismatch, a capture on a force-confirmed order) until an operator acknowledges it: once per
-- episode, with its timeline event and outbox row. Returns true when this call raised the flag.
--
-- Plans pinned like the engine's (see apply-moves.sql): generic, no sequential scan, no JIT.
-- Applied after the migrations, and again whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_flag_attention(p_id uuid, p_reason text, p_data jsonb) RETURNS boolean
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off
AS $fn$
BEGIN
  -- Raise the flag, unless it is raised already.
  UPDATE orders SET needs_attention = true, attention_reason = p_reason, updated_at = tcc_order_stamp(updated_at) WHERE id = p_id AND NOT needs_attention;
  IF NOT FOUND THEN RETURN false; END IF;
  -- The timeline says why; the outbox tells subscribers.
  INSERT INTO order_events (order_id, type, data) VALUES (p_id, 'attention.needed', jsonb_build_object('reason', p_reason) || coalesce(p_data, '{}'::jsonb));
  PERFORM tcc_emit('order.needs_attention', ARRAY[p_id]);
  RETURN true;
END
$fn$;
