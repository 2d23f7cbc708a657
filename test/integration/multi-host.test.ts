// libpq's multi-host connection strings on real clusters: a primary and its streaming standby,
// each target_session_attrs choosing the server libpq would choose, hosts that are down skipped,
// a refusal naming every host tried and why (never the password), the keyword form, a
// LISTEN connection (openClient) following the host in use, and a read-only call whose
// connection breaks (a TCP proxy in between drops it) tried once more on a fresh connection.
import { connect, createServer, type Socket } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { AppError, ErrorCodes } from '../../src/core/errors.js';
import { ANONYMOUS } from '../../src/core/principal.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { openStateDatabase } from '../../src/state/state-db.js';
import {
  freePort,
  serverBinDir,
  startCluster,
  startStandby,
  type Cluster,
} from '../helpers/pg-cluster.js';
import { reportSkipped } from '../helpers/postgres.js';

const binaries = serverBinDir();
if (!binaries) reportSkipped('multi-host', 'no local PostgreSQL server binaries (initdb)');
const logger = pino({ level: 'silent' });

describe.skipIf(!binaries)('multi-host connection strings', () => {
  let primary: Cluster;
  let standby: Cluster;
  let down: number;
  const opened: Database[] = [];
  beforeAll(async () => {
    primary = await startCluster();
    standby = await startStandby(primary);
    down = await freePort();
  }, 120_000);
  afterAll(async () => {
    await Promise.all(opened.map((db) => db.close()));
    standby?.destroy();
    primary?.destroy();
  });

  const hosts = (...ports: number[]): string => ports.map((port) => `127.0.0.1:${port}`).join(',');
  const open = async (url: string): Promise<Database> => {
    const db = await createDatabase(
      { url, poolSize: 2, embedded: { dataDir: '/nonexistent', demo: false } },
      logger,
    );
    opened.push(db);
    return db;
  };
  const where = async (db: Database): Promise<{ port: number; standby: boolean }> => {
    const result = await db.runStatement({
      sql: 'SELECT inet_server_port() AS port, pg_is_in_recovery() AS standby',
      params: [],
      offset: 0,
      limit: 1,
      maxBytes: 100_000,
      readOnly: true,
      timeoutMs: 5_000,
      principal: ANONYMOUS,
    });
    const [port, isStandby] = result.rows[0] as [number, boolean];
    return { port, standby: isStandby };
  };

  it('each target_session_attrs picks the server libpq would pick, skipping hosts that are down', async () => {
    const p = primary.port;
    const s = standby.port;
    const cases: [string, string, number][] = [
      ['any', hosts(down, s, p), s],
      ['read-write', hosts(down, s, p), p],
      ['primary', hosts(s, p), p],
      ['read-only', hosts(p, s), s],
      ['standby', hosts(p, down, s), s],
      ['prefer-standby', hosts(p, s), s],
      ['prefer-standby', hosts(down, p), p],
    ];
    for (const [attrs, list, expected] of cases) {
      const db = await open(`postgres://postgres@${list}/postgres?target_session_attrs=${attrs}`);
      const answer = await where(db);
      expect({ attrs, list, port: answer.port }).toEqual({ attrs, list, port: expected });
      expect(answer.standby).toBe(expected === s);
    }
  });

  it('with no host that qualifies, PGMCP201 names each host tried and why, never the password', async () => {
    const db = await open(
      `postgres://postgres:n0t-a-real-secret@${hosts(down, standby.port)}/postgres?target_session_attrs=read-write`,
    );
    const error = await where(db).then(
      () => new Error('expected a refusal'),
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AppError);
    const appError = error as AppError;
    expect(appError.code).toBe(ErrorCodes.DB_UNAVAILABLE);
    expect(appError.category).toBe('unavailable');
    expect(appError.message).toBe(
      `The database is unavailable; pgmcp found no host that matches target_session_attrs=read-write. Tried: 127.0.0.1:${down} (connection refused (ECONNREFUSED)); 127.0.0.1:${standby.port} (is a standby (read-only)). Try again shortly.`,
    );
    expect(appError.details?.['hosts']).toEqual([
      { host: `127.0.0.1:${down}`, reason: 'connection refused (ECONNREFUSED)' },
      { host: `127.0.0.1:${standby.port}`, reason: 'is a standby (read-only)' },
    ]);
    expect(JSON.stringify(appError.details)).not.toContain('n0t-a-real-secret');
    expect((await db.health()).ok).toBe(false);
  });

  it('load_balance_hosts=random spreads new pools over the hosts', async () => {
    const seen = new Set<number>();
    for (let i = 0; i < 24 && seen.size < 2; i++) {
      const db = await open(
        `postgres://postgres@${hosts(primary.port, standby.port)}/postgres?load_balance_hosts=random`,
      );
      seen.add((await where(db)).port);
      await db.close();
    }
    expect([...seen].sort()).toEqual([primary.port, standby.port].sort());
  });

  it('the keyword form in configuration, and state.url, reach the primary', async () => {
    const config = configSchema.parse({
      database: {
        url: `host=127.0.0.1,127.0.0.1 port=${standby.port},${primary.port} dbname=postgres user=postgres target_session_attrs=read-write`,
      },
    });
    const db = await open(config.database.url!);
    expect((await where(db)).port).toBe(primary.port);

    const state = await openStateDatabase({
      url: `postgres://postgres@${hosts(down, standby.port, primary.port)}/postgres?target_session_attrs=read-write`,
      dataDir: '/nonexistent',
      logger,
    });
    try {
      const { rows } = await state.query<{ port: number }>('SELECT inet_server_port() AS port');
      expect(rows[0]!.port).toBe(primary.port);
    } finally {
      await state.close();
    }
  });

  it("a LISTEN connection (openClient) goes to the host the pool uses, not the URL's first", async () => {
    const db = await open(
      `postgres://postgres@${hosts(down, standby.port, primary.port)}/postgres?target_session_attrs=read-write`,
    );
    const client = db.openClient();
    await client.connect();
    try {
      const { rows } = await client.query<{ port: number }>('SELECT inet_server_port() AS port');
      expect(rows[0]!.port).toBe(primary.port);
    } finally {
      await client.end();
    }
  });

  it('a read-only call whose connection breaks before any result is tried once more; a write is not', async () => {
    const proxy = await tcpProxy(primary.port);
    try {
      const db = await open(`postgres://postgres@127.0.0.1:${proxy.port}/postgres`);
      const run = (readOnly: boolean) =>
        db.runStatement({
          sql: 'SELECT pg_sleep(0.5), inet_server_port()',
          params: [],
          offset: 0,
          limit: 1,
          maxBytes: 100_000,
          readOnly,
          timeoutMs: 10_000,
          principal: ANONYMOUS,
        });
      const cutWhileRunning = async <T>(call: Promise<T>): Promise<T> => {
        await proxy.connected(1);
        proxy.cut();
        return call;
      };
      const read = await cutWhileRunning(run(true));
      expect(read.rows).toEqual([['', primary.port]]);
      expect(proxy.accepted()).toBe(2);

      const write = await cutWhileRunning(run(false)).then(
        () => new Error('expected the write to fail'),
        (e: unknown) => e,
      );
      expect(write).toBeInstanceOf(AppError);
      expect((write as AppError).code).toBe(ErrorCodes.DB_UNAVAILABLE);
      expect((write as AppError).message).toMatch(
        /^The database is unavailable: the connection to it was lost \(.+\)\. Try again shortly\.$/,
      );
      // Not tried again: no new connection was opened for it.
      expect(proxy.accepted()).toBe(2);
    } finally {
      await proxy.close();
    }
  });

  it('a connection that breaks under a one-statement query fails it; the process goes on (state database)', async () => {
    const proxy = await tcpProxy(primary.port);
    const state = await openStateDatabase({
      url: `postgres://postgres@${hosts(down)},127.0.0.1:${proxy.port}/postgres`,
      dataDir: '/nonexistent',
      logger,
    });
    try {
      const running = state.query('SELECT pg_sleep(5)');
      running.catch(() => undefined);
      await proxy.connected(1);
      proxy.cut();
      await expect(running).rejects.toMatchObject({ code: ErrorCodes.STATE_UNAVAILABLE });
      const { rows } = await state.query<{ one: number }>('SELECT 1 AS one');
      expect(rows).toEqual([{ one: 1 }]);
    } finally {
      await state.close();
      await proxy.close();
    }
  });
});

/** A TCP proxy to a local port whose connections can be dropped (a network failure). */
async function tcpProxy(target: number): Promise<{
  port: number;
  cut(): void;
  accepted(): number;
  connected(n: number): Promise<void>;
  close(): Promise<void>;
}> {
  const open = new Set<Socket>();
  let accepted = 0;
  const server = createServer((inbound) => {
    accepted++;
    const outbound = connect(target, '127.0.0.1');
    open.add(inbound);
    const end = (): void => {
      open.delete(inbound);
      inbound.destroy();
      outbound.destroy();
    };
    inbound.on('error', end).on('close', end);
    outbound.on('error', end).on('close', end);
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    cut() {
      for (const socket of [...open]) socket.destroy();
    },
    accepted: () => accepted,
    async connected(n) {
      // Wait until n connections are open and the statement is under way (pg_sleep runs).
      for (let i = 0; i < 200 && open.size < n; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
