// The state database unavailable, for the audit log: records made meanwhile are kept (at most
// maxQueued; what is dropped past that is reported) and written once it is back; the failure
// is reported once per streak, never silently. On a throwaway cluster, stopped and started.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuditLog } from '../../src/state/audit.js';
import { openStateDatabase, type StateDb } from '../../src/state/state-db.js';
import { serverBinDir, startCluster, type Cluster } from '../helpers/pg-cluster.js';
import { reportSkipped } from '../helpers/postgres.js';

const binaries = serverBinDir();
if (!binaries) reportSkipped('faults-state', 'no local PostgreSQL server binaries (initdb)');
const logger = pino({ level: 'silent' });

describe.skipIf(!binaries)('audit records while the state database is down', () => {
  let cluster: Cluster;
  let state: StateDb;
  beforeAll(async () => {
    cluster = await startCluster();
    state = await openStateDatabase({
      url: cluster.url(),
      dataDir: mkdtempSync(join(tmpdir(), 'pgmcp-faults-state-')),
      logger,
    });
  });
  afterAll(async () => {
    await state?.close();
    cluster?.destroy();
  });

  const count = async (): Promise<number> =>
    (await state.query<{ n: number }>('SELECT count(*)::int AS n FROM pgmcp.audit')).rows[0]!.n;
  const record = (audit: ReturnType<typeof createAuditLog>, n: number, tool: string): void => {
    for (let i = 0; i < n; i++) audit.record({ event: 'tool_call', outcome: 'success', tool });
  };

  it('are kept, bounded, and written when it is back; failures and drops are reported', async () => {
    const errors: string[] = [];
    const audit = createAuditLog({
      db: state,
      file: null,
      onError: (error) => errors.push(error.message),
      flushIntervalMs: 60_000,
      maxQueued: 4,
    });
    record(audit, 2, 'before');
    await audit.flush();
    expect(await count()).toBe(2);

    cluster.stop('fast');
    record(audit, 3, 'while-down');
    await audit.flush();
    await audit.flush();
    expect(errors).toHaveLength(1); // one report for the streak
    record(audit, 3, 'while-down');
    await audit.flush();
    // 6 kept past a bound of 4: the 2 oldest are dropped, and that is said.
    await audit.flush();
    expect(errors.some((e) => /2 record\(s\) dropped/.test(e))).toBe(true);

    cluster.start();
    await audit.flush();
    expect(await count()).toBe(2 + 4);
    await audit.close();
  });
});
