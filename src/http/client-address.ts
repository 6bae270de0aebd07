import type { IncomingMessage } from 'node:http';
import { BlockList, isIP, SocketAddress } from 'node:net';
import { TrustedRange, unmapIPv4 } from '../config/address-lists.js';

/** TRUST_PROXY's ranges, set once at start-up (main.ts); none: every request is its TCP peer's. */
let trusted: BlockList | undefined;

export function trustProxies(ranges: readonly TrustedRange[] | undefined): void {
  if (!ranges?.length) {
    trusted = undefined;
    return;
  }
  trusted = new BlockList();
  for (const r of ranges) trusted.addSubnet(r.address, r.prefix, r.family);
}

const isTrusted = (list: BlockList, address: string) => list.check(address, isIP(address) === 4 ? 'ipv4' : 'ipv6');

/**
 * The client's address as the service judges it (rate limit, credential throttling, request logs):
 * the one place that decides it, so every check counts the same client the same way. IPv4 peers
 * on an IPv6 socket (`::ffff:10.0.0.1`) are their IPv4 address.
 *
 * Without TRUST_PROXY, or when the TCP peer is not a trusted proxy, it is the peer, whatever
 * X-Forwarded-For says. From a trusted proxy it is the rightmost X-Forwarded-For address that is
 * not a trusted proxy: each proxy appends the address it was reached from, so everything right of
 * the first untrusted hop was written by a trusted one, and everything left of it by whoever wants
 * to be someone else. Several headers count as one list (Node joins them in order). An entry that
 * is not an address was written by the trusted hop right of it, which is then the client as far as
 * anyone can tell; when every hop is trusted, it is the leftmost.
 */
export function clientAddress(req: IncomingMessage): string {
  const peer = req.socket.remoteAddress;
  if (peer === undefined) return 'unknown';
  const address = unmapIPv4(peer);
  const list = trusted;
  if (!list || !isTrusted(list, address)) return address;
  const forwarded = req.headers['x-forwarded-for'];
  if (typeof forwarded !== 'string') return address;
  const hops = forwarded.split(',');
  let client = address;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = forwardedAddress(hops[i]);
    if (hop === undefined) return client;
    client = hop;
    if (!isTrusted(list, hop)) return hop;
  }
  return client;
}

/**
 * One X-Forwarded-For entry as an address: spaces around it allowed, an IPv6 one bare or in
 * brackets, with no zone, written the one canonical way (so `0:0::1` and `::1` count as one
 * client); with the client's port after it, as some balancers write it (`203.0.113.7:51234`,
 * `[2001:db8::7]:51234`: Azure's Application Gateway), the address without it; else undefined.
 */
function forwardedAddress(entry: string): string | undefined {
  let text = entry.trim();
  const withPort = /^(?:\[([^\]]*)\]|(\d{1,3}(?:\.\d{1,3}){3})):(\d{1,5})$/.exec(text);
  if (withPort && Number(withPort[3]) <= 65535) text = withPort[1] ?? withPort[2];
  else if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1);
  const family = text.includes('%') ? 0 : isIP(text);
  if (family === 4) return text;
  if (family === 6) return unmapIPv4(new SocketAddress({ address: text, family: 'ipv6' }).address);
  return undefined;
}
