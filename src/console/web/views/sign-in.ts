import { api, ApiError, Session, setSession } from '../api.js';
import { h, show, uid } from '../dom.js';

type Way = 'account' | 'token';

/** The way in last used in this browser (not a secret: which form to show first). */
const WAY_KEY = 'tcc-console-sign-in';

function lastWay(): Way {
  try {
    return localStorage.getItem(WAY_KEY) === 'token' ? 'token' : 'account';
  } catch {
    return 'account';
  }
}

function rememberWay(way: Way): void {
  try {
    localStorage.setItem(WAY_KEY, way);
  } catch {
    // storage refused (a private window): the account form shows first next time
  }
}

/**
 * The sign-in form: an operator's email and password, or the admin token ("Sign in with the admin
 * token"), sent once and exchanged for an HttpOnly session cookie. The page keeps neither.
 */
export function signInView(root: HTMLElement, notice: string | undefined, signedIn: (session: Session) => void): void {
  document.title = 'Sign in · TCC operator console';
  const main = h('main', { class: 'signin-page' });
  show(root, main);
  render(lastWay(), notice);

  function render(way: Way, note: string | undefined): void {
    const error = h('p', { class: 'message error', role: 'alert' });
    const button = h('button', { type: 'submit', class: 'primary' }, 'Sign in');
    const form = way === 'account' ? accountForm(error, button) : tokenForm(error, button);
    const other = way === 'account' ? 'Sign in with the admin token' : 'Use an operator account instead';
    show(
      main,
      h(
        'form',
        { class: 'card signin', novalidate: true, onsubmit: (e: Event) => void form.submit(e) },
        h('h1', null, 'TCC operator console'),
        note ? h('p', { class: 'message info', role: 'status' }, note) : null,
        form.fields,
        h('div', { class: 'actions' }, button),
        error,
        h(
          'p',
          { class: 'switch' },
          h(
            'button',
            {
              type: 'button',
              class: 'text-button',
              onclick: () => {
                const next: Way = way === 'account' ? 'token' : 'account';
                rememberWay(next);
                render(next, undefined);
              },
            },
            other,
          ),
        ),
      ),
    );
    form.first.focus();
  }

  /** Sends the body; on a refusal says why in words and puts the cursor back where it helps. */
  async function send(way: Way, body: Record<string, string>, error: HTMLElement, button: HTMLButtonElement, clear: HTMLInputElement): Promise<void> {
    button.disabled = true;
    try {
      const session = await api<Session>('POST', '/console/session', body);
      clear.value = '';
      rememberWay(way);
      setSession(session);
      signedIn(session);
    } catch (err) {
      error.textContent = describe(err, way);
      clear.select();
    } finally {
      button.disabled = false;
    }
  }

  function accountForm(error: HTMLElement, button: HTMLButtonElement) {
    const emailId = uid('email');
    const passwordId = uid('password');
    const email = h('input', { id: emailId, name: 'email', type: 'email', maxlength: 254, autocomplete: 'username', spellcheck: 'false' });
    const password = h('input', { id: passwordId, name: 'password', type: 'password', maxlength: 200, autocomplete: 'current-password' });
    return {
      first: email,
      fields: [h('div', { class: 'field' }, h('label', { for: emailId }, 'Email'), email), h('div', { class: 'field' }, h('label', { for: passwordId }, 'Password'), password)],
      async submit(e: Event): Promise<void> {
        e.preventDefault();
        error.textContent = '';
        const address = email.value.trim();
        if (!address) return refuse(error, 'Enter your email.', email);
        if (!password.value) return refuse(error, 'Enter your password.', password);
        await send('account', { email: address, password: password.value }, error, button, password);
      },
    };
  }

  function tokenForm(error: HTMLElement, button: HTMLButtonElement) {
    const id = uid('token');
    const nameId = uid('name');
    const input = h('input', { id, name: 'token', type: 'password', autocomplete: 'off', spellcheck: 'false', 'aria-describedby': `${id}-hint` });
    const name = h('input', { id: nameId, name: 'name', type: 'text', maxlength: 100, autocomplete: 'name', 'aria-describedby': `${nameId}-hint` });
    return {
      first: input,
      fields: [
        h('div', { class: 'field' }, h('label', { for: id }, 'Admin token'), input, h('p', { id: `${id}-hint`, class: 'hint' }, 'The service’s ADMIN_TOKEN. It is exchanged for a session cookie and not kept by the page.')),
        h(
          'div',
          { class: 'field' },
          h('label', { for: nameId }, 'Your name ', h('span', { class: 'optional' }, '(optional)')),
          name,
          h('p', { id: `${nameId}-hint`, class: 'hint' }, 'Recorded with every change you make, on the order’s timeline and in the stock ledger.'),
        ),
      ],
      async submit(e: Event): Promise<void> {
        e.preventDefault();
        error.textContent = '';
        if (!input.value) return refuse(error, 'Enter the admin token.', input);
        const who = name.value.trim();
        if (who.length > 100) return refuse(error, 'Your name must be at most 100 characters.', name);
        await send('token', who ? { token: input.value, name: who } : { token: input.value }, error, button, input);
      },
    };
  }
}

function refuse(error: HTMLElement, text: string, field: HTMLInputElement): void {
  error.textContent = text;
  field.focus();
}

/** A wait in words: "40 s", "15 min". */
function inWords(seconds: number): string {
  return seconds < 120 ? `${seconds} s` : `${Math.ceil(seconds / 60)} min`;
}

function describe(err: unknown, way: Way): string {
  if (!(err instanceof ApiError)) return (err as Error).message;
  if (err.status === 401) return way === 'token' ? 'That is not the admin token. Check it and try again.' : 'Wrong email or password. Check them and try again.';
  if (err.status === 429) {
    const wait = err.retryAfter ? ` Try again in ${inWords(err.retryAfter)}.` : ' Try again later.';
    // The account's throttle (wrong passwords for one email) or the address's (wrong credentials from here).
    if (/this account/.test(err.message)) return `Too many wrong passwords for this account: its sign-in is refused for now.${wait}`;
    return `Too many wrong ${way === 'token' ? 'tokens' : 'sign-ins'} from this address: sign-in is refused for now.${wait}`;
  }
  if (err.status === 400) return way === 'token' ? err.message : 'Check the email and the password: one of them is not in a form the service accepts.';
  return err.message;
}
