import { randomBytes } from 'node:crypto';
import { ADMIN_TOKEN } from './env.js';

/** What an API key creation answers. */
export interface MadeKey {
  id: string;
  key: string;
  prefix: string;
  scopes: string[];
}

export interface MadeOperator {
  id: string;
  email: string;
  name: string;
  role: string;
  password: string;
}

export interface Session {
  cookie: string;
  csrfToken: string;
  body: any;
}

async function json(res: Response): Promise<any> {
  const text = await res.text();
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return text;
  }
}

/** A request with the root token, or with `bearer` (an API key). */
export async function call(base: string, method: string, path: string, opts: { body?: unknown; bearer?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; body: any; headers: Headers }> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.bearer !== '') headers.authorization = `Bearer ${opts.bearer ?? ADMIN_TOKEN}`;
  if (opts.bearer === '') delete headers.authorization;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${path}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  return { status: res.status, body: await json(res), headers: res.headers };
}

/** A new API key with these scopes, made with the root token. */
export async function makeKey(base: string, scopes: string[], name = `key-${randomBytes(3).toString('hex')}`): Promise<MadeKey> {
  const res = await call(base, 'POST', '/admin/api-keys', { body: { name, scopes } });
  if (res.status !== 201) throw new Error(`key not made: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A new operator with this role (and a password of its own), made with the root token. */
export async function makeOperator(base: string, role: string, name = `Op ${role}`): Promise<MadeOperator> {
  const email = `${role}-${randomBytes(4).toString('hex')}@example.test`;
  const password = `pw-${randomBytes(12).toString('base64url')}`;
  const res = await call(base, 'POST', '/admin/operators', { body: { email, name, role, password } });
  if (res.status !== 201) throw new Error(`operator not made: ${res.status} ${JSON.stringify(res.body)}`);
  return { ...res.body, password };
}

/** Signs an operator in at the console: the session cookie and its anti-CSRF token. */
export async function signInOperator(base: string, email: string, password: string): Promise<Session> {
  const res = await fetch(`${base}/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
  const body = await json(res);
  if (res.status !== 200) throw new Error(`sign-in refused: ${res.status} ${JSON.stringify(body)}`);
  return { cookie: (res.headers.get('set-cookie') ?? '').split(';')[0], csrfToken: body.csrfToken, body };
}

/** A request with a console session (state changes carry its anti-CSRF token). */
export async function withSession(base: string, s: Session, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { cookie: s.cookie, 'x-csrf-token': s.csrfToken };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: await json(res) };
}
