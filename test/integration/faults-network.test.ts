// A network that stops forwarding (a TCP proxy that stalls both directions) between pgmcp and
// PostgreSQL: opening a connection fails after database.connectTimeoutMs; a statement on an
// open connection that goes silent fails as a timeout once its cancel got no answer either
// (the socket is dropped), never waiting forever; the stalled connections are discarded, and
// once the network forwards again the next call gets a fresh connection and is answered.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError, ErrorCodes } from '../../src/core/errors.js';
import { ANONYMOUS } from '../../src/core/principal.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { realPostgres, type RealPostgres } from '../helpers/postgres.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

const pg = await realPostgres('test/integration/faults-network.test.ts (stalled network)');
const logger = pino({ level: 'silent' });

const CONNECT_TIMEOUT_MS = 600;

describe.skipIf(!pg)('a network that stops forwarding', () => {
  const info = pg as RealPostgres;
  let proxy: TcpProxy;
  let db: Database;

  beforeAll(async () => {
    const url = new URL(info.url);
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    url.port = String(proxy.port);
    db = await createDatabase(
      {
        url: url.toString(),
        poolSize: 2,
        connectTimeoutMs: CONNECT_TIMEOUT_MS,
        embedded: { dataDir: '/nonexistent', demo: false },
      },
      logger,
    );
  });
  afterAll(async () => {
    proxy?.resume();
    await db?.close();
    await proxy?.close();
  });

  const statement = (sql: string, timeoutMs = 300) => ({
    sql,
    params: [],
    offset: 0,
    limit: 10,
    maxBytes: 1_000_000,
    readOnly: true,
    timeoutMs,
    principal: ANONYMOUS,
  });
  const failure = (promise: Promise<unknown>): Promise<AppError> =>
    promise.then(
      () => {
        throw new Error('expected the call to fail');
      },
      (error: unknown) => {
        expect(error).toBeInstanceOf(AppError);
        return error as AppError;
      },
    );

  it('a statement on a connection that goes silent fails as a timeout; the next call, after the network is back, is answered', async () => {
    const first = await db.runStatement(statement('SELECT 1 AS one'));
    expect(first.rows).toEqual([[1]]);
    proxy.stall();
    const startedAt = Date.now();
    const error = await failure(db.runStatement(statement('SELECT 2 AS two')));
    const took = Date.now() - startedAt;
    expect(error.code).toBe(ErrorCodes.DB_TIMEOUT);
    expect(error.message).toMatch(/timed out \(limit 300 ms\)/);
    proxy.resume();
    const accepted = proxy.accepted;
    const next = await db.runStatement(statement('SELECT 3 AS three'));
    expect(next.rows).toEqual([[3]]);
    // The stalled connection was discarded: the call after it opened a new one.
    expect(proxy.accepted).toBeGreaterThan(accepted);
    process.stdout.write(`[faults] stalled network, open connection: failed after ${took} ms\n`);
  }, 30_000);

  it('opening a connection through a stalled network fails after connectTimeoutMs, as PGMCP201', async () => {
    // A fresh pool: every new call must open a connection.
    const url = new URL(info.url);
    url.port = String(proxy.port);
    const fresh = await createDatabase(
      {
        url: url.toString(),
        poolSize: 1,
        connectTimeoutMs: CONNECT_TIMEOUT_MS,
        embedded: { dataDir: '/nonexistent', demo: false },
      },
      logger,
    );
    try {
      proxy.stall();
      const startedAt = Date.now();
      const error = await failure(fresh.runStatement(statement('SELECT 1 AS one')));
      const took = Date.now() - startedAt;
      expect(error.code).toBe(ErrorCodes.DB_UNAVAILABLE);
      expect(error.message).toMatch(/^The database is unavailable; pgmcp cannot connect to it: /);
      expect(error.message).toMatch(/timeout/i);
      proxy.resume();
      const next = await fresh.runStatement(statement('SELECT 1 AS one'));
      expect(next.rows).toEqual([[1]]);
      process.stdout.write(`[faults] stalled network, new connection: failed after ${took} ms\n`);
    } finally {
      proxy.resume();
      await fresh.close();
    }
  }, 30_000);
});
