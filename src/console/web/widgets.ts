import { Attrs, Child, h, uid } from './dom.js';
import { onLeave } from './lifecycle.js';

/** Every auto-refresh ticks this often. */
export const REFRESH_MS = 10_000;

/** Whether "Auto-refresh" is on; kept while the page stays open, so a choice holds across views. */
let autoRefreshOn = true;

/**
 * The "Auto-refresh" checkbox (on by default): while it is on, `tick` runs every REFRESH_MS until
 * the view is left. A tick never overlaps the one before it.
 */
export function autoRefresh(tick: () => Promise<void>): HTMLElement {
  const id = uid('auto-refresh');
  let timer: ReturnType<typeof setInterval> | undefined;
  let running = false;
  const start = () => {
    stop();
    timer = setInterval(() => {
      if (running || document.hidden) return;
      running = true;
      void tick().finally(() => (running = false));
    }, REFRESH_MS);
  };
  const stop = () => {
    if (timer !== undefined) clearInterval(timer);
    timer = undefined;
  };
  const box = h('input', {
    id,
    type: 'checkbox',
    name: 'autoRefresh',
    checked: autoRefreshOn,
    onchange: () => {
      autoRefreshOn = box.checked;
      if (autoRefreshOn) start();
      else stop();
    },
  });
  if (autoRefreshOn) start();
  onLeave(stop);
  return h('div', { class: 'field inline check auto-refresh' }, box, h('label', { for: id }, 'Auto-refresh'), h('span', { class: 'hint' }, 'every 10 s'));
}

/**
 * A button that copies `text` (an id) to the clipboard, labelled for what it copies. `spelled`: it
 * says "Copy <what>" in so many words (a secret shown once), with no separate accessible name.
 */
export function copyButton(text: string, what: string, spelled = false): HTMLButtonElement {
  const label = spelled ? `Copy ${what}` : 'Copy';
  const button = h('button', spelled ? { type: 'button', class: 'copy' } : { type: 'button', class: 'copy', 'aria-label': `Copy ${what}`, title: `Copy ${what}` }, label);
  button.addEventListener('click', () => {
    void copy(text).then((ok) => {
      button.textContent = ok ? 'Copied' : 'Select and copy';
      setTimeout(() => (button.textContent = label), 1500);
    });
  });
  return button;
}

async function copy(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // No clipboard API (a page served over plain http to another host): the older way.
    const area = h('textarea', { class: 'visually-hidden', readonly: true });
    area.value = text;
    document.body.append(area);
    area.select();
    const ok = document.execCommand('copy');
    area.remove();
    return ok;
  }
}

/**
 * A table cell that names its column: on a phone, a table of class "cards" shows each row as a
 * card of labelled lines (styles.css), so no column falls off the screen.
 */
export function cell(label: string, attrs: Attrs | null, ...children: Child[]): HTMLTableCellElement {
  return h('td', { ...attrs, 'data-label': label }, ...children);
}

/** A box a wide table scrolls in: reached with Tab, scrolled with the arrow keys, named for a screen reader. */
export function tableBox(label: string, table: HTMLTableElement): HTMLElement {
  return h('div', { class: 'table-wrap', tabindex: 0, role: 'group', 'aria-label': label }, table);
}
