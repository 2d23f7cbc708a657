// MCP Apps on the wire: the ui:// views listed and read (both eras) for a host that declares the
// extension, the tools' view links, and nothing of either for a client that does not.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ANONYMOUS } from '../core/principal.js';
import { createSigner } from '../core/signed.js';
import { createRegistry } from '../tools/registry.js';
import { APP_MIME_TYPE, APPS_EXTENSION, supportsApps } from './apps.js';
import type { RequestChannel } from './channel.js';
import { createDispatcher } from './dispatcher.js';
import { createSession } from './session.js';
import { serialize } from './serialize.js';
import { META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION } from './versions.js';

const APPS = { extensions: { [APPS_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } };
const VIEWS = ['ui://pgmcp/result-grid', 'ui://pgmcp/result-chart', 'ui://pgmcp/plan-viewer'];

function harness() {
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
  });
  return async (
    era: 'legacy' | 'modern',
    capabilities: Record<string, unknown>,
    method: string,
    params: Record<string, unknown> = {},
  ): Promise<any> => {
    const session = createSession('s', () => undefined, ANONYMOUS);
    session.protocolVersion = '2025-11-25';
    session.clientCapabilities = capabilities;
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

  it('reads each view as one self-contained HTML file with a declared CSP', async () => {
    for (const uri of VIEWS) {
      const read = await ask(era, APPS, 'resources/read', { uri });
      const [content] = read.result.contents;
      expect(content).toMatchObject({ uri, mimeType: APP_MIME_TYPE });
      expect(content._meta.ui.csp.connectDomains).toEqual([]);
      expect(content.text).toMatch(/^<!doctype html>/i);
      expect(content.text).toContain(`http-equiv="Content-Security-Policy"`);
      expect(content.text).toContain("connect-src 'none'");
      // Nothing loaded from elsewhere: every script and style is inline.
      expect(content.text).not.toMatch(/<script[^>]+src=|<link[^>]+href=/);
      if (era === 'modern') expect(read.result.cacheScope).toBe('public');
    }
  });

  it('answers a client without the extension exactly as before', async () => {
    const before = await ask(era, {}, 'tools/list');
    expect(Object.values(links(before)).every((v) => v === null)).toBe(true);
    // Other capabilities, or the extension without our MIME type, change nothing.
    const other = { sampling: {}, extensions: { [APPS_EXTENSION]: { mimeTypes: ['text/x'] } } };
    expect(serialize(await ask(era, other, 'tools/list'))).toBe(serialize(before));
    const call = { name: 'query_database', arguments: { query: 'SELECT 1' } };
    expect(serialize(await ask(era, APPS, 'tools/call', call))).toBe(
      serialize(await ask(era, {}, 'tools/call', call)),
    );
  });
});

describe('the server declares the extension', () => {
  it('to a host that declared it, in initialize and server/discover', async () => {
    const ext = (r: any) => r.result.capabilities.extensions;
    expect(ext(await ask('legacy', APPS, 'initialize', { capabilities: APPS }))).toEqual({
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
    expect(supportsApps({ extensions: { [APPS_EXTENSION]: {} } })).toBe(true);
    expect(supportsApps(APPS)).toBe(true);
    expect(supportsApps({ extensions: { [APPS_EXTENSION]: { mimeTypes: ['text/html'] } } })).toBe(
      false,
    );
  });
});
