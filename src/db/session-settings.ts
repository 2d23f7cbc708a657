// The safety settings a call runs under (timeouts, role, the caller's identity), and how they
// reach PostgreSQL cheaply.
//
// Parsing and planning a settings statement cost PostgreSQL about as much as the lookup it
// guards (bench/README.md, "PostgreSQL per call"). So on a direct connection the settings are
// applied once per physical connection, at session level ("the base"), and a call sends only
// the values that differ from the base (another caller's identity), transaction-locally.
// The base stays true because nothing a caller runs is ever committed on a kept connection:
// a read-only call is an explicit block that ends in ROLLBACK, which undoes every set_config a
// caller's function made, session-level or not; a read-write call's connection is retired
// (withCall) or its base forgotten and re-applied (withTransaction). What PostgreSQL reports
// on its own (ParameterStatus: is_superuser, session_authorization, default_transaction_read_only,
// standard_conforming_strings, …) arriving at any other time also makes the base forgotten.
//
// Behind a transaction-mode pooler (PgBouncer) a session is not ours from one transaction to
// the next, so a base would be a lie: the first connection compares the backend's pid with
// the one the connection was given at startup (a pooler gives its own), and on a mismatch
// every call carries all its settings transaction-locally, as before.
import type pg from 'pg';
import type { PipelineStep } from './pipeline.js';
import { backendPids } from './pooler.js';

/** The values a call runs under, as set_config takes them. */
export interface CallSettings {
  statementTimeout: string;
  idleTimeout: string;
  userId: string;
  tenantId: string;
  claims: string;
  role: string;
}

type Key = keyof CallSettings;

/** Setting names, in the order they are set. The role last: it may fail (a role that went away). */
const NAMES: readonly (readonly [Key, string])[] = [
  ['statementTimeout', 'statement_timeout'],
  ['idleTimeout', 'idle_in_transaction_session_timeout'],
  ['userId', 'auth.user_id'],
  ['tenantId', 'auth.tenant_id'],
  ['claims', 'auth.claims'],
  ['role', 'role'],
];

export type SettingsMode = 'base' | 'transaction-local';

interface Base {
  values: CallSettings;
}

/** set_config statements by the set of keys they set (bit i = NAMES[i]), built once each. */
const statements = new Map<string, string>();

function settingsText(keys: readonly number[], local: boolean, withStrings: boolean): string {
  const id = `${keys.join(',')}|${local}|${withStrings}`;
  let text = statements.get(id);
  if (text === undefined) {
    const calls = keys.map((i, n) => `set_config('${NAMES[i]![1]}', $${n + 1}, ${local})`);
    // The SQL guard parses with standard_conforming_strings on; the server must read the text
    // the same way.
    if (withStrings)
      calls.splice(
        calls.length - 1,
        0,
        `set_config('standard_conforming_strings', 'on', ${local})`,
      );
    text = `SELECT ${calls.join(', ')}`;
    statements.set(id, text);
  }
  return text;
}

const ALL = NAMES.map((_, i) => i);

/** Every setting, transaction-local: a call's settings where no base can be trusted. */
function allSettingsStep(values: CallSettings): PipelineStep {
  return {
    text: settingsText(ALL, true, true),
    values: NAMES.map(([key]) => values[key]),
  };
}

// Undo the base for pgmcp's own work (the login role, the server's defaults). Constants only.
const RESET_SQL = [
  'RESET ROLE',
  'RESET statement_timeout',
  'RESET idle_in_transaction_session_timeout',
  'RESET standard_conforming_strings',
  'RESET "auth.user_id"',
  'RESET "auth.tenant_id"',
  'RESET "auth.claims"',
].join('; ');

export interface SessionSettings {
  readonly mode: SettingsMode;
  /**
   * The settings step a call sends inside its block on this connection: only what differs
   * from the connection's base (null: nothing), or everything when there is no base. Applies
   * the base first when the connection has none (one round trip, once per connection).
   */
  prepare(client: pg.PoolClient, values: CallSettings): Promise<PipelineStep | null>;
  /** The connection's session may have changed (a committed block ran a caller's code). */
  forget(client: pg.PoolClient): void;
  /** Before pgmcp's own work on a pooled connection: the login role and server defaults again. */
  resetForOwnUse(client: pg.PoolClient): Promise<void>;
  /** Whether the connection currently has a base (tests and diagnostics). */
  hasBase(client: pg.PoolClient): boolean;
}

export interface SessionSettingsOptions {
  /** Skip the pooler check (the embedded database: one connection, ours alone). */
  direct?: boolean;
  /** Told once when a pooler is detected and calls fall back to transaction-local settings. */
  onPooler?: (detail: { startupPid: number | undefined; backendPid: number }) => void;
}

export function createSessionSettings(options: SessionSettingsOptions = {}): SessionSettings {
  let mode: SettingsMode = 'base';
  let checked = options.direct === true;
  const bases = new WeakMap<pg.PoolClient, Base>();
  const watched = new WeakSet<pg.PoolClient>();

  const watch = (client: pg.PoolClient): void => {
    if (watched.has(client)) return;
    watched.add(client);
    // PostgreSQL reports a GUC_REPORT setting whenever its value changed at the end of a
    // transaction. A ROLLBACK leaves nothing to report, so any report on a connection with a
    // base means something got committed: re-apply the base before the next call.
    const connection = (client as unknown as { connection?: NodeJS.EventEmitter }).connection;
    connection?.on('parameterStatus', () => bases.delete(client));
  };

  const isDirect = async (client: pg.PoolClient): Promise<boolean> => {
    if (checked) return mode === 'base';
    const { startupPid, backendPid } = await backendPids(client);
    checked = true;
    // An unknown startup pid counts as a pooler here: the base is only kept where it is sure.
    if (startupPid !== backendPid) {
      mode = 'transaction-local';
      options.onPooler?.({ startupPid, backendPid });
    }
    return mode === 'base';
  };

  return {
    get mode() {
      return mode;
    },
    async prepare(client, values) {
      if (mode === 'transaction-local') return allSettingsStep(values);
      let base = bases.get(client);
      if (base === undefined) {
        if (!(await isDirect(client))) return allSettingsStep(values);
        watch(client);
        // Outside any block, so it stays; the role last, so a failure leaves no half base.
        await client.query(
          settingsText(ALL, false, true),
          NAMES.map(([key]) => values[key]),
        );
        base = { values: { ...values } };
        bases.set(client, base);
        return null;
      }
      const differ: number[] = [];
      NAMES.forEach(([key], i) => {
        if (base.values[key] !== values[key]) differ.push(i);
      });
      if (differ.length === 0) return null;
      return {
        text: settingsText(differ, true, false),
        values: differ.map((i) => values[NAMES[i]![0]]),
      };
    },
    forget(client) {
      bases.delete(client);
    },
    async resetForOwnUse(client) {
      if (!bases.has(client)) return;
      bases.delete(client);
      await client.query(RESET_SQL);
    },
    hasBase: (client) => bases.has(client),
  };
}
