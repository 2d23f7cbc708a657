// A database password that can be rotated while serving: every host's connection settings read
// it when a connection is opened, so after a change (a password file rewritten, then SIGHUP)
// new connections use the new one; connections already open were authenticated and stay.
import { parse } from 'pg-connection-string';
import type { HostTargets } from './host-pool.js';

export interface LivePassword {
  /** Use this password from the next new connection on. */
  set(password: string): void;
  /** The password new connections log in with now. */
  get(): string;
}

/** The user and password a URL carries (empty strings when none). */
export function credentialsOfUrl(url: string): { user: string; password: string } {
  try {
    const u = new URL(url);
    return { user: decodeURIComponent(u.username), password: decodeURIComponent(u.password) };
  } catch {
    return { user: '', password: '' };
  }
}

/**
 * Every host of the targets logs in with the password `source` gives at that moment. The
 * driver reads a connection string over any setting given beside it, so each host's string is
 * read here into settings (as the driver itself would read it) and its password becomes a
 * function the driver calls at every login.
 */
export function passwordFrom(targets: HostTargets, source: () => string): void {
  for (const host of targets.hosts) {
    if (host.config.connectionString === undefined) continue;
    const { password: _password, ...settings } = parse(host.config.connectionString);
    const { connectionString: _url, ...rest } = host.config;
    host.config = { ...rest, ...(settings as Record<string, unknown>), password: source };
  }
}

/** Makes the targets' password live; null when the URL carried none (nothing to rotate). */
export function livePassword(targets: HostTargets): LivePassword | null {
  const parsed = targets.hosts.map((host) =>
    host.config.connectionString === undefined ? null : parse(host.config.connectionString),
  );
  const first = parsed[0]?.password;
  if (parsed.length === 0 || parsed.some((p) => p === null || !p.password) || !first) return null;
  let current: string = first;
  passwordFrom(targets, () => current);
  return {
    set(password) {
      current = password;
    },
    get: () => current,
  };
}
