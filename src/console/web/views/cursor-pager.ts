import { h } from '../dom.js';

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
