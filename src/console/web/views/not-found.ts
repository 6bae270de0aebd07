import { h, show } from '../dom.js';
import type { Nav } from '../nav.js';

/** A console page for what does not exist (an unknown page, order or SKU), with the way back. */
export function notFoundView(main: HTMLElement, nav: Nav, text: string, heading = 'Page not found'): void {
  document.title = `${heading} · TCC operator console`;
  show(
    main,
    h('h1', null, heading),
    h('section', { class: 'card' }, h('p', { class: 'message error', role: 'alert' }, text), h('p', null, nav.link('/console', 'Go to the orders'), ' · ', nav.link('/console/inventory', 'Inventory'))),
  );
}

/** A console page the session's role may not open (the API would refuse it 403): says so, with the way back. */
export function notAllowedView(main: HTMLElement, nav: Nav, page: string, role: string | null): void {
  document.title = `Not allowed · TCC operator console`;
  show(
    main,
    h('h1', null, 'Not allowed'),
    h(
      'section',
      { class: 'card' },
      h('p', { class: 'message error', role: 'alert' }, `${page}: your role${role ? ` (${role})` : ''} does not allow this page. An admin can change your role.`),
      h('p', null, nav.link('/console', 'Go to the orders'), ' · ', nav.link('/console/inventory', 'Inventory')),
    ),
  );
}
