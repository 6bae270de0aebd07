import { fromAnotherSite } from './request-site.js';

describe('fromAnotherSite', () => {
  it('trusts Fetch Metadata when a browser sends it', () => {
    expect(fromAnotherSite({ 'sec-fetch-site': 'cross-site', host: 'a.example' })).toBe(true);
    expect(fromAnotherSite({ 'sec-fetch-site': 'same-site', host: 'a.example' })).toBe(true);
    expect(fromAnotherSite({ 'sec-fetch-site': 'same-origin', host: 'a.example', origin: 'https://evil.example' })).toBe(false);
    expect(fromAnotherSite({ 'sec-fetch-site': 'none', host: 'a.example' })).toBe(false);
  });

  it('without it, compares Origin with the host the request was sent to', () => {
    expect(fromAnotherSite({ host: 'ops.example:8080', origin: 'http://ops.example:8080' })).toBe(false);
    expect(fromAnotherSite({ host: 'OPS.example', origin: 'https://ops.example' })).toBe(false);
    expect(fromAnotherSite({ host: 'ops.example:443', origin: 'https://ops.example' })).toBe(false);
    expect(fromAnotherSite({ host: 'tcc:3000', 'x-forwarded-host': 'ops.example', origin: 'https://ops.example' })).toBe(false);
    expect(fromAnotherSite({ host: 'ops.example', origin: 'https://evil.example' })).toBe(true);
    expect(fromAnotherSite({ host: 'ops.example:8080', origin: 'http://ops.example:9090' })).toBe(true);
    expect(fromAnotherSite({ host: 'ops.example', origin: 'null' })).toBe(true);
  });

  it('a client that is not a browser (no Fetch Metadata, no Origin) is not from another site', () => {
    expect(fromAnotherSite({ host: 'ops.example' })).toBe(false);
    expect(fromAnotherSite({})).toBe(false);
  });
});
