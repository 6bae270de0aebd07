import { hostPortList, trustedRanges, unmapIPv4 } from './address-lists.js';

describe('hostPortList (REDIS_CLUSTER_NODES, REDIS_SENTINELS)', () => {
  it('reads host:port entries, IPv6 hosts in brackets, spaces around commas', () => {
    expect(hostPortList.parse('10.0.0.1:7000, redis-a.internal:7001,[::1]:26379')).toEqual([
      { host: '10.0.0.1', port: 7000 },
      { host: 'redis-a.internal', port: 7001 },
      { host: '::1', port: 26379 },
    ]);
  });

  it.each(['10.0.0.1', 'redis://10.0.0.1:7000', '10.0.0.1:0', '10.0.0.1:70000', '::1:7000', '[nope]:7000', 'a b:1', ' , '])('refuses %j', (value) => {
    expect(hostPortList.safeParse(value).success).toBe(false);
  });
});

describe('trustedRanges (TRUST_PROXY)', () => {
  it('reads addresses and CIDR ranges of both families', () => {
    expect(trustedRanges.parse('10.0.0.0/8, 192.168.1.5,2001:db8::/32 ,::1')).toEqual([
      { family: 'ipv4', address: '10.0.0.0', prefix: 8 },
      { family: 'ipv4', address: '192.168.1.5', prefix: 32 },
      { family: 'ipv6', address: '2001:db8::', prefix: 32 },
      { family: 'ipv6', address: '::1', prefix: 128 },
    ]);
  });

  it('reads an IPv4-mapped IPv6 entry as the IPv4 one it is', () => {
    expect(trustedRanges.parse('::ffff:10.1.2.3,::ffff:10.0.0.0/104')).toEqual([
      { family: 'ipv4', address: '10.1.2.3', prefix: 32 },
      { family: 'ipv4', address: '10.0.0.0', prefix: 8 },
    ]);
  });

  it.each(['10.0.0.0/33', '2001:db8::/129', '10.0.0.0/8/8', 'loopback', '10.0.0.0/', '10.0.0.0/-1', '010.0.0.1', 'proxy.internal', '10.0.0.1:80'])('refuses %j', (value) => {
    expect(trustedRanges.safeParse(value).success).toBe(false);
  });
});

describe('unmapIPv4', () => {
  it('turns an IPv4 peer on an IPv6 socket into its IPv4 address, in either spelling', () => {
    expect(unmapIPv4('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(unmapIPv4('::FFFF:7f00:1')).toBe('127.0.0.1');
    expect(unmapIPv4('::ffff:c000:0280')).toBe('192.0.2.128');
  });

  it('leaves anything else as it is', () => {
    for (const a of ['127.0.0.1', '::1', '2001:db8::ffff:1.2.3.4', '::ffff:garbage', 'unknown']) expect(unmapIPv4(a)).toBe(a);
  });
});
