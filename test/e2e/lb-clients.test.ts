// The bar of issue 25 for several instances: "the official SDK (v1, and v2 in legacy, auto and
// pinned modes), LangChain, the AI SDK, OpenAI Agents, mcp-remote, Inspector, Mastra and mcp-use
// all list, call and read through a round-robin load balancer over three instances, exactly as
// they do against one". Three pgmcp instances share one state database behind Debian's HAProxy
// (examples/deploy/haproxy.cfg, test/helpers/cluster.ts). Each client, through its own
// public API, lists the tools, calls query_database on the fixture table, lists the resources
// and reads pg://table/<schema>/items: once through the balancer and once against one instance
// directly, and the two runs must give the client the same answers. Every client here has a
// resource API, so every one reads. The parts of the bar, and the entries that cover them
// (era = what the server sees; all over Streamable HTTP):
// - official SDK v1: `Client` (legacy);
// - official SDK v2: `Client` in legacy mode (legacy), auto mode (modern), pinned to 2026-07-28
//   (modern);
// - LangChain: @langchain/mcp-adapters' MultiServerMCPClient (legacy);
// - the AI SDK: @ai-sdk/mcp's createMCPClient with its version discovery (modern) and without
//   (legacy);
// - OpenAI Agents: MCPServerStreamableHttp (modern);
// - Mastra: @mastra/mcp's MCPClient (modern);
// - mcp-use: its MCPClient (legacy);
//   (all in test/helpers/lb-clients.ts, in this process)
// - mcp-remote: the bridge as a program, under the SDK v1 stdio client, --protocol legacy (its
//   default) and auto (modern to the server);
// - Inspector: its CLI mode as a program, --protocol-era legacy (its default) and auto (modern)
//   (both in test/helpers/lb-clients-spawned.ts).
// Each instance's /metrics tells which instance answered which MCP request and in which era: the
// balanced run must have been served by more than one instance (a legacy session's requests
// landed on instances that did not create it), the direct run by one, both in the era the client
// is listed with. No model is called, the clients' telemetry is off (offline-clients.ts), and
// every connection this process opened went to loopback. docs/deploy.md lists the same clients
// and versions; the last test keeps the two in step.
// First: the clients' telemetry is switched off before any of them is loaded.
import { isLoopback, watchOutbound, type OutboundWatch } from '../helpers/offline-clients.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haproxyInstalled, startBalancer } from '../helpers/haproxy.js';
import { IN_PROCESS_CLIENTS, installedVersion, type Job } from '../helpers/lb-clients.js';
import { SPAWNED_CLIENTS } from '../helpers/lb-clients-spawned.js';
import {
  createFixtureSchema,
  REPO_ROOT,
  realPostgres,
  reportSkipped,
  throwawayDatabase,
  type FixtureSchema,
} from '../helpers/postgres.js';
import { startCluster, type Cluster } from '../helpers/cluster.js';

const SUITE = 'test/e2e/lb-clients.test.ts (client libraries through HAProxy)';
const pg = await realPostgres(SUITE);
const haproxy = haproxyInstalled();
if (pg && !haproxy)
  reportSkipped(SUITE, '/usr/sbin/haproxy is not installed (apt-get install haproxy)');

const CLIENTS = [...IN_PROCESS_CLIENTS, ...SPAWNED_CLIENTS];

/** MCP requests answered, by "method era", as an instance's /metrics counts them. */
async function mcpRequests(origin: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${origin}/metrics`)).text();
  const counts = new Map<string, number>();
  for (const match of text.matchAll(
    /^pgmcp_mcp_requests_total\{method="([^"]+)",era="([^"]+)",outcome="ok"\} (\d+)$/gm,
  )) {
    counts.set(`${match[1]} ${match[2]}`, Number(match[3]));
  }
  return counts;
}

/** What each instance answered while `work` ran: per instance, "method era" → count. */
async function served(cluster: Cluster, work: () => Promise<void>): Promise<Map<string, number>[]> {
  const origins = cluster.instances.map((i) => i.origin);
  const before = await Promise.all(origins.map(mcpRequests));
  await work();
  const after = await Promise.all(origins.map(mcpRequests));
  return after.map((counts, i) => {
    const delta = new Map<string, number>();
    for (const [key, n] of counts) {
      const d = n - (before[i]!.get(key) ?? 0);
      if (d > 0) delta.set(key, d);
    }
    return delta;
  });
}

const eras = (perInstance: Map<string, number>[]): Set<string> =>
  new Set(perInstance.flatMap((m) => [...m.keys()].map((key) => key.split(' ')[1]!)));

describe.skipIf(!pg || !haproxy)(
  'MCP client libraries through HAProxy over three instances',
  () => {
    const state = throwawayDatabase(pg!, 'pgmcp_lb_clients');
    let cluster: Cluster;
    let fixture: FixtureSchema;
    let job: Job;
    let outbound: OutboundWatch;

    beforeAll(async () => {
      outbound = watchOutbound();
      fixture = await createFixtureSchema(pg!, 'pgmcp_lb');
      job = {
        query: `select id, name, weight from ${fixture.name}.items where id <= 3 order by id`,
        uri: `pg://table/${fixture.name}/items`,
      };
      cluster = await startCluster(pg!, state.url, startBalancer, {
        PGMCP_METRICS_ENABLED: 'true',
        PGMCP_METRICS_ALLOW_ANONYMOUS: 'true',
      });
    }, 180_000);
    afterAll(async () => {
      outbound?.stop();
      await cluster?.stop();
      await fixture?.drop();
    }, 60_000);

    for (const client of CLIENTS) {
      const version = installedVersion(client.packageName);
      it(
        `${client.name} ${client.packageName}@${version} (${client.transport}, ${client.era} era) lists, calls and reads through the balancer as against one instance`,
        { timeout: 120_000 },
        async () => {
          let balanced: Awaited<ReturnType<typeof client.run>> | undefined;
          let direct: typeof balanced;
          const viaBalancer = await served(cluster, async () => {
            balanced = await client.run(cluster.url, job);
          });
          const viaOne = await served(cluster, async () => {
            direct = await client.run(cluster.instances[0]!.url, job);
          });

          // The answers are the fixture's, and the same either way.
          const answers = JSON.stringify(balanced);
          expect(answers).toContain('query_database');
          for (const name of ['item 01', 'item 02', 'item 03']) expect(answers).toContain(name);
          expect(answers).not.toContain('item 04');
          expect(JSON.stringify(balanced!.read)).toContain(`\\"schema\\": \\"${fixture.name}\\"`);
          expect(JSON.stringify(balanced!.resources)).toContain('pg://settings');
          expect(balanced).toEqual(direct);

          // Through the balancer, the client's requests went to more than one instance; directly,
          // to the one; in the era the client is listed with.
          const answeredBy = viaBalancer.filter((m) => m.size > 0).length;
          expect(answeredBy, JSON.stringify(viaBalancer.map((m) => [...m]))).toBeGreaterThan(1);
          expect(viaOne.map((m) => m.size > 0)).toEqual([true, false, false]);
          expect(eras(viaBalancer)).toEqual(new Set([client.era]));
          expect(eras(viaOne)).toEqual(new Set([client.era]));
        },
      );
    }

    it('every connection the in-process clients opened went to loopback', () => {
      const destinations = outbound.destinations();
      expect(destinations.length).toBeGreaterThan(0);
      expect(destinations.filter((d) => !isLoopback(d))).toEqual([]);
    });
  },
);

describe('the client list in docs/deploy.md', () => {
  it('names every client this suite runs, at the version installed', () => {
    const doc = readFileSync(join(REPO_ROOT, 'docs', 'deploy.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## Clients tested through the balancer'));
    for (const client of CLIENTS) {
      expect(section).toContain(
        `\`${client.packageName}@${installedVersion(client.packageName)}\``,
      );
    }
    const rows = section
      .split('\n## ')[0]!
      .split('\n')
      .filter((line) => /^\| [^-]/.test(line));
    // The header row, and one row per client.
    expect(rows.length - 1).toBe(CLIENTS.length);
  });
});
