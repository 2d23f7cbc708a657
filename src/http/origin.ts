// DNS-rebinding protection: Host and Origin checked against an allow-list. When the
// server is bound to loopback, only loopback names pass unless more are configured.
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

export interface OriginPolicy {
  /** null when allowed; otherwise the reason for the 403. */
  check(host: string | undefined, origin: string | undefined): string | null;
}

export function isLoopbackAddress(host: string): boolean {
  return LOOPBACK_HOSTS.has(host) || host.startsWith('127.');
}

function hostnameOf(hostHeader: string): string {
  // "[::1]:8080" → "[::1]", "localhost:8080" → "localhost"
  if (hostHeader.startsWith('[')) return hostHeader.slice(0, hostHeader.indexOf(']') + 1);
  const colon = hostHeader.lastIndexOf(':');
  return (colon === -1 ? hostHeader : hostHeader.slice(0, colon)).toLowerCase();
}

export function createOriginPolicy(options: {
  bindHost: string;
  allowedHosts: readonly string[];
  allowedOrigins: readonly string[];
}): OriginPolicy {
  const loopbackOnly = isLoopbackAddress(options.bindHost);
  const allowedHosts = new Set(options.allowedHosts.map((h) => h.toLowerCase()));
  const allowedOrigins = new Set(
    options.allowedOrigins.map((o) => o.toLowerCase().replace(/\/$/, '')),
  );
  const anyOrigin = allowedOrigins.has('*');

  const hostAllowed = (host: string): boolean => {
    const lower = host.toLowerCase();
    if (allowedHosts.has(lower) || allowedHosts.has(hostnameOf(lower))) return true;
    if (loopbackOnly)
      return LOOPBACK_HOSTS.has(hostnameOf(lower)) || hostnameOf(lower).startsWith('127.');
    return true;
  };

  return {
    check(host, origin) {
      if (host !== undefined && !hostAllowed(host)) return `Host ${host} is not allowed.`;
      if (origin === undefined || anyOrigin) return null;
      const normalized = origin.toLowerCase().replace(/\/$/, '');
      if (allowedOrigins.has(normalized)) return null;
      let parsed: URL;
      try {
        parsed = new URL(normalized);
      } catch {
        return `Origin ${origin} is not allowed.`;
      }
      // Same origin as the Host the request was sent to.
      if (host !== undefined && parsed.host === host.toLowerCase()) return null;
      // Loopback pages may talk to a loopback server.
      if (loopbackOnly && isLoopbackAddress(parsed.hostname)) return null;
      return `Origin ${origin} is not allowed; add it to http.allowedOrigins.`;
    },
  };
}
