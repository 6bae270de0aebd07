import { parse } from 'csv-parse/sync';
import { AppError, FieldError } from '../../common/errors.js';
import { CsvText, inspect } from '../../http/json-body.js';
import { validateBody } from '../../http/validation.js';
import { IMPORT_COLUMNS, ImportBody, ImportRow, MAX_IMPORT_ROWS } from './catalogue.schemas.js';

/** The columns of an import the database receives, one array per column, row i at index i. */
export interface ImportColumns {
  skus: string[];
  names: (string | null)[];
  prices: (number | null)[];
  currencies: (string | null)[];
  thresholds: (number | null)[];
  locations: string[];
  onHands: (number | null)[];
  safetyStocks: (number | null)[];
}

const NUMERIC = new Set<string>(['priceMinor', 'onHand', 'safetyStock', 'lowStockThreshold']);
const SKU_FIELDS = ['name', 'priceMinor', 'currency', 'lowStockThreshold'] as const;

/**
 * An import's rows, from either body the contract allows, checked like any body: JSON against
 * ImportBody; CSV (RFC 4180) by its header — `sku` required, a column not among ImportRow's fields
 * is VALIDATION_FAILED naming it — then each row as the JSON row it stands for (an empty field is a
 * value not given; numbers written as integers), so a failure names `items[i].field` either way.
 */
export function importRowsOf(raw: unknown): ImportRow[] {
  if (!(raw instanceof CsvText)) return validateBody(ImportBody, raw).items;
  const items = csvItems(raw.text);
  const bad = inspect(items, 'items');
  if (bad) throw AppError.validation([bad]);
  return validateBody(ImportBody, { items }).items;
}

function csvItems(text: string): Record<string, unknown>[] {
  let records: string[][];
  try {
    records = parse(text, { bom: true, skip_empty_lines: true, relax_column_count: false, to_line: MAX_IMPORT_ROWS + 2 }) as string[][];
  } catch (err) {
    const line = (err as { lines?: number }).lines;
    throw AppError.validation([{ field: 'body', message: `not valid CSV${line ? ` (line ${line})` : ''}: ${(err as Error).message}` }]);
  }
  const [header, ...rows] = records;
  if (!header) throw AppError.validation([{ field: 'body', message: 'a CSV import needs a header row naming its columns' }]);
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  for (const column of header) {
    if (!(IMPORT_COLUMNS as string[]).includes(column)) errors.push({ field: column, message: `is not an allowed column (allowed: ${IMPORT_COLUMNS.join(', ')})` });
    else if (seen.has(column)) errors.push({ field: column, message: 'appears twice in the header' });
    seen.add(column);
  }
  if (!seen.has('sku')) errors.push({ field: 'sku', message: 'is a required column' });
  if (errors.length) throw AppError.validation(errors);
  if (rows.length > MAX_IMPORT_ROWS) throw AppError.validation([{ field: 'items', message: `items must hold 1-${MAX_IMPORT_ROWS} rows` }]);
  return rows.map((row) => {
    const item: Record<string, unknown> = {};
    header.forEach((column, i) => {
      const value = row[i];
      if (value === '') return;
      item[column] = NUMERIC.has(column) && /^-?\d{1,16}$/.test(value) ? Number(value) : value;
    });
    return item;
  });
}

/**
 * The rows as the database takes them, each SKU's own values (name, price, currency, threshold)
 * merged across its rows — rows that name one SKU must agree on them — and each location of a SKU
 * named once. VALIDATION_FAILED names the row that disagrees or repeats.
 */
export function importColumnsOf(rows: ImportRow[]): ImportColumns {
  const perSku = new Map<string, { first: Map<string, number>; values: Partial<ImportRow> }>();
  const places = new Map<string, number>();
  const errors: FieldError[] = [];
  rows.forEach((row, i) => {
    const locationId = row.locationId ?? 'default';
    const place = `${row.sku}\u0000${locationId}`;
    const earlier = places.get(place);
    if (earlier !== undefined) errors.push({ field: `items[${i}].locationId`, message: `${row.sku} at ${locationId} is already items[${earlier}]` });
    else places.set(place, i);
    let sku = perSku.get(row.sku);
    if (!sku) perSku.set(row.sku, (sku = { first: new Map(), values: {} }));
    for (const field of SKU_FIELDS) {
      const value = row[field];
      if (value === undefined) continue;
      const given = sku.values[field];
      if (given === undefined) {
        (sku.values as Record<string, unknown>)[field] = value;
        sku.first.set(field, i);
      } else if (given !== value) {
        errors.push({ field: `items[${i}].${field}`, message: `differs from items[${sku.first.get(field)}].${field} for the same SKU` });
      }
    }
  });
  if (errors.length) throw AppError.validation(errors.slice(0, 20));
  const merged = rows.map((row) => perSku.get(row.sku)!.values);
  return {
    skus: rows.map((r) => r.sku),
    names: merged.map((v) => v.name ?? null),
    prices: merged.map((v) => v.priceMinor ?? null),
    currencies: merged.map((v) => v.currency ?? null),
    thresholds: merged.map((v) => v.lowStockThreshold ?? null),
    locations: rows.map((r) => r.locationId ?? 'default'),
    onHands: rows.map((r) => r.onHand ?? null),
    safetyStocks: rows.map((r) => r.safetyStock ?? null),
  };
}
