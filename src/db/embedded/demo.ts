// Seeds the demo dataset (sql/demo/*.sql) on the first start of the embedded database.
// The scripts run in one transaction, so a crash mid-seed leaves nothing and the next start
// seeds again; the schema comment is the marker that the dataset is complete.

import { readdir, readFile } from 'node:fs/promises';
import pg from 'pg';
import type { Logger } from 'pino';
import { packagePath } from '../../core/package-path.js';
import type { Connection } from './readiness.js';

export const DEMO_SCHEMA = 'demo';
/** The schema comment written by sql/demo starts with this. */
export const DEMO_MARKER = 'pgmcp demo dataset';

const DEMO_SQL_DIR = packagePath('sql/demo');

export type DemoSeedResult = 'seeded' | 'present' | 'skipped';

export async function loadDemoSql(dir: string = DEMO_SQL_DIR): Promise<string> {
  const files = (await readdir(dir)).filter((name) => name.endsWith('.sql')).sort();
  const parts = await Promise.all(files.map((name) => readFile(`${dir}/${name}`, 'utf8')));
  return parts.join('\n');
}

export async function seedDemoDataset(
  connection: Connection,
  logger: Logger,
): Promise<DemoSeedResult> {
  const client = new pg.Client({ ...connection });
  client.on('error', (error) => logger.warn({ err: error }, 'demo seeding connection error'));
  await client.connect();
  try {
    const state = await demoState(client);
    if (state === 'present') return 'present';
    if (state === 'foreign') {
      logger.info(
        { schema: DEMO_SCHEMA },
        `a schema named ${DEMO_SCHEMA} already exists and is not the pgmcp demo; not seeding the demo dataset`,
      );
      return 'skipped';
    }
    const started = Date.now();
    const sql = await loadDemoSql();
    await client.query('begin');
    try {
      await client.query(sql);
      await client.query('commit');
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      throw error;
    }
    logger.info({ schema: DEMO_SCHEMA, ms: Date.now() - started }, 'demo dataset loaded');
    return 'seeded';
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function demoState(client: pg.Client): Promise<'absent' | 'present' | 'foreign'> {
  const { rows } = await client.query<{ comment: string | null }>(
    `select obj_description(oid, 'pg_namespace') as comment from pg_namespace where nspname = $1`,
    [DEMO_SCHEMA],
  );
  const row = rows[0];
  if (row === undefined) return 'absent';
  return row.comment?.startsWith(DEMO_MARKER) ? 'present' : 'foreign';
}
