-- tcc_movement_json: a movement of the ledger as the API shows it (API.md, "Ledger").
--
-- Applied after the migrations, and again whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_movement_json(m stock_movements) RETURNS json
LANGUAGE sql STABLE
AS $fn$
  SELECT json_build_object(
    'id', m.id::text, 'at', tcc_iso(m.at), 'sku', m.sku, 'locationId', m.location_id, 'kind', m.kind, 'delta', m.delta,
    'onHandAfter', m.on_hand_after, 'reason', m.reason, 'reference', m.reference, 'actor', m.actor, 'operator', m.operator,
    'principal', json_build_object('type', coalesce(m.principal_type, 'system'), 'id', m.principal_id, 'name', m.principal_name))
$fn$;
