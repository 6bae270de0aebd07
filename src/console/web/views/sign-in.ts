import { api, ApiError, Session, setSession } from '../api.js';
import { h, show, uid } from '../dom.js';

/** The sign-in form: the admin token is sent once and exchanged for an HttpOnly session cookie. */
export function signInView(root: HTMLElement, notice: string | undefined, signedIn: () => void): void {
  document.title = 'Sign in · TCC operator console';
  const id = uid('token');
  const input = h('input', { id, name: 'token', type: 'password', autocomplete: 'off', spellcheck: 'false', 'aria-describedby': `${id}-hint` });
  const error = h('p', { class: 'message error', role: 'alert' });
  const button = h('button', { type: 'submit', class: 'primary' }, 'Sign in');
  const form = h(
    'form',
    { class: 'card signin', novalidate: true, onsubmit: (e: Event) => void submit(e) },
    h('h1', null, 'TCC operator console'),
    notice ? h('p', { class: 'message info', role: 'status' }, notice) : null,
    h('div', { class: 'field' }, h('label', { for: id }, 'Admin token'), input, h('p', { id: `${id}-hint`, class: 'hint' }, 'The service’s ADMIN_TOKEN. It is exchanged for a session cookie and not kept by the page.')),
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
    button.disabled = true;
    try {
      const session = await api<Session>('POST', '/console/session', { token: input.value });
      input.value = '';
      setSession(session);
      signedIn();
    } catch (err) {
      error.textContent = err instanceof ApiError && err.status === 401 ? 'That is not the admin token. Check it and try again.' : (err as Error).message;
      input.select();
    } finally {
      button.disabled = false;
    }
  }

  show(root, h('main', { class: 'signin-page' }, form));
  input.focus();
}
