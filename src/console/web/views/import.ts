import { api, ApiError, RawBody } from '../api.js';
import { h, show, uid } from '../dom.js';
import type { Nav } from '../nav.js';
import { cell, tableBox } from '../widgets.js';

/** POST /admin/inventory/import's answer. */
interface ImportCounts {
  created: number;
  updated: number;
  unchanged: number;
  onHandDelta: number;
}

interface FieldError {
  field: string;
  message: string;
  line?: number;
}

/** The route's limit (1 MiB): a larger file is refused before it is sent. */
const MAX_BYTES = 1024 * 1024;

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const signed = (n: number) => (n > 0 ? `+${n}` : String(n));

/** A CSV or a JSON file, by its name, else by its first character. */
function mediaType(file: File, text: string): string {
  if (/\.json$/i.test(file.name) || file.type === 'application/json') return 'application/json';
  if (/\.csv$/i.test(file.name) || file.type === 'text/csv') return 'text/csv';
  return /^\s*[{[]/.test(text) ? 'application/json' : 'text/csv';
}

/**
 * "items[6].onHand" as a person reads it: the row of the file, the column, and what the row says
 * (the line of a CSV as written, a JSON item as JSON), so the bad value is in front of them.
 */
function where(e: FieldError, body: RawBody): { at: string; column: string; row: string } {
  const m = /^items\[(\d+)\](?:\.(\w+))?$/.exec(e.field);
  const at = e.line ? `line ${e.line}` : m ? `item ${Number(m[1]) + 1}` : '—';
  let row = '';
  if (e.line) row = body.text.split(/\r?\n/)[e.line - 1] ?? '';
  else if (m && body.type === 'application/json') {
    try {
      row = JSON.stringify((JSON.parse(body.text) as { items: unknown[] }).items[Number(m[1])]) ?? '';
    } catch {
      row = '';
    }
  }
  return { at, column: m ? (m[2] ?? '—') : e.field, row: row.length > 120 ? `${row.slice(0, 120)}…` : row };
}

/**
 * Import (/console/inventory/import): a CSV or JSON file is first checked — the dry run says what
 * it would create, update and leave, and how much on hand would change, or which lines fail and
 * why — and only "Import" changes anything, with exactly the text that was checked.
 */
export function importView(main: HTMLElement, nav: Nav): void {
  document.title = 'Import · Inventory · TCC operator console';
  const fileId = uid('file');
  const file = h('input', { id: fileId, name: 'file', type: 'file', accept: '.csv,.json,text/csv,application/json', 'aria-describedby': `${fileId}-hint` });
  const check = h('button', { type: 'submit', class: 'primary' }, 'Check');
  const outcome = h('div', { role: 'status', 'aria-live': 'polite' });
  /** What was checked and may be imported: the text itself, so a file changed meanwhile is not what goes in. */
  let checked: { name: string; body: RawBody } | undefined;

  show(
    main,
    h('p', { class: 'crumbs' }, nav.link('/console/inventory', '← Inventory')),
    h('h1', null, 'Import stock from a file'),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'import-heading' },
      h('h2', { id: 'import-heading' }, 'CSV or JSON'),
      h(
        'form',
        { class: 'row-form top', onsubmit: (e: Event) => void runCheck(e) },
        h(
          'div',
          { class: 'field' },
          h('label', { for: fileId }, 'File'),
          file,
          h(
            'p',
            { id: `${fileId}-hint`, class: 'hint' },
            'CSV with a header row (sku, and any of name, priceMinor, currency, locationId, onHand, safetyStock, lowStockThreshold), or JSON { "items": [...] }. Up to 10,000 rows, 1 MiB. "Check" changes nothing.',
          ),
        ),
        h('div', { class: 'actions' }, check),
      ),
      outcome,
    ),
  );
  file.addEventListener('change', () => {
    checked = undefined;
    show(outcome);
  });

  async function runCheck(e: Event): Promise<void> {
    e.preventDefault();
    checked = undefined;
    const chosen = file.files?.[0];
    if (!chosen) return say('error', 'Choose a file first.');
    if (chosen.size > MAX_BYTES) return say('error', `${chosen.name} is ${Math.ceil(chosen.size / 1024)} KiB: an import takes at most 1 MiB. Split it in parts.`);
    const text = await chosen.text();
    const body = new RawBody(text, mediaType(chosen, text));
    check.disabled = true;
    say('hint', `Checking ${chosen.name}…`);
    try {
      const counts = await api<ImportCounts>('POST', '/admin/inventory/import?dryRun=true', body);
      checked = { name: chosen.name, body };
      showCheck(chosen.name, counts);
    } catch (err) {
      refused(chosen.name, body, err, 'Checked');
    } finally {
      check.disabled = false;
    }
  }

  function showCheck(name: string, c: ImportCounts): void {
    const go = h('button', { type: 'button', class: 'primary', onclick: () => void runImport(go) }, 'Import');
    show(
      outcome,
      h(
        'div',
        { class: 'message ok' },
        h('p', null, h('strong', null, `${name} is ready to import.`), ' Nothing has changed yet.'),
        h('p', null, `It would create ${plural(c.created, 'SKU')}, update ${c.updated}, and leave ${c.unchanged} unchanged; on hand would change by ${signed(c.onHandDelta)} in all.`),
      ),
      h('div', { class: 'actions' }, go),
    );
  }

  async function runImport(go: HTMLButtonElement): Promise<void> {
    if (!checked) return;
    go.disabled = true;
    const { name, body } = checked;
    try {
      const c = await api<ImportCounts>('POST', '/admin/inventory/import', body);
      checked = undefined;
      show(
        outcome,
        h(
          'div',
          { class: 'message ok' },
          h('p', null, h('strong', null, `Imported ${name}:`), ` created ${plural(c.created, 'SKU')}, updated ${c.updated}, ${c.unchanged} unchanged; on hand changed by ${signed(c.onHandDelta)} (each change is an import movement in the SKU's ledger).`),
        ),
        h('p', null, nav.link('/console/inventory', 'Back to the inventory')),
      );
    } catch (err) {
      go.disabled = false;
      // Stock moved between the check and the import (a sale): nothing was imported, and it says why.
      refused(name, body, err, 'Imported');
    }
  }

  function refused(name: string, body: RawBody, err: unknown, doing: 'Checked' | 'Imported'): void {
    if (!(err instanceof ApiError)) return say('error', `${name} could not be sent: ${(err as Error).message}`);
    if (err.status === 401) return;
    const nothing = doing === 'Checked' ? 'Nothing was imported; fix the file and check it again.' : 'Nothing was imported.';
    if (err.status === 413) return say('error', `${name} is over 1 MiB: an import takes at most 1 MiB. ${nothing}`);
    if (err.code === 'STOCK_BELOW_RESERVED') {
      const p = err.problem as { sku?: string; locationId?: string; line?: number };
      return say('error', `${p.line ? `Line ${p.line}` : 'A row'}: on hand for ${p.sku} at ${p.locationId} would be below what orders have reserved there now. ${nothing}`);
    }
    const errors = (err.problem.errors as FieldError[] | undefined) ?? [];
    if (err.code !== 'VALIDATION_FAILED' || errors.length === 0) return say('error', `${name} was refused: ${err.message} ${nothing}`);
    show(
      outcome,
      h('p', { class: 'message error', role: 'alert' }, `${name} has ${plural(errors.length, 'row that fails', 'rows that fail')}. ${nothing}`),
      tableBox(
        'Rows that fail',
        h(
          'table',
          { class: 'cards' },
          h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Where'), h('th', { scope: 'col' }, 'Column'), h('th', { scope: 'col' }, 'Problem'), h('th', { scope: 'col' }, 'The row'))),
          h(
            'tbody',
            null,
            errors.map((fe) => {
              const w = where(fe, body);
              return h(
                'tr',
                null,
                cell('Where', { class: 'card-title' }, w.at),
                cell('Column', null, w.column),
                cell('Problem', { class: 'wrap' }, fe.message),
                cell('The row', { class: 'wrap' }, w.row ? h('code', null, w.row) : '—'),
              );
            }),
          ),
        ),
      ),
    );
  }

  function say(kind: 'error' | 'hint', text: string): void {
    show(outcome, h('p', { class: kind === 'error' ? 'message error' : 'hint', role: kind === 'error' ? 'alert' : null }, text));
  }

  file.focus();
}
