import { cameOverHttps, clearedSessionCookie, sessionCookie, sessionIdOf } from './session-cookie.js';

const ID = 'wQGoRcsxu-FByqOZbeWStS2_yO0c2vyYTV7FS9oVp7g';

describe('session cookie', () => {
  it('finds a well-formed session id among other cookies', () => {
    expect(sessionIdOf(`tcc_console=${ID}`)).toBe(ID);
    expect(sessionIdOf(`theme=dark; tcc_console=${ID}; other=1`)).toBe(ID);
    expect(sessionIdOf(` tcc_console = ${ID} `)).toBe(ID);
  });

  it('ignores what the service cannot have issued, so it never costs a lookup', () => {
    for (const header of [undefined, '', 'tcc_console=', `tcc_console=${ID}x`, `tcc_console=${ID.slice(1)}`, `tcc_console=${ID.slice(1)}%`, `xtcc_console=${ID}`, `tcc_consolex=${ID}`, 'tcc_console']) {
      expect(sessionIdOf(header)).toBeUndefined();
    }
  });

  it('is HttpOnly, SameSite=Strict, Path=/, and Secure only over https', () => {
    expect(sessionCookie(ID, 28_800, false)).toBe(`tcc_console=${ID}; Max-Age=28800; Path=/; HttpOnly; SameSite=Strict`);
    expect(sessionCookie(ID, 60, true)).toBe(`tcc_console=${ID}; Max-Age=60; Path=/; HttpOnly; SameSite=Strict; Secure`);
    expect(clearedSessionCookie(false)).toBe('tcc_console=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict');
  });

  it('knows a request came over https from the proxy header or the socket', () => {
    expect(cameOverHttps({ headers: { 'x-forwarded-proto': 'https' } })).toBe(true);
    expect(cameOverHttps({ headers: { 'x-forwarded-proto': 'HTTPS, http' } })).toBe(true);
    expect(cameOverHttps({ headers: { 'x-forwarded-proto': 'http' } })).toBe(false);
    expect(cameOverHttps({ protocol: 'https', headers: {} })).toBe(true);
    expect(cameOverHttps({ protocol: 'http', headers: {} })).toBe(false);
  });
});
