// A composite argument with a bytea field: the composite travels as JSON read by
// json_populate_record, so the field is PostgreSQL's text form (\x and hex), not base64 like a
// bytea argument of its own. The schema says so, and the bytes arrive as sent.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/database.js';
import { createFakeContext } from '../../src/testing/fake-context.js';
import { createRegistry } from '../../src/tools/registry.js';
import { loadRoutineTools } from '../../src/tools/routines/index.js';
import type { ToolSpec } from '../../src/core/specs.js';
import {
  realPostgres,
  uniqueSchemaName,
  withClient,
  type RealPostgres,
} from '../helpers/postgres.js';

const info = await realPostgres('test/integration/routine-composite-bytea.test.ts');

describe.skipIf(!info)('a composite argument with a bytea field', () => {
  const pg = info as RealPostgres;
  const schema = uniqueSchemaName('pgmcp_blob');
  let db: Database;
  let tool: ToolSpec;

  beforeAll(async () => {
    await withClient(pg.adminUrl, (c) =>
      c.query(`
        CREATE SCHEMA ${schema};
        GRANT USAGE ON SCHEMA ${schema} TO PUBLIC;
        CREATE TYPE ${schema}.blob AS (name text, data bytea);
        CREATE FUNCTION ${schema}.blob_bytes(b ${schema}.blob, raw bytea) RETURNS text
        LANGUAGE sql STABLE AS $$ SELECT encode((b).data, 'hex') || '/' || encode(raw, 'hex') $$;
        COMMENT ON FUNCTION ${schema}.blob_bytes(${schema}.blob, bytea) IS '@mcp The bytes it got';
      `),
    );
    db = await createDatabase(
      { url: pg.url, poolSize: 1, embedded: { dataDir: '/nonexistent', demo: false } },
      pino({ level: 'silent' }),
    );
    const tools = await loadRoutineTools(db, {
      schemas: [schema],
      allowWrites: false,
      statementTimeoutMs: 5_000,
    });
    tool = tools.find((t) => t.name === 'blob_bytes')!;
  });

  afterAll(async () => {
    await db?.close();
    await withClient(pg.adminUrl, (c) => c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
  });

  it('takes the field as \\x hex and a bytea argument of its own as base64', async () => {
    const registry = createRegistry();
    registry.addTool(tool);
    const entry = registry.tool('blob_bytes')!;
    const args = {
      b: { name: 'hi', data: '\\x6869ff' },
      raw: Buffer.from('hi').toString('base64'),
    };
    expect(entry.validate(args)).toBeNull();
    const result = await tool.call(args, createFakeContext().ctx);
    expect(result.structuredContent).toEqual({ value: '6869ff/6869' });
    // Base64 in the field would be read as the characters themselves: refused by the schema.
    expect(entry.validate({ ...args, b: { name: 'hi', data: 'aGk=' } })?.join('; ')).toMatch(
      /arguments\.b\.data must match pattern/,
    );
  });
});
