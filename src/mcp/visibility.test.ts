// Per-caller visibility: items with allows are left out of lists for callers who may not see
// them, refused by name (-32001 for a caller without identity), and lists that depend on the
// caller say cacheScope 'private' in the modern era.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ANONYMOUS, type Principal } from '../core/principal.js';
import { createSigner } from '../core/signed.js';
import { createRegistry, type Registry } from '../tools/registry.js';
import { createDispatcher } from './dispatcher.js';
import type { RequestChannel } from './channel.js';
import { createSession } from './session.js';
import { META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION } from './versions.js';

const ALICE: Principal = {
  kind: 'token',
  userId: 'alice',
  tenantId: 't1',
  roles: ['admin'],
  scopes: [],
  claims: {},
};
const BOB: Principal = { ...ALICE, userId: 'bob', roles: [] };
const signedIn = (p: Principal): boolean => p.userId !== null;
const admins = (p: Principal): boolean => p.roles.includes('admin');
const ok = async () => ({ content: [{ type: 'text' as const, text: 'ok' }] });

function catalog(gated = true): Registry {
  const registry = createRegistry();
  const gate = <T extends object>(spec: T, rule: (p: Principal) => boolean): T =>
    gated ? { ...spec, allows: rule } : spec;
  registry.addTool({
    name: 'b_open',
    description: 'open',
    inputSchema: { type: 'object' },
    call: ok,
  });
  registry.addTool(
    gate(
      { name: 'a_private', description: 'signed in', inputSchema: { type: 'object' }, call: ok },
      signedIn,
    ),
  );
  registry.addTool(
    gate(
      { name: 'c_admin', description: 'admins', inputSchema: { type: 'object' }, call: ok },
      admins,
    ),
  );
  registry.addResource(
    gate(
      {
        uri: 'doc://secret',
        name: 'secret',
        read: async () => ({ contents: [{ uri: 'doc://secret', text: 's' }] }),
      },
      signedIn,
    ),
  );
  registry.addResource({
    uri: 'doc://public',
    name: 'public',
    read: async () => ({ contents: [{ uri: 'doc://public', text: 'p' }] }),
  });
  registry.addTemplate(
    gate(
      {
        uriTemplate: 'row://{id}',
        name: 'row',
        match: (uri: string) => (uri.startsWith('row://') ? { id: uri.slice(6) } : null),
        read: async (uri: string) => ({ contents: [{ uri, text: 'r' }] }),
      },
      signedIn,
    ),
  );
  registry.addPrompt(gate({ name: 'review', get: async () => ({ messages: [] }) }, signedIn));
  return registry;
}

function harness(registry: Registry, filterByAccess = true) {
  const dispatcher = createDispatcher({
    registry,
    logger: pino({ level: 'silent' }),
    serverInfo: { name: 'test', version: '1' },
    signer: createSigner('k'),
    filterByAccess,
  });
  const channel = (principal: Principal, modern: boolean): RequestChannel => {
    const session = createSession('s', () => undefined, principal);
    session.protocolVersion = '2025-11-25';
    return {
      session: modern ? null : session,
      principal,
      inFlight: new Map(),
      notify: () => undefined,
      request: () => Promise.reject(new Error('no client')),
    };
  };
  const ask = async (
    principal: Principal,
    method: string,
    params: Record<string, unknown> = {},
    modern = false,
  ): Promise<any> => {
    const meta = { [META_PROTOCOL_VERSION]: '2026-07-28', [META_CLIENT_CAPABILITIES]: {} };
    const { response } = await dispatcher.handleRequest(
      { jsonrpc: '2.0', id: 1, method, params: modern ? { ...params, _meta: meta } : params },
      modern ? 'modern' : 'legacy',
      channel(principal, modern),
    );
    return response;
  };
  return { ask };
}

describe('per-caller visibility', () => {
  const { ask } = harness(catalog());
  const names = (r: any, key: string, field = 'name'): string[] =>
    r.result[key].map((i: Record<string, string>) => i[field]);

  it('lists only what the caller may see, in name order', async () => {
    expect(names(await ask(ANONYMOUS, 'tools/list'), 'tools')).toEqual(['b_open']);
    expect(names(await ask(BOB, 'tools/list'), 'tools')).toEqual(['a_private', 'b_open']);
    expect(names(await ask(ALICE, 'tools/list'), 'tools')).toEqual([
      'a_private',
      'b_open',
      'c_admin',
    ]);
    expect(names(await ask(ANONYMOUS, 'resources/list'), 'resources', 'uri')).toEqual([
      'doc://public',
    ]);
    expect(names(await ask(BOB, 'resources/list'), 'resources', 'uri')).toEqual([
      'doc://public',
      'doc://secret',
    ]);
    expect((await ask(ANONYMOUS, 'resources/templates/list')).result.resourceTemplates).toEqual([]);
    expect((await ask(BOB, 'resources/templates/list')).result.resourceTemplates).toHaveLength(1);
    expect((await ask(ANONYMOUS, 'prompts/list')).result.prompts).toEqual([]);
    expect(names(await ask(BOB, 'prompts/list'), 'prompts')).toEqual(['review']);
  });

  it('refuses an item the caller may not use: -32001, as auth or as forbidden', async () => {
    const anon = await ask(ANONYMOUS, 'tools/call', { name: 'a_private' });
    expect(anon.error.code).toBe(-32001);
    expect(anon.error.message).toMatch(/tool a_private needs an authenticated caller/);
    expect((await ask(BOB, 'tools/call', { name: 'a_private' })).result.content[0].text).toBe('ok');
    const bob = await ask(BOB, 'tools/call', { name: 'c_admin' });
    expect(bob.error).toMatchObject({
      code: -32001,
      message: expect.stringMatching(/Forbidden: your roles do not allow the tool c_admin/),
    });
    expect((await ask(ALICE, 'tools/call', { name: 'c_admin' })).result).toBeDefined();
    expect((await ask(ANONYMOUS, 'resources/read', { uri: 'doc://secret' })).error.code).toBe(
      -32001,
    );
    expect((await ask(ANONYMOUS, 'resources/read', { uri: 'row://1' })).error.code).toBe(-32001);
    expect((await ask(BOB, 'resources/read', { uri: 'row://1' })).result.contents).toHaveLength(1);
    expect((await ask(ANONYMOUS, 'prompts/get', { name: 'review' })).error.code).toBe(-32001);
    expect(
      (
        await ask(ANONYMOUS, 'completion/complete', {
          ref: { type: 'ref/prompt', name: 'review' },
          argument: { name: 'x', value: '' },
        })
      ).error.code,
    ).toBe(-32602);
  });

  it('says cacheScope private when a list depends on the caller', async () => {
    for (const method of [
      'tools/list',
      'resources/list',
      'resources/templates/list',
      'prompts/list',
    ]) {
      for (const who of [ANONYMOUS, ALICE]) {
        const r = await ask(who, method, {}, true);
        expect(r.result.cacheScope, method).toBe('private');
      }
    }
  });

  it('keeps cacheScope public when nothing is gated', async () => {
    const open = harness(catalog(false));
    for (const method of ['tools/list', 'resources/list', 'prompts/list']) {
      expect((await open.ask(ANONYMOUS, method, {}, true)).result.cacheScope, method).toBe(
        'public',
      );
    }
    expect(names(await open.ask(ANONYMOUS, 'tools/list'), 'tools')).toHaveLength(3);
  });

  it('lists everything by default and still refuses the call (auth.filterToolsByRole off)', async () => {
    const listed = harness(catalog(), false);
    expect(names(await listed.ask(ANONYMOUS, 'tools/list'), 'tools')).toEqual([
      'a_private',
      'b_open',
      'c_admin',
    ]);
    expect((await listed.ask(ANONYMOUS, 'tools/list', {}, true)).result.cacheScope).toBe('public');
    expect((await listed.ask(ANONYMOUS, 'prompts/list')).result.prompts).toHaveLength(1);
    expect((await listed.ask(ANONYMOUS, 'tools/call', { name: 'a_private' })).error.code).toBe(
      -32001,
    );
    expect((await listed.ask(BOB, 'tools/call', { name: 'c_admin' })).error.message).toMatch(
      /^Forbidden/,
    );
    expect((await listed.ask(ALICE, 'tools/call', { name: 'c_admin' })).result).toBeDefined();
  });
});
