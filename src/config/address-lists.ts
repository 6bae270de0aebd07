import { isIP } from 'node:net';
import { z } from 'zod';

/** A Redis node or Sentinel as REDIS_CLUSTER_NODES and REDIS_SENTINELS list them. */
export interface HostPort {
  host: string;
  port: number;
}

/** One TRUST_PROXY entry: an address (a /32 or /128) or a CIDR range. */
export interface TrustedRange {
  family: 'ipv4' | 'ipv6';
  address: string;
  prefix: number;
}

/** `::ffff:10.0.0.1` (an IPv4 peer on an IPv6 socket) is 10.0.0.1; anything else as given. */
export function unmapIPv4(address: string): string {
  if (address.length > 7 && address.charCodeAt(0) === 58 /* : */ && /^::ffff:/i.test(address)) {
    const rest = address.slice(7);
    if (isIP(rest) === 4) return rest;
    const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(rest);
    if (hex) {
      const [hi, lo] = [parseInt(hex[1], 16), parseInt(hex[2], 16)];
      return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
    }
  }
  return address;
}

const entries = (v: string) => v.split(',').map((e) => e.trim()).filter((e) => e !== '');

/** `host:port,…` (an IPv6 host in brackets: `[::1]:7000`), at least one. */
export const hostPortList = z.string().transform((value, ctx): HostPort[] => {
  const list: HostPort[] = [];
  for (const entry of entries(value)) {
    const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(entry);
    const port = m ? Number(m[3]) : 0;
    if (!m || port < 1 || port > 65535 || (m[1] !== undefined && isIP(m[1]) !== 6)) {
      ctx.addIssue({ code: 'custom', message: `"${entry.slice(0, 80)}" is not host:port` });
      return z.NEVER;
    }
    list.push({ host: m[1] ?? m[2], port });
  }
  if (!list.length) ctx.addIssue({ code: 'custom', message: 'must list at least one host:port' });
  return list;
});

/** Addresses and CIDR ranges, IPv4 or IPv6, comma-separated; an IPv4-mapped IPv6 one counts as IPv4. */
export const trustedRanges = z.string().transform((value, ctx): TrustedRange[] => {
  const list: TrustedRange[] = [];
  for (const entry of entries(value)) {
    const [given, bits, extra] = entry.split('/');
    const mapped = unmapIPv4(given);
    const family = isIP(mapped);
    const max = family === 4 ? 32 : 128;
    // A mapped range (::ffff:10.0.0.0/104) keeps its meaning in IPv4 terms.
    const shift = mapped !== given && family === 4 ? 96 : 0;
    const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) - shift : NaN;
    if (!family || extra !== undefined || !(prefix >= 0 && prefix <= max)) {
      ctx.addIssue({ code: 'custom', message: `"${entry.slice(0, 80)}" is not an IP address or CIDR range` });
      return z.NEVER;
    }
    list.push({ family: family === 4 ? 'ipv4' : 'ipv6', address: mapped, prefix });
  }
  return list;
});
