-- tcc_order_stamp: an order's updated_at for a change made now, given its last one: the clock at the
-- change (not its statement's start: a batch that waited for the order's lock comes after the change
-- that held it) and never earlier than the last change plus a microsecond. An order's updatedAt
-- orders its events (API.md, "Webhooks"); every write of orders.updated_at goes through here.
--
-- Applied after the migrations, and again whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_order_stamp(p_last timestamptz) RETURNS timestamptz
LANGUAGE sql VOLATILE PARALLEL SAFE
AS $fn$
  SELECT greatest(clock_timestamp(), p_last + interval '1 microsecond')
$fn$;
