-- tcc_movement_principal: who made a stock movement (API.md, "Who did it"), as its writers hand it
-- over. A writer passes its actor as JSON, `{"actor": "admin"|"console"|"system", "type", "id",
-- "name"}` (http/actor.ts, ledgerActor); this trigger (stock_movements_principal, BEFORE INSERT
-- on stock_movements) splits it into the actor and the principal columns. A plain actor (a writer
-- of a process from before principals, during a rolling upgrade) names the principal it can: the
-- root token for `admin` and `console` (the only credential there was), else the system.
--
-- Applied after the migrations, and again whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_movement_principal() RETURNS trigger
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_who jsonb;
BEGIN
  IF left(NEW.actor, 1) = '{' THEN
    v_who := NEW.actor::jsonb;
    NEW.actor := v_who->>'actor';
    NEW.principal_type := v_who->>'type';
    NEW.principal_id := v_who->>'id';
    NEW.principal_name := v_who->>'name';
  ELSIF NEW.principal_type IS NULL THEN
    NEW.principal_type := CASE WHEN NEW.actor IN ('admin', 'console') THEN 'root' ELSE 'system' END;
  END IF;
  RETURN NEW;
END
$fn$;
