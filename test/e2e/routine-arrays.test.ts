// Arrays of several dimensions returned by @mcp routines: PostgreSQL keeps no dimension count in
// an array type ('{{1,2},{3,4}}' is an int[]), so a result comes back as nested JSON arrays and
// the outputSchema allows them. The official SDK clients (stdio, legacy and 2026-07-28), which
// validate structuredContent against the listed outputSchema, call routines returning 2-D
// int[], int8[] (past 2^53: strings), text[] with NULLs, SETOF int[] and a TABLE with 2-D
// columns; a one-dimensional result and argument still work, and a nested argument is refused
// with a message that says what was wrong.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONNECTORS, type Deployment, type McpConnection } from '../helpers/connectors.js';
import { realPostgres, withClient, type RealPostgres } from '../helpers/postgres.js';
import { serverEnv } from '../helpers/server.js';

const info = await realPostgres('test/e2e/routine-arrays.test.ts (arrays of several dimensions)');

const ROUTINES_SQL = `
  CREATE FUNCTION public.grid_int() RETURNS int[] LANGUAGE sql IMMUTABLE
    AS $$ SELECT '{{1,2},{3,4}}'::int[] $$;
  COMMENT ON FUNCTION public.grid_int() IS '@mcp A 2-D int[]';
  CREATE FUNCTION public.grid_int8() RETURNS int8[] LANGUAGE sql IMMUTABLE
    AS $$ SELECT '{{1,9007199254740993},{-9223372036854775808,NULL}}'::int8[] $$;
  COMMENT ON FUNCTION public.grid_int8() IS '@mcp A 2-D int8[]';
  CREATE FUNCTION public.grid_text() RETURNS text[] LANGUAGE sql IMMUTABLE
    AS $$ SELECT '{{a,NULL},{NULL,"b c"}}'::text[] $$;
  COMMENT ON FUNCTION public.grid_text() IS '@mcp A 2-D text[] with NULLs';
  CREATE FUNCTION public.grid_set() RETURNS SETOF int[] LANGUAGE sql IMMUTABLE
    AS $$ VALUES ('{{1},{2}}'::int[]), ('{5,6}'), ('{{{{{{7}}}}}}'), (NULL) $$;
  COMMENT ON FUNCTION public.grid_set() IS '@mcp Arrays of 2, 1 and 6 dimensions';
  CREATE FUNCTION public.grid_rows()
    RETURNS TABLE (id int, cells int[], amounts numeric[], bigs int8[]) LANGUAGE sql IMMUTABLE
    AS $$ VALUES (1, '{{1,2},{3,4}}'::int[], '{{1.50,NULL},{2,3}}'::numeric[],
                  '{{9007199254740993},{2}}'::int8[]),
                 (2, '{{{1}},{{2}}}', '{}', NULL) $$;
  COMMENT ON FUNCTION public.grid_rows() IS '@mcp A table with 2-D array columns';
  CREATE FUNCTION public.flat_int(vals int[]) RETURNS int[] LANGUAGE sql IMMUTABLE
    AS $$ SELECT vals || 10 $$;
  COMMENT ON FUNCTION public.flat_int(int[]) IS '@mcp A 1-D int[] in and out';`;

describe.skipIf(!info)('routines returning arrays of several dimensions', () => {
  const pgInfo = info as RealPostgres;
  const dbName = `pgmcp_grid_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const urlFor = (base: string): string => {
    const u = new URL(base);
    u.pathname = `/${dbName}`;
    return u.toString();
  };
  let deployment: Deployment;

  beforeAll(async () => {
    await withClient(pgInfo.adminUrl, (c) => c.query(`CREATE DATABASE ${dbName}`));
    await withClient(urlFor(pgInfo.adminUrl), (c) => c.query(ROUTINES_SQL));
    deployment = {
      httpUrl: () => {
        throw new Error('stdio only');
      },
      stdioArgs: ['--database', urlFor(pgInfo.url)],
      env: serverEnv({ PGMCP_LOG_LEVEL: 'warn' }),
    };
  }, 60_000);

  afterAll(async () => {
    await withClient(pgInfo.adminUrl, (c) =>
      c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`),
    );
  });

  for (const connector of CONNECTORS.filter((c) => c.transport === 'stdio')) {
    describe(connector.name, () => {
      let client: McpConnection;
      beforeAll(async () => {
        client = await connector.connect(deployment);
        // The client validates structuredContent against the outputSchema it listed.
        const { tools } = await client.listTools();
        const names = tools.map((t) => t.name);
        expect(names).toEqual(expect.arrayContaining(['grid_int', 'grid_rows', 'flat_int']));
        const schema = JSON.stringify(tools.find((t) => t.name === 'grid_int')!.outputSchema);
        expect(schema).not.toContain('$ref');
      }, 60_000);
      afterAll(() => client?.close());

      /** A call the client validated: an answer, not a tool error. */
      const call = async (name: string, args: Record<string, unknown> = {}) => {
        const result = await client.callTool(name, args).catch((error: unknown) => {
          throw new Error(`${name} threw: ${(error as Error).message}\n${client.stderr()}`);
        });
        const text = result.content.map((c) => c.text ?? '').join('\n');
        expect(result.isError, `${name}: ${text}`).toBeFalsy();
        return result.structuredContent;
      };

      it('a 2-D int[]', async () => {
        expect(await call('grid_int')).toEqual({
          value: [
            [1, 2],
            [3, 4],
          ],
        });
      });

      it('a 2-D int8[]: past 2^53 as strings, NULL as null', async () => {
        expect(await call('grid_int8')).toEqual({
          value: [
            [1, '9007199254740993'],
            ['-9223372036854775808', null],
          ],
        });
      });

      it('a 2-D text[] with NULLs', async () => {
        expect(await call('grid_text')).toEqual({
          value: [
            ['a', null],
            [null, 'b c'],
          ],
        });
      });

      it('SETOF int[]: 2, 1 and 6 dimensions, and NULL', async () => {
        expect(await call('grid_set')).toEqual({
          items: [[[1], [2]], [5, 6], [[[[[[7]]]]]], null],
        });
      });

      it('a TABLE with 2-D array columns (int[], numeric[], int8[])', async () => {
        expect(await call('grid_rows')).toEqual({
          items: [
            {
              id: 1,
              cells: [
                [1, 2],
                [3, 4],
              ],
              amounts: [
                ['1.50', null],
                ['2', '3'],
              ],
              bigs: [['9007199254740993'], [2]],
            },
            { id: 2, cells: [[[1]], [[2]]], amounts: [], bigs: null },
          ],
        });
      });

      it('a 1-D int[] in and out, as before; a nested argument is refused, clearly', async () => {
        expect(await call('flat_int', { vals: [1, null, 3] })).toEqual({
          value: [1, null, 3, 10],
        });
        const refused = await client.callTool('flat_int', {
          vals: [
            [1, 2],
            [3, 4],
          ],
        });
        expect(refused.isError).toBe(true);
        expect(refused.content.map((c) => c.text ?? '').join('\n')).toContain(
          'Invalid arguments for flat_int: arguments.vals.0 must be integer,null (got an array)',
        );
      });
    });
  }
});
