import { parse } from 'csv-parse/sync';
import { AppError, FieldError } from '../../common/errors.js';
import { CsvText, inspect } from '../../http/json-body.js';
import { validateBody } from '../../http/validation.js';
import { IMPORT_COLUMNS, ImportBody, ImportRow, MAX_IMPORT_ROWS } from './catalogue.schemas.js';
import { DEFAULT_LOCATION } from '../locations/default-location.js';

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

/** An import's rows; for a CSV body also each row's line in the file (the header is line 1). */
export interface ImportInput {
  rows: ImportRow[];
  lines?: number[];
}

/**
 * An import's rows, from either body the contract allows, checked like any body: JSON against
 * ImportBody; CSV (RFC 4180) by its header — `sku` required, a column not among ImportRow's fields
 * is VALIDATION_FAILED naming it — then each row as the JSON row it stands for (an empty field is a
 * value not given; numbers written as integers), so a failure names `items[i].field` either way,
 * and in a CSV also the row's `line`.
 */
export function importRowsOf(raw: unknown): ImportInput {
  if (!(raw instanceof CsvText)) return { rows: validateBody(ImportBody, raw).items };
  const { items, lines } = csvItems(raw.text);
  try {
    const bad = inspect(items, 'items');
    if (bad) throw AppError.validation([bad]);
    return { rows: validateBody(ImportBody, { items }).items, lines };
  } catch (err) {
    throw withLines(err, lines);
  }
}

/** The errors that name a row (`items[i]…`) also name its line in the file. */
export function withLines(err: unknown, lines: readonly number[] | undefined): unknown {
  if (!lines || !(err instanceof AppError) || err.code !== 'VALIDATION_FAILED') return err;
  return AppError.validation(
    (err.extra.errors as FieldError[]).map((e) => {
      const row = /^items\[(\d+)\]/.exec(e.field);
      const line = row ? lines[Number(row[1])] : undefined;
      return line === undefined ? e : { ...e, line };
    }),
  );
}

function csvItems(text: string): { items: Record<string, unknown>[]; lines: number[] } {
  let records: string[][];
  try {
    records = parse(text, { bom: true, skip_empty_lines: true, relax_column_count: false, to: MAX_IMPORT_ROWS + 2 }) as string[][];
  } catch (err) {
    const line = (err as { lines?: number }).lines;
    throw AppError.validation([{ field: 'body', message: `not valid CSV${line ? ` (line ${line})` : ''}: ${(err as Error).message}`, ...(line ? { line } : {}) }]);
  }
  const [header, ...rows] = records;
  if (!header) throw AppError.validation([{ field: 'body', message: 'a CSV import needs a header row naming its columns' }]);
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  for (const column of header) {
    if (!(IMPORT_COLUMNS as string[]).includes(column)) errors.push({ field: column, message: `is not an allowed column (allowed: ${IMPORT_COLUMNS.join(', ')})`, line: 1 });
    else if (seen.has(column)) errors.push({ field: column, message: 'appears twice in the header', line: 1 });
    seen.add(column);
  }
  if (!seen.has('sku')) errors.push({ field: 'sku', message: 'is a required column', line: 1 });
  if (errors.length) throw AppError.validation(errors);
  if (rows.length > MAX_IMPORT_ROWS) throw AppError.validation([{ field: 'items', message: `items must hold 1-${MAX_IMPORT_ROWS} rows` }]);
  const items = rows.map((row) => {
    const item: Record<string, unknown> = {};
    header.forEach((column, i) => {
      const value = row[i];
      if (value === '') return;
      item[column] = NUMERIC.has(column) && /^-?\d{1,16}$/.test(value) ? Number(value) : value;
    });
    return item;
  });
  return { items, lines: recordLines(text).slice(1) };
}

/**
 * The line each record of a CSV text starts on (the first is line 1), for a text csv-parse has
 * already read without error: line breaks (CRLF, LF or CR) are counted inside quoted fields too,
 * empty lines are no record. csv-parse's own line count cannot serve: it counts a CRLF inside
 * quotes as two lines.
 */
export function recordLines(text: string): number[] {
  const starts: number[] = [];
  let line = 1;
  let quoted = false;
  let atStart = true;
  for (let i = text.charCodeAt(0) === 0xfeff ? 1 : 0; i < text.length; i++) {
    const ch = text[i];
    const lineBreak = ch === '\n' || ch === '\r';
    if (lineBreak && ch === '\r' && text[i + 1] === '\n') i++;
    if (atStart) {
      if (lineBreak) {
        line++;
        continue;
      }
      starts.push(line);
      atStart = false;
    }
    if (ch === '"') quoted = !quoted;
    else if (lineBreak) {
      line++;
      atStart = !quoted;
    }
  }
  return starts;
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
    const locationId = row.locationId ?? DEFAULT_LOCATION;
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
    locations: rows.map((r) => r.locationId ?? DEFAULT_LOCATION),
    onHands: rows.map((r) => r.onHand ?? null),
    safetyStocks: rows.map((r) => r.safetyStock ?? null),
  };
}
