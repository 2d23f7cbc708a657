// Command-line flags → config values. The CLI parses argv; this file only knows what each
// flag means for the configuration.
import type { SourcedValue } from './env.js';
import { configError } from './issues.js';
import { portSchema } from './fields.js';

/** What the CLI passes; every field optional, undefined = the flag was not given. */
export interface ConfigFlags {
  config?: string;
  stdio?: boolean;
  /** "[HOST:]PORT" */
  http?: string;
  database?: string;
  dataDir?: string;
  allowWrites?: boolean;
  logLevel?: string;
  /** --require-auth */
  requireAuth?: boolean;
  /** false with --no-auth */
  auth?: boolean;
  /** PEM files that turn HTTPS on (http.tls.cert / http.tls.key). */
  tlsCert?: string;
  tlsKey?: string;
}

const HOST_PORT_HINT = 'expected [HOST:]PORT such as 8080, 0.0.0.0:8080 or [::1]:8080';

type HostPort = { host?: string; port: number };
type HostPortResult = { ok: true; value: HostPort } | { ok: false; key: string; message: string };

function splitHostPort(value: string): HostPortResult {
  const text = value.trim();
  const match =
    /^(\d+)$/.exec(text) ??
    /^\[([0-9a-fA-F:.]*:[0-9a-fA-F:.]*)\]:(\d+)$/.exec(text) ??
    /^([^\s:/@[\]]+):(\d+)$/.exec(text);
  if (!match) {
    // Bare IPv6 like ::1:8080 is ambiguous, so say how to write it instead of guessing.
    const hint = text.split(':').length > 2 ? ' (put an IPv6 address in brackets)' : '';
    return {
      ok: false,
      key: 'http',
      message: `${HOST_PORT_HINT}${hint}, got ${JSON.stringify(value)}`,
    };
  }
  const host = match.length === 3 ? match[1] : undefined;
  const digits = match[match.length - 1] ?? '';
  const port = portSchema.safeParse(Number(digits));
  if (!port.success) {
    return {
      ok: false,
      key: 'http.port',
      message: `expected a port between 0 and 65535, got ${JSON.stringify(digits)}`,
    };
  }
  return { ok: true, value: host === undefined ? { port: port.data } : { host, port: port.data } };
}

/** Parses "8080", "0.0.0.0:8080" or "[::1]:8080"; throws CONFIG_INVALID on anything else. */
export function parseHostPort(value: string): { host?: string; port: number } {
  const result = splitHostPort(value);
  if (!result.ok) throw configError(result.message, result.key);
  return result.value;
}

/** The values the flags set, each labelled with its flag for messages. */
export function readFlags(flags: ConfigFlags): SourcedValue[] {
  const values: SourcedValue[] = [];
  const set = (key: string, value: unknown, source: string) => values.push({ key, value, source });

  if (flags.stdio === true && flags.http !== undefined) {
    throw configError(
      'transport: --stdio and --http choose different transports; give only one of them',
      'transport',
      '--stdio',
    );
  }
  if (flags.stdio === true) set('transport', 'stdio', '--stdio');
  if (flags.http !== undefined) {
    const result = splitHostPort(flags.http);
    if (!result.ok)
      throw configError(`${result.key}: ${result.message} (from --http)`, result.key, '--http');
    set('transport', 'http', '--http');
    if (result.value.host !== undefined) set('http.host', result.value.host, '--http');
    set('http.port', result.value.port, '--http');
  }
  if (flags.database !== undefined) set('database.url', flags.database, '--database');
  if (flags.dataDir !== undefined) set('embedded.dataDir', flags.dataDir, '--data-dir');
  if (flags.allowWrites !== undefined)
    set('database.allowWrites', flags.allowWrites, '--allow-writes');
  if (flags.logLevel !== undefined) set('log.level', flags.logLevel, '--log-level');
  if (flags.requireAuth === true && flags.auth === false) {
    throw configError(
      'auth.required: --require-auth and --no-auth contradict each other; give one of them',
      'auth.required',
      '--require-auth',
    );
  }
  if (flags.requireAuth === true) set('auth.required', true, '--require-auth');
  if (flags.auth === false) set('auth.required', false, '--no-auth');
  if (flags.tlsCert !== undefined) set('http.tls.cert', flags.tlsCert, '--tls-cert');
  if (flags.tlsKey !== undefined) set('http.tls.key', flags.tlsKey, '--tls-key');
  return values;
}
