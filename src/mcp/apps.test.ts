// MCP Apps on the wire: the ui:// views listed and read (both eras) for a host that declares the
// extension, the tools' view links, and nothing of either for a client that does not, nor when
// the views are not built. The views come from a fixture directory (test/fixtures/apps-views), so
// these tests pass without the web build; test/e2e/mcp-apps.test.ts checks the real build.
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { packagePath } from '../core/package-path.js';
import { ANONYMOUS } from '../core/principal.js';
import { createSigner } from '../core/signed.js';
import { createRegistry } from '../tools/registry.js';
import {
  APP_MIME_TYPE,
  APPS_EXTENSION,
  findAppViews,
  supportsApps,
  type AppViews,
} from './apps.js';
import type { RequestChannel } from './channel.js';
import { createDispatcher } from './dispatcher.js';
import { createSession } from './session.js';
import { serialize } from './serialize.js';
import { META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION } from './versions.js';

const APPS = { extensions: { [APPS_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } };
const VIEWS = ['ui://pgmcp/result-grid', 'ui://pgmcp/result-chart', 'ui://pgmcp/plan-viewer'];
const FIXTURE = packagePath('test/fixtures/apps-views');
/** A directory with no views in it: a checkout that never ran the web build. */
const NO_BUILD = join(tmpdir(), `pgmcp-no-views-${process.pid}-${Date.now()}`);

function harness(apps: AppViews | null = findAppViews(FIXTURE)) {
  const registry = createRegistry();
  const answer = async () => ({
    content: [{ type: 'text' as const, text: 'n\n1' }],
    structuredContent: { columns: [{ name: 'n', type: 'integer' }], rows: [[1]] },
  });
  for (const name of ['query_database', 'execute_explain', 'explain_query', 'count_rows']) {
    registry.addTool({ name, description: name, inputSchema: { type: 'object' }, call: answer });
  }
  registry.addTool({
    name: 'sales_by_month',
    description: 'a set-returning routine',
    inputSchema: { type: 'object' },
    tags: ['reports'],
    derived: { shape: { kind: 'row', set: true, columns: [] } },
    call: answer,
  } as Parameters<typeof registry.addTool>[0]);
  registry.addResource({
    uri: 'pg://system_info',
    name: 'system_info',
    read: async () => ({ contents: [{ uri: 'pg://system_info', text: '{}' }] }),
  });
  const dispatcher = createDispatcher({
    registry,
    logger: pino({ level: 'silent' }),
    serverInfo: { name: 'test', version: '1' },
    signer: createSigner('k'),
    apps,
  });
  return async (
    era: 'legacy' | 'modern',
    capabilities: Record<string, unknown>,
    method: string,
    params: Record<string, unknown> = {},
  ): Promise<any> => {
    const session = createSession('s', () => undefined, ANONYMOUS);
    // initialize sets the session's capabilities itself; every other request finds them set.
    if (method !== 'initialize') {
      session.protocolVersion = '2025-11-25';
      session.clientCapabilities = capabilities;
    }
    const channel: RequestChannel = {
      session: era === 'legacy' ? session : null,
      principal: ANONYMOUS,
      inFlight: new Map(),
      notify: () => undefined,
      request: () => Promise.reject(new Error('no client')),
    };
    const meta = {
      [META_PROTOCOL_VERSION]: '2026-07-28',
      [META_CLIENT_CAPABILITIES]: capabilities,
    };
    const { response } = await dispatcher.handleRequest(
      {
        jsonrpc: '2.0',
        id: 1,
        method,
        params: era === 'modern' ? { ...params, _meta: meta } : params,
      },
      era,
      channel,
    );
    return response;
  };
}

const ask = harness();
const links = (r: any): Record<string, unknown> =>
  Object.fromEntries(r.result.tools.map((t: any) => [t.name, t._meta?.ui?.resourceUri ?? null]));

describe.each(['legacy', 'modern'] as const)('MCP Apps (%s era)', (era) => {
  it('links the result tools to their views for a host that declares the extension', async () => {
    const listed = await ask(era, APPS, 'tools/list');
    expect(links(listed)).toEqual({
      count_rows: null,
      execute_explain: 'ui://pgmcp/plan-viewer',
      explain_query: 'ui://pgmcp/plan-viewer',
      query_database: 'ui://pgmcp/result-grid',
      sales_by_month: 'ui://pgmcp/result-grid',
    });
    const routine = listed.result.tools.find((t: any) => t.name === 'sales_by_month');
    expect(routine._meta.tags).toEqual(['reports']);
  });

  it('lists the views, with their CSP, only for a host that declares the extension', async () => {
    const plain = await ask(era, {}, 'resources/list');
    expect(plain.result.resources.map((r: any) => r.uri)).toEqual(['pg://system_info']);
    const apps = await ask(era, APPS, 'resources/list');
    expect(apps.result.resources.map((r: any) => r.uri)).toEqual(['pg://system_info', ...VIEWS]);
    for (const view of apps.result.resources.slice(1)) {
      expect(view.mimeType).toBe(APP_MIME_TYPE);
      expect(view._meta.ui.csp).toEqual({
        connectDomains: [],
        resourceDomains: [],
        frameDomains: [],
      });
    }
  });

  it('reads each view from the views directory, with its declared CSP', async () => {
    for (const uri of VIEWS) {
      const read = await ask(era, APPS, 'resources/read', { uri });
      const [content] = read.result.contents;
      expect(content).toMatchObject({ uri, mimeType: APP_MIME_TYPE });
      expect(content._meta.ui.csp.connectDomains).toEqual([]);
      const file = join(FIXTURE, `${uri.slice('ui://pgmcp/'.length)}.html`);
      expect(content.text).toBe(readFileSync(file, 'utf8'));
      if (era === 'modern') expect(read.result.cacheScope).toBe('public');
    }
  });

  it('marks the lists that carry views or links private (they depend on the caller)', async () => {
    if (era === 'legacy') return; // cacheScope is a 2026-07-28 field
    for (const method of ['tools/list', 'resources/list']) {
      expect((await ask(era, APPS, method)).result.cacheScope).toBe('private');
      expect((await ask(era, {}, method)).result.cacheScope).toBe('public');
    }
  });

  it('answers a client without the extension exactly as before', async () => {
    // The answers of the server before MCP Apps (commit ef7a1fe), written out.
    const modern = {
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'test', version: '1' } },
      resultType: 'complete',
    };
    const hints = era === 'modern' ? { ...modern, ttlMs: 60_000, cacheScope: 'public' } : {};
    const plain = (name: string) => ({ name, description: name, inputSchema: { type: 'object' } });
    const before = {
      jsonrpc: '2.0',
      id: 1,
      result: {
        tools: [
          plain('count_rows'),
          plain('execute_explain'),
          plain('explain_query'),
          plain('query_database'),
          {
            ...plain('sales_by_month'),
            description: 'a set-returning routine',
            _meta: { tags: ['reports'] },
          },
        ],
        ...hints,
      },
    };
    // Other capabilities, or the extension without our MIME type, change nothing.
    const other = { sampling: {}, extensions: { [APPS_EXTENSION]: { mimeTypes: ['text/x'] } } };
    const bare = { extensions: { [APPS_EXTENSION]: {} } };
    for (const caps of [{}, other, bare]) {
      const listed = await ask(era, caps, 'tools/list');
      listed.result.tools.sort((a: any, b: any) => a.name.localeCompare(b.name));
      expect(listed).toEqual(before);
      expect(JSON.parse(serialize(await ask(era, caps, 'resources/list'))).result).toEqual({
        resources: [{ uri: 'pg://system_info', name: 'system_info' }],
        ...hints,
      });
    }
    const call = { name: 'query_database', arguments: { query: 'SELECT 1' } };
    expect(JSON.parse(serialize(await ask(era, APPS, 'tools/call', call))).result).toEqual({
      content: [{ type: 'text', text: 'n\n1' }],
      structuredContent: { columns: [{ name: 'n', type: 'integer' }], rows: [[1]] },
      ...(era === 'modern' ? modern : {}),
    });
  });
});

describe.each(['legacy', 'modern'] as const)('without the web build (%s era)', (era) => {
  const warned: string[] = [];
  const noBuild = harness(findAppViews(NO_BUILD, { warn: (m) => warned.push(m) }));

  it('says why in one log line', () => {
    expect(warned).toHaveLength(1);
    expect(warned[0]).toContain('npm run build -w web');
    expect(warned[0]).toContain('result-grid.html');
  });

  it('lists no views, links no tools and declares no extension', async () => {
    const listed = await noBuild(era, APPS, 'resources/list');
    expect(listed.result.resources.map((r: any) => r.uri)).toEqual(['pg://system_info']);
    expect(Object.values(links(await noBuild(era, APPS, 'tools/list'))).every((v) => !v)).toBe(
      true,
    );
    const caps =
      era === 'legacy'
        ? await noBuild(era, APPS, 'initialize', { capabilities: APPS })
        : await noBuild(era, APPS, 'server/discover');
    expect(caps.result.capabilities.extensions).toBeUndefined();
  });

  it('answers a read of a view "resource not found", not an internal error', async () => {
    const read = await noBuild(era, APPS, 'resources/read', { uri: 'ui://pgmcp/result-grid' });
    expect(read.result).toBeUndefined();
    const plainMiss = await noBuild(era, APPS, 'resources/read', { uri: 'pg://nothing' });
    expect(read.error.code).toBe(plainMiss.error.code);
    expect(read.error.code).not.toBe(-32603);
    expect(read.error.message).toBe('Resource not found: ui://pgmcp/result-grid');
  });
});

describe('the server declares the extension', () => {
  it('to a host that declared it, in initialize and server/discover', async () => {
    const ext = (r: any) => r.result.capabilities.extensions;
    // The session starts with no capabilities: only initialize's params can declare the extension.
    expect(ext(await ask('legacy', {}, 'initialize', { capabilities: APPS }))).toEqual({
      [APPS_EXTENSION]: {},
    });
    expect(ext(await ask('modern', APPS, 'server/discover'))).toEqual({ [APPS_EXTENSION]: {} });
    expect(ext(await ask('legacy', {}, 'initialize', { capabilities: {} }))).toBeUndefined();
    expect(ext(await ask('modern', {}, 'server/discover'))).toBeUndefined();
  });
});

describe('supportsApps', () => {
  it('reads the extension from the client capabilities', () => {
    expect(supportsApps({})).toBe(false);
    expect(supportsApps({ extensions: {} })).toBe(false);
    expect(supportsApps({ extensions: { [APPS_EXTENSION]: true } })).toBe(false);
    // The extension requires the host to list the MIME type it renders.
    expect(supportsApps({ extensions: { [APPS_EXTENSION]: {} } })).toBe(false);
    expect(supportsApps({ extensions: { [APPS_EXTENSION]: { mimeTypes: 'text/html' } } })).toBe(
      false,
    );
    expect(supportsApps(APPS)).toBe(true);
    expect(supportsApps({ extensions: { [APPS_EXTENSION]: { mimeTypes: ['text/html'] } } })).toBe(
      false,
    );
  });
});
