import { Child, h } from './dom.js';

/** In-page navigation: links are real links (open in a new tab, copy), a plain click routes in place. */
export interface Nav {
  link(href: string, ...children: Child[]): HTMLAnchorElement;
  go(href: string): void;
  /** A new history entry with `state` (what the URL cannot hold), then the view it names. */
  push(href: string, state: unknown): void;
}

export function createNav(render: () => void): Nav {
  window.addEventListener('popstate', render);
  const go = (href: string) => {
    history.pushState(null, '', href);
    render();
  };
  return {
    go,
    push(href, state) {
      history.pushState(state, '', href);
      render();
    },
    link(href, ...children) {
      return h(
        'a',
        {
          href,
          onclick: (e: Event) => {
            const m = e as MouseEvent;
            if (m.button !== 0 || m.metaKey || m.ctrlKey || m.shiftKey || m.altKey) return;
            e.preventDefault();
            go(href);
          },
        },
        ...children,
      );
    },
  };
}
