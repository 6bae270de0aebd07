import { Static, Type } from '@sinclair/typebox';
import { LOCATION_ID_PATTERN, SKU_PATTERN, SkuString } from '../../http/schemas.js';
import { InventoryView, LowStockThreshold, MAX_PRICE_MINOR } from '../inventory.schemas.js';
import { Cursor, Limit } from '../ledger/ledger.schemas.js';
import { DEFAULT_LOCATION } from '../locations/default-location.js';

export const MAX_IMPORT_ROWS = 10_000;

/** GET /admin/inventory */
export const CatalogueQuery = Type.Object(
  {
    limit: Type.Optional(Limit),
    cursor: Type.Optional(Cursor),
    lowStock: Type.Optional(Type.String({ enum: ['true', 'false'], 'x-message': 'lowStock must be true or false', description: 'true: SKUs whose threshold is above 0 and whose available is at or below it' })),
    locationId: Type.Optional(Type.String({ pattern: LOCATION_ID_PATTERN.source, 'x-message': 'locationId must be 1-64 characters of [A-Za-z0-9_.:-]', description: 'SKUs with a stock row there' })),
    skuPrefix: Type.Optional(Type.String({ pattern: SKU_PATTERN.source, 'x-message': 'skuPrefix must be 1-64 characters of [A-Za-z0-9_.:-]' })),
    lowAnywhere: Type.Optional(
      Type.String({ enum: ['true', 'false'], 'x-message': 'lowAnywhere must be true or false', description: 'true: SKUs low in all (as lowStock) or at some location (lowAt not empty)' }),
    ),
    lowAt: Type.Optional(
      Type.String({ pattern: LOCATION_ID_PATTERN.source, 'x-message': 'lowAt must be 1-64 characters of [A-Za-z0-9_.:-]', description: 'SKUs whose lowAt names this location' }),
    ),
  },
  { additionalProperties: false },
);
export type CatalogueQuery = Static<typeof CatalogueQuery>;

/** A catalogue entry: the inventory JSON, and where the SKU is low. */
export const CatalogueItem = Type.Composite([
  InventoryView,
  Type.Object({
    lowAt: Type.Array(Type.String(), {
      description: "the active locations carrying the SKU whose own available is at or below the SKU's lowStockThreshold (default only when it holds stock or is the only row), by priority",
    }),
  }),
]);
export const CataloguePage = Type.Object({ data: Type.Array(CatalogueItem), nextCursor: Type.Union([Type.String(), Type.Null()]) });

const STOCK = { minimum: 0, maximum: 1_000_000_000 };

/** One row of an import: a SKU (its name, price, currency, threshold) and its stock at one location. */
export const ImportRow = Type.Object(
  {
    sku: SkuString,
    name: Type.Optional(Type.String({ maxLength: 200, 'x-message': 'name must be a string of at most 200 characters' })),
    priceMinor: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_PRICE_MINOR, 'x-message': `priceMinor must be an integer from 0 to ${MAX_PRICE_MINOR}` })),
    currency: Type.Optional(Type.String({ pattern: '^[A-Z]{3}$', 'x-message': 'currency must be an ISO 4217 code (3 upper-case letters)' })),
    locationId: Type.Optional(Type.String({ pattern: LOCATION_ID_PATTERN.source, 'x-message': 'locationId must be 1-64 characters of [A-Za-z0-9_.:-]', description: `default "${DEFAULT_LOCATION}"` })),
    onHand: Type.Optional(Type.Integer({ ...STOCK, 'x-message': 'onHand must be an integer from 0 to 1000000000' })),
    safetyStock: Type.Optional(Type.Integer({ ...STOCK, 'x-message': 'safetyStock must be an integer from 0 to 1000000000' })),
    lowStockThreshold: Type.Optional(LowStockThreshold),
  },
  { additionalProperties: false },
);
export type ImportRow = Static<typeof ImportRow>;

/** The column names a CSV import may have (its header row): exactly ImportRow's fields. */
export const IMPORT_COLUMNS = Object.keys(ImportRow.properties) as (keyof ImportRow)[];

/** POST /admin/inventory/import as JSON (or text/csv with a header row naming ImportRow's fields). */
export const ImportBody = Type.Object(
  {
    items: Type.Array(ImportRow, { minItems: 1, maxItems: MAX_IMPORT_ROWS, 'x-message': `items must hold 1-${MAX_IMPORT_ROWS} rows` }),
  },
  { additionalProperties: false, description: 'or text/csv: a header row naming any of the item fields (sku required), then one row per item' },
);
export type ImportBody = Static<typeof ImportBody>;

/** POST /admin/inventory/import?dryRun=true: judged the same way, answered the same counts, nothing changed. */
export const ImportQuery = Type.Object(
  { dryRun: Type.Optional(Type.String({ enum: ['true', 'false'], 'x-message': 'dryRun must be true or false', description: 'true: judge the rows and answer the counts, changing nothing' })) },
  { additionalProperties: false },
);
export type ImportQuery = Static<typeof ImportQuery>;

export const ImportResult = Type.Object({
  created: Type.Integer({ description: 'SKUs created' }),
  updated: Type.Integer({ description: 'existing SKUs with any value changed (the name, price, currency, threshold, or the stock of a location)' }),
  unchanged: Type.Integer({ description: 'existing SKUs whose every given value equalled what it was' }),
  onHandDelta: Type.Integer({ description: 'the sum of the movements the import wrote (would write, on a dry run)' }),
});
export type ImportResult = Static<typeof ImportResult>;
