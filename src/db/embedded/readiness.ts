// "Started" means a real client got an answer to SELECT 1, not merely that a socket exists:
// that is the only signal the rest of pgmcp cares about.

import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { ChildExitedError, type PgliteChild } from './child.js';

export interface Connection {
  host: string;
  port: number;
  user: string;
  database: string;
}

export class StartTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`did not accept connections within ${Math.round(timeoutMs / 1000)} s`);
    this.name = 'StartTimeoutError';
  }
}

const PROBE_RETRY_MS = 100;
const PROBE_CONNECT_TIMEOUT_MS = 5_000;

/**
 * Resolves once `child` answers SELECT 1 on `connection`. Rejects with the child's
 * ChildExitedError if it dies first, or StartTimeoutError after `timeoutMs`.
 */
export async function waitUntilQueryable(
  child: PgliteChild,
  connection: Connection,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const failed = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StartTimeoutError(timeoutMs)), timeoutMs);
    child.ready.catch(reject);
    void child.exited.then((exit) => reject(new ChildExitedError(exit)));
  });
  failed.catch(() => undefined);
  try {
    await Promise.race([child.ready, failed]);
    const probe = probeUntilAnswered(connection, deadline, abort.signal);
    probe.catch(() => undefined); // when `failed` wins, the abandoned probe's rejection is noise
    await Promise.race([probe, failed]);
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}

async function probeUntilAnswered(
  connection: Connection,
  deadline: number,
  signal: AbortSignal,
): Promise<void> {
  let lastError: unknown;
  while (!signal.aborted && Date.now() < deadline) {
    try {
      await selectOne(
        connection,
        Math.min(PROBE_CONNECT_TIMEOUT_MS, Math.max(1, deadline - Date.now())),
      );
      return;
    } catch (error) {
      lastError = error;
      await sleep(PROBE_RETRY_MS, undefined, { signal }).catch(() => undefined);
    }
  }
  throw lastError ?? new Error('probe aborted');
}

async function selectOne(connection: Connection, connectTimeoutMs: number): Promise<void> {
  const client = new pg.Client({ ...connection, connectionTimeoutMillis: connectTimeoutMs });
  // A dying child resets the socket; without a listener that error would crash pgmcp.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
  } finally {
    await client.end().catch(() => undefined);
  }
}
