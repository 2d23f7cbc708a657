// Another session's DDL never fails a caller's query. Several other sessions create and drop
// schemas full of views, functions and tables with defaults, in a loop, each DROP holding its
// locks a moment before it commits (as a migration does): a catalog function of a lookup
// (pg_get_viewdef, pg_get_expr, pg_get_function_sqlbody …) that reaches one of those objects
// waits for the lock and then finds it gone. One more session keeps replacing a view (dropped
// and created again in one transaction, its name never stops answering; a pause between two). Meanwhile calls run
// whose statements would succeed at any moment: through the SDK client against a spawned
// server under an access policy (the policy follows the replaced view), against new servers
// without a policy (each works the credential screen's list of suspect views out at its first
// statement), and in-process with the list worked out at every call (what a server does every
// 30 s). Not one of them may fail.
import { pino } from 'pino';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installCatalogTrigger } from '../../src/catalog/watch.js';
import { createSigner } from '../../src/core/signed.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { createFakeContext } from '../../src/testing/fake-context.js';
import { createAccessPolicy, NO_RULES } from '../../src/tools/access-policy.js';
import { createQueryDatabaseTool } from '../../src/tools/query/query-database.js';
import { DEFAULT_DENIED_FUNCTIONS, loadSqlParser } from '../../src/tools/sql-guard.js';
import { CONNECTORS, type McpConnection } from '../helpers/connectors.js';
import { realPostgres, TEST_ROLE, withClient, type RealPostgres } from '../helpers/postgres.js';
import { serverEnv, startHttpServer, type HttpServer } from '../helpers/server.js';

const info = await realPostgres('test/integration/concurrent-ddl.test.ts (concurrent DDL)');

const FIXTURE = `
  CREATE SCHEMA app;
  CREATE TABLE app.people (id int PRIMARY KEY, name text NOT NULL, ssn text);
  INSERT INTO app.people VALUES (1, 'Ada', '111-22-3333'), (2, 'Bob', '444-55-6666'), (3, 'Cy', NULL);
  CREATE VIEW app.people_public AS SELECT id, name FROM app.people;
  CREATE VIEW app.feed AS SELECT id, name FROM app.people;
  CREATE FUNCTION app.name_of(int) RETURNS text LANGUAGE sql STABLE
    AS $$ SELECT name FROM app.people WHERE id = $1 $$;`;

const LIMITS = {
  defaultRows: 100,
  maxRows: 1000,
  maxResultBytes: 1_048_576,
  statementTimeoutMs: 20_000,
};

/** One storm session's round: a schema of objects made, then dropped while holding its locks. */
function stormRound(name: string): { create: string; drops: string[] } {
  const views = [`CREATE VIEW ${name}.v0 AS SELECT id, note FROM ${name}.t`];
  for (let i = 1; i < 8; i++)
    views.push(`CREATE VIEW ${name}.v${i} AS SELECT id, note FROM ${name}.v${i - 1}`);
  return {
    create: `CREATE SCHEMA ${name};
      CREATE TABLE ${name}.t (id int DEFAULT 0, note text DEFAULT 'x' || 'y');
      ${views.join(';\n')};
      CREATE VIEW ${name}.roles AS SELECT rolname FROM pg_catalog.pg_roles;
      CREATE FUNCTION ${name}.f() RETURNS bigint LANGUAGE sql STABLE
        BEGIN ATOMIC SELECT count(*) FROM ${name}.t; END;`,
    drops: [
      `BEGIN; DROP VIEW ${name}.v7; SELECT pg_sleep(0.02); COMMIT`,
      `BEGIN; DROP SCHEMA ${name} CASCADE; SELECT pg_sleep(0.05); COMMIT`,
    ],
  };
}

interface Storm {
  rounds(): number;
  stop(): Promise<void>;
}

/**
 * `sessions` other sessions creating and dropping schemas until stopped, and one more that
 * keeps replacing the view app.feed (dropped and created again in one transaction: the name
 * is always there for the statements that read it). `grantee` may read the new one.
 */
function startStorm(
  url: string,
  sessions: number,
  grantee: string | null,
  /** Seconds the replacing session waits between two replacements. */
  replaceGap = 0.05,
): Storm {
  let stopped = false;
  let rounds = 0;
  const session = async (work: (client: pg.Client, i: number) => Promise<void>) => {
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => undefined);
    await client.connect();
    try {
      for (let i = 0; !stopped; i++) {
        // The storm's own DDL may lose a deadlock against the lookups: that is its affair.
        await work(client, i).catch(() => client.query('ROLLBACK'));
      }
    } finally {
      await client.end().catch(() => undefined);
    }
  };
  const loops = Array.from({ length: sessions }, (_, k) =>
    session(async (client, i) => {
      const round = stormRound(`storm_${k}_${i}`);
      await client.query(round.create);
      for (const drop of round.drops) await client.query(drop);
      rounds += 1;
    }),
  );
  loops.push(
    session(async (client) => {
      await client.query(`BEGIN;
        DROP VIEW app.feed;
        CREATE VIEW app.feed AS SELECT id, name FROM app.people;
        ${grantee ? `GRANT SELECT ON app.feed TO ${grantee};` : ''}
        SELECT pg_sleep(0.03);
        COMMIT`);
      if (replaceGap > 0) await client.query(`SELECT pg_sleep(${replaceGap})`);
    }),
  );
  return {
    rounds: () => rounds,
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

/** Runs `call` `times` times, `parallel` at once; the failures, described. */
async function failuresOf(
  times: number,
  parallel: number,
  call: (i: number) => Promise<string | null>,
): Promise<string[]> {
  const failures: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < times) {
        const i = next++;
        const failure = await call(i).catch((error: unknown) => `threw: ${String(error)}`);
        if (failure !== null) failures.push(`call ${i}: ${failure}`);
      }
    }),
  );
  return failures;
}

describe.skipIf(!info)('calls while other sessions create and drop views and schemas', () => {
  const pgInfo = info as RealPostgres;
  // The file's own database (realPostgres): the event trigger and the storm stay in it.
  const own = { url: pgInfo.adminUrl };
  const grantee = (): string | null => (pgInfo.role === TEST_ROLE ? TEST_ROLE : null);
  /** The server's URL: the test role. */
  const serveUrl = (): string => pgInfo.url;

  beforeAll(async () => {
    await loadSqlParser();
    await withClient(own.url, async (c) => {
      await c.query(FIXTURE);
      await installCatalogTrigger(c);
      if (pgInfo.role === TEST_ROLE) {
        await c.query(`GRANT USAGE ON SCHEMA app TO ${TEST_ROLE}`);
        await c.query(`GRANT SELECT ON ALL TABLES IN SCHEMA app TO ${TEST_ROLE}`);
      }
    });
  }, 60_000);

  describe('through the SDK client, under an access policy', () => {
    let http: HttpServer | undefined;
    let client: McpConnection | undefined;

    beforeAll(async () => {
      http = await startHttpServer(['--database', serveUrl()], {
        env: serverEnv({ PGMCP_LOG_LEVEL: 'warn', PGMCP_MASK_COLUMNS: 'app.people.ssn' }),
      });
      const connector = CONNECTORS.find((c) => c.transport === 'http' && c.era === 'legacy')!;
      client = await connector.connect({
        httpUrl: () => http!.url,
        stdioArgs: [],
        env: {},
      });
    }, 120_000);

    afterAll(async () => {
      await client?.close();
      await http?.stop();
    });

    it('answers every call while the storm runs', async () => {
      const calls: [string, Record<string, unknown>, (text: string) => boolean][] = [
        ['get_schema_info', { schema_name: 'app' }, (t) => t.includes('people_public')],
        [
          'query_database',
          { query: 'SELECT id, name FROM app.people_public ORDER BY id' },
          (t) => t.includes('Ada') && t.includes('Cy'),
        ],
        [
          'query_database',
          { query: 'SELECT id, name FROM app.feed ORDER BY id' },
          (t) => t.includes('Ada') && t.includes('Cy'),
        ],
        [
          'query_database',
          { query: 'SELECT app.name_of(2) AS who, ssn FROM app.people WHERE id = 2' },
          (t) => t.includes('Bob') && !t.includes('444-55-6666'),
        ],
      ];
      const storm = startStorm(own.url, 3, grantee());
      let failures: string[];
      try {
        failures = await failuresOf(60, 2, async (i) => {
          const [tool, args, ok] = calls[i % calls.length]!;
          const result = await client!.callTool(tool, args);
          const text = result.content.map((c) => c.text ?? '').join('\n');
          return result.isError || !ok(text) ? `${tool}: ${text.slice(0, 300)}` : null;
        });
      } finally {
        await storm.stop();
      }
      expect(storm.rounds()).toBeGreaterThan(3);
      expect(failures).toEqual([]);
      expect(http!.stderr()).not.toMatch(/could not open relation/);
    }, 120_000);

    it('reads a view that another session replaces back to back, without refusing it', async () => {
      // Each replacement holds the view's lock a moment and the next starts at once: an analysis
      // that only started again from the names would find the view moved on every try.
      const storm = startStorm(own.url, 0, grantee(), 0);
      let failures: string[];
      try {
        failures = await failuresOf(16, 2, async () => {
          const result = await client!.callTool('query_database', {
            query: 'SELECT id, name FROM app.feed ORDER BY id',
          });
          const text = result.content.map((c) => c.text ?? '').join('\n');
          return result.isError || !text.includes('Cy') ? text.slice(0, 300) : null;
        });
      } finally {
        await storm.stop();
      }
      expect(failures).toEqual([]);
    }, 120_000);
  });

  it('through the SDK client over stdio, without a policy: a new server works the credential screen out during the storm', async () => {
    const connector = CONNECTORS.find((c) => c.transport === 'stdio' && c.era === 'legacy')!;
    const deployment = {
      httpUrl: () => '',
      stdioArgs: ['--database', serveUrl()],
      env: serverEnv({ PGMCP_LOG_LEVEL: 'warn' }),
    };
    const storm = startStorm(own.url, 3, grantee());
    const failures: string[] = [];
    const logs: string[] = [];
    let roundsDuringCalls = 0;
    try {
      // Each connection is a server of its own: its first statement works the list out.
      for (let i = 0; i < 5; i++) {
        const client = await connector.connect(deployment);
        try {
          const result = await client.callTool('query_database', {
            query: 'SELECT id, name FROM app.people ORDER BY id',
          });
          const text = result.content.map((c) => c.text ?? '').join('\n');
          if (result.isError || !text.includes('Cy')) failures.push(`server ${i}: ${text}`);
        } finally {
          await client.close();
          logs.push(client.stderr());
        }
      }
      roundsDuringCalls = storm.rounds();
    } finally {
      await storm.stop();
    }
    expect(roundsDuringCalls).toBeGreaterThan(3);
    expect(failures).toEqual([]);
    expect(logs.join('\n')).not.toMatch(/could not open relation/);
  }, 120_000);

  describe('when the credential screen cannot work its list out at all', () => {
    // Here because the role may not deparse a view: the lookup fails on every call.
    beforeAll(async () => {
      await withClient(own.url, (c) =>
        c.query('REVOKE EXECUTE ON FUNCTION pg_catalog.pg_get_viewdef(oid) FROM PUBLIC'),
      );
    });
    afterAll(async () => {
      await withClient(own.url, (c) =>
        c.query('GRANT EXECUTE ON FUNCTION pg_catalog.pg_get_viewdef(oid) TO PUBLIC'),
      );
    });

    it('answers through the SDK client, leaves the statement to the output screen and logs once', async () => {
      const connector = CONNECTORS.find((c) => c.transport === 'stdio' && c.era === 'legacy')!;
      const client = await connector.connect({
        httpUrl: () => '',
        stdioArgs: ['--database', serveUrl()],
        env: serverEnv({ PGMCP_LOG_LEVEL: 'warn' }),
      });
      try {
        for (let i = 0; i < 3; i++) {
          const result = await client.callTool('query_database', {
            query: 'SELECT id, name, ssn FROM app.people ORDER BY id',
          });
          const text = result.content.map((c) => c.text ?? '').join('\n');
          expect(result.isError, text).toBeFalsy();
          expect(text).toContain('Ada');
        }
      } finally {
        await client.close();
      }
      const warnings = client.stderr().match(/credential screen: the list of views/g) ?? [];
      expect(warnings).toHaveLength(1);
      expect(client.stderr()).toMatch(/permission denied for function pg_get_viewdef/);
    }, 60_000);
  });

  describe("when a view of the database breaks the credential screen's lookup", () => {
    // A view deparsed deeper than the server's stack allows (made where max_stack_depth was
    // raised): pg_get_viewdef fails with 54001 on every call while it exists. Anyone who may
    // create a view can cause that, so the screen must not then wave statements through.
    beforeAll(async () => {
      const deep = Array.from({ length: 8000 }, () => '1').join(' + ');
      await withClient(own.url, async (c) => {
        await c.query(`SET max_stack_depth = '6MB'`);
        await c.query(`CREATE VIEW app.too_deep AS SELECT ${deep} AS n`);
        await c.query(
          'CREATE VIEW app.receiver AS SELECT pid, conninfo FROM pg_catalog.pg_stat_wal_receiver',
        );
        if (pgInfo.role === TEST_ROLE)
          await c.query(`GRANT SELECT ON app.receiver TO ${TEST_ROLE}`);
      });
      // The server's role, at the server's own limit, cannot deparse it.
      await expect(
        withClient(serveUrl(), (c) => c.query(`SELECT pg_get_viewdef('app.too_deep'::regclass)`)),
      ).rejects.toMatchObject({ code: '54001' });
    });
    afterAll(async () => {
      await withClient(own.url, async (c) => {
        await c.query(`SET max_stack_depth = '6MB'`);
        await c.query('DROP VIEW app.too_deep, app.receiver');
      });
    });

    it('analyses the statement in full through the SDK client: a view of a credential is refused', async () => {
      const connector = CONNECTORS.find((c) => c.transport === 'stdio' && c.era === 'legacy')!;
      const client = await connector.connect({
        httpUrl: () => '',
        stdioArgs: ['--database', serveUrl()],
        env: serverEnv({ PGMCP_LOG_LEVEL: 'warn' }),
      });
      try {
        for (let i = 0; i < 2; i++) {
          const refused = await client.callTool('query_database', {
            query: 'SELECT pid, conninfo FROM app.receiver',
          });
          const text = refused.content.map((c) => c.text ?? '').join('\n');
          expect(refused.isError, text).toBe(true);
          expect(text).toMatch(/connection strings/);
          // What cannot reach a credential still runs.
          const plain = await client.callTool('query_database', {
            query: 'SELECT id, name FROM app.people_public ORDER BY id',
          });
          const rows = plain.content.map((c) => c.text ?? '').join('\n');
          expect(plain.isError, rows).toBeFalsy();
          expect(rows).toContain('Cy');
        }
      } finally {
        await client.close();
      }
      const warnings = client.stderr().match(/credential screen: the list of views/g) ?? [];
      expect(warnings).toHaveLength(1);
      expect(client.stderr()).toMatch(/analysed in full/);
      expect(client.stderr()).toMatch(/stack depth limit exceeded/);
    }, 60_000);
  });

  describe('in-process: the credential screen works its list out while the storm runs', () => {
    let db: Database;
    beforeAll(async () => {
      db = await createDatabase(
        { url: serveUrl(), poolSize: 4, embedded: { dataDir: '', demo: false } },
        pino({ level: 'silent' }),
      );
    });
    afterAll(async () => {
      await db?.close();
    });

    it('answers every call, with no policy and under one', async () => {
      const tool = (policy: boolean) =>
        // A tool of its own per call: a new screen, which works out its list of suspects.
        createQueryDatabaseTool(db, {
          limits: LIMITS,
          allowWrites: false,
          deniedFunctions: DEFAULT_DENIED_FUNCTIONS,
          maxPlanCost: null,
          maxPlanRows: null,
          signer: createSigner('concurrent-ddl'),
          policy: createAccessPolicy(
            policy ? { ...NO_RULES, maskColumns: ['app.people.ssn'] } : NO_RULES,
          ),
        });
      const storm = startStorm(own.url, 3, grantee());
      let failures: string[];
      try {
        failures = await failuresOf(60, 2, async (i) => {
          const query = [
            'SELECT id, name FROM app.people ORDER BY id',
            'SELECT app.name_of(id) AS who FROM app.people_public ORDER BY id',
            'SELECT id, name FROM app.feed ORDER BY id',
          ][i % 3]!;
          const result = await tool(i % 2 === 0).call({ query }, createFakeContext().ctx);
          const rows = (result.structuredContent as { rows: unknown[][] }).rows;
          return result.isError || rows.length !== 3 ? JSON.stringify(result.content) : null;
        });
      } finally {
        await storm.stop();
      }
      expect(storm.rounds()).toBeGreaterThan(3);
      expect(failures).toEqual([]);
    }, 120_000);
  });
});
