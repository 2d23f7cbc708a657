// The clients that are programs of their own, run as users run them:
// - mcp-remote, the stdio↔HTTP bridge desktop clients launch: the official SDK v1 client speaks
//   stdio to it and it speaks Streamable HTTP to the server. Its OAuth flow (a browser, a
//   callback port) starts only when the server answers 401, which pgmcp on loopback without
//   tokens never does; its token store is pointed at a temporary directory.
// - the MCP Inspector's CLI mode (`--cli <url> --method …`), one process per method, as a script
//   would call it. `--stored-auth-only` keeps it from ever starting an interactive login (it
//   opens a browser only for that); its catalog and client config go to a temporary directory.
//   It has no update check.
// Both get a HOME of their own, so nothing is written to the user's, and loopback-watch.mjs
// preloaded: every connection they open must go to loopback.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Readable } from 'node:stream';
import type { LbClient, Observation } from './lb-clients.js';
import { isLoopback, OFFLINE_ENV } from './offline-clients.js';
import { REPO_ROOT } from './postgres.js';

const run = promisify(execFile);

const MCP_REMOTE = join(REPO_ROOT, 'node_modules', 'mcp-remote', 'dist', 'proxy.js');
const INSPECTOR = join(
  REPO_ROOT,
  'node_modules',
  '@modelcontextprotocol',
  'inspector',
  'clients',
  'launcher',
  'build',
  'index.js',
);

const LOOPBACK_WATCH = pathToFileURL(join(REPO_ROOT, 'test', 'helpers', 'loopback-watch.mjs')).href;

/**
 * A temporary HOME, and the environment a spawned client gets: PATH and nothing else of ours,
 * with loopback-watch.mjs preloaded. After `use`, every destination the programs recorded must
 * be loopback.
 */
async function withHome<T>(
  use: (env: Record<string, string>, home: string) => Promise<T>,
): Promise<T> {
  const home = mkdtempSync(join(tmpdir(), 'pgmcp-lb-client-'));
  const log = join(home, 'outbound.log');
  try {
    const result = await use(
      {
        PATH: process.env['PATH'] ?? '',
        HOME: home,
        NODE_OPTIONS: `--import=${LOOPBACK_WATCH}`,
        PGMCP_OUTBOUND_LOG: log,
        ...OFFLINE_ENV,
      },
      home,
    );
    const destinations = existsSync(log)
      ? readFileSync(log, 'utf8').split('\n').filter(Boolean)
      : [];
    if (destinations.length === 0) throw new Error('the client program recorded no connection');
    const foreign = destinations.filter((d) => !isLoopback(d));
    if (foreign.length > 0) throw new Error(`the client program went beyond loopback: ${foreign}`);
    return result;
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

function mcpRemote(protocol: 'legacy' | 'auto'): LbClient {
  return {
    name: `mcp-remote (--protocol ${protocol}${protocol === 'legacy' ? ', its default' : ''}) under the SDK v1 stdio client`,
    packageName: 'mcp-remote',
    transport: 'stdio → mcp-remote → Streamable HTTP (http-only)',
    era: protocol === 'legacy' ? 'legacy' : 'modern',
    run: (url, job) =>
      withHome(async (env, home) => {
        const transport = new StdioClientTransport({
          command: process.execPath,
          args: [MCP_REMOTE, url, '--transport', 'http-only', '--protocol', protocol],
          env: { ...env, MCP_REMOTE_CONFIG_DIR: join(home, 'mcp-auth') },
          cwd: home,
          stderr: 'pipe',
        });
        let stderr = '';
        (transport.stderr as Readable | null)?.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
        });
        const client = new Client({ name: 'pgmcp-lb-clients', version: '1.0.0' });
        try {
          await client.connect(transport);
          return {
            tools: (await client.listTools()).tools,
            call: await client.callTool({
              name: 'query_database',
              arguments: { query: job.query },
            }),
            resources: (await client.listResources()).resources,
            read: await client.readResource({ uri: job.uri }),
          };
        } catch (error) {
          throw new Error(`${(error as Error).message}\nmcp-remote said:\n${stderr.slice(-3000)}`);
        } finally {
          await client.close();
        }
      }),
  };
}

function inspector(era: 'legacy' | 'auto'): LbClient {
  return {
    name: `MCP Inspector CLI (--protocol-era ${era}${era === 'legacy' ? ', its default' : ''})`,
    packageName: '@modelcontextprotocol/inspector',
    transport: 'Streamable HTTP, one process per method',
    era: era === 'legacy' ? 'legacy' : 'modern',
    run: (url, job) =>
      withHome(async (env, home) => {
        const cli = async (...args: string[]): Promise<unknown> => {
          const { stdout } = await run(
            process.execPath,
            [INSPECTOR, '--cli', url, '--protocol-era', era, '--stored-auth-only', '--quiet']
              .concat(['--format', 'json'])
              .concat(args),
            {
              cwd: home,
              timeout: 60_000,
              env: {
                ...env,
                MCP_CATALOG_PATH: join(home, 'catalog.json'),
                MCP_CLIENT_CONFIG_PATH: join(home, 'client.json'),
              },
            },
          );
          return (JSON.parse(stdout) as { result: unknown }).result;
        };
        const observation: Observation = {
          tools: ((await cli('--method', 'tools/list')) as { tools: unknown }).tools,
          call: await cli(
            '--method',
            'tools/call',
            '--tool-name',
            'query_database',
            '--tool-args-json',
            JSON.stringify({ query: job.query }),
          ),
          resources: ((await cli('--method', 'resources/list')) as { resources: unknown })
            .resources,
          read: await cli('--method', 'resources/read', '--uri', job.uri),
        };
        return observation;
      }),
  };
}

/** The clients that run as programs of their own. */
export const SPAWNED_CLIENTS: readonly LbClient[] = [
  mcpRemote('legacy'),
  mcpRemote('auto'),
  inspector('legacy'),
  inspector('auto'),
];
