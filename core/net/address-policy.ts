/**
 * Which network addresses the service may be asked to contact on a customer's behalf (webhook
 * URLs, remote uploads). Only public unicast addresses pass: private, loopback, link-local (which
 * includes the cloud metadata address), CGNAT, multicast and reserved ranges are refused, in IPv4,
 * IPv6 and IPv4-mapped IPv6 form. Local development may open http and loopback (`allowInsecure`,
 * on by default in the embedded mode); the other ranges stay refused in every mode, so a local
 * switch never reaches a private network or the metadata service.
 */
import { BlockList, isIP } from 'node:net';
import { lookup } from 'node:dns/promises';
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  // The IPv4-compatible (::a.b.c.d), SIIT, 6to4 and Teredo forms all embed an IPv4 address that
  // could be private; nothing a customer legitimately hosts needs them.
  ['::', 96],
  ['::ffff:0:0:0', 96],
  ['2002::', 16],
  ['2001::', 32],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

export function isLoopbackAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 0) return false;
  const mapped = family === 6 ? /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)?.[1] : undefined;
  if (mapped) return loopback.check(mapped, 'ipv4');
  return loopback.check(ip, family === 6 ? 'ipv6' : 'ipv4');
}

/** Whether the service may connect to the address: public, or loopback when local URLs are allowed. */
export function isContactable(ip: string, allowLoopback: boolean): boolean {
  return isPublicAddress(ip) || (allowLoopback && isLoopbackAddress(ip));
}

export function isPublicAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 0) return false;
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
    if (mapped?.[1]) return !blocked.check(mapped[1], 'ipv4');
    return !blocked.check(ip, 'ipv6');
  }
  return !blocked.check(ip, 'ipv4');
}

/** Longest URL accepted from a customer (webhooks, remote uploads). */
export const MAX_URL_LENGTH = 2048;

export type Resolver = (host: string) => Promise<string[]>;

const LOOKUP_TIMEOUT_MS = 5_000;

/** The system resolver, bounded: a slow name would otherwise hold a request (and a libuv thread). */
export const systemResolver: Resolver = async (host) => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`lookup of ${host} timed out`)), LOOKUP_TIMEOUT_MS);
  });
  try {
    const addresses = await Promise.race([lookup(host, { all: true, verbatim: true }), timeout]);
    return addresses.map((a) => a.address);
  } finally {
    clearTimeout(timer);
  }
};

/** Why a URL may not be contacted, or undefined when it may. */
export async function refuseUnsafeUrl(raw: string, opts: { allowInsecure: boolean; resolve?: Resolver }): Promise<string | undefined> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && !(opts.allowInsecure && url.protocol === 'http:')) return 'must use https';
  if (url.username || url.password) return 'must not contain credentials';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = await (opts.resolve ?? systemResolver)(host);
    } catch {
      addresses = [];
    }
  }
  // Locally a name may resolve only later (a receiver not started yet, a hosts entry to come):
  // accepted, since every connection checks the address it gets (contactableLookup).
  if (addresses.length === 0) return opts.allowInsecure ? undefined : `host ${host} does not resolve`;
  const bad = addresses.find((a) => !isContactable(a, opts.allowInsecure));
  if (!bad) return undefined;
  return opts.allowInsecure
    ? `must resolve to a public or loopback address (${host} resolves to ${bad}; private, link-local and metadata addresses are refused in every mode)`
    : `must resolve to a public address (${host} resolves to ${bad})`;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for outgoing connections that refuses what the policy refuses at connect time, so a
 * name that resolved to a public address when the URL was registered cannot be re-pointed at a
 * private one later (DNS rebinding). Handles both the single-address and the `all` forms Node asks
 * for. A connection to an IP literal skips lookups: callers check the URL with refuseUnsafeUrl too.
 */
export function contactableLookup(allowLoopback: boolean) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void =>
    checkedLookup(hostname, options, callback, allowLoopback);
}

export const publicOnlyLookup = contactableLookup(false);

function checkedLookup(hostname: string, options: LookupOptions, callback: LookupCallback, allowLoopback: boolean): void {
  dnsLookup(hostname, { ...options, all: true, verbatim: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const list = addresses as LookupAddress[];
    const refused = list.find((a) => !isContactable(a.address, allowLoopback));
    if (refused) {
      const error: NodeJS.ErrnoException = new Error(`address ${refused.address} of ${hostname} is not public`);
      error.code = 'EADDRNOTPUBLIC';
      return callback(error, []);
    }
    if (options.all) return callback(null, list);
    const first = list[0];
    if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
    callback(null, first.address, first.family);
  });
}
