import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { Database, TransactionOptions } from '../db/database.js';
import { createCatalog } from './catalog.js';
import { EVERYTHING_VISIBLE } from './load.js';
import {
  COLUMNS_SQL,
  CONSTRAINTS_SQL,
  INDEXES_SQL,
  INFO_SQL,
  RELATIONS_SQL,
  SCHEMAS_SQL,
} from './queries.js';

/** A Database whose one "table" can be renamed, counting catalog loads. */
function fakeDb() {
  const state = { table: 'a', loads: 0, transactions: [] as TransactionOptions[], fail: false };
  const client = {
    async query(sql: string) {
      if (sql === INFO_SQL) {
        state.loads += 1;
        if (state.fail)
          throw Object.assign(new Error('connection refused'), { code: 'ECONNREFUSED' });
        return { rows: [{ database: 'db', version_num: 150000 }] };
      }
      if (sql === SCHEMAS_SQL) return { rows: [{ name: 'public', comment: null }] };
      if (sql === RELATIONS_SQL) {
        return {
          rows: [
            {
              oid: '1',
              schema: 'public',
              name: state.table,
              relkind: 'r',
              is_partition: false,
              reltuples: state.loads,
              size_estimate: '0',
              comment: null,
              parent_schema: null,
              parent_name: null,
              partition_key: null,
              partition_bound: null,
              selectable: true,
            },
          ],
        };
      }
      if ([COLUMNS_SQL, CONSTRAINTS_SQL, INDEXES_SQL].includes(sql)) return { rows: [] };
      throw new Error(`unexpected SQL ${sql.slice(0, 40)}`);
    },
  };
  const db = {
    async withTransaction<T>(options: TransactionOptions, work: (c: pg.PoolClient) => Promise<T>) {
      state.transactions.push(options);
      return work(client as unknown as pg.PoolClient);
    },
  } as unknown as Database;
  return { db, state };
}

describe('catalog cache', () => {
  it('loads lazily, once for concurrent callers, in a read-only transaction', async () => {
    const { db, state } = fakeDb();
    const catalog = createCatalog(db, EVERYTHING_VISIBLE, { ttlMs: 1_000 });
    expect(catalog.cached()).toBeNull();
    expect(state.loads).toBe(0);
    const [a, b] = await Promise.all([catalog.snapshot(), catalog.snapshot()]);
    expect(a).toBe(b);
    expect(state.loads).toBe(1);
    expect(state.transactions[0]).toMatchObject({ readOnly: true });
    expect(catalog.cached()).toBe(a);
  });

  it('reloads after the TTL, after invalidate(), and when asked for a recent one', async () => {
    const { db, state } = fakeDb();
    let now = 0;
    const catalog = createCatalog(db, EVERYTHING_VISIBLE, { ttlMs: 1_000, now: () => now });
    const first = await catalog.snapshot();
    now = 999;
    expect(await catalog.snapshot()).toBe(first);
    now = 1_000;
    const second = await catalog.snapshot();
    expect(second).not.toBe(first);
    expect(state.loads).toBe(2);
    catalog.invalidate();
    await catalog.snapshot();
    expect(state.loads).toBe(3);
    now = 1_500;
    await catalog.snapshot({ maxAgeMs: 1_000 });
    expect(state.loads).toBe(3);
    await catalog.snapshot({ maxAgeMs: 100 });
    expect(state.loads).toBe(4);
  });

  it('tells onChange listeners about structural changes only', async () => {
    const { db, state } = fakeDb();
    const catalog = createCatalog(db, EVERYTHING_VISIBLE, { ttlMs: 0 });
    const seen: string[] = [];
    const off = catalog.onChange((next, previous) =>
      seen.push(`${previous.relations[0]!.name}→${next.relations[0]!.name}`),
    );
    await catalog.snapshot();
    await catalog.snapshot(); // row estimate changed: not a change
    expect(seen).toEqual([]);
    state.table = 'b';
    await catalog.snapshot();
    expect(seen).toEqual(['a→b']);
    off();
    state.table = 'c';
    await catalog.snapshot();
    expect(seen).toEqual(['a→b']);
  });

  it('does not cache a failed load', async () => {
    const { db, state } = fakeDb();
    const catalog = createCatalog(db, EVERYTHING_VISIBLE, { ttlMs: 60_000 });
    state.fail = true;
    await expect(catalog.snapshot()).rejects.toThrow('connection refused');
    state.fail = false;
    expect((await catalog.snapshot()).relations[0]!.name).toBe('a');
  });
});
