// libpq's multi-host connection strings. node-postgres reads one host per URL, so pgmcp reads
// the list itself: `postgres://u@h1:5432,h2:5433/db?target_session_attrs=read-write`, the same
// with `?host=h1,h2&port=5432,5433`, or the keyword form `host=h1,h2 port=5432,5433 dbname=db`
// (turned into the URL form). Each host gets a single-host URL of its own that the driver can
// read; the parameters only pgmcp acts on (target_session_attrs, load_balance_hosts,
// connect_timeout) are taken out of it. Nothing here ever quotes a password.

export const TARGET_SESSION_ATTRS = [
  'any',
  'read-write',
  'read-only',
  'primary',
  'standby',
  'prefer-standby',
] as const;
export type TargetSessionAttrs = (typeof TARGET_SESSION_ATTRS)[number];
export const LOAD_BALANCE_HOSTS = ['disable', 'random'] as const;
export type LoadBalanceHosts = (typeof LOAD_BALANCE_HOSTS)[number];

export interface HostSpec {
  /** A name, an address, or a socket directory (starts with `/`). */
  host: string;
  port: number;
}

export interface ConnectTargets {
  hosts: HostSpec[];
  targetSessionAttrs: TargetSessionAttrs;
  loadBalanceHosts: LoadBalanceHosts;
  /** Per host, as libpq's connect_timeout (seconds; under 2 counts as 2); null: pgmcp's default. */
  connectTimeoutMs: number | null;
  /** The URL to one of the hosts, for the driver (still holds the password: never print it). */
  urlFor(host: HostSpec): string;
}

/** Parameters pgmcp handles itself; the driver never sees them. */
const OWN_PARAMS = ['target_session_attrs', 'load_balance_hosts', 'connect_timeout'];
const URL_SHAPE = /^(postgres(?:ql)?:\/\/)([^/?#]*)(.*)$/is;

/** `host:port` for messages and logs (a socket directory as it is). */
export function hostLabel(host: HostSpec): string {
  const name = host.host.includes(':') ? `[${host.host}]` : host.host;
  return `${name}:${host.port}`;
}

/**
 * The hosts a URL names and how to choose between them; a string saying what is wrong when it
 * cannot be read. A single-host URL gives one host (the driver's default port 5432, host
 * localhost).
 */
export function connectTargets(text: string): ConnectTargets | string {
  const shape = URL_SHAPE.exec(text);
  if (!shape) return 'expected a postgres:// URL';
  const [, scheme, authority, rest] = shape as unknown as [string, string, string, string];
  const at = authority.lastIndexOf('@');
  const userinfo = at === -1 ? '' : authority.slice(0, at + 1);
  const hostPart = at === -1 ? authority : authority.slice(at + 1);
  const queryAt = rest.indexOf('?');
  const hashAt = rest.indexOf('#');
  const queryEnd = hashAt === -1 ? rest.length : hashAt;
  const path = queryAt === -1 ? rest.slice(0, queryEnd) : rest.slice(0, queryAt);
  const query = queryAt === -1 || queryAt > queryEnd ? '' : rest.slice(queryAt + 1, queryEnd);
  const params = new URLSearchParams(query);

  const one = (name: string): string | undefined => params.getAll(name).at(-1);
  const target = one('target_session_attrs') ?? 'any';
  if (!(TARGET_SESSION_ATTRS as readonly string[]).includes(target)) {
    return `expected target_session_attrs to be one of ${TARGET_SESSION_ATTRS.join(', ')}`;
  }
  const balance = one('load_balance_hosts') ?? 'disable';
  if (!(LOAD_BALANCE_HOSTS as readonly string[]).includes(balance)) {
    return `expected load_balance_hosts to be one of ${LOAD_BALANCE_HOSTS.join(', ')}`;
  }
  const timeout = one('connect_timeout');
  if (timeout !== undefined && !/^\d{1,6}$/.test(timeout)) {
    return 'expected connect_timeout to be a whole number of seconds';
  }

  let hosts: HostSpec[];
  const hostParam = one('host');
  const portParam = one('port');
  if (hostPart === '' && hostParam !== undefined) {
    // libpq's ?host=a,b&port=1,2 (also how a socket directory is given).
    const names = hostParam.split(',');
    const ports = portList(portParam, names.length);
    if (typeof ports === 'string') return ports;
    hosts = names.map((host, i) => ({ host: host || 'localhost', port: ports[i]! }));
  } else {
    const parsed: HostSpec[] = [];
    for (const item of hostPart === '' ? [''] : hostPart.split(',')) {
      const m = /^(\[[^\]]*\]|[^:[\]]*)(?::(\d*))?$/.exec(item);
      if (!m) return 'expected each host in the URL as host or host:port';
      const name = decoded(m[1]!.replace(/^\[(.*)\]$/, '$1'));
      const port = m[2] ? Number(m[2]) : portParam !== undefined ? Number(portParam) : 5432;
      if (!Number.isInteger(port) || port < 1 || port > 65535) {
        return 'expected each port in the URL to be a port number';
      }
      parsed.push({ host: name || 'localhost', port });
    }
    hosts = parsed;
  }

  const kept = new URLSearchParams(
    [...params].filter(([key]) => !OWN_PARAMS.includes(key) && key !== 'host' && key !== 'port'),
  );
  const fragment = hashAt === -1 ? '' : rest.slice(hashAt);
  // One host: the URL stays as written, less the parameters pgmcp handles itself.
  const single = !hostPart.includes(',') && !(hostParam ?? '').includes(',');
  const keptAll = new URLSearchParams([...params].filter(([key]) => !OWN_PARAMS.includes(key)));
  return {
    hosts,
    targetSessionAttrs: target as TargetSessionAttrs,
    loadBalanceHosts: balance as LoadBalanceHosts,
    connectTimeoutMs: timeout === undefined ? null : Math.max(2, Number(timeout)) * 1000,
    urlFor(host) {
      if (single) {
        const search = keptAll.toString();
        if (search === query) return text;
        return `${scheme}${authority}${path}${search ? `?${search}` : ''}${fragment}`;
      }
      const q = new URLSearchParams(kept);
      let where: string;
      if (host.host.startsWith('/')) {
        q.set('host', host.host);
        q.set('port', String(host.port));
        where = '';
      } else {
        where = hostLabel(host);
      }
      const search = q.toString();
      return `${scheme}${userinfo}${where}${path || '/'}${search ? `?${search}` : ''}${fragment}`;
    },
  };
}

/** The URL with this password in it (multi-host or not); null when it is not a postgres:// URL. */
export function withPassword(text: string, password: string): string | null {
  const shape = URL_SHAPE.exec(text);
  if (!shape) return null;
  const [, scheme, authority, rest] = shape as unknown as [string, string, string, string];
  const at = authority.lastIndexOf('@');
  const userinfo = at === -1 ? '' : authority.slice(0, at);
  const user = userinfo.split(':')[0] ?? '';
  return `${scheme}${user}:${encodeURIComponent(password)}@${authority.slice(at + 1)}${rest}`;
}

function portList(text: string | undefined, count: number): number[] | string {
  const items = text === undefined ? ['5432'] : text.split(',');
  if (items.length !== 1 && items.length !== count) {
    return `expected one port, or as many ports as hosts (${count})`;
  }
  const ports = items.map((p) => (p === '' ? 5432 : Number(p)));
  if (ports.some((p) => !Number.isInteger(p) || p < 1 || p > 65535)) {
    return 'expected each port to be a port number';
  }
  return Array.from({ length: count }, (_, i) => ports[items.length === 1 ? 0 : i]!);
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

// --- the keyword form ---

const KEYWORD_START = /^\s*[a-z_]+\s*=/i;
/** Keywords that become parts of the URL rather than parameters. */
const URL_PARTS = new Set(['host', 'hostaddr', 'port', 'dbname', 'user', 'password']);

/** Whether a connection string is libpq's keyword form (`host=… dbname=…`). */
export function isKeywordForm(text: string): boolean {
  return KEYWORD_START.test(text) && !/^postgres(ql)?:\/\//i.test(text);
}

/**
 * The keyword form as a postgres:// URL with the same meaning, or a string saying what is
 * wrong (never quoting a value: one may be a password).
 */
export function keywordsToUrl(text: string): string | string[] {
  const values = new Map<string, string>();
  const re = /\s*([a-z_]+)\s*=\s*(?:'((?:[^'\\]|\\.)*)'|([^\s']*))/giy;
  let index = 0;
  while (index < text.length) {
    if (/^\s*$/.test(text.slice(index))) break;
    re.lastIndex = index;
    const m = re.exec(text);
    if (!m) return ['expected key=value pairs (quote a value holding spaces with single quotes)'];
    const value = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : (m[3] ?? '');
    values.set(m[1]!.toLowerCase(), value);
    index = re.lastIndex;
  }
  const enc = encodeURIComponent;
  const user = values.get('user');
  const password = values.get('password');
  const userinfo =
    user === undefined && password === undefined
      ? ''
      : `${enc(user ?? '')}${password === undefined ? '' : `:${enc(password)}`}@`;
  const names = (values.get('host') ?? values.get('hostaddr') ?? '').split(',');
  const ports = portList(values.get('port'), names.length);
  if (typeof ports === 'string') return [ports];
  const params = new URLSearchParams();
  for (const [key, value] of values) if (!URL_PARTS.has(key)) params.set(key, value);
  let hostPart: string;
  if (names.some((n) => n.startsWith('/'))) {
    // Socket directories go in ?host= (libpq's URL form for them).
    params.set('host', names.join(','));
    params.set('port', ports.join(','));
    hostPart = '';
  } else {
    hostPart = names
      .map((n, i) => hostLabel({ host: n || 'localhost', port: ports[i]! }))
      .join(',');
  }
  const search = params.toString();
  return `postgres://${userinfo}${hostPart}/${enc(values.get('dbname') ?? '')}${search ? `?${search}` : ''}`;
}
