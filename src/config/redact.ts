// Hiding secrets before anything is printed or logged. Works on the raw string rather than
// through `new URL`, because the strings we must hide secrets in are often not valid URLs
// (an unencoded '@' or '/' in a password, several hosts, a libpq keyword string).
import type { Config } from './schema.js';

const MASK = '****';

// password=… in a query string or a libpq keyword/value string; quoted values may hold spaces.
const PASSWORD_PARAM = /\b((?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'|[^&\s#]*)/gi;

/**
 * Masks the password in a connection string: the userinfo part of a URL and any
 * password= parameter. Leaves the rest readable so the output still says where it points.
 */
export function redactUrl(url: string): string {
  let out = url;
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(out);
  if (scheme) {
    const rest = out.slice(scheme[0].length);
    // The last '@' before the query ends the userinfo, so an unencoded '@' in a password
    // is still hidden; if that over-reaches into the path we hide too much, never too little.
    const queryStart = rest.indexOf('?');
    const authorityish = queryStart === -1 ? rest : rest.slice(0, queryStart);
    const at = authorityish.lastIndexOf('@');
    if (at !== -1) {
      const userinfo = authorityish.slice(0, at);
      const colon = userinfo.indexOf(':');
      if (colon !== -1) {
        out = `${scheme[0]}${userinfo.slice(0, colon)}:${MASK}${rest.slice(at)}`;
      }
    }
  }
  return out.replace(PASSWORD_PARAM, `$1${MASK}`);
}

/** A copy of the config that is safe to print: the same shape, secrets masked. */
export function redactConfig(config: Config): unknown {
  return {
    ...config,
    server: {
      ...config.server,
      stateSecret: config.server.stateSecret === null ? null : MASK,
    },
    http: {
      ...config.http,
      allowedOrigins: [...config.http.allowedOrigins],
      allowedHosts: [...config.http.allowedHosts],
      tls: { ...config.http.tls },
      cors: { origins: [...config.http.cors.origins] },
    },
    database: {
      ...config.database,
      url: config.database.url === null ? null : redactUrl(config.database.url),
      directUrl: config.database.directUrl === null ? null : redactUrl(config.database.directUrl),
      readReplicas: config.database.readReplicas.map(redactUrl),
    },
    // Passwords of `databases:` entries live in the environment or a file; a URL may hold one.
    databases: config.databases.map((entry) => ({
      ...entry,
      ...(entry.url == null ? {} : { url: redactUrl(entry.url) }),
      ...(entry.directUrl == null ? {} : { directUrl: redactUrl(entry.directUrl) }),
      ...(entry.readReplicas == null ? {} : { readReplicas: entry.readReplicas.map(redactUrl) }),
    })),
    embedded: { ...config.embedded },
    state: { url: config.state.url === null ? null : redactUrl(config.state.url) },
    auth: { ...config.auth, lockout: { ...config.auth.lockout } },
    audit: { ...config.audit },
    log: { ...config.log },
    rateLimit: {
      ...config.rateLimit,
      routes: { ...config.rateLimit.routes },
      redis: config.rateLimit.redis === null ? null : redactUrl(config.rateLimit.redis),
    },
    cluster: {
      ...config.cluster,
      redis: config.cluster.redis === null ? null : redactUrl(config.cluster.redis),
    },
  };
}
