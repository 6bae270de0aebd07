import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Stock per location, and the ledger. Until now a SKU had one stock pool (skus.on_hand, reserved);
 * from here each SKU has a stock row per location, every order line and outside branch line
 * carries where it was reserved, and every change of a location's on-hand stock is a movement.
 *
 * One transaction moves a deployment over, so it keeps selling what it held: the location
 * `default` (priority 0); every SKU's stock becomes its row there, with an opening `set` movement
 * of its on-hand stock (the ledger starts balanced); every order line — holding or finished —
 * gets its allocation at `default`, and so does every outside branch line (their reservations
 * rows gain the location). A deployment that never names another location then behaves as before.
 *
 * The ledger's invariant (sum of a row's movements = its on hand) is held by two triggers whose
 * functions live in src/inventory/ledger/ (tcc_movements_continue, tcc_on_hand_recorded): created
 * here so the triggers can name them, re-applied from those files at every start.
 */
export class StockLocations1763850000000 implements MigrationInterface {
  name = 'StockLocations1763850000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE locations (
        id          text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9_.:-]{1,64}$'),
        name        text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
        priority    integer NOT NULL CHECK (priority BETWEEN 0 AND 1000000),
        active      boolean NOT NULL DEFAULT true,
        created_at  timestamptz NOT NULL DEFAULT now(),
        updated_at  timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`INSERT INTO locations (id, name, priority, active) VALUES ('default', 'Default', 0, true)`);

    // One row per SKU and location. Reserved and on hand move together under the SKU row's lock
    // (the guard of its stock rows); the CHECK is the last line of defence against oversell.
    // Updated far more often than inserted: room on each page for HOT updates.
    await q.query(`
      CREATE TABLE stock (
        sku           text NOT NULL REFERENCES skus (sku),
        location_id   text NOT NULL REFERENCES locations (id),
        on_hand       integer NOT NULL CHECK (on_hand BETWEEN 0 AND 1000000000),
        reserved      integer NOT NULL DEFAULT 0,
        safety_stock  integer NOT NULL DEFAULT 0 CHECK (safety_stock BETWEEN 0 AND 1000000000),
        updated_at    timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (sku, location_id),
        CONSTRAINT stock_reserved_within_on_hand CHECK (reserved >= 0 AND reserved <= on_hand)
      ) WITH (fillfactor = 70)`);
    await q.query(`CREATE INDEX stock_by_location ON stock (location_id, sku)`);
    await q.query(`INSERT INTO stock (sku, location_id, on_hand, reserved) SELECT sku, 'default', on_hand, reserved FROM skus`);

    await q.query(`
      CREATE TABLE stock_movements (
        id               bigserial PRIMARY KEY,
        at               timestamptz NOT NULL DEFAULT now(),
        sku              text NOT NULL,
        location_id      text NOT NULL,
        kind             text NOT NULL CHECK (kind IN ('set', 'adjustment', 'sale', 'import', 'repair')),
        delta            integer NOT NULL CHECK (delta <> 0),
        on_hand_after    integer NOT NULL CHECK (on_hand_after >= 0),
        reason           text,
        reference        text,
        actor            text NOT NULL CHECK (actor IN ('admin', 'console', 'system')),
        operator         text,
        idempotency_key  text,
        request_hash     text,
        FOREIGN KEY (sku, location_id) REFERENCES stock (sku, location_id)
      )`);
    // A row's history (newest first for the API, the last movement for the ledger's triggers) and
    // its sum for the consistency check, from the index alone.
    await q.query(`CREATE INDEX stock_movements_by_stock ON stock_movements (sku, location_id, id) INCLUDE (delta, on_hand_after)`);
    await q.query(`CREATE INDEX stock_movements_by_sku ON stock_movements (sku, id)`);
    await q.query(`CREATE UNIQUE INDEX stock_movements_idempotency_key ON stock_movements (idempotency_key) WHERE idempotency_key IS NOT NULL`);
    await q.query(`
      INSERT INTO stock_movements (sku, location_id, kind, delta, on_hand_after, reason, actor)
      SELECT sku, 'default', 'set', on_hand, on_hand, 'opening balance', 'system' FROM skus WHERE on_hand > 0 ORDER BY sku COLLATE "C"`);

    await q.query(`
      ALTER TABLE skus DROP CONSTRAINT skus_reserved_within_on_hand, DROP COLUMN on_hand, DROP COLUMN reserved,
        ADD COLUMN low_stock_threshold integer NOT NULL DEFAULT 0 CHECK (low_stock_threshold BETWEEN 0 AND 1000000000),
        ADD COLUMN low_stock boolean NOT NULL DEFAULT false`);
    await q.query(`CREATE INDEX skus_low_stock ON skus (sku) WHERE low_stock`);

    // Every order line says where it was reserved: at default, the only pool there was.
    await q.query(`
      UPDATE orders SET items = (
        SELECT coalesce(jsonb_agg(line || jsonb_build_object('allocations', jsonb_build_array(
                 jsonb_build_object('locationId', 'default', 'quantity', line->'quantity'))) ORDER BY pos), '[]'::jsonb)
          FROM jsonb_array_elements(items) WITH ORDINALITY AS x(line, pos))`);
    await q.query(`ALTER TABLE reservations ADD COLUMN location_id text NOT NULL DEFAULT 'default' REFERENCES locations (id)`);
    await q.query(`ALTER TABLE reservations ALTER COLUMN location_id DROP DEFAULT`);
    await q.query(`ALTER TABLE reservations DROP CONSTRAINT reservations_pkey, ADD PRIMARY KEY (transaction_id, sku, location_id)`);
    await q.query(`
      UPDATE participant_branches SET items = (
        SELECT coalesce(jsonb_agg(line || jsonb_build_object('allocations', jsonb_build_array(
                 jsonb_build_object('locationId', 'default', 'quantity', line->'quantity'))) ORDER BY pos), '[]'::jsonb)
          FROM jsonb_array_elements(items) WITH ORDINALITY AS x(line, pos))`);

    // Inventory events carry a SKU, not an order.
    await q.query(`ALTER TABLE webhook_deliveries ADD COLUMN sku text`);

    // Who repaired the inventory, and why.
    await q.query(`
      CREATE TABLE admin_audit (
        id        bigserial PRIMARY KEY,
        at        timestamptz NOT NULL DEFAULT now(),
        action    text NOT NULL,
        actor     text NOT NULL CHECK (actor IN ('admin', 'console', 'system')),
        operator  text,
        reason    text,
        data      jsonb NOT NULL DEFAULT '{}'::jsonb
      )`);

    for (const sql of LEDGER_GUARD) await q.query(sql);
  }

  async down(q: QueryRunner): Promise<void> {
    // Back to one stock pool per SKU (the sum over its locations); the ledger and the locations go.
    await q.query(`DROP TRIGGER IF EXISTS stock_movements_continue ON stock_movements`);
    await q.query(`DROP TABLE IF EXISTS admin_audit`);
    await q.query(`ALTER TABLE webhook_deliveries DROP COLUMN IF EXISTS sku`);
    await q.query(`ALTER TABLE skus ADD COLUMN on_hand integer NOT NULL DEFAULT 0 CHECK (on_hand >= 0), ADD COLUMN reserved integer NOT NULL DEFAULT 0`);
    await q.query(`UPDATE skus s SET on_hand = t.on_hand, reserved = t.reserved FROM (SELECT sku, sum(on_hand) AS on_hand, sum(reserved) AS reserved FROM stock GROUP BY sku) t WHERE t.sku = s.sku`);
    await q.query(`ALTER TABLE skus ADD CONSTRAINT skus_reserved_within_on_hand CHECK (reserved >= 0 AND reserved <= on_hand), DROP COLUMN low_stock_threshold, DROP COLUMN low_stock`);
    // Best effort back to one pool: each branch line's quantity summed over its locations.
    await q.query(`CREATE TEMP TABLE reservations_merged ON COMMIT DROP AS
                   SELECT transaction_id, sku, sum(quantity)::int AS quantity, min(created_at) AS created_at FROM reservations GROUP BY 1, 2`);
    await q.query(`DELETE FROM reservations`);
    await q.query(`ALTER TABLE reservations DROP CONSTRAINT reservations_pkey, DROP COLUMN location_id, ADD PRIMARY KEY (transaction_id, sku)`);
    await q.query(`INSERT INTO reservations (transaction_id, sku, quantity, created_at) SELECT * FROM reservations_merged`);
    await q.query(`UPDATE orders SET items = (SELECT coalesce(jsonb_agg(line - 'allocations' ORDER BY pos), '[]'::jsonb) FROM jsonb_array_elements(items) WITH ORDINALITY AS x(line, pos))`);
    await q.query(`UPDATE participant_branches SET items = (SELECT coalesce(jsonb_agg(line - 'allocations' ORDER BY pos), '[]'::jsonb) FROM jsonb_array_elements(items) WITH ORDINALITY AS x(line, pos))`);
    await q.query(`DROP TABLE IF EXISTS stock_movements`);
    await q.query(`DROP TABLE IF EXISTS stock`);
    await q.query(`DROP TABLE IF EXISTS locations`);
    await q.query(`DROP FUNCTION IF EXISTS tcc_movements_continue()`);
    await q.query(`DROP FUNCTION IF EXISTS tcc_on_hand_recorded()`);
  }
}

/**
 * The ledger's triggers. Their functions' live text is src/inventory/ledger/movements-continue.sql
 * and on-hand-recorded.sql, re-applied from there at every start; created here too because a
 * trigger must name an existing function.
 */
const LEDGER_GUARD = [
  `CREATE OR REPLACE FUNCTION tcc_movements_continue() RETURNS trigger
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_broken record;
BEGIN
  SELECT n.sku, n.location_id, n.delta, n.on_hand_after, coalesce(p.on_hand_after, 0) AS before INTO v_broken
    FROM new_rows n
    LEFT JOIN LATERAL (SELECT m.on_hand_after FROM stock_movements m
                        WHERE m.sku = n.sku AND m.location_id = n.location_id AND m.id < n.id ORDER BY m.id DESC LIMIT 1) p ON true
   WHERE n.kind <> 'repair' AND coalesce(p.on_hand_after, 0) + n.delta <> n.on_hand_after
   LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'stock movement of % at % does not continue its history: % + % <> %',
      v_broken.sku, v_broken.location_id, v_broken.before, v_broken.delta, v_broken.on_hand_after USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END
$fn$`,
  `CREATE OR REPLACE FUNCTION tcc_on_hand_recorded() RETURNS trigger
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_on_hand int;
  v_recorded int;
BEGIN
  SELECT st.on_hand INTO v_on_hand FROM stock st WHERE st.sku = NEW.sku AND st.location_id = NEW.location_id;
  SELECT m.on_hand_after INTO v_recorded FROM stock_movements m
   WHERE m.sku = NEW.sku AND m.location_id = NEW.location_id ORDER BY m.id DESC LIMIT 1;
  IF v_on_hand IS NOT NULL AND v_on_hand <> coalesce(v_recorded, 0) THEN
    RAISE EXCEPTION 'on hand of % at % is % but its ledger says %', NEW.sku, NEW.location_id, v_on_hand, coalesce(v_recorded, 0)
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END
$fn$`,
  `CREATE TRIGGER stock_movements_continue AFTER INSERT ON stock_movements REFERENCING NEW TABLE AS new_rows
     FOR EACH STATEMENT EXECUTE FUNCTION tcc_movements_continue()`,
  `CREATE CONSTRAINT TRIGGER stock_on_hand_recorded_insert AFTER INSERT ON stock DEFERRABLE INITIALLY DEFERRED
     FOR EACH ROW WHEN (NEW.on_hand <> 0) EXECUTE FUNCTION tcc_on_hand_recorded()`,
  `CREATE CONSTRAINT TRIGGER stock_on_hand_recorded_update AFTER UPDATE OF on_hand ON stock DEFERRABLE INITIALLY DEFERRED
     FOR EACH ROW WHEN (OLD.on_hand IS DISTINCT FROM NEW.on_hand) EXECUTE FUNCTION tcc_on_hand_recorded()`,
];
