// Tells the live catalog when the database's routines, registry handlers or schema may have
// changed: LISTEN on a dedicated connection (never one from the pool: a pooled client is
// reset and handed to requests) for the event trigger's NOTIFY pgmcp_catalog and the
// registry's NOTIFY pgmcp_registry, reconnecting with capped exponential backoff (STYLE.md
// #8), plus a TTL poll as the fallback everywhere. The embedded PGlite has a single session
// shared through a pool of one, so there the TTL poll is the only mechanism.
import { readFileSync } from 'node:fs';
import pg from 'pg';
import type { Logger } from 'pino';
import { packagePath } from '../core/package-path.js';
import type { Database } from '../db/database.js';
import { backendPids } from '../db/pooler.js';

const CATALOG_CHANNEL = 'pgmcp_catalog';
const REGISTRY_CHANNEL = 'pgmcp_registry';

const WATCH_SCRIPT = packagePath('sql/watch/001_event_trigger.sql');
/** The catalog generation (sql/watch/002_generation.sql), installed with the event trigger. */
const GENERATION_SCRIPT = packagePath('sql/watch/002_generation.sql');

/** Why a reload was asked for: a notification's channel, the TTL, or a (re)connect. */
export type ChangeReason = 'notify' | 'ttl' | 'reconnect';

export interface CatalogWatchOptions {
  db: Database;
  logger: Pick<Logger, 'debug' | 'info' | 'warn'>;
  /** Channels to LISTEN on (default pgmcp_catalog and pgmcp_registry). */
  channels?: readonly string[];
  /** Poll period; 0 turns the poll off. Default 60 s. */
  ttlMs?: number;
  /** Quiet time after the last notification before onChange runs. Default 100 ms. */
  debounceMs?: number;
  /** Reconnect backoff: first delay and cap. Default 500 ms, 30 s. */
  backoff?: { initialMs: number; maxMs: number };
  /** Install the event trigger when the role may (superuser). Default true. */
  installTrigger?: boolean;
  /**
   * Connection for the LISTEN client (database.directUrl: the server without a pooler);
   * default the database's own (db.openClient).
   */
  connection?: pg.ClientConfig;
  /** Called (never concurrently with itself) after a debounced burst or a poll tick. */
  onChange(reason: ChangeReason, detail: { channels: string[] }): void | Promise<void>;
}

export type TriggerState = 'installed' | 'not-permitted' | 'failed' | 'skipped';

export interface CatalogWatch {
  /**
   * 'listen' on real PostgreSQL; 'poll' on the embedded database, and where the LISTEN
   * connection turned out to go through a pooler (known once `ready` has resolved).
   */
  readonly mode: 'listen' | 'poll';
  /** Resolves after the first connect attempt (LISTEN set up, or failed and retrying). */
  readonly ready: Promise<void>;
  /** Whether the event trigger was installed by this start (or the role may not). */
  trigger(): TriggerState;
  /** Whether the LISTEN connection is up now. */
  listening(): boolean;
  /** The backend pid of the LISTEN connection (tests terminate it). */
  listenerPid(): number | null;
  stop(): Promise<void>;
}

const INSUFFICIENT_PRIVILEGE = '42501';

/**
 * Install (idempotently) the event trigger of sql/watch/001_event_trigger.sql and the catalog
 * generation of 002_generation.sql. Only a superuser may create event triggers in PostgreSQL
 * 15; anyone else gets 'not-permitted' without trying.
 */
export async function installCatalogTrigger(
  client: pg.Client | pg.PoolClient,
): Promise<'installed' | 'not-permitted'> {
  const { rows } = await client.query<{ can: boolean }>(
    'SELECT rolsuper AS can FROM pg_roles WHERE rolname = current_user',
  );
  if (!rows[0]?.can) return 'not-permitted';
  try {
    await client.query('BEGIN');
    await client.query(readFileSync(WATCH_SCRIPT, 'utf8'));
    await client.query(readFileSync(GENERATION_SCRIPT, 'utf8'));
    await client.query('COMMIT');
    return 'installed';
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    if ((error as { code?: string }).code === INSUFFICIENT_PRIVILEGE) return 'not-permitted';
    throw error;
  }
}

export function startCatalogWatch(options: CatalogWatchOptions): CatalogWatch {
  const { db, logger } = options;
  const channels = options.channels ?? [CATALOG_CHANNEL, REGISTRY_CHANNEL];
  const ttlMs = options.ttlMs ?? 60_000;
  const debounceMs = options.debounceMs ?? 100;
  const backoff = options.backoff ?? { initialMs: 500, maxMs: 30_000 };
  let mode: CatalogWatch['mode'] = db.kind === 'embedded' ? 'poll' : 'listen';
  const via = options.connection ? 'database.directUrl' : 'the database connection';
  const newClient = (): pg.Client =>
    options.connection
      ? new pg.Client({ ...options.connection, keepAlive: true })
      : db.openClient({ keepAlive: true });

  let stopped = false;
  let client: pg.Client | null = null;
  let connected = false;
  let pid: number | null = null;
  let triggerState: TriggerState = 'skipped';
  let failures = 0;
  let reconnectTimer: NodeJS.Timeout | null = null;
  let debounceTimer: NodeJS.Timeout | null = null;
  let pendingChannels = new Set<string>();
  let pendingReason: ChangeReason | null = null;
  let running: Promise<void> | null = null;

  // --- delivering changes, debounced and one at a time --------------------------------------

  const deliver = async (): Promise<void> => {
    while (pendingReason && !stopped) {
      const reason = pendingReason;
      const detail = { channels: [...pendingChannels] };
      pendingReason = null;
      pendingChannels = new Set();
      try {
        await options.onChange(reason, detail);
      } catch (error) {
        logger.warn({ err: { message: (error as Error).message } }, 'catalog reload failed');
      }
    }
  };

  const request = (reason: ChangeReason, channel?: string, delayMs = debounceMs): void => {
    if (stopped) return;
    // A notification outranks a poll tick in the reason reported.
    if (pendingReason === null || reason !== 'ttl') pendingReason = reason;
    if (channel) pendingChannels.add(channel);
    if (debounceTimer) clearTimeout(debounceTimer);
    debounceTimer = setTimeout(() => {
      debounceTimer = null;
      // A reload in flight picks the new request up when it finishes.
      running ??= deliver().finally(() => {
        running = null;
      });
    }, delayMs);
  };

  // --- the LISTEN connection ----------------------------------------------------------------

  const scheduleReconnect = (why: string): void => {
    if (stopped || reconnectTimer) return;
    failures += 1;
    const delay = Math.min(backoff.maxMs, backoff.initialMs * 2 ** (failures - 1));
    // Said once at warn; repeated failures of the same outage only at debug.
    const log = failures === 1 ? logger.warn.bind(logger) : logger.debug.bind(logger);
    log({ reason: why, retryInMs: delay, attempt: failures }, 'catalog LISTEN connection lost');
    reconnectTimer = setTimeout(() => {
      reconnectTimer = null;
      void connect();
    }, delay);
  };

  const connect = async (): Promise<void> => {
    if (stopped) return;
    const next = newClient();
    let lost = false;
    const onLost = (why: string): void => {
      if (lost) return;
      lost = true;
      connected = false;
      pid = null;
      if (client === next) client = null;
      next.end().catch(() => undefined);
      scheduleReconnect(why);
    };
    next.on('error', (error) => onLost(error.message));
    next.on('end', () => onLost('connection ended'));
    next.on('notification', (message) => request('notify', message.channel));
    try {
      await next.connect();
      if (!(await backendPids(next)).direct) {
        // Behind a transaction-mode pooler the LISTEN would stay on whichever server session
        // ran it, one that callers share, and its notifications would go astray: poll instead.
        lost = true;
        await next.end().catch(() => undefined);
        mode = 'poll';
        logger.warn(
          { pollEveryMs: ttlMs },
          options.connection
            ? 'database.directUrl goes through a connection pooler too: catalog changes are polled, not listened for; point it at the server itself'
            : `catalog changes are polled every ${Math.round(ttlMs / 1000)} s, not listened for: the database connection goes through a connection pooler; set database.directUrl to the server itself to see them at once`,
        );
        return;
      }
      if (options.installTrigger !== false && triggerState !== 'installed') {
        triggerState = await installCatalogTrigger(next).catch((error: unknown) => {
          logger.warn(
            { err: { message: (error as Error).message } },
            'catalog event trigger not installed; relying on the TTL poll for DDL',
          );
          return 'failed' as const;
        });
        if (triggerState === 'not-permitted') {
          logger.info(
            'catalog event trigger not installed (needs a superuser; see docs/sql-tools.md, "Live updates"); DDL is picked up by the TTL poll',
          );
        }
      }
      for (const channel of channels) await next.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      if (stopped) {
        lost = true;
        await next.end().catch(() => undefined);
        return;
      }
      pid = (next as unknown as { processID?: number }).processID ?? null;
      client = next;
      connected = true;
      const wasDown = failures > 0;
      failures = 0;
      if (!wasDown) logger.info({ via }, `catalog changes are listened for on ${via}`);
      if (wasDown) {
        logger.info('catalog LISTEN connection restored');
        // Whatever was announced while we were away is lost: reload once to catch up.
        request('reconnect');
      }
    } catch (error) {
      onLost((error as Error).message);
    }
  };

  // --- the poll -----------------------------------------------------------------------------

  const poll =
    ttlMs > 0
      ? setInterval(() => {
          request('ttl', undefined, 0);
          // A half-open LISTEN connection only shows itself when used.
          client?.query('SELECT 1').catch(() => undefined);
        }, ttlMs)
      : null;
  poll?.unref();

  const ready = mode === 'listen' ? connect() : Promise.resolve();

  return {
    get mode() {
      return mode;
    },
    ready,
    trigger: () => triggerState,
    listening: () => connected,
    listenerPid: () => pid,
    async stop() {
      stopped = true;
      if (poll) clearInterval(poll);
      if (reconnectTimer) clearTimeout(reconnectTimer);
      if (debounceTimer) clearTimeout(debounceTimer);
      await ready;
      const current = client;
      client = null;
      connected = false;
      await current?.end().catch(() => undefined);
      await running;
    },
  };
}
