// SIGHUP: the configuration is read again (file, environment, flags, and the files it names).
// What can change while serving changes: the log level, and the TLS certificate and key, read
// again from their files even when the paths are the same (a renewed certificate). Any other
// difference, a database password file's new content included, would need the server to be
// started again: the reload is refused whole, with a log line naming the keys, and the running
// configuration stays. Sessions, streams and calls in flight are not touched either way.
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

/** The databases whose connection (a password file's content, say) would change. */
function changedConnections(a: Config, b: Config): string[] {
  try {
    const before = new Map(resolveDatabases(a).map((d) => [d.name, d.url]));
    return resolveDatabases(b)
      .filter((d) => before.get(d.name) !== d.url)
      .map((d) => `databases.${d.name} (its connection or credentials)`);
  } catch (error) {
    return [`databases (${(error as Error).message})`];
  }
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
  const changed = changedKeys(current, next);
  const refused = [
    ...changed.filter((key) => !LIVE.has(key)),
    ...changedConnections(current, next),
  ];
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
  logger.level = next.log.level;
  logger.info({ changed }, 'SIGHUP: configuration reloaded');
  return next;
}
