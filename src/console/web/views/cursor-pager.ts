import { api, ApiError } from '../api.js';
import { h } from '../dom.js';
import type { Page } from '../types.js';

/**
 * "Previous page" / "Next page" over a list the admin API pages by cursor: the cursors of the pages
 * before are kept in memory, so Previous returns to exactly the page seen before.
 */
export interface CursorPager {
  element: HTMLElement;
  /** The cursor of the page to load (null: the first page). */
  readonly cursor: string | null;
  /** After a page has loaded: whether a next page exists. */
  loaded(nextCursor: string | null): void;
  /** Back to the first page (a filter changed). */
  reset(): void;
}

export function cursorPager(label: string, load: () => void): CursorPager {
  const trail: (string | null)[] = [];
  let cursor: string | null = null;
  let next: string | null = null;
  const prev = h('button', { type: 'button', disabled: true, onclick: () => go(trail.pop() ?? null) }, 'Previous page');
  const nextButton = h(
    'button',
    {
      type: 'button',
      disabled: true,
      onclick: () => {
        if (!next) return;
        trail.push(cursor);
        go(next);
      },
    },
    'Next page',
  );
  const where = h('span', { class: 'page-number' });
  const go = (to: string | null) => {
    cursor = to;
    prev.disabled = true;
    nextButton.disabled = true;
    load();
  };
  return {
    element: h('nav', { class: 'pager', 'aria-label': label }, prev, where, nextButton),
    get cursor() {
      return cursor;
    },
    loaded(nextCursor) {
      next = nextCursor;
      prev.disabled = trail.length === 0;
      nextButton.disabled = !next;
      where.textContent = `Page ${trail.length + 1}`;
    },
    reset() {
      trail.length = 0;
      cursor = null;
      next = null;
    },
  };
}

/**
 * A page of a list that failed to load: nothing more on 401 (the page has gone to sign-in); back to
 * the first page when the service no longer accepts the cursor (400: its signing key changed) —
 * true, load again; else `say` puts the error in words and the pager shows no next page.
 */
export function pageFailed(pager: CursorPager, err: unknown, say: (message: string) => void): boolean {
  if (err instanceof ApiError && err.status === 401) return false;
  if (err instanceof ApiError && err.status === 400 && pager.cursor) {
    pager.reset();
    return true;
  }
  say((err as Error).message);
  pager.loaded(null);
  return false;
}

/** A table's only row, saying what went wrong across all of its `colspan` columns. */
export function errorRow(colspan: number, text: string): HTMLElement {
  return h('tr', null, h('td', { colspan, class: 'empty' }, h('span', { class: 'message error', role: 'alert' }, text)));
}

/**
 * Every item of a list the admin API pages by cursor (`path` without a query), following
 * `nextCursor` until it is null, 1000 a page (the most the API gives): for a select that must offer
 * each one, however many there are.
 */
export async function everyPage<T>(path: string): Promise<T[]> {
  const all: T[] = [];
  let cursor: string | null = null;
  do {
    const q = new URLSearchParams({ limit: '1000' });
    if (cursor) q.set('cursor', cursor);
    const page: Page<T> = await api<Page<T>>('GET', `${path}?${q}`);
    all.push(...page.data);
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}
