// Operability of the built server, end to end: /metrics scraped by Debian's Prometheus and read
// back through its query API (series present, label values bounded), the example alert rules
// loaded into that Prometheus, /metrics on the main port behind an admin token, the probes
// (/live, /ready, and /ready while draining), and the request id: taken from a trusted proxy
// only, returned in X-Request-Id, on the request's log lines and in its audit row.
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyHttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm } from '../helpers/fake-llm.js';
import { REPO_ROOT, realPostgres } from '../helpers/postgres.js';
import {
  freePort,
  prometheusInstalled,
  PROMTOOL_BIN,
  startPrometheus,
  type Prometheus,
} from '../helpers/prometheus.js';
import {
  modernRequest,
  postRpc,
  rawHttp,
  runPgmcp,
  serverEnv,
  startHttpServer,
  type HttpServer,
} from '../helpers/server.js';

const db = await realPostgres('test/e2e/operations.test.ts (metrics, probes, request ids)');
const hasPrometheus = prometheusInstalled('test/e2e/operations.test.ts (Prometheus scrape)');

const CLIENT_INFO = { name: 'pgmcp-e2e-operations', version: '1.0.0' };
const ALERTS = join(REPO_ROOT, 'docs', 'prometheus', 'alerts.yml');
/** Text that must never become a label value: it is in a caller's SQL and a tool name. */
const MARKER = 'opsmarker7731';

async function withClient<T>(url: string, work: (client: LegacyClient) => Promise<T>): Promise<T> {
  const client = new LegacyClient(CLIENT_INFO);
  await client.connect(new LegacyHttpTransport(new URL(url)));
  try {
    return await work(client);
  } finally {
    await client.close();
  }
}

describe.skipIf(!db || !hasPrometheus)('GET /metrics scraped by Prometheus', () => {
  let server: HttpServer;
  let prometheus: Prometheus;
  let metricsAddress: string;

  beforeAll(async () => {
    metricsAddress = `127.0.0.1:${await freePort()}`;
    server = await startHttpServer(['--database', db!.url], {
      env: serverEnv({
        PGMCP_STATE_URL: db!.adminUrl,
        PGMCP_METRICS_ENABLED: 'true',
        PGMCP_METRICS_LISTEN: metricsAddress,
      }),
    });
    prometheus = await startPrometheus({
      targets: [{ address: metricsAddress }],
      ruleFiles: [ALERTS],
    });
    await withClient(server.url, async (client) => {
      await client.listTools();
      await client.callTool({ name: 'query_database', arguments: { query: 'SELECT 1 AS one' } });
      // A statement with text of its own, a PostgreSQL error (22012, class 22), a tool that does
      // not exist: none of their text may become a label value.
      await client.callTool({
        name: 'query_database',
        arguments: { query: `SELECT '${MARKER}' AS x, 1/0 AS boom` },
      });
      await client.callTool({ name: `no_such_tool_${MARKER}`, arguments: {} }).catch(() => null);
    });
  }, 120_000);

  afterAll(async () => {
    await prometheus?.stop();
    const exit = await server?.stop();
    expect(exit).toEqual({ code: 0, signal: null });
  });

  it('prints where the metrics are served, and does not serve them on the main port', async () => {
    expect(server.stdout()).toContain(`metrics: http://${metricsAddress}/metrics`);
    const main = await rawHttp(`${server.origin}/metrics`);
    expect(main.status).toBe(404);
  });

  it('has the tool calls, MCP requests and PostgreSQL errors as Prometheus reads them', async () => {
    const ok = await prometheus.waitFor(
      'pgmcp_tool_calls_total{job="pgmcp",tool="query_database",outcome="ok"}',
    );
    expect(Number(ok[0]!.value[1])).toBeGreaterThanOrEqual(1);
    const failed = await prometheus.waitFor(
      'pgmcp_tool_calls_total{tool="query_database",outcome="tool_error"}',
    );
    expect(failed[0]!.metric['database']).toBeTruthy();
    await prometheus.waitFor('pgmcp_postgres_errors_total{class="22"}');
    await prometheus.waitFor('pgmcp_tool_calls_total{tool="unknown"}');
    const methods = await prometheus.waitFor('pgmcp_mcp_requests_total{era="legacy"}');
    expect(methods.map((m) => m.metric['method'])).toEqual(
      expect.arrayContaining(['initialize', 'tools/list', 'tools/call']),
    );
    await prometheus.waitFor('pgmcp_tool_call_duration_seconds_count{tool="query_database"}');
    await prometheus.waitFor('pgmcp_mcp_request_duration_seconds_bucket{method="tools/call"}');
  });

  it('has the pools, sessions, streams, HTTP requests and process metrics', async () => {
    const max = await prometheus.waitFor('pgmcp_pool_connections_max');
    expect(Number(max[0]!.value[1])).toBeGreaterThan(0);
    await prometheus.waitFor('pgmcp_pool_connections{state="idle"}');
    await prometheus.waitFor('pgmcp_pool_waiting');
    await prometheus.waitFor('pgmcp_sessions_active');
    await prometheus.waitFor('pgmcp_sse_streams_open');
    await prometheus.waitFor('pgmcp_http_requests_total{family="mcp",status="200"}');
    await prometheus.waitFor('process_cpu_seconds_total{job="pgmcp"}');
    await prometheus.waitFor('nodejs_eventloop_lag_p99_seconds');
  });

  it('keeps label values bounded: no SQL, no caller text', async () => {
    await prometheus.waitFor('pgmcp_tool_calls_total{tool="unknown"}');
    const series = (await prometheus.api(
      `series?match[]=${encodeURIComponent('{__name__=~"pgmcp_.+"}')}`,
    )) as Record<string, string>[];
    expect(series.length).toBeGreaterThan(10);
    const values = series.flatMap((labels) => Object.values(labels));
    expect(values.filter((value) => value.includes(MARKER) || /select/i.test(value))).toEqual([]);
  });

  it('loads the example alert rules (docs/prometheus/alerts.yml), which evaluate cleanly', async () => {
    const check = spawnSync(PROMTOOL_BIN, ['check', 'rules', ALERTS], { encoding: 'utf8' });
    expect(check.status, check.stdout + check.stderr).toBe(0);
    await prometheus.waitFor('pgmcp_tool_calls_total'); // an evaluation or more has run
    const deadline = Date.now() + 30_000;
    let rules: { name: string; health: string; lastError?: string }[] = [];
    do {
      const data = (await prometheus.api('rules')) as {
        groups: { name: string; rules: { name: string; health: string; lastError?: string }[] }[];
      };
      rules = data.groups.flatMap((group) => group.rules);
      if (rules.length > 0 && rules.every((rule) => rule.health === 'ok')) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    } while (Date.now() < deadline);
    expect(rules.map((rule) => rule.name)).toEqual(
      expect.arrayContaining(['PgmcpDown', 'PgmcpPoolSaturated', 'PgmcpToolFailures']),
    );
    expect(rules.filter((rule) => rule.health !== 'ok')).toEqual([]);
  });

  it('ignores an X-Request-Id from a peer that is not a trusted proxy', async () => {
    const response = await rawHttp(`${server.origin}/live`, {
      headers: { 'x-request-id': 'mine' },
    });
    expect(response.status).toBe(200);
    expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe.skipIf(!db)('/metrics on the main port, probes and request ids', () => {
  let server: HttpServer;
  let admin: string;
  let reader: string;
  let fakeLlm: FakeLlm;
  const env = (): Record<string, string> => serverEnv({ PGMCP_STATE_URL: db!.adminUrl });

  beforeAll(async () => {
    const made = async (name: string, roles: string[]): Promise<string> => {
      const run = await runPgmcp(
        ['token', 'create', '--name', name, ...roles.flatMap((r) => ['--role', r]), '--json'],
        { env: env() },
      );
      expect(run.code, run.stderr).toBe(0);
      return (JSON.parse(run.stdout) as { token: string }).token;
    };
    fakeLlm = await startFakeLlm({
      flavor: 'openai',
      script: () => ({ text: 'fine', usage: { input: 11, output: 4 } }),
    });
    admin = await made('ops-admin', ['admin']);
    reader = await made('ops-reader', ['analyst']);
    server = await startHttpServer(['--database', db!.url, '--require-auth'], {
      env: {
        ...env(),
        PGMCP_METRICS_ENABLED: 'true',
        PGMCP_TRUSTED_PROXIES: '127.0.0.1',
        PGMCP_HTTP_DRAIN_MS: '4000',
        PGMCP_RATE_LIMIT_API: '3',
        OPENAI_API_KEY: 'sk-test-operations-123456',
        OPENAI_BASE_URL: fakeLlm.baseUrl,
      },
    });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await fakeLlm?.close();
  });

  it('needs a token with the admin role', async () => {
    const anonymous = await rawHttp(`${server.origin}/metrics`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['www-authenticate']).toMatch(/^Bearer/);
    const notAdmin = await rawHttp(`${server.origin}/metrics`, {
      headers: { authorization: `Bearer ${reader}` },
    });
    expect(notAdmin.status).toBe(403);
    const ok = await rawHttp(`${server.origin}/metrics`, {
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(ok.status).toBe(200);
    expect(ok.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(ok.text).toContain('pgmcp_auth_failures_total{reason="missing"}');
  });

  it('answers /live and /ready without credentials', async () => {
    const live = await rawHttp(`${server.origin}/live`);
    expect(live.status).toBe(200);
    expect(live.json).toEqual({ status: 'live' });
    const ready = await rawHttp(`${server.origin}/ready`);
    expect(ready.status).toBe(200);
    expect(ready.json).toEqual({ status: 'ready', checks: { database: 'up', state: 'up' } });
  });

  it("takes a trusted proxy's X-Request-Id: in the answer, the request's log lines and its audit row", async () => {
    const id = `req-${Date.now().toString(36)}`;
    const { message, headers } = modernRequest(1, 'tools/call', {
      name: 'query_database',
      arguments: { query: 'SELECT 2 AS two' },
    });
    const response = await postRpc(server.url, message, {
      ...headers,
      authorization: `Bearer ${reader}`,
      'x-request-id': id,
    });
    expect(response.status).toBe(200);
    expect(response.headers['x-request-id']).toBe(id);
    const client = new pg.Client({ connectionString: db!.adminUrl });
    await client.connect();
    try {
      let rows: { event: string; request_id: string | null }[] = [];
      for (let i = 0; i < 100 && rows.length === 0; i++) {
        ({ rows } = await client.query(
          `SELECT event, request_id FROM pgmcp.audit WHERE request_id = $1`,
          [id],
        ));
        if (rows.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(rows).toEqual([{ event: 'tool_call', request_id: id }]);
    } finally {
      await client.end();
    }
    // A line logged while a request is served names it: a refused Origin is logged as a warning.
    const refused = await postRpc(server.url, message, {
      ...headers,
      authorization: `Bearer ${reader}`,
      origin: 'https://elsewhere.example',
      'x-request-id': `${id}-refused`,
    });
    expect(refused.status).toBe(403);
    expect(refused.headers['x-request-id']).toBe(`${id}-refused`);
    const logged = (): { requestId?: string; msg?: string }[] =>
      server
        .stderr()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { requestId?: string; msg?: string });
    for (let i = 0; i < 50 && !logged().some((l) => l.requestId === `${id}-refused`); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(
      logged()
        .filter((l) => l.requestId === `${id}-refused`)
        .map((l) => l.msg),
    ).toEqual(['request refused by the Host/Origin policy']);
  });

  it('counts failed sign-ins, model calls with their tokens, and rate-limit refusals by family', async () => {
    const login = await rawHttp(`${server.origin}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: { username: 'nobody', password: 'wrong-password' },
    });
    expect(login.status).toBe(401);
    const bearer = { authorization: `Bearer ${reader}`, 'content-type': 'application/json' };
    const chat = await rawHttp(`${server.origin}/api/llm/chat`, {
      method: 'POST',
      headers: bearer,
      body: { provider: 'openai', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(chat.status, chat.text).toBe(200);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const listed = await rawHttp(`${server.origin}/api/llm/providers`, { headers: bearer });
      statuses.push(listed.status);
    }
    expect(statuses).toContain(429);
    const scraped = await rawHttp(`${server.origin}/metrics`, {
      headers: { authorization: `Bearer ${admin}` },
    });
    const line = (prefix: string): string | undefined =>
      scraped.text.split('\n').find((l) => l.startsWith(prefix));
    expect(line('pgmcp_llm_requests_total{provider="openai"')).toMatch(/outcome="ok"} 1$/);
    expect(line('pgmcp_llm_tokens_total{provider="openai"')).toMatch(/direction="in"} 11$/);
    expect(scraped.text).toMatch(/pgmcp_llm_tokens_total\{[^}]*direction="out"\} 4\n/);
    expect(scraped.text).toMatch(/^pgmcp_rate_limited_total\{family="api"\} [1-9]\d*$/m);
    expect(scraped.text).toContain('pgmcp_auth_failures_total{reason="login_failed"} 1');
  });

  it('drains on SIGTERM: /ready answers 503 while requests are still served, then it exits', async () => {
    server.process.kill('SIGTERM');
    let ready = await rawHttp(`${server.origin}/ready`);
    for (let i = 0; i < 50 && ready.status === 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      ready = await rawHttp(`${server.origin}/ready`);
    }
    expect(ready.status).toBe(503);
    expect(ready.json).toMatchObject({ status: 'not ready', reason: 'draining' });
    expect((await rawHttp(`${server.origin}/live`)).status).toBe(200);
    const { message, headers } = modernRequest(2, 'tools/list');
    const served = await postRpc(server.url, message, {
      ...headers,
      authorization: `Bearer ${reader}`,
    });
    expect(served.status).toBe(200);
    expect(await server.exited).toEqual({ code: 0, signal: null });
  });
});
