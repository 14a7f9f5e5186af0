/**
 * The address a request came from, as core's per-address rules see it (the sign-in throttle). The
 * gateway sets CLIENT_ADDRESS_HEADER on every call to core from the connection's address, or from
 * X-Forwarded-For when the connection comes from a proxy named in VPS_TRUSTED_PROXIES; it never
 * passes on a caller's own copy of the header. Core's Connect port is internal: a service calling it
 * directly is trusted like the gateway, and one that names no address shares UNKNOWN_ADDRESS.
 */
import { isIP } from 'node:net';

export const CLIENT_ADDRESS_HEADER = 'x-vps-client-address';

/** The group of callers that name no (readable) address. */
export const UNKNOWN_ADDRESS = 'unknown';

/**
 * The group an address is counted in: an IPv4 address alone (an IPv4-mapped IPv6 address as its
 * IPv4 address), an IPv6 address by its /64 prefix, since one subscriber is routinely given a whole
 * /64 and could otherwise change address with every try.
 */
export function addressGroup(raw: string | null | undefined): string {
  const address = (raw ?? '').trim().replace(/%.*$/, '');
  const version = isIP(address);
  if (version === 4) return address;
  if (version !== 6) return UNKNOWN_ADDRESS;
  const groups = expandIpv6(address);
  const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
  if (mapped) return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (net.isIP said so), a trailing IPv4 part included. */
function expandIpv6(address: string): number[] {
  let text = address.toLowerCase();
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const left = parse(head);
  if (tail === undefined) return left;
  const right = parse(tail);
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}
