import type { IncomingMessage } from 'node:http';
import { trustedRanges } from '../config/address-lists.js';
import { clientAddress, trustProxies } from './client-address.js';

/** A request as node:http hands it over: a TCP peer and headers (several X-Forwarded-For headers arrive joined by ", "). */
const req = (peer: string | undefined, forwarded?: string) => ({ socket: { remoteAddress: peer }, headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded } }) as unknown as IncomingMessage;

describe('clientAddress', () => {
  afterEach(() => trustProxies(undefined));

  it('without TRUST_PROXY is the TCP peer, whatever X-Forwarded-For says', () => {
    expect(clientAddress(req('203.0.113.9', '198.51.100.1'))).toBe('203.0.113.9');
    expect(clientAddress(req('::ffff:203.0.113.9', '198.51.100.1'))).toBe('203.0.113.9');
    expect(clientAddress(req('2001:db8::9'))).toBe('2001:db8::9');
    expect(clientAddress(req(undefined))).toBe('unknown');
  });

  describe('behind 10.0.0.0/8 and 2001:db8:1::/48', () => {
    beforeEach(() => trustProxies(trustedRanges.parse('10.0.0.0/8,2001:db8:1::/48')));

    it('is the rightmost address of X-Forwarded-For that is not a trusted proxy', () => {
      expect(clientAddress(req('10.0.0.2', '198.51.100.7'))).toBe('198.51.100.7');
      expect(clientAddress(req('10.0.0.2', '198.51.100.7, 10.0.0.3'))).toBe('198.51.100.7');
      expect(clientAddress(req('::ffff:10.0.0.2', '198.51.100.7,10.0.0.3'))).toBe('198.51.100.7');
      expect(clientAddress(req('2001:db8:1::2', '2001:db8:ffff::7, 2001:db8:1::3'))).toBe('2001:db8:ffff::7');
    });

    it('ignores a forged left-most entry and any number of them', () => {
      expect(clientAddress(req('10.0.0.2', '1.1.1.1, 198.51.100.7'))).toBe('198.51.100.7');
      expect(clientAddress(req('10.0.0.2', '10.0.0.99, 1.1.1.1, 198.51.100.7'))).toBe('198.51.100.7');
      // Several headers (joined by Node in order), spaces and tabs around entries.
      expect(clientAddress(req('10.0.0.2', '6.6.6.6,  7.7.7.7 , \t198.51.100.7\t'))).toBe('198.51.100.7');
    });

    it('a request whose peer is not trusted is judged by that peer', () => {
      expect(clientAddress(req('198.51.100.8', '10.0.0.1'))).toBe('198.51.100.8');
      expect(clientAddress(req('::ffff:198.51.100.8', '203.0.113.1'))).toBe('198.51.100.8');
      expect(clientAddress(req('2001:db8:2::1', '203.0.113.1'))).toBe('2001:db8:2::1');
    });

    it('garbage a trusted hop passed on is never an address: that hop is the client as far as anyone can tell', () => {
      expect(clientAddress(req('10.0.0.2', 'not-an-ip'))).toBe('10.0.0.2');
      expect(clientAddress(req('10.0.0.2', '198.51.100.7, garbage, 10.0.0.3'))).toBe('10.0.0.3');
      expect(clientAddress(req('10.0.0.2', '198.51.100.7,'))).toBe('10.0.0.2');
      expect(clientAddress(req('10.0.0.2', '198.51.100.7:99999'))).toBe('10.0.0.2');
      expect(clientAddress(req('10.0.0.2', '[2001:db8:ffff::7]:'))).toBe('10.0.0.2');
      expect(clientAddress(req('10.0.0.2', '2001:db8:ffff::7:4711:x'))).toBe('10.0.0.2');
      expect(clientAddress(req('10.0.0.2', 'fe80::1%eth0'))).toBe('10.0.0.2');
      expect(clientAddress(req('10.0.0.2', '"198.51.100.7"'))).toBe('10.0.0.2');
    });

    it('an entry with the client port after it (as some balancers write it) is that address', () => {
      expect(clientAddress(req('10.0.0.2', '198.51.100.7:4711'))).toBe('198.51.100.7');
      expect(clientAddress(req('10.0.0.2', '[2001:db8:ffff::7]:4711'))).toBe('2001:db8:ffff::7');
      expect(clientAddress(req('10.0.0.2', '198.51.100.7:4711, 10.0.0.3:443'))).toBe('198.51.100.7');
      expect(clientAddress(req('10.0.0.2', '1.1.1.1:1, 198.51.100.7:4711'))).toBe('198.51.100.7');
    });

    it('writes IPv6 addresses one way: the same client counts once however its proxy spelled it', () => {
      expect(clientAddress(req('10.0.0.2', '2001:DB8:ffff:0:0:0:0:7'))).toBe('2001:db8:ffff::7');
      expect(clientAddress(req('10.0.0.2', '[2001:db8:ffff::7]'))).toBe('2001:db8:ffff::7');
      expect(clientAddress(req('10.0.0.2', '::ffff:198.51.100.7'))).toBe('198.51.100.7');
    });

    it('with no X-Forwarded-For, or only trusted hops in it, is the farthest trusted hop', () => {
      expect(clientAddress(req('10.0.0.2'))).toBe('10.0.0.2');
      expect(clientAddress(req('10.0.0.2', '10.0.0.4, 10.0.0.3'))).toBe('10.0.0.4');
    });
  });
});
