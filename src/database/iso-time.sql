-- tcc_iso: a timestamp as ISO 8601 UTC with milliseconds, exactly as JavaScript's Date#toISOString
-- writes it. The order JSON (tcc_order_json) and every statement that answers a time use it, so a
-- time reads the same whichever path wrote the answer.
--
-- Applied after the migrations, and again whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_iso(ts timestamptz) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
AS $fn$
  SELECT to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$fn$;
