// The MCP clients people use, each driven through its own public API the way an application
// would (no model is constructed, nothing is sent to an LLM): list the tools, call
// query_database, list the resources and read one. Each answers one `Observation`, the values
// as the client hands them to its caller, so a run through the load balancer can be compared
// with a run against one instance. The clients that are separate programs (mcp-remote, the
// Inspector's CLI) are in lb-clients-spawned.ts.
// First: the clients' telemetry is switched off before any of them is loaded.
import './offline-clients.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client as SdkV1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as SdkV1Http } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  Client as SdkV2Client,
  StreamableHTTPClientTransport as SdkV2Http,
} from '@modelcontextprotocol/client';
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import { createMCPClient } from '@ai-sdk/mcp';
import { MCPServerStreamableHttp, setTracingDisabled } from '@openai/agents';
import { noopObserve } from '@mastra/core/tools';
import { MCPClient as MastraMCPClient } from '@mastra/mcp';
import { MCPClient as McpUseClient } from 'mcp-use/client';
import { REPO_ROOT } from './postgres.js';

/** What the load-balanced run and the direct run must agree on. */
export interface Job {
  /** A read-only query on the fixture table. */
  query: string;
  /** A resource to read. */
  uri: string;
}

/** The client's answers, as it presents them to the application (made plain JSON). */
export interface Observation {
  tools: unknown;
  call: unknown;
  /** Absent for a client without a resource API. */
  resources?: unknown;
  read?: unknown;
}

export interface LbClient {
  /** How the test names it. */
  readonly name: string;
  /** The npm package whose version is reported. */
  readonly packageName: string;
  /** How it reaches the server. */
  readonly transport: string;
  /** The protocol era the server sees from it. */
  readonly era: 'legacy' | 'modern';
  run(url: string, job: Job): Promise<Observation>;
}

/** The installed version of an npm package (its package.json, whatever its exports allow). */
export function installedVersion(packageName: string): string {
  const file = join(REPO_ROOT, 'node_modules', packageName, 'package.json');
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

/** Functions and class instances reduced to their data, as a JSON caller would see them. */
const plain = (value: unknown): unknown =>
  value === undefined ? undefined : JSON.parse(JSON.stringify(value));

const CLIENT_INFO = { name: 'pgmcp-lb-clients', version: '1.0.0' };
const HTTP = 'Streamable HTTP';

function sdkV1(): LbClient {
  return {
    name: 'official SDK v1 (Client)',
    packageName: '@modelcontextprotocol/sdk',
    transport: HTTP,
    era: 'legacy',
    async run(url, job) {
      const client = new SdkV1Client(CLIENT_INFO);
      const transport = new SdkV1Http(new URL(url));
      await client.connect(transport);
      try {
        return {
          tools: (await client.listTools()).tools,
          call: await client.callTool({ name: 'query_database', arguments: { query: job.query } }),
          resources: (await client.listResources()).resources,
          read: await client.readResource({ uri: job.uri }),
        };
      } finally {
        await transport.terminateSession().catch(() => undefined);
        await client.close();
      }
    },
  };
}

function sdkV2(mode: 'legacy' | 'auto' | 'pinned'): LbClient {
  return {
    name: `official SDK v2 (Client, ${mode === 'pinned' ? 'pinned to 2026-07-28' : `${mode} mode`})`,
    packageName: '@modelcontextprotocol/client',
    transport: HTTP,
    era: mode === 'legacy' ? 'legacy' : 'modern',
    async run(url, job) {
      const client = new SdkV2Client(CLIENT_INFO, {
        versionNegotiation: { mode: mode === 'pinned' ? { pin: '2026-07-28' } : mode },
      });
      const transport = new SdkV2Http(new URL(url));
      await client.connect(transport);
      try {
        return plain({
          tools: (await client.listTools(undefined, { cacheMode: 'refresh' })).tools,
          call: await client.callTool({ name: 'query_database', arguments: { query: job.query } }),
          resources: (await client.listResources(undefined, { cacheMode: 'refresh' })).resources,
          read: await client.readResource({ uri: job.uri }, { cacheMode: 'refresh' }),
        }) as Observation;
      } finally {
        if (mode === 'legacy') await transport.terminateSession().catch(() => undefined);
        await client.close();
      }
    },
  };
}

function langChain(): LbClient {
  return {
    name: 'LangChain (MultiServerMCPClient)',
    packageName: '@langchain/mcp-adapters',
    transport: HTTP,
    era: 'legacy',
    async run(url, job) {
      // No fallback to the old HTTP+SSE transport: a failure must show, not be papered over.
      const client = new MultiServerMCPClient({
        mcpServers: { pg: { url, transport: 'http', automaticSSEFallback: false } },
        useStandardContentBlocks: true,
      });
      try {
        const tools = await client.getTools();
        const query = tools.find((t) => t.name === 'query_database');
        if (!query) throw new Error('LangChain offers no query_database tool');
        return plain({
          tools: tools.map((t) => ({ name: t.name, description: t.description })),
          call: await query.invoke({ query: job.query }),
          resources: await client.listResources(),
          read: await client.readResource('pg', job.uri),
        }) as Observation;
      } finally {
        await client.close();
      }
    },
  };
}

function aiSdk(discovery: boolean): LbClient {
  return {
    name: `AI SDK (createMCPClient, ${discovery ? 'version discovery, its default' : 'protocolVersionDiscovery: false'})`,
    packageName: '@ai-sdk/mcp',
    transport: HTTP,
    era: discovery ? 'modern' : 'legacy',
    async run(url, job) {
      const client = await createMCPClient({
        transport: { type: 'http', url },
        protocolVersionDiscovery: discovery,
      });
      try {
        const tools = await client.tools();
        const query = tools['query_database'];
        if (!query?.execute) throw new Error('the AI SDK offers no query_database tool');
        return plain({
          tools: Object.entries(tools).map(([name, t]) => ({ name, description: t.description })),
          call: await query.execute(
            { query: job.query },
            { toolCallId: 'lb-1', messages: [], context: {} },
          ),
          resources: (await client.listResources()).resources,
          read: (await client.readResource({ uri: job.uri })).contents,
        }) as Observation;
      } finally {
        await client.close();
      }
    },
  };
}

function openAiAgents(): LbClient {
  return {
    name: 'OpenAI Agents (MCPServerStreamableHttp)',
    packageName: '@openai/agents',
    transport: HTTP,
    era: 'modern',
    async run(url, job) {
      setTracingDisabled(true);
      const server = new MCPServerStreamableHttp({ url, name: 'pg', cacheToolsList: false });
      await server.connect();
      try {
        return plain({
          tools: await server.listTools(),
          call: await server.callTool('query_database', { query: job.query }),
          resources: (await server.listResources()).resources,
          read: (await server.readResource(job.uri)).contents,
        }) as Observation;
      } finally {
        await server.close();
      }
    },
  };
}

function mastra(): LbClient {
  return {
    name: 'Mastra (MCPClient)',
    packageName: '@mastra/mcp',
    transport: HTTP,
    era: 'modern',
    async run(url, job) {
      const client = new MastraMCPClient({
        id: `lb-${randomUUID()}`,
        servers: { pg: { url: new URL(url) } },
      });
      try {
        const tools = await client.listTools();
        const query = tools['pg_query_database'];
        if (!query?.execute) throw new Error('Mastra offers no pg_query_database tool');
        return plain({
          tools: Object.entries(tools).map(([name, t]) => ({ name, description: t.description })),
          // What an agent's step hands a tool, without an agent: no tracing.
          call: await query.execute({ query: job.query }, { observe: noopObserve }),
          resources: (await client.resources.list())['pg'],
          read: (await client.resources.read('pg', job.uri)).contents,
        }) as Observation;
      } finally {
        await client.disconnect();
      }
    },
  };
}

function mcpUse(): LbClient {
  return {
    name: 'mcp-use (MCPClient)',
    packageName: 'mcp-use',
    transport: HTTP,
    era: 'legacy',
    async run(url, job) {
      const client = new McpUseClient({ mcpServers: { pg: { url } } });
      try {
        const session = await client.createSession('pg');
        return plain({
          tools: session.tools,
          call: await session.callTool('query_database', { query: job.query }),
          resources: (await session.listResources()).resources,
          read: (await session.readResource(job.uri)).contents,
        }) as Observation;
      } finally {
        await client.closeAllSessions();
      }
    },
  };
}

/** The clients that run inside the test process. */
export const IN_PROCESS_CLIENTS: readonly LbClient[] = [
  sdkV1(),
  sdkV2('legacy'),
  sdkV2('auto'),
  sdkV2('pinned'),
  langChain(),
  aiSdk(true),
  aiSdk(false),
  openAiAgents(),
  mastra(),
  mcpUse(),
];
