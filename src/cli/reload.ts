// SIGHUP: the configuration is read again (file, environment, flags, and the files it names).
// What can change while serving changes: the log level; the TLS certificate and key, read
// again from their files even when the paths are the same (a renewed certificate); and a
// database's password read from its passwordFile (a rotated credential: new connections log in
// with it, open ones stay), and a read replica URL's own password (readReplicas follow the
// primary's password unless their URL gives another). Any other difference would need the
// server to be started again: the reload is refused whole, with a log line naming the keys,
// and the running configuration stays. Sessions, streams and calls in flight are not touched
// either way.
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { resolveDatabases } from '../config/index.js';
import type { TlsMaterial } from '../http/tls.js';
import { loadTlsMaterial } from '../http/tls.js';

/** Keys a reload may change while serving. */
const LIVE = new Set(['log.level', 'http.tls.cert', 'http.tls.key']);

export interface ReloadDeps {
  current: Config;
  read(): Promise<Config>;
  logger: Logger;
  /** Serves new TLS connections with this certificate; absent: plain HTTP or stdio. */
  setTls?: (material: TlsMaterial) => void;
  /** New connections to this configured database log in with this password; false: cannot. */
  setPassword?: (database: string, password: string) => boolean;
  /**
   * Each configured database's URL as the server connects now (with the password its file
   * held when read): a password file is read when the configuration is resolved, so the
   * running URLs are kept here. Updated when a rotated password is taken.
   */
  urls: Map<string, string | null>;
  /** New connections to the database's read replica `index` log in with this password. */
  setReplicaPassword?: (database: string, index: number, password: string) => boolean;
  /** Each configured database's readReplicas as running now; updated as urls. */
  replicaUrls?: Map<string, readonly string[]>;
}

/** A password taken live: the database's own (replica null) or one of its replicas'. */
interface Rotation {
  name: string;
  replica: number | null;
  password: string;
}

/** The dotted paths of the leaves that differ between two configurations. */
export function changedKeys(a: unknown, b: unknown, path = ''): string[] {
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v);
  if (isObject(a) && isObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].flatMap((k) => changedKeys(a[k], b[k], path ? `${path}.${k}` : k));
  }
  return JSON.stringify(a) === JSON.stringify(b) ? [] : [path];
}

/** A URL without its password, to tell a rotated password from another connection. */
function withoutPassword(url: string | null): { rest: string | null; password: string } {
  if (url === null) return { rest: null, password: '' };
  try {
    const u = new URL(url);
    const password = decodeURIComponent(u.password);
    u.password = '';
    return { rest: u.toString(), password };
  } catch {
    return { rest: url, password: '' };
  }
}

/**
 * The databases whose connection would change: those where only the password differs (its
 * passwordFile rewritten) can take it live; any other change cannot.
 */
function changedConnections(
  before: Map<string, string | null>,
  replicasBefore: Map<string, readonly string[]> | undefined,
  b: Config,
): { refused: string[]; rotated: Rotation[] } {
  /** The new password when only the password differs; null: another change. */
  const rotatedPassword = (was: string | null, url: string | null): string | null => {
    const old = withoutPassword(was);
    const now = withoutPassword(url);
    const same = old.rest !== null && old.rest === now.rest;
    return same && old.password !== '' && now.password !== '' ? now.password : null;
  };
  try {
    const refused: string[] = [];
    const rotated: Rotation[] = [];
    for (const d of resolveDatabases(b)) {
      const was = before.get(d.name) ?? null;
      if (was !== d.url) {
        const password = rotatedPassword(was, d.url);
        if (password === null) refused.push(`databases.${d.name} (its connection or credentials)`);
        else rotated.push({ name: d.name, replica: null, password });
      }
      if (!replicasBefore) continue;
      const replicas = replicasBefore.get(d.name) ?? [];
      if (replicas.length !== d.readReplicas.length) {
        refused.push(`databases.${d.name}.readReplicas (its list of replicas)`);
        continue;
      }
      d.readReplicas.forEach((url, i) => {
        if (url === replicas[i]) return;
        const password = rotatedPassword(replicas[i]!, url);
        if (password === null) refused.push(`databases.${d.name}.readReplicas[${i}]`);
        else rotated.push({ name: d.name, replica: i, password });
      });
    }
    return { refused, rotated };
  } catch (error) {
    return { refused: [`databases (${(error as Error).message})`], rotated: [] };
  }
}

/** The configuration without its replica lists: those are compared URL by URL (see above). */
function withoutReplicaLists(config: Config): unknown {
  const { readReplicas: _single, ...database } = config.database;
  const databases = config.databases.map(({ readReplicas: _r, ...entry }) => entry);
  return { ...config, database, databases };
}

/** Applies what may change live and returns the configuration now in force. */
export async function reloadConfig(deps: ReloadDeps): Promise<Config> {
  const { current, logger } = deps;
  let next: Config;
  try {
    next = await deps.read();
  } catch (error) {
    logger.error(
      { err: { message: (error as Error).message } },
      'SIGHUP: the configuration cannot be read; the running one stays',
    );
    return current;
  }
  const connections = changedConnections(deps.urls, deps.replicaUrls, next);
  const changed = deps.replicaUrls
    ? changedKeys(withoutReplicaLists(current), withoutReplicaLists(next))
    : changedKeys(current, next);
  const cannot = connections.rotated.filter((r) =>
    r.replica === null ? !deps.setPassword : !deps.setReplicaPassword,
  );
  if (cannot.length > 0) {
    connections.refused.push(...cannot.map((r) => `databases.${r.name} (its password)`));
    connections.rotated = [];
  }
  const refused = [...changed.filter((key) => !LIVE.has(key)), ...connections.refused];
  if (refused.length > 0) {
    logger.warn(
      { keys: refused },
      'SIGHUP: these changes cannot apply while pgmcp runs; nothing was changed (restart pgmcp to apply them)',
    );
    return current;
  }
  if (deps.setTls) {
    try {
      const material = loadTlsMaterial(next.http.tls);
      if (material) deps.setTls(material);
    } catch (error) {
      logger.error(
        { err: { message: (error as Error).message } },
        'SIGHUP: the TLS certificate cannot be used; nothing was changed',
      );
      return current;
    }
  }
  const rotated: string[] = [];
  const resolved = new Map(resolveDatabases(next).map((d) => [d.name, d]));
  for (const { name, replica, password } of connections.rotated) {
    const d = resolved.get(name)!;
    if (replica === null) {
      if (!deps.setPassword!(name, password)) continue;
      deps.urls.set(name, d.url);
      rotated.push(name);
    } else {
      if (!deps.setReplicaPassword!(name, replica, password)) continue;
      // Only this URL is now the running one (the others are unchanged).
      const running = [...(deps.replicaUrls?.get(name) ?? [])];
      running[replica] = d.readReplicas[replica]!;
      deps.replicaUrls?.set(name, running);
      rotated.push(`${name}.readReplicas[${replica}]`);
    }
  }
  logger.level = next.log.level;
  logger.info({ changed, passwordsRotated: rotated }, 'SIGHUP: configuration reloaded');
  return next;
}
