// Where pgmcp's own fetches may go. Client metadata documents are fetched from whatever URL a
// client names, and issuer metadata from wherever a configured issuer points (jwks_uri), so a
// fetch could be made to reach what only pgmcp's network can: the cloud metadata service, an
// admin port on loopback, a database on a private address. Addresses in loopback, private,
// link-local, unique-local and other special ranges are refused, unless the operator lists the
// host in auth.oauth.allowedFetchHosts; the hosts of the configured issuers and introspection
// endpoint are listed by being configured. The check is made on the address a name resolves to,
// and the connection goes to that same address (fetch-json.ts), so DNS cannot answer one thing to
// the check and another to the connection.
import { isIP } from 'node:net';
import type { Config } from '../../config/index.js';

export interface FetchPolicy {
  /** Why a fetch of a URL on `hostname` may not connect to `address`; null when it may. */
  refusal(hostname: string, address: string): string | null;
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
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];

const V6_RANGES: readonly [string, number, string][] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
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

/**
 * The kind of special range `address` is in (loopback, private, link-local …), or null for an
 * ordinary public address. An IPv6 address that carries an IPv4 one (IPv4-mapped ::ffff:a.b.c.d,
 * IPv4-compatible ::a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16) is judged by that IPv4 address.
 * Anything that is not an IP address is refused as unknown.
 */
export function specialRange(address: string): string | null {
  const v4 = v4Bytes(address);
  if (v4) return v4Range(v4);
  const v6 = v6Bytes(address);
  if (!v6) return 'not an IP address';
  const own = V6.find((range) => within(v6, range.base, range.bits))?.name;
  if (own) return own;
  const zeros = (from: number, to: number) => v6.slice(from, to).every((b) => b === 0);
  let embedded: Bytes | null = null;
  if (zeros(0, 10) && v6[10] === 0xff && v6[11] === 0xff) embedded = v6.slice(12);
  else if (zeros(0, 12)) embedded = v6.slice(12);
  else if (within(v6, v6Bytes('64:ff9b::')!, 96)) embedded = v6.slice(12);
  else if (v6[0] === 0x20 && v6[1] === 0x02) embedded = v6.slice(2, 6);
  if (!embedded) return null;
  const range = v4Range(embedded);
  return range ? `${range} (IPv4 inside IPv6)` : null;
}

/** A host name as URL.hostname gives it, lower case, IPv6 without brackets. */
export function hostOf(value: string): string {
  return value.toLowerCase().replace(/^\[|\]$/g, '');
}

/** The policy auth.oauth configures: its allowedFetchHosts, and the hosts of the URLs it names. */
export function fetchPolicyFor(settings: Config['auth']['oauth']): FetchPolicy {
  return createFetchPolicy(settings.allowedFetchHosts, [
    ...settings.authorizationServers,
    settings.server.issuer,
    settings.introspection.url,
  ]);
}

/**
 * A policy from auth.oauth.allowedFetchHosts (host names, IP addresses, CIDR ranges) and the
 * URLs the operator configured (their hosts are allowed too).
 */
export function createFetchPolicy(
  allowedHosts: readonly string[],
  configuredUrls: readonly (string | null)[] = [],
): FetchPolicy {
  const names = new Set<string>();
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
      names.add(hostOf(new URL(url).hostname));
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
    refusal(hostname, address) {
      if (names.has(hostOf(hostname).replace(/\.$/, ''))) return null;
      const range = specialRange(address);
      if (range === null || listed(hostOf(address))) return null;
      return range;
    },
  };
}
