import { api, ApiError, Session, setSession } from '../api.js';
import { h, show, uid } from '../dom.js';

/** The sign-in form: the admin token is sent once and exchanged for an HttpOnly session cookie. */
export function signInView(root: HTMLElement, notice: string | undefined, signedIn: (session: Session) => void): void {
  document.title = 'Sign in · TCC operator console';
  const id = uid('token');
  const nameId = uid('name');
  const input = h('input', { id, name: 'token', type: 'password', autocomplete: 'off', spellcheck: 'false', 'aria-describedby': `${id}-hint` });
  const name = h('input', { id: nameId, name: 'name', type: 'text', maxlength: 100, autocomplete: 'name', 'aria-describedby': `${nameId}-hint` });
  const error = h('p', { class: 'message error', role: 'alert' });
  const button = h('button', { type: 'submit', class: 'primary' }, 'Sign in');
  const form = h(
    'form',
    { class: 'card signin', novalidate: true, onsubmit: (e: Event) => void submit(e) },
    h('h1', null, 'TCC operator console'),
    notice ? h('p', { class: 'message info', role: 'status' }, notice) : null,
    h('div', { class: 'field' }, h('label', { for: id }, 'Admin token'), input, h('p', { id: `${id}-hint`, class: 'hint' }, 'The service’s ADMIN_TOKEN. It is exchanged for a session cookie and not kept by the page.')),
    h(
      'div',
      { class: 'field' },
      h('label', { for: nameId }, 'Your name ', h('span', { class: 'optional' }, '(optional)')),
      name,
      h('p', { id: `${nameId}-hint`, class: 'hint' }, 'Recorded with every change you make, on the order’s timeline and in the stock ledger.'),
    ),
    h('div', { class: 'actions' }, button),
    error,
  );

  async function submit(e: Event): Promise<void> {
    e.preventDefault();
    error.textContent = '';
    if (!input.value) {
      error.textContent = 'Enter the admin token.';
      input.focus();
      return;
    }
    const who = name.value.trim();
    if (who.length > 100) {
      error.textContent = 'Your name must be at most 100 characters.';
      name.focus();
      return;
    }
    button.disabled = true;
    try {
      const session = await api<Session>('POST', '/console/session', who ? { token: input.value, name: who } : { token: input.value });
      input.value = '';
      setSession(session);
      signedIn(session);
    } catch (err) {
      error.textContent = describe(err);
      input.select();
    } finally {
      button.disabled = false;
    }
  }

  show(root, h('main', { class: 'signin-page' }, form));
  input.focus();
}

function describe(err: unknown): string {
  if (!(err instanceof ApiError)) return (err as Error).message;
  if (err.status === 401) return 'That is not the admin token. Check it and try again.';
  if (err.status === 429) {
    const wait = err.retryAfter ? ` Try again in ${err.retryAfter} s.` : ' Try again in a minute.';
    return `Too many wrong tokens from this address: sign-in is refused for now.${wait}`;
  }
  return err.message;
}
