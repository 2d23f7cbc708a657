// auth.trustedProxies as a check of a connection's peer address: only a listed proxy is
// believed when it sends identity headers or a request id.
import { BlockList, isIP } from 'node:net';

export function createTrustedPeers(
  entries: readonly string[],
): (address: string | undefined) => boolean {
  const proxies = new BlockList();
  for (const entry of entries) {
    const [address, bits] = entry.split('/');
    const family = isIP(address ?? '') === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) proxies.addAddress(address!, family);
    else proxies.addSubnet(address!, Number(bits), family);
  }
  return (address) => {
    if (!address || entries.length === 0) return false;
    const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
    return proxies.check(v4, isIP(v4) === 6 ? 'ipv6' : 'ipv4');
  };
}
