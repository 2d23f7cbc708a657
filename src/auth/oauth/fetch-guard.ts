// Where pgmcp's own fetches may go. Client metadata documents are fetched from whatever URL a
// client names, and issuer metadata from wherever a configured issuer points (jwks_uri), so a
// fetch could be made to reach what only pgmcp's network can: the cloud metadata service, an
// admin port on loopback, a database on a private address. Addresses in loopback, private,
// link-local, unique-local and other special ranges are refused, unless the operator lists the
// host in auth.oauth.allowedFetchHosts (the whole host, every port); the configured issuers and
// introspection endpoint are allowed by being configured, but only at their own origin (scheme,
// host and port), so naming https://idp.corp:8443 does not open every port of idp.corp. The check is made on the address a name resolves to,
// and the connection goes to that same address (fetch-json.ts), so DNS cannot answer one thing to
// the check and another to the connection.
import { isIP } from 'node:net';
import type { Config } from '../../config/index.js';

export interface FetchPolicy {
  /** Why a fetch of `url` may not connect to `address`; null when it may. */
  refusal(url: URL, address: string): string | null;
}

type Bytes = number[];

/** IPv4 ranges nobody outside this network should make pgmcp reach. */
const V4_RANGES: readonly [string, number, string][] = [
  ['0.0.0.0', 8, '"this network"'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared (carrier-grade NAT)'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local (cloud metadata)'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'special-purpose'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, 'special-purpose'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];

/**
 * IPv6 ranges refused whatever follows (the IANA special-purpose registry). The prefixes that
 * carry an IPv4 address in a form that can be read back are judged by it instead (specialRange);
 * Teredo obfuscates it, so its prefix is refused whole. Everything outside 2000::/3 that is not
 * one of those is refused too: it is not global unicast.
 */
const V6_RANGES: readonly [string, number, string][] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['64:ff9b:1::', 48, 'local-use NAT64'],
  ['100::', 64, 'discard-only'],
  ['100:0:0:1::', 64, 'dummy'],
  ['2001::', 32, 'Teredo'],
  ['2001::', 23, 'IETF protocol assignment'],
  ['2001:db8::', 32, 'documentation'],
  ['3fff::', 20, 'documentation'],
  ['5f00::', 16, 'segment routing (SRv6)'],
  ['fc00::', 7, 'unique-local'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local'],
  ['ff00::', 8, 'multicast'],
];

function v4Bytes(address: string): Bytes | null {
  const parts = address.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) {
    return null;
  }
  return parts.map(Number);
}

function v6Bytes(input: string): Bytes | null {
  let address = input.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  let tail: Bytes = [];
  // A trailing dotted quad (::ffff:127.0.0.1) stands for the last two words.
  const dotted = /^(.*):(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (dotted) {
    const v4 = v4Bytes(dotted[2]!);
    if (!v4) return null;
    tail = v4;
    address = dotted[1]!.endsWith(':') ? `${dotted[1]!}:` : dotted[1]!;
  }
  const halves = address.split('::');
  if (halves.length > 2) return null;
  const words = (part: string): number[] | null => {
    if (part === '') return [];
    const list = part.split(':');
    if (list.some((w) => !/^[0-9a-fA-F]{1,4}$/.test(w))) return null;
    return list.map((w) => parseInt(w, 16));
  };
  const head = words(halves[0]!);
  const rest = halves.length === 2 ? words(halves[1]!) : [];
  if (!head || !rest) return null;
  const wanted = 8 - tail.length / 2;
  const fill = wanted - head.length - rest.length;
  if (halves.length === 1 ? fill !== 0 : fill < 1) return null;
  const all = [...head, ...new Array<number>(fill).fill(0), ...rest];
  return [...all.flatMap((w) => [w >> 8, w & 0xff]), ...tail];
}

function within(bytes: Bytes, base: Bytes, bits: number): boolean {
  for (let i = 0; i < bits; i++) {
    const mask = 0x80 >> (i % 8);
    if ((bytes[i >> 3]! & mask) !== (base[i >> 3]! & mask)) return false;
  }
  return true;
}

const V4 = V4_RANGES.map(([base, bits, name]) => ({ base: v4Bytes(base)!, bits, name }));
const V6 = V6_RANGES.map(([base, bits, name]) => ({ base: v6Bytes(base)!, bits, name }));

function v4Range(bytes: Bytes): string | null {
  return V4.find((range) => within(bytes, range.base, range.bits))?.name ?? null;
}

const NAT64 = v6Bytes('64:ff9b::')!;
const GLOBAL_UNICAST = v6Bytes('2000::')!;

/**
 * The kind of special range `address` is in (loopback, private, link-local …), or null for an
 * ordinary public address. An IPv6 address that carries an IPv4 one (IPv4-mapped ::ffff:a.b.c.d,
 * SIIT's IPv4-translated ::ffff:0:a.b.c.d, IPv4-compatible ::a.b.c.d, NAT64 64:ff9b::/96, 6to4
 * 2002::/16) is judged by that IPv4 address. Anything that is not an IP address is refused as
 * unknown.
 */
export function specialRange(address: string): string | null {
  const v4 = v4Bytes(address);
  if (v4) return v4Range(v4);
  const v6 = v6Bytes(address);
  if (!v6) return 'not an IP address';
  const own = V6.find((range) => within(v6, range.base, range.bits))?.name;
  if (own) return own;
  const zeros = (from: number, to: number) => v6.slice(from, to).every((b) => b === 0);
  const ffff = (at: number) => v6[at] === 0xff && v6[at + 1] === 0xff;
  let embedded: Bytes | null = null;
  if (zeros(0, 10) && ffff(10)) embedded = v6.slice(12);
  else if (zeros(0, 8) && ffff(8) && zeros(10, 12)) embedded = v6.slice(12);
  else if (zeros(0, 12)) embedded = v6.slice(12);
  else if (within(v6, NAT64, 96)) embedded = v6.slice(12);
  else if (v6[0] === 0x20 && v6[1] === 0x02) embedded = v6.slice(2, 6);
  if (embedded) {
    const range = v4Range(embedded);
    return range ? `${range} (IPv4 inside IPv6)` : null;
  }
  return within(v6, GLOBAL_UNICAST, 3) ? null : 'reserved';
}

/** A host name as URL.hostname gives it, lower case, IPv6 without brackets. */
export function hostOf(value: string): string {
  return value.toLowerCase().replace(/^\[|\]$/g, '');
}

/** The policy auth.oauth configures: its allowedFetchHosts, and the origins of the URLs it names. */
export function fetchPolicyFor(settings: Config['auth']['oauth']): FetchPolicy {
  return createFetchPolicy(settings.allowedFetchHosts, [
    ...settings.authorizationServers,
    settings.server.issuer,
    settings.introspection.url,
  ]);
}

/** scheme://host:port, the port always written and a host name's trailing dot dropped. */
function originOf(url: URL): string {
  const port =
    url.port || (url.protocol === 'https:' ? '443' : url.protocol === 'http:' ? '80' : '');
  return `${url.protocol}//${hostOf(url.hostname).replace(/\.$/, '')}:${port}`;
}

/**
 * A policy from auth.oauth.allowedFetchHosts (host names, IP addresses, CIDR ranges: every port
 * of them) and the URLs the operator configured (their origins only: scheme, host and port).
 */
export function createFetchPolicy(
  allowedHosts: readonly string[],
  configuredUrls: readonly (string | null)[] = [],
): FetchPolicy {
  const names = new Set<string>();
  const origins = new Set<string>();
  const ranges: { base: Bytes; bits: number }[] = [];
  const addRange = (address: string, bits: number | undefined) => {
    const v4 = v4Bytes(address);
    const bytes = v4 ?? v6Bytes(address);
    if (bytes) ranges.push({ base: bytes, bits: bits ?? bytes.length * 8 });
  };
  for (const entry of allowedHosts) {
    const [address = '', bits] = entry.split('/');
    if (bits !== undefined) addRange(address, Number(bits));
    else if (isIP(hostOf(entry))) addRange(hostOf(entry), undefined);
    else names.add(hostOf(entry).replace(/\.$/, ''));
  }
  for (const url of configuredUrls) {
    if (!url) continue;
    try {
      origins.add(originOf(new URL(url)));
    } catch {
      // The schema checked these; an unparsable one allows nothing.
    }
  }
  const listed = (address: string): boolean => {
    const bytes = v4Bytes(address) ?? v6Bytes(address);
    return (
      bytes !== null &&
      ranges.some((r) => r.base.length === bytes.length && within(bytes, r.base, r.bits))
    );
  };
  return {
    refusal(url, address) {
      if (origins.has(originOf(url))) return null;
      if (names.has(hostOf(url.hostname).replace(/\.$/, ''))) return null;
      const range = specialRange(address);
      if (range === null || listed(hostOf(address))) return null;
      return range;
    },
  };
}
