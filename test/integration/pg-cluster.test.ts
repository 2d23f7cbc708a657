// The throwaway-cluster helper the HA, fault and DBA suites build on: a primary, a streaming
// standby that follows it, a promotion, a stop and a start.
import { afterAll, describe, expect, it } from 'vitest';
import { caughtUp, serverBinDir, startCluster, startStandby } from '../helpers/pg-cluster.js';
import { reportSkipped } from '../helpers/postgres.js';
import type { Cluster } from '../helpers/pg-cluster.js';

const binaries = serverBinDir();
if (!binaries) reportSkipped('pg-cluster', 'no local PostgreSQL server binaries (initdb)');

describe.skipIf(!binaries)('throwaway clusters', () => {
  const clusters: Cluster[] = [];
  afterAll(() => {
    for (const c of clusters) c.destroy();
  });

  it('a standby follows its primary, refuses writes, and accepts them once promoted', async () => {
    const primary = await startCluster({ settings: { max_connections: 30 } });
    clusters.push(primary);
    const [setting] = await primary.query<{ max_connections: string }>('SHOW max_connections');
    expect(setting?.max_connections).toBe('30');
    await primary.query('CREATE TABLE t (n int)');
    await primary.query('INSERT INTO t VALUES (1)');
    const standby = await startStandby(primary);
    clusters.push(standby);
    await primary.query('INSERT INTO t VALUES (2)');
    await caughtUp(primary, standby);
    expect(await standby.query('SELECT pg_is_in_recovery() AS r')).toEqual([{ r: true }]);
    expect(await standby.query('SELECT count(*)::int AS n FROM t')).toEqual([{ n: 2 }]);
    await expect(standby.query('INSERT INTO t VALUES (3)')).rejects.toThrow(/read-only/);

    primary.stop('immediate');
    expect(primary.running).toBe(false);
    await standby.promote();
    await standby.query('INSERT INTO t VALUES (3)');
    expect(await standby.query('SELECT count(*)::int AS n FROM t')).toEqual([{ n: 3 }]);

    primary.start();
    expect(await primary.query('SELECT count(*)::int AS n FROM t')).toEqual([{ n: 2 }]);
  });
});
